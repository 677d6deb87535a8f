package inference

import "strings"

// Prompt texts are the strings that this package tokenizes as they are:
// Request.Prompt, ScoreRequest.Prefix, Branch.Text, the text given to
// Engine.Tokenize, and what Engine.RenderPrompt returns. The text of the
// model's special tokens in them, such as <|im_start|>, becomes those
// tokens, except inside the marks of Literal.
//
// Request text never reaches a model as special tokens: the messages,
// tools and tool results of a Request are rendered with the chat template
// so that only the template's own markup gives special tokens, and callers
// that build prompt texts from a request's text wrap it in Literal.

// The marks of Literal: private-use code points, reserved in prompt texts.
const (
	literalOpen  = "\uE001"
	literalClose = "\uE002"
)

// Literal returns s marked as data for a prompt text: the text of control
// tokens in it (<|im_end|>, <start_of_turn>, ...) stays text, so that text
// from a request cannot end its turn or open another. The text of
// user-defined tokens (such as Qwen's <think>) becomes those tokens, as in
// any text given to the model's own tokenizer.
//
// The marks are the code points U+E001 and U+E002, which are reserved in
// prompt texts: Literal removes them from s, and the tokenizer removes
// them from the text.
func Literal(s string) string {
	return literalOpen + stripMarks(s) + literalClose
}

// stripMarks removes Literal's marks from s.
func stripMarks(s string) string {
	if !strings.Contains(s, literalOpen) && !strings.Contains(s, literalClose) {
		return s
	}
	return strings.NewReplacer(literalOpen, "", literalClose, "").Replace(s)
}

// literalSpans splits a prompt text at Literal's marks and calls fn with
// each piece and whether it is data. An open mark inside data and a close
// mark outside it are dropped; data left open ends with the text.
func literalSpans(text string, fn func(piece string, data bool)) {
	data := false
	for text != "" {
		mark := literalOpen
		if data {
			mark = literalClose
		}
		i := strings.Index(text, mark)
		if i < 0 {
			fn(stripMarks(text), data)
			return
		}
		if i > 0 {
			fn(stripMarks(text[:i]), data)
		}
		text = text[i+len(mark):]
		data = !data
	}
}
