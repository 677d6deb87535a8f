package inference

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/family"
)

// tokenize tokenizes a prompt text (see Literal) with the model's own
// tokenizer, safely whatever the text; bos puts BOS first where the model
// wants it. A text of more than limit tokens (limit > 0) fails with
// ErrContextLength as soon as that is known.
func (m *model) tokenize(text string, bos bool, limit int) ([]backend.Token, error) {
	var segs []backend.Segment
	literalSpans(text, func(piece string, data bool) {
		segs = append(segs, backend.Segment{Text: piece, Data: data})
	})
	toks, err := m.llm.TokenizeSegments(segs, bos, limit)
	if errors.Is(err, backend.ErrTooManyTokens) {
		return nil, &FieldError{Path: Field("Messages"), Err: ErrContextLength,
			Reason: fmt.Sprintf("the prompt has more than %d tokens, and the context holds %d", limit, m.info.ContextLength)}
	}
	return toks, err
}

// render renders req's messages and tools with the chat template, their
// text marked as data (see Literal): it gives the model text, never
// special tokens.
//
// Marks alone would not survive every template: a filter such as tojson
// or a dict's repr may escape them. So each control token's text in a
// request string first becomes a placeholder of ASCII digits and
// brackets, which no filter changes, and after rendering each placeholder
// becomes that text inside Literal's marks. Placeholders carry a random
// nonce: text that looks like one without it stays as it is, and one
// forged by luck would only give text.
//
// An image becomes the text image returns (nil: images fail). The
// family's thinking switches are set from req.NoThinking, and its
// Tools.Present shows the tools where the template does not.
func (m *model) render(req Request, image func() string) (string, error) {
	nonce := strconv.FormatUint(rand.Uint64(), 10)
	prefix := "[[" + nonce + ":"
	data := func(s string) string {
		return m.llm.ReplaceControlText(stripMarks(s), func(t backend.Token) string {
			return prefix + strconv.Itoa(int(t)) + "]]"
		})
	}
	var present func(messages, tools []any) []any
	if m.family != nil && m.family.Tools != nil {
		present = m.family.Tools.Present
	}
	text, err := m.tmpl.render(req.Messages, req.shownTools(), m.thinkingVars(req), present, data, image)
	if err != nil {
		return "", err
	}
	if !strings.Contains(text, prefix) {
		return text, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(text, prefix)
		if i < 0 {
			break
		}
		b.WriteString(text[:i])
		rest := text[i+len(prefix):]
		id, after, ok := strings.Cut(rest, "]]")
		t, err := strconv.Atoi(id)
		if !ok || err != nil || t < 0 || t >= m.llm.VocabSize() {
			b.WriteString(prefix)
			text = rest
			continue
		}
		b.WriteString(Literal(m.llm.TokenText(backend.Token(t))))
		text = after
	}
	b.WriteString(text)
	return b.String(), nil
}

// thinkingVars are the chat template's variables that switch the model's
// thinking on, or off for req.NoThinking, at req.Effort: its family's;
// none for a model that does not think.
func (m *model) thinkingVars(req Request) map[string]any {
	if !m.thinks() || m.family.Thinking.Vars == nil {
		return nil
	}
	return m.family.Thinking.Vars(!req.NoThinking, family.Effort(req.Effort))
}
