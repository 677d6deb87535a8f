package inference

import (
	"fmt"
	"strings"
)

// chatTemplate renders a conversation into the model's prompt format.
type chatTemplate struct{}

// templateModel is what a chat template needs of a model.
type templateModel interface {
	ChatTemplate() string
}

func newChatTemplate(templateModel) (*chatTemplate, error) { return &chatTemplate{}, nil }

// render writes ChatML, ending with the opening of the assistant's turn.
func (t *chatTemplate) render(msgs []Message, tools []Tool) (string, error) {
	var b strings.Builder
	for i, m := range msgs {
		switch m.Role {
		case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		default:
			return "", fmt.Errorf("%w: messages[%d] has role %q", ErrInvalidRequest, i, m.Role)
		}
		b.WriteString("<|im_start|>" + string(m.Role) + "\n")
		for _, p := range m.Content {
			if p.Image != nil {
				return "", fmt.Errorf("%w: messages[%d]: this model does not read images", ErrInvalidRequest, i)
			}
			b.WriteString(p.Text)
		}
		b.WriteString("<|im_end|>\n")
	}
	b.WriteString("<|im_start|>assistant\n")
	return b.String(), nil
}
