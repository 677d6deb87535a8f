package jinja_test

import (
	"fmt"
	"time"

	"github.com/inferkit/inferkit/internal/jinja"
)

func Example() {
	tpl, err := jinja.Parse(`{% for m in messages %}<|im_start|>{{ m.role }}
{{ m.content | trim }}<|im_end|>
{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant
{% endif %}`)
	if err != nil {
		panic(err)
	}
	out, err := tpl.Render(map[string]any{
		"messages": []any{
			map[string]any{"role": "system", "content": "Be brief."},
			map[string]any{"role": "user", "content": " Hi! "},
		},
		"add_generation_prompt": true,
	})
	if err != nil {
		panic(err)
	}
	fmt.Print(out)
	// Output:
	// <|im_start|>system
	// Be brief.<|im_end|>
	// <|im_start|>user
	// Hi!<|im_end|>
	// <|im_start|>assistant
}

func ExampleParseJSON() {
	// Tool schemas keep the caller's key order, as Python dicts do.
	tools, err := jinja.ParseJSON([]byte(`[{"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]`))
	if err != nil {
		panic(err)
	}
	tpl, _ := jinja.Parse(`{% for t in tools %}{{ t | tojson }}{% endfor %}`)
	out, _ := tpl.Render(map[string]any{"tools": tools})
	fmt.Println(out)
	// Output:
	// {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}
}

func ExampleFunc() {
	// A fixed clock makes strftime_now deterministic.
	now := time.Date(2024, 7, 26, 0, 0, 0, 0, time.UTC)
	tpl, _ := jinja.Parse(`Today Date: {{ strftime_now("%d %b %Y") }}`)
	out, _ := tpl.Render(map[string]any{
		"strftime_now": jinja.Func(func(args ...any) (any, error) {
			if f, _ := args[0].(string); f == "%d %b %Y" {
				return now.Format("02 Jan 2006"), nil
			}
			return nil, fmt.Errorf("unsupported format")
		}),
	})
	fmt.Println(out)
	// Output:
	// Today Date: 26 Jul 2024
}

func ExampleError() {
	tpl, _ := jinja.Parse(`{% if messages[0].role != 'user' %}{{ raise_exception('Conversation must start with a user message') }}{% endif %}`)
	_, err := tpl.Render(map[string]any{"messages": []any{map[string]any{"role": "assistant"}}})
	if e, ok := err.(*jinja.Error); ok && e.Raised {
		fmt.Println("template rejected the conversation:", e.Message)
	}
	// Output:
	// template rejected the conversation: Conversation must start with a user message
}
