package tinymodel

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/internal/jinja"
	"github.com/ollama/ollama/fs/ggml"
)

// newArchs are what llama.cpp's converter (gguf-py/gguf/constants.py,
// tensor_mapping.py and conversion/*.py of ggml-org/llama.cpp) writes for
// the architectures that the llama.cpp we link does not know, with the
// default Options: the metadata, typed as the converter types it (Ollama's
// engine reads a u32 written as i32 as missing), and every tensor with its
// shape.
var newArchs = []struct {
	arch string
	kvs  map[string]any // without the "<arch>." prefix
	// global tensors, the tensors of each kind of layer, and which layers
	// are of the second kind
	global, layer, other map[string][]uint64
	others               []int
}{
	{
		arch: "qwen35",
		kvs: map[string]any{
			"block_count":                      uint32(4),
			"context_length":                   uint32(2048),
			"embedding_length":                 uint32(64),
			"feed_forward_length":              uint32(128),
			"attention.head_count":             uint32(4),
			"attention.head_count_kv":          uint32(2),
			"attention.key_length":             uint32(16),
			"attention.value_length":           uint32(16),
			"attention.layer_norm_rms_epsilon": float32(1e-6),
			"rope.freq_base":                   float32(1e7),
			"rope.dimension_count":             uint32(4), // a quarter of the head
			"rope.dimension_sections":          []int32{1, 1, 0, 0},
			"full_attention_interval":          uint32(4),
			"ssm.conv_kernel":                  uint32(4),
			"ssm.state_size":                   uint32(16),
			"ssm.group_count":                  uint32(2),
			"ssm.time_step_rank":               uint32(4),
			"ssm.inner_size":                   uint32(64),
			"tokenizer.ggml.model":             "gpt2",
			"tokenizer.ggml.pre":               "qwen35",
			"tokenizer.ggml.eos_token_id":      uint32(258),
			"tokenizer.chat_template":          Qwen35Template,
		},
		global: map[string][]uint64{
			"token_embd.weight":  {64, 263},
			"output_norm.weight": {64},
			"output.weight":      {64, 263},
		},
		// Linear attention (gated delta net): blk.0 to blk.2.
		layer: map[string][]uint64{
			"attn_norm.weight":           {64},
			"attn_qkv.weight":            {64, 128}, // queries and keys of 2 heads, values of 4, 16 wide
			"attn_gate.weight":           {64, 64},
			"ssm_beta.weight":            {64, 4},
			"ssm_alpha.weight":           {64, 4},
			"ssm_conv1d.weight":          {4, 128},
			"ssm_dt.bias":                {4},
			"ssm_a":                      {4},
			"ssm_norm.weight":            {16},
			"ssm_out.weight":             {64, 64},
			"post_attention_norm.weight": {64},
			"ffn_gate.weight":            {64, 128},
			"ffn_up.weight":              {64, 128},
			"ffn_down.weight":            {128, 64},
		},
		// Full attention: blk.3.
		other: map[string][]uint64{
			"attn_norm.weight":           {64},
			"attn_q.weight":              {64, 128}, // queries and gates
			"attn_k.weight":              {64, 32},
			"attn_v.weight":              {64, 32},
			"attn_q_norm.weight":         {16},
			"attn_k_norm.weight":         {16},
			"attn_output.weight":         {64, 64},
			"post_attention_norm.weight": {64},
			"ffn_gate.weight":            {64, 128},
			"ffn_up.weight":              {64, 128},
			"ffn_down.weight":            {128, 64},
		},
		others: []int{3},
	},
	{
		arch: "gemma4",
		kvs: map[string]any{
			"block_count":                      uint32(6),
			"context_length":                   uint32(2048),
			"embedding_length":                 uint32(64),
			"feed_forward_length":              uint32(128),
			"attention.head_count":             uint32(4),
			"attention.head_count_kv":          uint32(2),
			"attention.key_length":             uint32(32), // global layers
			"attention.value_length":           uint32(32),
			"attention.key_length_swa":         uint32(16),
			"attention.value_length_swa":       uint32(16),
			"attention.layer_norm_rms_epsilon": float32(1e-6),
			"attention.sliding_window":         uint32(32),
			"attention.sliding_window_pattern": []bool{true, true, true, true, true, false},
			"attention.shared_kv_layers":       uint32(0),
			"embedding_length_per_layer_input": uint32(0),
			"rope.freq_base":                   float32(1e6),
			"rope.freq_base_swa":               float32(1e4),
			"rope.dimension_count":             uint32(32),
			"rope.dimension_count_swa":         uint32(16),
			"final_logit_softcapping":          float32(30),
			"tokenizer.ggml.model":             "gemma4",
			"tokenizer.ggml.add_bos_token":     true,
			"tokenizer.ggml.add_space_prefix":  false,
			"tokenizer.ggml.bos_token_id":      uint32(2),
			"tokenizer.ggml.eos_token_id":      uint32(1),
			"tokenizer.chat_template":          Gemma4Template,
		},
		global: map[string][]uint64{
			"token_embd.weight":  {64, 462},
			"rope_freqs.weight":  {16},
			"output_norm.weight": {64},
			"output.weight":      {64, 462},
		},
		// Sliding window, heads of 16: blk.0 to blk.4.
		layer: map[string][]uint64{
			"attn_norm.weight":           {64},
			"attn_q.weight":              {64, 64},
			"attn_k.weight":              {64, 32},
			"attn_v.weight":              {64, 32},
			"attn_q_norm.weight":         {16},
			"attn_k_norm.weight":         {16},
			"attn_output.weight":         {64, 64},
			"post_attention_norm.weight": {64},
			"ffn_norm.weight":            {64},
			"ffn_gate.weight":            {64, 128},
			"ffn_up.weight":              {64, 128},
			"ffn_down.weight":            {128, 64},
			"post_ffw_norm.weight":       {64},
			"layer_output_scale.weight":  {1},
		},
		// Global, heads of 32: blk.5.
		other: map[string][]uint64{
			"attn_norm.weight":           {64},
			"attn_q.weight":              {64, 128},
			"attn_k.weight":              {64, 64},
			"attn_v.weight":              {64, 64},
			"attn_q_norm.weight":         {32},
			"attn_k_norm.weight":         {32},
			"attn_output.weight":         {128, 64},
			"post_attention_norm.weight": {64},
			"ffn_norm.weight":            {64},
			"ffn_gate.weight":            {64, 128},
			"ffn_up.weight":              {64, 128},
			"ffn_down.weight":            {128, 64},
			"post_ffw_norm.weight":       {64},
			"layer_output_scale.weight":  {1},
		},
		others: []int{5},
	},
}

func TestNewArchLayout(t *testing.T) {
	for _, a := range newArchs {
		t.Run(a.arch, func(t *testing.T) {
			g, f := decode(t, Model(t, Options{Arch: a.arch}))
			kv := g.KV()
			if got := kv.Architecture(); got != a.arch {
				t.Fatalf("architecture %q", got)
			}
			for key, want := range a.kvs {
				var got any
				switch want.(type) {
				case []int32:
					got = kv.Ints(key)
				case []bool:
					got = kv.Bools(key)
				default:
					full := key
					if !isGlobalKey(key) {
						full = a.arch + "." + key
					}
					got = kv[full]
				}
				if fmt.Sprintf("%T %v", got, got) != fmt.Sprintf("%T %v", want, want) {
					t.Errorf("%s = %T %v, want %T %v", key, got, got, want, want)
				}
			}

			want := maps.Clone(a.global)
			blocks := int(a.kvs["block_count"].(uint32))
			for i := range blocks {
				layer := a.layer
				if slices.Contains(a.others, i) {
					layer = a.other
				}
				for name, shape := range layer {
					want[fmt.Sprintf("blk.%d.%s", i, name)] = shape
				}
			}
			checkTensors(t, g, want)

			switch a.arch {
			case "qwen35":
				// The converter stores A as -exp(A_log): negative, so
				// that the state decays.
				for _, v := range floats(t, g, f, "blk.0.ssm_a") {
					if v >= 0 {
						t.Fatalf("blk.0.ssm_a has %v, want negative values", v)
					}
				}
			case "gemma4":
				// Proportional RoPE: a quarter of the global heads' pairs
				// turn (factor 1), the others stand still (1e30).
				want := slices.Repeat([]float32{1e30}, 16)
				copy(want, []float32{1, 1, 1, 1})
				if got := floats(t, g, f, "rope_freqs.weight"); !slices.Equal(got, want) {
					t.Errorf("rope_freqs = %v, want %v", got, want)
				}
			}
		})
	}
}

// isGlobalKey reports whether key has no architecture prefix.
func isGlobalKey(key string) bool {
	return strings.HasPrefix(key, "general.") || strings.HasPrefix(key, "tokenizer.")
}

func TestNewArchShapes(t *testing.T) {
	g, _ := decode(t, Model(t, Options{Arch: "qwen35", Layers: 8, Embd: 96, Heads: 6, KVHeads: 3, HeadDim: 32, StateSize: 16, TiedEmbeddings: true, Type: "q8_0"}))
	kv := g.KV()
	for key, want := range map[string]uint32{
		"block_count": 8, "attention.key_length": 32, "rope.dimension_count": 8,
		"ssm.state_size": 16, "ssm.group_count": 3, "ssm.time_step_rank": 6, "ssm.inner_size": 96,
	} {
		if got := kv.Uint(key); got != want {
			t.Errorf("qwen35 %s = %d, want %d", key, got, want)
		}
	}
	if got := kv.Ints("rope.dimension_sections"); !slices.Equal(got, []int32{2, 1, 1, 0}) {
		t.Errorf("qwen35 rope.dimension_sections = %v", got)
	}
	for _, ts := range g.Tensors().Items() {
		switch ts.Name {
		case "output.weight":
			t.Error("output.weight written with tied embeddings")
		case "blk.7.attn_q.weight", "blk.3.attn_q.weight":
			if !slices.Equal(ts.Shape, []uint64{96, 384}) {
				t.Errorf("%s shape %v", ts.Name, ts.Shape)
			}
		case "blk.6.attn_qkv.weight":
			if !slices.Equal(ts.Shape, []uint64{96, 192}) { // 2*3*16 + 6*16
				t.Errorf("%s shape %v", ts.Name, ts.Shape)
			}
		case "blk.6.attn_q.weight", "blk.2.attn_q.weight":
			t.Errorf("%s in a linear-attention layer", ts.Name)
		}
	}

	// Linear-attention heads of their own, as Qwen3.5's are: 2 key heads
	// and 6 value heads of 16 beside attention heads of 32.
	g, _ = decode(t, Model(t, Options{Arch: "qwen35", Heads: 4, KVHeads: 2, HeadDim: 32, StateSize: 16, LinearKeyHeads: 2, LinearValueHeads: 6}))
	kv = g.KV()
	for key, want := range map[string]uint32{
		"attention.head_count": 4, "attention.head_count_kv": 2, "attention.key_length": 32,
		"ssm.state_size": 16, "ssm.group_count": 2, "ssm.time_step_rank": 6, "ssm.inner_size": 96,
	} {
		if got := kv.Uint(key); got != want {
			t.Errorf("qwen35 with linear heads: %s = %d, want %d", key, got, want)
		}
	}
	shapes := map[string][]uint64{}
	for _, ts := range g.Tensors().Items() {
		shapes[ts.Name] = ts.Shape
	}
	for name, want := range map[string][]uint64{
		"blk.0.attn_qkv.weight":    {64, 160}, // 2*2*16 + 6*16
		"blk.0.attn_gate.weight":   {64, 96},
		"blk.0.ssm_beta.weight":    {64, 6},
		"blk.0.ssm_alpha.weight":   {64, 6},
		"blk.0.ssm_conv1d.weight":  {4, 160},
		"blk.0.ssm_dt.bias":        {6},
		"blk.0.ssm_a":              {6},
		"blk.0.ssm_norm.weight":    {16},
		"blk.0.ssm_out.weight":     {96, 64},
		"blk.3.attn_q.weight":      {64, 256},
		"blk.3.attn_k.weight":      {64, 64},
		"blk.3.attn_q_norm.weight": {32},
	} {
		if !slices.Equal(shapes[name], want) {
			t.Errorf("qwen35 with linear heads: %s shape %v, want %v", name, shapes[name], want)
		}
	}

	g, _ = decode(t, Model(t, Options{Arch: "gemma4", Layers: 12, SlidingWindow: 100, HeadDim: 8}))
	kv = g.KV()
	if got := kv.Bools("attention.sliding_window_pattern"); !slices.Equal(got, []bool{true, true, true, true, true, false, true, true, true, true, true, false}) {
		t.Errorf("gemma4 sliding_window_pattern = %v", got)
	}
	for key, want := range map[string]uint32{"attention.sliding_window": 100, "attention.key_length": 16, "attention.key_length_swa": 8} {
		if got := kv.Uint(key); got != want {
			t.Errorf("gemma4 %s = %d, want %d", key, got, want)
		}
	}
}

func TestQwen35Sections(t *testing.T) {
	for pairs, want := range map[int][]int32{
		32: {11, 11, 10, 0}, // Qwen3.5: heads of 256, a quarter rotated
		2:  {1, 1, 0, 0},
		8:  {3, 3, 2, 0},
		16: {6, 5, 5, 0},
	} {
		got := qwen35Sections(pairs)
		if !slices.Equal(got, want) {
			t.Errorf("qwen35Sections(%d) = %v, want %v", pairs, got, want)
		}
		if sum := got[0] + got[1] + got[2] + got[3]; int(sum) != pairs {
			t.Errorf("qwen35Sections(%d) sums to %d", pairs, sum)
		}
	}
}

// TestQwen35NextN: NextN appends multi-token-prediction blocks as
// llama.cpp's converter writes Qwen3.5's (conversion/qwen.py
// _Qwen35MtpMixin; tensor names from gguf-py/gguf/constants.py): counted
// in block_count, numbered in nextn_predict_layers, each a full-attention
// block whatever its index with the four NextN tensors beside, and the
// model's own tensors unchanged.
func TestQwen35NextN(t *testing.T) {
	qwen35 := newArchs[0]
	if qwen35.arch != "qwen35" {
		t.Fatalf("newArchs[0] is %s", qwen35.arch)
	}
	g0, f0 := decode(t, Model(t, Options{Arch: "qwen35"}))
	g, f := decode(t, Model(t, Options{Arch: "qwen35", NextN: 1}))
	kv := g.KV()
	for key, want := range map[string]uint32{"block_count": 5, "nextn_predict_layers": 1, "full_attention_interval": 4} {
		if got, ok := kv["qwen35."+key].(uint32); !ok || got != want {
			t.Errorf("qwen35.%s = %T %v, want %d", key, kv["qwen35."+key], kv["qwen35."+key], want)
		}
	}
	if v, ok := g0.KV()["qwen35.nextn_predict_layers"]; ok {
		t.Errorf("NextN 0 writes nextn_predict_layers %v", v)
	}

	want := map[string][]uint64{}
	own := map[string]bool{}
	for _, ts := range g0.Tensors().Items() {
		want[ts.Name] = ts.Shape
		own[ts.Name] = true
	}
	for name, shape := range qwen35.other { // the attention layer's tensors
		want["blk.4."+name] = shape
	}
	for name, shape := range map[string][]uint64{
		"nextn.eh_proj.weight":          {128, 64}, // embedding and hidden state side by side
		"nextn.enorm.weight":            {64},
		"nextn.hnorm.weight":            {64},
		"nextn.shared_head_norm.weight": {64},
	} {
		want["blk.4."+name] = shape
	}
	checkTensors(t, g, want)
	for _, ts := range g.Tensors().Items() {
		if own[ts.Name] {
			// The model's own tensors hold what they hold without
			// the MTP block.
			_, a := tensorData(t, g0, f0, ts.Name)
			_, b := tensorData(t, g, f, ts.Name)
			if string(a) != string(b) {
				t.Errorf("%s differs from the model's without NextN", ts.Name)
			}
		}
	}

	// Two MTP blocks after 8 layers, in Q8_0: both attend, whatever
	// full_attention_interval says of index 8, and eh_proj is a matrix of
	// the weights' type.
	g, _ = decode(t, Model(t, Options{Arch: "qwen35", Layers: 8, Embd: 96, Heads: 6, KVHeads: 3, HeadDim: 32, StateSize: 16, TiedEmbeddings: true, Type: "q8_0", NextN: 2}))
	kv = g.KV()
	if got := kv.Uint("block_count"); got != 10 {
		t.Errorf("block_count %d, want 10", got)
	}
	if got := kv.Uint("nextn_predict_layers"); got != 2 {
		t.Errorf("nextn_predict_layers %d, want 2", got)
	}
	shapes := map[string]*ggml.Tensor{}
	for _, ts := range g.Tensors().Items() {
		shapes[ts.Name] = ts
	}
	for _, b := range []string{"blk.8.", "blk.9."} {
		for name, want := range map[string][]uint64{
			"attn_q.weight":                 {96, 384},
			"attn_k.weight":                 {96, 96},
			"attn_q_norm.weight":            {32},
			"nextn.eh_proj.weight":          {192, 96},
			"nextn.shared_head_norm.weight": {96},
		} {
			ts := shapes[b+name]
			if ts == nil {
				t.Errorf("no tensor %s%s", b, name)
				continue
			}
			if !slices.Equal(ts.Shape, want) {
				t.Errorf("%s shape %v, want %v", ts.Name, ts.Shape, want)
			}
		}
		for _, name := range []string{"attn_qkv.weight", "ssm_a", "nextn.embed_tokens.weight", "nextn.shared_head_head.weight"} {
			if shapes[b+name] != nil {
				t.Errorf("MTP block has %s%s", b, name)
			}
		}
		if k := shapes[b+"nextn.eh_proj.weight"]; k != nil && k.Kind != shapes["blk.0.attn_qkv.weight"].Kind {
			t.Errorf("%snextn.eh_proj.weight of kind %d, the matrices' %d", b, k.Kind, shapes["blk.0.attn_qkv.weight"].Kind)
		}
		if k := shapes[b+"nextn.enorm.weight"]; k == nil || k.Kind != 0 {
			t.Errorf("%snextn.enorm.weight not F32", b)
		}
	}
	if shapes["blk.7.attn_q.weight"] == nil || shapes["blk.6.attn_qkv.weight"] == nil {
		t.Error("the model's own layers changed kinds")
	}
}

func TestNewArchTemplates(t *testing.T) {
	msg := func(role, content string) *jinja.Map {
		m := jinja.NewMap()
		m.Set("role", role)
		m.Set("content", content)
		return m
	}
	conv := []any{msg("system", "Be brief. "), msg("user", "Hi"), msg("assistant", "Hello."), msg("user", "Bye")}
	for _, tc := range []struct {
		name, template string
		think          any // enable_thinking, nil for unset
		want           string
	}{
		{"qwen35", Qwen35Template, nil,
			"<|im_start|>system\nBe brief. <|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n<think>\n"},
		{"qwen35/no thinking", Qwen35Template, false,
			"<|im_start|>system\nBe brief. <|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"},
		{"gemma4", Gemma4Template, nil,
			"<bos><|turn>system\nBe brief.<turn|>\n<|turn>user\nHi<turn|>\n<|turn>model\nHello.<turn|>\n<|turn>user\nBye<turn|>\n<|turn>model\n"},
		{"gemma4/thinking", Gemma4Template, true,
			"<bos><|turn>system\n<|think|>\nBe brief.<turn|>\n<|turn>user\nHi<turn|>\n<|turn>model\nHello.<turn|>\n<|turn>user\nBye<turn|>\n<|turn>model\n"},
		{"gemma4/no thinking", Gemma4Template, false,
			"<bos><|turn>system\nBe brief.<turn|>\n<|turn>user\nHi<turn|>\n<|turn>model\nHello.<turn|>\n<|turn>user\nBye<turn|>\n<|turn>model\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := jinja.Parse(tc.template)
			if err != nil {
				t.Fatal(err)
			}
			vars := map[string]any{"messages": conv, "add_generation_prompt": true, "bos_token": "<bos>"}
			if tc.think != nil {
				vars["enable_thinking"] = tc.think
			}
			got, err := tmpl.Render(vars)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("rendered\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
	// Without a system message, Gemma 4 opens a system turn only to think.
	tmpl, err := jinja.Parse(Gemma4Template)
	if err != nil {
		t.Fatal(err)
	}
	for think, want := range map[bool]string{
		false: "<bos><|turn>user\nHi<turn|>\n<|turn>model\n",
		true:  "<bos><|turn>system\n<|think|>\n<turn|>\n<|turn>user\nHi<turn|>\n<|turn>model\n",
	} {
		got, err := tmpl.Render(map[string]any{"messages": []any{msg("user", "Hi")}, "add_generation_prompt": true, "bos_token": "<bos>", "enable_thinking": think})
		if err != nil || got != want {
			t.Errorf("enable_thinking %v: %q, %v; want %q", think, got, err, want)
		}
	}
}

func TestGemma4Tokenizer(t *testing.T) {
	tok := Gemma4Tokenizer()
	for id, want := range map[int]string{0: "<pad>", 1: "<eos>", 2: "<bos>", 3: "<unk>", 8: "<|channel>", 14: `<|"|>`, 105: "<|turn>", 106: "<turn|>", 107: "<0x00>", 362: "<0xFF>", 363: "▁"} {
		if tok.Tokens[id] != want {
			t.Errorf("token %d = %q, want %q", id, tok.Tokens[id], want)
		}
	}
	for _, s := range []string{"<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>", "<|tool_response>", "<tool_response|>", `<|"|>`} {
		// llama.cpp's converter makes these user-defined, so that they
		// are always rendered for the chat parser to read.
		if i := slices.Index(tok.Tokens, s); i < 0 || tok.Types[i] != TokenUserDefined {
			t.Errorf("%s is not a user-defined token", s)
		}
	}
	for _, m := range tok.Merges {
		var l, r string
		fmt.Sscanf(m, "%s %s", &l, &r)
		if !slices.Contains(tok.Tokens, l) || !slices.Contains(tok.Tokens, r) || !slices.Contains(tok.Tokens, l+r) {
			t.Errorf("merge %q: a part or the result is not a token", m)
		}
	}
	g, _ := decode(t, Model(t, Options{Arch: "gemma4", VocabSize: 512}))
	kv := g.KV()
	if _, ok := kv["tokenizer.ggml.pre"]; ok {
		t.Error("gemma4 has tokenizer.ggml.pre, which llama.cpp's converter does not write")
	}
	if got := kv.Strings("tokenizer.ggml.merges"); !slices.Equal(got, tok.Merges) {
		t.Errorf("merges %q", got)
	}
	if got := len(kv.Floats("tokenizer.ggml.scores")); got != 512 {
		t.Errorf("%d scores, want 512", got)
	}
}

// checkTensors checks that g holds exactly the tensors of want, of the
// shapes it gives.
func checkTensors(t *testing.T, g *ggml.GGML, want map[string][]uint64) {
	t.Helper()
	want = maps.Clone(want)
	for _, ts := range g.Tensors().Items() {
		shape, ok := want[ts.Name]
		if !ok {
			t.Errorf("unexpected tensor %s", ts.Name)
			continue
		}
		if !slices.Equal(ts.Shape, shape) {
			t.Errorf("%s shape %v, want %v", ts.Name, ts.Shape, shape)
		}
		delete(want, ts.Name)
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		t.Errorf("no tensor %s", name)
	}
}
