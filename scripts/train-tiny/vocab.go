package main

import (
	"regexp"
	"slices"
	"strings"

	"github.com/inferkit/inferkit/inference/inferencetest/tinychat"
	"github.com/inferkit/inferkit/internal/tinymodel"
)

// pretoken splits text as the qwen2 pre-tokenizer does, but for its
// lookahead (\s+(?!\S)), which RE2 lacks: merges learnt across the few
// boundaries that differ are never used, and cost nothing else.
var pretoken = regexp.MustCompile(`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+`)

// learnMerges learns n byte-level BPE merges from texts. The first make
// a token of each syllable, capitalised or not, so that a name is the
// same tokens wherever it stands; no later merge joins two syllables,
// or a space and a syllable, so that a name stays those tokens and is
// copied one syllable a step. Then Yes. The others join the most frequent pair of
// the rest, ties broken by the pair's text, so that the same texts give
// the same merges.
func learnMerges(texts []string, n int) []string {
	spell := tinymodel.ByteLevel().Tokens[:256]
	specials := regexp.MustCompile(`<\|im_start\|>|<\|im_end\|>|<\|endoftext\|>|</?think>|</?tool_call>`)
	counts := map[string]int{}
	for _, t := range texts {
		for _, piece := range specials.Split(t, -1) {
			for _, w := range pretoken.FindAllString(piece, -1) {
				counts[w]++
			}
		}
	}
	type word struct {
		syms  []string
		count int
	}
	var words []word
	for w, c := range counts {
		var syms []string
		for _, b := range []byte(w) {
			syms = append(syms, spell[b])
		}
		words = append(words, word{syms, c})
	}
	slices.SortFunc(words, func(a, b word) int { return strings.Compare(strings.Join(a.syms, ""), strings.Join(b.syms, "")) })

	var merges []string
	made := map[string]bool{}
	merge := func(l, r string) {
		merges = append(merges, l+" "+r)
		made[l+r] = true
		for i := range words {
			s := words[i].syms
			for j := 0; j+1 < len(s); j++ {
				if s[j] == l && s[j+1] == r {
					s = slices.Replace(s, j, j+2, l+r)
				}
			}
			words[i].syms = s
		}
	}
	syllable := map[string]bool{}
	for _, s := range tinychat.Syllables {
		for _, c := range []string{s[:1], strings.ToUpper(s[:1])} {
			merge(c, s[1:])
			syllable[c+s[1:]] = true
		}
	}
	// Yes (No is a syllable): a noul's labels are then one token each,
	// the Yes and No that a remote engine's decisions read too.
	merge("Y", "e")
	merge("Ye", "s")
	space := spell[' ']
	for len(merges) < n {
		pairs := map[[2]string]int{}
		for _, w := range words {
			for j := 0; j+1 < len(w.syms); j++ {
				l, r := w.syms[j], w.syms[j+1]
				if syllable[r] && (syllable[l] || l == space) || made[l+r] {
					continue
				}
				pairs[[2]string{l, r}] += w.count
			}
		}
		var best [2]string
		top := 1
		for p, c := range pairs {
			if c > top || c == top && top > 1 && p[0]+" "+p[1] < best[0]+" "+best[1] {
				best, top = p, c
			}
		}
		if top < 2 {
			break
		}
		merge(best[0], best[1])
	}
	return merges
}
