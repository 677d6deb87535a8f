package runner

import (
	"math"

	"github.com/inferkit/inferkit/internal/backend"
)

// CandidateTree is a branch's candidates as a tree of the tokens that
// follow the branch. Node 0 is the branch's end; every other node is a
// token after its parent, and parents come before their children. The
// model's next-token distribution is read at the branch's end and after
// every inner node: a node that some candidate continues past.
//
// The inner nodes are decoded along paths: one path per deepest inner
// node (an inner node with no inner node below it), from the branch's end
// down to it, each on a sequence of its own that shares the branch's KV
// cells. A node on several paths is read on the first.
//
// Its fields are read only; it is safe for concurrent reads.
type CandidateTree struct {
	// Paths are the tokens to the deepest inner nodes, in depth-first
	// order; Reads[i][j] is the inner node whose distribution is read
	// after Paths[i][j], or -1 where an earlier path reads it.
	Paths [][]backend.Token
	Reads [][]int
	nodes []treeNode
	// ends[i] is the node where candidate i ends.
	ends []int
}

type treeNode struct {
	token    backend.Token
	parent   int
	children []int
}

// NewCandidateTree builds the tree of cands, each at least one token.
func NewCandidateTree(cands [][]backend.Token) *CandidateTree {
	t := &CandidateTree{nodes: []treeNode{{parent: -1}}}
	child := map[[2]int]int{}
	for _, c := range cands {
		n := 0
		for _, tok := range c {
			key := [2]int{n, int(tok)}
			next, ok := child[key]
			if !ok {
				next = len(t.nodes)
				child[key] = next
				t.nodes = append(t.nodes, treeNode{token: tok, parent: n})
				t.nodes[n].children = append(t.nodes[n].children, next)
			}
			n = next
		}
		t.ends = append(t.ends, n)
	}
	read := make([]bool, len(t.nodes))
	var walk func(n int, path []backend.Token, nodes []int)
	walk = func(n int, path []backend.Token, nodes []int) {
		deepest := true
		for _, c := range t.nodes[n].children {
			if len(t.nodes[c].children) > 0 {
				deepest = false
				walk(c, append(path, t.nodes[c].token), append(nodes, c))
			}
		}
		if !deepest || n == 0 {
			return
		}
		reads := make([]int, len(nodes))
		for i, m := range nodes {
			reads[i] = -1
			if !read[m] {
				read[m], reads[i] = true, m
			}
		}
		t.Paths = append(t.Paths, append([]backend.Token(nil), path...))
		t.Reads = append(t.Reads, reads)
	}
	walk(0, nil, nil)
	return t
}

// Cells is the number of KV cells the paths take beside the branch's.
func (t *CandidateTree) Cells() int {
	n := 0
	for _, p := range t.Paths {
		n += len(p)
	}
	return n
}

// Depth is the most tokens a path decodes after the branch.
func (t *CandidateTree) Depth() int {
	d := 0
	for _, p := range t.Paths {
		d = max(d, len(p))
	}
	return d
}

// Read records, in edge, the log-probability of each child of node n
// under the next-token logits read after n, whose log-sum-exp is lse
// (backend.LogSumExp): a log-softmax over the whole vocabulary, in
// float64.
func (t *CandidateTree) Read(n int, logits []float32, lse float64, edge []float64) {
	for _, c := range t.nodes[n].children {
		edge[c] = float64(logits[t.nodes[c].token]) - lse
	}
}

// Nodes is the number of the tree's nodes, the length of the edges that
// Read fills.
func (t *CandidateTree) Nodes() int { return len(t.nodes) }

// Score sums each candidate's edges into its log-probability, and
// returns them with their probabilities, in the candidates' order.
func (t *CandidateTree) Score(edge []float64) (logProbs, probs []float64) {
	logp := make([]float64, len(t.nodes))
	for n := 1; n < len(t.nodes); n++ {
		logp[n] = logp[t.nodes[n].parent] + edge[n]
	}
	logProbs, probs = make([]float64, len(t.ends)), make([]float64, len(t.ends))
	for i, n := range t.ends {
		logProbs[i], probs[i] = logp[n], math.Exp(logp[n])
	}
	return logProbs, probs
}
