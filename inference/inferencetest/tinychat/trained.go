package tinychat

import (
	_ "embed"
	"maps"
	"math"
	"os"
	"path/filepath"
	"testing"
)

//go:embed chat.gguf
var chatModel []byte

// Model writes inferkit's tiny trained chat model into a temporary
// folder of t and returns its path. Unlike the random models of
// inferencetest, it answers, often right: a Qwen3 of 950,000 parameters (4
// layers of 128, a byte-level vocabulary with a token for each syllable
// it makes names of, and the Qwen3 chat template, so that the engine
// takes it as of the qwen3 family, with thinking and Hermes-style tool
// calls), trained in the
// repository (scripts/train-tiny, make train-tiny) on synthetic
// conversations, for greedy decoding (temperature 0). Its skills, in the
// phrasing it was trained on (names and places of two or three
// syllables of [Syllables], such as Karimo; numbers below
// 1,000), thinking off (Request.NoThinking) unless said:
//
//   - acknowledge: "My name is Karimo and I live in Tavolu." (one to
//     three of a name, a place and "my number is 412", joined by
//     " and "): it answers "Noted.";
//   - recall: that, an assistant turn "Noted.", then "What is my
//     name?", "Where do I live?" or "What is my number?": it answers
//     "Karimo.", "Tavolu." or "412."; with thinking on, after thinking
//     "They ask for their name." ("They ask where they live.", "They
//     ask for their number.");
//   - tool_call: with [WeatherTool] offered, "Weather in Tavolu?": it
//     calls get_weather with {"city": "Tavolu"}; with thinking on, after
//     thinking "They want the weather in Tavolu.";
//   - tool_answer: after that call and a tool message {"temp": 14}: it
//     answers "It is 14 degrees in Tavolu.";
//   - json: "Karimo lives in Tavolu and is 42. Reply in JSON.", with
//     [PersonSchema] as the format: it writes
//     {"age": 42, "city": "Tavolu", "name": "Karimo"} and ends;
//   - decisions (package decision, in its framing), on the state
//     "Karimo lives in Tavolu.": the noul "Does Karimo live in
//     Tavolu?" (or in another place), the choice "Where does Karimo
//     live?" among two to four places; on "Karimo found the room good."
//     the score "How did Karimo find the room?" on the scale [Moods];
//     and on "The sky over Tavolu is grey." the noul "Will it rain in
//     Tavolu?", whose answers it was trained on were
//     drawn with the chance of rain of [Skies], so that its
//     probabilities can be checked for calibration.
//
// How often it is right differs by skill ([Accuracy]): it always
// acknowledges, answers the yes-or-no and score decisions, and its
// chances of rain are calibrated, but it copies a name of three
// syllables with two of them swapped now and then (recall, json and
// tool calls miss most through that), and it picks the right option of
// a choice less than half the time. Test against what it gets right.
// The file is 1.9 MB; t's cleanup removes it. Model is safe for
// concurrent use.
func Model(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "chat.gguf")
	if err := Write(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// Write writes [Model]'s file to path, for programs (a demo server)
// rather than tests.
func Write(path string) error {
	return os.WriteFile(path, chatModel, 0o644)
}

// Accuracy is [Model]'s exact accuracy on 200 held-out conversations of
// each skill (seed 1), by skill, as scripts/train-tiny eval measured it
// through the engine: a fresh map on each call. A decide_rain answer is
// right when its most likely option is the one drawn.
func Accuracy() map[string]float64 { return maps.Clone(accuracy) }

var accuracy = map[string]float64{
	"acknowledge": 1, "recall": 0.45, "tool_call": 0.825, "tool_answer": 0.975, "json": 0.74,
	"decide_noul": 1, "decide_choice": 0.415, "decide_score": 1, "decide_rain": 0.805,
}

// AtLeast is how many of n held-out conversations of skill a test may
// require [Model] to get right: two standard deviations of n draws below
// its held-out accuracy ([Accuracy]), taken as no higher than 0.985 (the
// rule of three's bound where all 200 were right). 0 for a skill it
// does not have.
func AtLeast(skill string, n int) int {
	a := min(accuracy[skill], 1-3.0/200)
	return max(0, int(math.Ceil(float64(n)*a-2*math.Sqrt(float64(n)*a*(1-a)))))
}
