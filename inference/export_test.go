//go:build cgo

package inference

// PromptTokens returns the tokens Prepare made of a request's prompt.
func PromptTokens(p *Prepared) []int32 { return p.plan.prompt }

// TokenText returns the vocabulary entry of tok in the model named name.
func (e *Engine) TokenText(name string, tok int) (text string, err error) {
	err = e.use(name, func(m *model) error {
		text = m.llm.TokenText(int32(tok))
		return nil
	})
	return text, err
}
