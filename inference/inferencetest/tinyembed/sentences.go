// Package tinyembed is inferkit's tiny trained embedding model
// ([Model]), for tests that check what an embedding means, not only its
// shape: the file, its shape, and the synthetic sentences it is trained
// and tested on, deterministic from a seed. scripts/train-tiny trains it
// on paraphrase pairs: two sentences that state the same fact in other
// words embed close together, and sentences that differ in who, what or
// which relation embed apart.
package tinyembed

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/inferkit/inferkit/inference/inferencetest/tinychat"
	"github.com/inferkit/inferkit/internal/tinymodel"
)

// Shape is the model's: a nomic-bert encoder (rotary positions, SwiGLU,
// mean pooling) with the WordPiece vocabulary of single characters that
// inferencetest's encoders share.
func Shape() tinymodel.Options {
	return tinymodel.Options{Arch: "nomic-bert", Layers: 2, Embd: 128, Heads: 4, FF: 256, ContextLength: 128,
		Name: "inferkit-tiny-embed", Seed: 1, Type: "f16"}
}

// A Fact is what a sentence states: who, which relation, and what.
type Fact struct {
	Who      string
	Relation int // an index of Relations
	What     string
}

// A Relation is a kind of fact, in the phrasings the model knows.
type Relation struct {
	Name string
	// Phrasings are the sentences of a fact, with %[1]s for who and
	// %[2]s for what.
	Phrasings []string
	// object draws a what.
	object func(r *rand.Rand) string
}

// Relations are the facts the sentences state: where someone lives,
// works or was born, how old they are, and what they like.
var Relations = []Relation{
	{"lives", []string{"%[1]s lives in %[2]s.", "%[1]s has a home in %[2]s.", "%[2]s is where %[1]s lives.", "The home of %[1]s is in %[2]s."}, word},
	{"works", []string{"%[1]s works in %[2]s.", "%[1]s has a job in %[2]s.", "%[2]s is where %[1]s works.", "The office of %[1]s is in %[2]s."}, word},
	{"born", []string{"%[1]s was born in %[2]s.", "%[1]s comes from %[2]s.", "%[2]s is where %[1]s was born.", "The birthplace of %[1]s is %[2]s."}, word},
	{"age", []string{"%[1]s is %[2]s years old.", "The age of %[1]s is %[2]s.", "%[1]s turned %[2]s this year.", "%[1]s has lived for %[2]s years."}, age},
	{"likes", []string{"%[1]s likes %[2]s.", "%[1]s is fond of %[2]s.", "%[2]s is what %[1]s likes.", "The favourite food of %[1]s is %[2]s."}, food},
}

// Foods are what the "likes" facts like.
var Foods = strings.Fields("bread rice soup fish cheese apples plums honey beans nuts tea cake")

func word(r *rand.Rand) string {
	var b strings.Builder
	for range 2 + r.IntN(2) {
		b.WriteString(tinychat.Syllables[r.IntN(len(tinychat.Syllables))])
	}
	w := b.String()
	return strings.ToUpper(w[:1]) + w[1:]
}

func age(r *rand.Rand) string  { return fmt.Sprint(10 + r.IntN(90)) }
func food(r *rand.Rand) string { return Foods[r.IntN(len(Foods))] }

// Draw is a fact at random.
func Draw(r *rand.Rand) Fact {
	rel := r.IntN(len(Relations))
	return Fact{word(r), rel, Relations[rel].object(r)}
}

// Say is f in phrasing p (taken modulo the relation's phrasings).
func (f Fact) Say(p int) string {
	ps := Relations[f.Relation].Phrasings
	s := fmt.Sprintf(ps[p%len(ps)], f.Who, f.What)
	return strings.ToUpper(s[:1]) + s[1:]
}

// Near are the facts that differ from f in one part, to tell apart from
// it: another who, another what, and another relation: of the same
// place where f's is of a place (lives, works, born), else of its own
// what.
func (f Fact) Near(r *rand.Rand) []Fact {
	rel := Relations[f.Relation]
	otherWho, otherWhat, otherRel := f, f, f
	for otherWho.Who == f.Who {
		otherWho.Who = word(r)
	}
	for otherWhat.What == f.What {
		otherWhat.What = rel.object(r)
	}
	if f.Relation < 3 { // the relations of places
		for otherRel.Relation == f.Relation {
			otherRel.Relation = r.IntN(3)
		}
	} else {
		for otherRel.Relation == f.Relation {
			otherRel.Relation = r.IntN(len(Relations))
		}
		otherRel.What = Relations[otherRel.Relation].object(r)
	}
	return []Fact{otherWho, otherWhat, otherRel}
}

// A Pair is two phrasings of one fact, for training: they must embed
// close together, and Apart, a phrasing of a fact near it (see
// [Fact.Near]), away from them.
type Pair struct {
	A, B, Apart string
}

// Pairs draws n training pairs from r.
func Pairs(r *rand.Rand, n int) []Pair {
	out := make([]Pair, n)
	for i := range out {
		f := Draw(r)
		p, q := twoPhrasings(r, f)
		near := f.Near(r)
		out[i] = Pair{f.Say(p), f.Say(q), near[r.IntN(len(near))].Say(q)}
	}
	return out
}

func twoPhrasings(r *rand.Rand, f Fact) (int, int) {
	n := len(Relations[f.Relation].Phrasings)
	p := r.IntN(n)
	return p, (p + 1 + r.IntN(n-1)) % n
}

// A Probe is a held-out test: the candidate whose embedding is nearest
// Query's must be Candidates[Right], Query's fact in another phrasing;
// the others state its near facts ([Fact.Near]) in that phrasing.
type Probe struct {
	Query      string
	Candidates []string
	Right      int
}

// Probes draws n probes from r.
func Probes(r *rand.Rand, n int) []Probe {
	out := make([]Probe, n)
	for i := range out {
		f := Draw(r)
		p, q := twoPhrasings(r, f)
		cands := []string{f.Say(q)}
		for _, g := range f.Near(r) {
			cands = append(cands, g.Say(q))
		}
		right := r.IntN(len(cands))
		cands[0], cands[right] = cands[right], cands[0]
		out[i] = Probe{Query: f.Say(p), Candidates: cands, Right: right}
	}
	return out
}

// Stream is the random stream of a split ("train" or "test") of seed:
// the splits draw apart.
func Stream(seed uint64, split string) *rand.Rand { return tinychat.Stream(seed, split) }

// Nearest is the index of the candidate nearest query by cosine
// similarity (their dot product: the engine's vectors are of unit
// length), the first of equals; -1 when there is none.
func Nearest[F float32 | float64](query []F, candidates [][]F) int {
	best, bestDot := -1, 0.0
	for i, c := range candidates {
		dot := 0.0
		for j := range min(len(c), len(query)) {
			dot += float64(c[j]) * float64(query[j])
		}
		if best < 0 || dot > bestDot {
			best, bestDot = i, dot
		}
	}
	return best
}
