package inference

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/ollama/ollama/fs/ggml"

	"github.com/inferkit/inferkit/internal/backend"
)

// MemoryPlan is what loading a configuration would take in memory, per
// model file, estimated from the GGUF files' metadata without loading
// anything (Plan). The zero value is an empty plan.
type MemoryPlan struct {
	Models []ModelPlan
}

// ModelPlan is one model file's part of a MemoryPlan, in bytes.
type ModelPlan struct {
	// Path is the GGUF file; IDs are the catalog entries it serves.
	Path string
	IDs  []string
	// Weights are its tensors, mapped from the file.
	Weights uint64
	// Projector is the tensors of its vision projector, if it has one.
	Projector uint64
	// KV is its KV cache (keys and values of every cell, at the
	// configured cache types) and the recurrent state of its sequences,
	// with, for a model that has one, what the checkpoints of that state
	// may take (Config.CheckpointBytes).
	KV uint64
	// Compute is llama.cpp's compute and output buffers, estimated from
	// the batch, the widths and the vocabulary: the least exact part, and
	// a small one.
	Compute uint64
}

// Total is the model's bytes.
func (p ModelPlan) Total() uint64 { return p.Weights + p.Projector + p.KV + p.Compute }

// Total is the plan's bytes.
func (p MemoryPlan) Total() uint64 {
	var n uint64
	for _, m := range p.Models {
		n += m.Total()
	}
	return n
}

// String lists each model's parts and the total, in MiB, one line each.
func (p MemoryPlan) String() string {
	var b strings.Builder
	mib := func(n uint64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }
	for _, m := range p.Models {
		fmt.Fprintf(&b, "%s (%s): weights %s, KV %s, compute %s", m.Path, strings.Join(m.IDs, ", "), mib(m.Weights), mib(m.KV), mib(m.Compute))
		if m.Projector > 0 {
			fmt.Fprintf(&b, ", projector %s", mib(m.Projector))
		}
		fmt.Fprintf(&b, "; %s\n", mib(m.Total()))
	}
	fmt.Fprintf(&b, "total %s", mib(p.Total()))
	return b.String()
}

// Plan returns what New would take in memory for cfg, from the metadata of
// its GGUF files: the weights and projectors as their tensors, the KV
// cache as New sizes it (Config.KVTokens, ContextTokens, Parallel, the branch
// cells of Score, the cache types), and an estimate of llama.cpp's
// buffers. It reads each file's header only. It is safe for concurrent
// use.
func Plan(cfg Config) (MemoryPlan, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return MemoryPlan{}, err
	}
	byPath := map[string]*ModelPlan{}
	var plan MemoryPlan
	for _, m := range cfg.Models {
		if m.Remote != nil {
			continue // its memory is the upstream's
		}
		if p, ok := byPath[m.Path]; ok {
			p.IDs = append(p.IDs, m.ID)
			continue
		}
		mp, err := planModel(cfg, m.Path)
		if err != nil {
			return MemoryPlan{}, err
		}
		mp.IDs = []string{m.ID}
		if m.Projector != "" {
			proj, err := readGGUF(m.Projector)
			if err != nil {
				return MemoryPlan{}, err
			}
			mp.Projector = tensorBytes(proj)
		}
		plan.Models = append(plan.Models, mp)
		byPath[m.Path] = &plan.Models[len(plan.Models)-1]
	}
	return plan, nil
}

// readGGUF reads a GGUF file's header: its metadata (arrays left out) and
// tensor list.
func readGGUF(path string) (*ggml.GGML, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("inference: planning %s: %w", path, err)
	}
	defer f.Close()
	g, err := ggml.Decode(f, 0)
	if err != nil {
		return nil, fmt.Errorf("inference: planning %s: not a GGUF file: %w", path, err)
	}
	return g, nil
}

func tensorBytes(g *ggml.GGML) uint64 {
	var n uint64
	for _, t := range g.Tensors().Items() {
		n += t.Size()
	}
	return n
}

// planModel plans one model file as load makes it: a generation context
// of min(KVTokens, Parallel × context) cells and the branch cells, or, for
// a model that pools (an encoder), an encoder context.
func planModel(cfg Config, path string) (ModelPlan, error) {
	g, err := readGGUF(path)
	if err != nil {
		return ModelPlan{}, err
	}
	kv := g.KV()
	p := ModelPlan{Path: path, Weights: tensorBytes(g)}
	perSeq := min(cfg.ContextTokens, cfg.KVTokens)
	if train := int(kv.ContextLength()); train > 0 {
		perSeq = min(perSeq, train)
	}
	keyType, valueType := cfg.keyType, cfg.valueType
	cells, seqs := cfg.slotCells(perSeq)+cfg.BranchContext, cfg.Parallel+cfg.Branches
	if kv.Uint("pooling_type") != 0 {
		// An encoder: one batch of its inputs at a time, and keys and
		// values only for a causal (decoder) model.
		cells, seqs = max(cfg.Batch, perSeq), 1
		if !kv.Bool("attention.causal", true) {
			cells = 0
		}
	}
	kLen, vLen := kv.EmbeddingHeadCountK(), kv.EmbeddingHeadCountV()
	_, hasHeads := kv[kv.Architecture()+".attention.head_count"]
	for _, heads := range kv.HeadCountKV() {
		if heads > 0 && hasHeads {
			p.KV += uint64(cells) * heads * (cacheBytes(kLen, keyType) + cacheBytes(vLen, valueType))
			continue
		}
		// A recurrent layer: its convolution and state, in f32, per
		// sequence.
		conv, inner, state, groups := kv.SSMConvKernel(), kv.SSMInnerSize(), kv.SSMStateSize(), kv.SSMGroupCount()
		var r uint64
		if conv > 0 {
			r = (conv - 1) * (inner + 2*groups*state)
		}
		p.KV += uint64(seqs) * (r + state*inner) * 4
	}
	if kv.SSMInnerSize() > 0 && cfg.CheckpointBytes > 0 { // recurrent layers
		p.KV += uint64(cfg.CheckpointBytes)
	}
	// The compute buffer holds a batch's activations, the widest layer's
	// several times over; the output buffer a row of logits per sequence.
	embd := kv.EmbeddingLength()
	ff := slices.MaxFunc(append(kv.FFNLength(), embd), cmp.Compare[uint64])
	vocab := uint64(0)
	for _, t := range g.Tensors().Items("token_embd") {
		if len(t.Shape) == 2 {
			vocab = t.Shape[1]
		}
	}
	p.Compute = 4*uint64(cfg.Batch)*(8*embd+2*ff) + 4*vocab*uint64(seqs)
	return p, nil
}

// cacheBytes is the bytes of one head's n keys or values of type t.
func cacheBytes(n uint64, t backend.CacheType) uint64 {
	switch t {
	case backend.CacheQ8_0:
		return n / 32 * 34
	case backend.CacheQ4_0:
		return n / 32 * 18
	}
	return n * 2
}

// checkMemory refuses a configuration whose plan is above its memory
// limit (Config.MemoryLimit).
func checkMemory(cfg Config) error {
	limit := cfg.MemoryLimit
	if limit == 0 {
		limit = availableMemory()
	}
	if limit <= 0 {
		return nil
	}
	plan, err := Plan(cfg)
	if err != nil {
		// A file the planner cannot read is llama.cpp's to judge: it
		// loads it, or says why not.
		return nil
	}
	if total := plan.Total(); total > uint64(limit) {
		return fmt.Errorf("inference: the models need %.0f MiB, more than the %.0f MiB the memory limit allows (Config.MemoryLimit; 0 is the memory available):\n%s",
			float64(total)/(1<<20), float64(limit)/(1<<20), plan)
	}
	return nil
}

// availableMemory is MemAvailable of /proc/meminfo, in bytes; 0 where it
// cannot be read.
func availableMemory() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}
