// Package tinychat is inferkit's tiny trained chat model ([Model]), for
// tests that check what a model says: the file, its shape, and the
// synthetic conversations of each skill it is trained and tested on,
// deterministic from a seed. scripts/train-tiny trains it; its
// conversations are the phrasing the model knows.
package tinychat

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/internal/tinymodel"
)

// Shape is the model's: a Qwen3 with the Qwen3 chat template, so that
// the engine recognises it as of the qwen3 family (thinking,
// Hermes-style tool calls), and the byte-level vocabulary with merges
// (see [Vocabulary]). Its context is 4,096 tokens, so that a server of it
// takes a prompt as long as a code review's, though it was trained on
// conversations of under 300.
func Shape(merges []string) tinymodel.Options {
	return tinymodel.Options{Arch: "qwen3", Layers: 4, Embd: 128, Heads: 8, KVHeads: 4, HeadDim: 16, FF: 384,
		ContextLength: 4096, ChatTemplate: tinymodel.Qwen3Template, Name: "inferkit-tiny-chat", Seed: 1, Type: "f16",
		Tokenizer: Vocabulary(merges)}
}

// Vocabulary is the byte-level vocabulary with merges, each "left right"
// in GPT-2's byte-level spelling, by priority: each merge adds the token
// of its two parts joined.
func Vocabulary(merges []string) *tinymodel.Tokenizer {
	tok := tinymodel.ByteLevel()
	tok.ChatTemplate = tinymodel.Qwen3Template
	for _, m := range merges {
		tok.Tokens = append(tok.Tokens, strings.Replace(m, " ", "", 1))
		tok.Types = append(tok.Types, tinymodel.TokenNormal)
	}
	tok.Merges = merges
	return tok
}

// Example is one conversation: the request the engine gets (Model
// unset), and what the model must answer; or, for a decision skill, the
// request a decision.Evaluator gets, and the right option.
type Example struct {
	Skill string
	Req   inference.Request
	// Want is the answer's text as the model writes it, markup included
	// (a tool call's <tool_call> block).
	Want string
	// Check says whether the engine's result is right.
	Check func(inference.Result) bool

	// Decision, for a decision skill, is the request instead of Req: the
	// body of a decision request (package decision's Request, POST
	// /v1/systemone) without its model, of one question, of id "q".
	Decision json.RawMessage
	// Answer is the index of the decision's right option (a noul's yes
	// is 0, its no 1).
	Answer int
	// Chance, for a decision whose answer was drawn at random, is the
	// probability of each option it was drawn with; nil when the state
	// decides it.
	Chance []float64
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
	{"json", jsonAnswer},
	{"decide_noul", decideNoul},
	{"decide_choice", decideChoice},
	{"decide_score", decideScore},
	{"decide_rain", decideRain},
}

// Syllables make names and places at random, so that a skill is learnt
// as copying, not as a list: the held-out split draws new ones. Each is
// a consonant and a vowel, and the vocabulary has a token for each, and
// for each capitalised, so that a name is copied syllable by syllable.
var Syllables = strings.Fields("ka ri mo ta lu ne si vo ra de mi no pa se lo ti ha ve gu zo be fa")

// other is a word of r other than w.
func other(r *rand.Rand, w string) string {
	for {
		if o := word(r); o != w {
			return o
		}
	}
}

// word is a capitalised word of 2 or 3 random syllables.
func word(r *rand.Rand) string {
	var b strings.Builder
	for range 2 + r.IntN(2) {
		b.WriteString(Syllables[r.IntN(len(Syllables))])
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
		{"my name is " + name, "What is my name?", "They ask for their name.", name},
		{"I live in " + place, "Where do I live?", "They ask where they live.", place},
		{"my number is " + number, "What is my number?", "They ask for their number.", number},
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

type fact struct{ tell, ask, thought, value string }

// thinking is whether a conversation thinks first: one in three do,
// after a thought of the form they are taught.
func thinking(r *rand.Rand) bool { return r.IntN(3) == 0 }

// thought is the answer's text after a thinking section of thought, as
// the model writes it.
func thought(thought, answer string) string { return "<think>\n" + thought + "\n</think>\n\n" + answer }

// thoughtIs says whether res thought thought, or did not think when
// thought is "".
func thoughtIs(res inference.Result, thought string) bool {
	return strings.TrimSpace(res.Reasoning) == thought
}

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
	answer, think := q.value+".", ""
	if thinking(r) {
		think = q.thought
	}
	want := answer
	if think != "" {
		want = thought(think, answer)
	}
	return Example{
		Skill: "recall",
		Req: inference.Request{NoThinking: think == "", Messages: []inference.Message{
			user(stated), assistant("Noted."), user(q.ask),
		}},
		Want: want,
		Check: func(res inference.Result) bool {
			return res.Text == answer && thoughtIs(res, think) && len(res.ToolCalls) == 0
		},
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
	want, think := "<tool_call>\n"+`{"name": "get_weather", "arguments": `+args+"}\n</tool_call>", ""
	if thinking(r) {
		think = "They want the weather in " + city + "."
		want = thought(think, want)
	}
	return Example{
		Skill: "tool_call",
		Req: inference.Request{NoThinking: think == "", Tools: []inference.Tool{WeatherTool},
			Messages: []inference.Message{user("Weather in " + city + "?")}},
		Want: want,
		Check: func(res inference.Result) bool {
			if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "get_weather" || !thoughtIs(res, think) {
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

// PersonSchema is the JSON Schema of the json skill's answers.
var PersonSchema = []byte(`{"type":"object","properties":{"age":{"type":"integer"},"city":{"type":"string"},"name":{"type":"string"}},"required":["age","city","name"],"additionalProperties":false}`)

// jsonAnswer: a person's name, city and age, written as JSON of
// PersonSchema, and ended.
func jsonAnswer(r *rand.Rand) Example {
	name, city, age := word(r), word(r), 1+r.IntN(99)
	want := fmt.Sprintf(`{"age": %d, "city": "%s", "name": "%s"}`, age, city, name)
	return Example{
		Skill: "json",
		Req: inference.Request{NoThinking: true, Format: &inference.Format{Schema: PersonSchema},
			Messages: []inference.Message{user(fmt.Sprintf("%s lives in %s and is %d. Reply in JSON.", name, city, age))}},
		Want: want,
		Check: func(res inference.Result) bool {
			var got struct {
				Age        *int
				City, Name string
			}
			d := json.NewDecoder(strings.NewReader(res.Text))
			d.DisallowUnknownFields()
			return d.Decode(&got) == nil && !d.More() && got.Age != nil && *got.Age == age &&
				got.City == city && got.Name == name && len(res.ToolCalls) == 0
		},
	}
}

// question is a decision question, as the wire writes it.
type question struct {
	typ, instructions string
	options           []string // a choice's, in order
	levels            []string // a score's, lowest first
}

// decide is a decision example of one question about state.
func decide(skill, state string, q question, answer int) Example {
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	body := `{"state": ` + quote(state) + `, "questions": {"q": {"type": ` + quote(q.typ) + `, "instructions": ` + quote(q.instructions)
	switch {
	case q.options != nil: // an object, to keep the options' order
		var kv []string
		for _, o := range q.options {
			kv = append(kv, quote(o)+`: ""`)
		}
		body += `, "criteria": {` + strings.Join(kv, ", ") + `}`
	case q.levels != nil:
		b, _ := json.Marshal(q.levels)
		body += `, "criteria": ` + string(b)
	}
	return Example{Skill: skill, Answer: answer, Decision: json.RawMessage(body + `}}}`)}
}

// decideNoul: whether someone lives where the state says, asked of their
// place or of another.
func decideNoul(r *rand.Rand) Example {
	name, place := word(r), word(r)
	asked, answer := place, 0
	if r.IntN(2) == 0 {
		asked, answer = other(r, place), 1
	}
	return decide("decide_noul", name+" lives in "+place+".",
		question{typ: "noul", instructions: "Does " + name + " live in " + asked + "?"}, answer)
}

// decideChoice: where someone lives, among two to four places.
func decideChoice(r *rand.Rand) Example {
	name, place := word(r), word(r)
	places := []string{place}
	for len(places) < 2+r.IntN(3) {
		if o := other(r, place); !slices.Contains(places, o) {
			places = append(places, o)
		}
	}
	r.Shuffle(len(places), func(i, j int) { places[i], places[j] = places[j], places[i] })
	q := question{typ: "choice", instructions: "Where does " + name + " live?", options: places}
	return decide("decide_choice", name+" lives in "+place+".", q, slices.Index(places, place))
}

// Moods are the levels of the decide_score skill's scale, lowest first.
var Moods = []string{"awful", "poor", "fine", "good", "great"}

// decideScore: how someone found a room, on the scale of Moods, from the
// word the state uses.
func decideScore(r *rand.Rand) Example {
	name, k := word(r), r.IntN(len(Moods))
	return decide("decide_score", name+" found the room "+Moods[k]+".",
		question{typ: "score", instructions: "How did " + name + " find the room?", levels: Moods}, k)
}

// Skies are the decide_rain skill's skies, each with the chance of rain
// under it that its answers are drawn with.
var Skies = []struct {
	Sky  string
	Rain float64
}{{"blue", 0.05}, {"white", 0.3}, {"grey", 0.7}, {"black", 0.95}}

// decideRain: whether it will rain under a sky, answered at random with
// the sky's chance, so that the model's probabilities can be measured
// against known ones (calibration).
func decideRain(r *rand.Rand) Example {
	place, s := word(r), Skies[r.IntN(len(Skies))]
	answer := 1
	if r.Float64() < s.Rain {
		answer = 0
	}
	ex := decide("decide_rain", "The sky over "+place+" is "+s.Sky+".",
		question{typ: "noul", instructions: "Will it rain in " + place + "?"}, answer)
	ex.Chance = []float64{s.Rain, 1 - s.Rain}
	return ex
}
