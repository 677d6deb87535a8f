// Package tinychat is the tiny trained chat model's definition: its
// shape, and the synthetic conversations of each skill it is trained and
// tested on, deterministic from a seed. scripts/train-tiny trains it;
// its conversations are the phrasing the model knows.
package tinychat

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/internal/tinymodel"
)

// Shape is the model's: a Qwen3 with the byte-level vocabulary and the
// Qwen3 chat template, so that the engine recognises it as of the qwen3
// family (thinking, Hermes-style tool calls).
func Shape() tinymodel.Options {
	return tinymodel.Options{Arch: "qwen3", Layers: 4, Embd: 64, Heads: 4, KVHeads: 2, HeadDim: 16, FF: 192,
		ContextLength: 1024, ChatTemplate: tinymodel.Qwen3Template, Name: "inferkit-tiny-chat", Seed: 1, Type: "f16"}
}

// Example is one conversation: the request the engine gets (Model
// unset), and what the model must answer.
type Example struct {
	Skill string
	Req   inference.Request
	// Want is the answer's text as the model writes it, markup included
	// (a tool call's <tool_call> block).
	Want string
	// Check says whether the engine's result is right.
	Check func(inference.Result) bool
}

// Stream is the random stream of a split ("train" or "test") of seed:
// the splits draw apart.
func Stream(seed uint64, split string) *rand.Rand {
	k := uint64(1)
	if split == "test" {
		k = 2
	}
	return rand.New(rand.NewPCG(seed, k))
}

// Examples are n conversations of every skill, in turn, from r.
func Examples(r *rand.Rand, n int) []Example {
	var out []Example
	for range n {
		for _, sk := range Skills {
			out = append(out, sk.Make(r))
		}
	}
	return out
}

// A Skill makes conversations that teach and test one behaviour.
type Skill struct {
	Name string
	Make func(r *rand.Rand) Example
}

// Skills are the trained model's, in the order the data interleaves them.
var Skills = []Skill{
	{"acknowledge", acknowledge},
	{"recall", recall},
	{"tool_call", toolCall},
	{"tool_answer", toolAnswer},
}

// syllables make names and places at random, so that a skill is learnt
// as copying, not as a list: the held-out split draws new ones.
var syllables = strings.Fields("ka ri mo ta lu ne si vo ra de mi no pa se lo ti ha ve gu zo be fa")

// word is a capitalised word of 2 or 3 random syllables.
func word(r *rand.Rand) string {
	var b strings.Builder
	for range 2 + r.IntN(2) {
		b.WriteString(syllables[r.IntN(len(syllables))])
	}
	w := b.String()
	return strings.ToUpper(w[:1]) + w[1:]
}

func user(s string) inference.Message      { return inference.Text(inference.RoleUser, s) }
func assistant(s string) inference.Message { return inference.Text(inference.RoleAssistant, s) }

// facts are one to three of a name, a place and a number, in random
// order, as a user states them, and each one's question and answer.
func facts(r *rand.Rand) (stated string, told []fact) {
	name, place, number := word(r), word(r), fmt.Sprint(r.IntN(1000))
	all := []fact{
		{"my name is " + name, "What is my name?", name},
		{"I live in " + place, "Where do I live?", place},
		{"my number is " + number, "What is my number?", number},
	}
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	told = all[:1+r.IntN(3)]
	var parts []string
	for _, f := range told {
		parts = append(parts, f.tell)
	}
	s := strings.Join(parts, " and ")
	return strings.ToUpper(s[:1]) + s[1:] + ".", told
}

type fact struct{ tell, ask, value string }

// acknowledge: facts stated, acknowledged with "Noted." (the first turn
// of recall, as a client that keeps the history sends it).
func acknowledge(r *rand.Rand) Example {
	stated, _ := facts(r)
	return Example{
		Skill: "acknowledge",
		Req:   inference.Request{NoThinking: true, Messages: []inference.Message{user(stated)}},
		Want:  "Noted.",
		Check: func(res inference.Result) bool { return res.Text == "Noted." && len(res.ToolCalls) == 0 },
	}
}

// recall: facts stated in an earlier turn (a name, a place, a number),
// asked for later.
func recall(r *rand.Rand) Example {
	stated, told := facts(r)
	q := told[r.IntN(len(told))]
	want := q.value + "."
	return Example{
		Skill: "recall",
		Req: inference.Request{NoThinking: true, Messages: []inference.Message{
			user(stated), assistant("Noted."), user(q.ask),
		}},
		Want:  want,
		Check: func(res inference.Result) bool { return res.Text == want && len(res.ToolCalls) == 0 },
	}
}

// WeatherTool is the tool that the tool skills offer.
var WeatherTool = inference.Tool{Name: "get_weather", Description: "Weather in a city.",
	Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}

// toolCall: a question about a city's weather, answered by a call of the
// offered tool with the city copied.
func toolCall(r *rand.Rand) Example {
	city := word(r)
	args := `{"city": "` + city + `"}`
	return Example{
		Skill: "tool_call",
		Req: inference.Request{NoThinking: true, Tools: []inference.Tool{WeatherTool},
			Messages: []inference.Message{user("Weather in " + city + "?")}},
		Want: "<tool_call>\n" + `{"name": "get_weather", "arguments": ` + args + "}\n</tool_call>",
		Check: func(res inference.Result) bool {
			if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "get_weather" {
				return false
			}
			var got struct{ City string }
			return json.Unmarshal([]byte(res.ToolCalls[0].Arguments), &got) == nil && got.City == city
		},
	}
}

// toolAnswer: the tool's result, answered in words with its numbers.
func toolAnswer(r *rand.Rand) Example {
	city, temp := word(r), fmt.Sprint(r.IntN(40))
	want := "It is " + temp + " degrees in " + city + "."
	call := inference.ToolCall{ID: "call_1", Name: "get_weather", Arguments: `{"city": "` + city + `"}`}
	return Example{
		Skill: "tool_answer",
		Req: inference.Request{NoThinking: true, Tools: []inference.Tool{WeatherTool},
			Messages: []inference.Message{
				user("Weather in " + city + "?"),
				{Role: inference.RoleAssistant, ToolCalls: []inference.ToolCall{call}},
				{Role: inference.RoleTool, ToolCallID: "call_1", Name: "get_weather", Content: []inference.Part{{Text: `{"temp": ` + temp + `}`}}},
			}},
		Want:  want,
		Check: func(res inference.Result) bool { return res.Text == want && len(res.ToolCalls) == 0 },
	}
}
