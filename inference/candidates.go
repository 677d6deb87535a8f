package inference

import (
	"math"

	"github.com/inferkit/inferkit/internal/backend"
)

// candidateTree is a branch's candidates as a tree of the tokens that
// follow the branch. Node 0 is the branch's end; every other node is a
// token after its parent, and parents come before their children. The
// model's next-token distribution is read at the branch's end and after
// every inner node: a node that some candidate continues past.
//
// The inner nodes are decoded along paths: one path per deepest inner
// node (an inner node with no inner node below it), from the branch's end
// down to it, each on a sequence of its own that shares the branch's KV
// cells. A node on several paths is read on the first.
type candidateTree struct {
	nodes []treeNode
	// ends[i] is the node where candidate i ends.
	ends []int
	// paths are the tokens to the deepest inner nodes, in depth-first
	// order; reads[i][j] is the inner node whose distribution is read
	// after paths[i][j], or -1 where an earlier path reads it.
	paths [][]backend.Token
	reads [][]int
}

type treeNode struct {
	token    backend.Token
	parent   int
	children []int
}

// newCandidateTree builds the tree of cands, each at least one token.
func newCandidateTree(cands [][]backend.Token) *candidateTree {
	t := &candidateTree{nodes: []treeNode{{parent: -1}}}
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
		t.paths = append(t.paths, append([]backend.Token(nil), path...))
		t.reads = append(t.reads, reads)
	}
	walk(0, nil, nil)
	return t
}

// cells is the number of KV cells the paths take beside the branch's.
func (t *candidateTree) cells() int {
	n := 0
	for _, p := range t.paths {
		n += len(p)
	}
	return n
}

// depth is the most tokens a path decodes after the branch.
func (t *candidateTree) depth() int {
	d := 0
	for _, p := range t.paths {
		d = max(d, len(p))
	}
	return d
}

// read records, in edge, the log-probability of each child of node n
// under the next-token logits read after n, whose log-sum-exp is lse
// (backend.LogSumExp): a log-softmax over the whole vocabulary, in
// float64.
func (t *candidateTree) read(n int, logits []float32, lse float64, edge []float64) {
	for _, c := range t.nodes[n].children {
		edge[c] = float64(logits[t.nodes[c].token]) - lse
	}
}

// score sums each candidate's edges into its log-probability.
func (t *candidateTree) score(edge []float64) BranchScore {
	logp := make([]float64, len(t.nodes))
	for n := 1; n < len(t.nodes); n++ {
		logp[n] = logp[t.nodes[n].parent] + edge[n]
	}
	bs := BranchScore{LogProbs: make([]float64, len(t.ends)), Probabilities: make([]float64, len(t.ends))}
	for i, n := range t.ends {
		bs.LogProbs[i], bs.Probabilities[i] = logp[n], math.Exp(logp[n])
	}
	return bs
}
