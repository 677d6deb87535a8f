package tinymodel

import (
	"cmp"
	"fmt"
)

// gemma4SWAPattern makes every sixth layer of a gemma4 model global (5,
// 11, ...) and the others sliding-window, as in Gemma 4 31B.
const gemma4SWAPattern = 6

// Gemma4Template is the chat template of [Gemma4Tokenizer], the turns of
// Gemma 4's template without its tools: <bos>, then a system turn
// <|turn>system\n...<turn|>\n when the first message is a system (or
// developer) message or enable_thinking is true, in which case it starts
// with <|think|>\n, then each message as <|turn>role\ncontent<turn|>\n with
// the assistant's role named model, and <|turn>model\n when a generation
// prompt is asked for.
const Gemma4Template = `{{- bos_token -}}
{%- set sys = messages and messages[0]['role'] in ['system', 'developer'] -%}
{%- set think = enable_thinking is defined and enable_thinking -%}
{%- if think or sys -%}
{{- '<|turn>system\n' -}}
{%- if think -%}{{- '<|think|>\n' -}}{%- endif -%}
{%- if sys -%}{{- messages[0]['content'] | trim -}}{%- endif -%}
{{- '<turn|>\n' -}}
{%- endif -%}
{%- for message in messages -%}
{%- if not (loop.first and sys) -%}
{%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}
{{- '<|turn>' + role + '\n' + (message['content'] | trim) + '<turn|>\n' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<|turn>model\n' -}}
{%- endif -%}`

// Gemma4Tokenizer returns the vocabulary that Options{Arch: "gemma4"}
// defaults to, laid out as Gemma 4's as far as a small vocabulary allows: a
// BPE over SentencePiece pieces (tokenizer.ggml.model "gemma4"), in which
// a space is "▁" and text that no piece covers is spelled with the byte
// tokens "<0x00>" to "<0xFF>". It holds
//
//	0 <pad>  1 <eos> (EOS)  2 <bos> (BOS, added)  3 <unk>  4 <mask>
//	5 <|think|>  6 <|tool>  7 <tool|>  (control)
//	8 <|channel>  9 <channel|>  10 <|tool_call>  11 <tool_call|>
//	12 <|tool_response>  13 <tool_response|>  14 <|"|>  (user-defined, as
//	llama.cpp's converter marks them so that they are always rendered)
//	15 to 104 <unused0> to <unused89>
//	105 <|turn>  106 <turn|>  (control; Gemma 4's turn markers, 106 being
//	the end of turn that Ollama's engine assumes)
//	107 to 362 the byte tokens
//	363 ▁, then the printable ASCII characters, then ▁▁, th, ▁th and er
//	with their merges
//
// and the [Gemma4Template] chat template. Each call returns a new
// Tokenizer.
func Gemma4Tokenizer() *Tokenizer {
	tok := &Tokenizer{Model: "gemma4", BOS: 2, EOS: 1, PAD: 0, AddBOS: true, ChatTemplate: Gemma4Template}
	add := func(typ TokenType, texts ...string) {
		for _, s := range texts {
			tok.Tokens = append(tok.Tokens, s)
			tok.Types = append(tok.Types, typ)
		}
	}
	add(TokenControl, "<pad>", "<eos>", "<bos>")
	add(TokenUnknown, "<unk>")
	add(TokenControl, "<mask>", "<|think|>", "<|tool>", "<tool|>")
	add(TokenUserDefined, "<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>", "<|tool_response>", "<tool_response|>", `<|"|>`)
	for i := 0; len(tok.Tokens) < 105; i++ {
		add(TokenUnused, fmt.Sprintf("<unused%d>", i))
	}
	add(TokenControl, "<|turn>", "<turn|>")
	for b := range 256 {
		add(TokenByte, fmt.Sprintf("<0x%02X>", b))
	}
	add(TokenNormal, "▁")
	for c := byte('!'); c <= '~'; c++ {
		add(TokenNormal, string(c))
	}
	add(TokenNormal, "▁▁", "th", "▁th", "er")
	tok.Merges = []string{"▁ ▁", "t h", "▁ th", "e r"}
	return tok
}

// layoutGemma4 is layout for Arch "gemma4", as llama.cpp's converter
// writes Gemma 4 (Gemma4ForConditionalGeneration's text model,
// conversion/gemma.py Gemma4Model) without experts, per-layer input
// embeddings or shared key-value layers.
//
// Its layers are gemma3's (norms on each head's queries and keys, norms
// after attention and after the feed-forward layer, a GELU feed-forward
// layer, embeddings scaled by sqrt(Embd)), each ending with a learned
// scalar (layer_output_scale), and the logits are soft-capped at 30
// (final_logit_softcapping). Every sixth layer is global and the others
// slide (attention.sliding_window_pattern, one bool per layer, true for
// sliding). Sliding-window layers have heads HeadDim wide
// (attention.key_length_swa) and rotate them whole with RoPE base 10,000
// (rope.freq_base_swa); global layers have heads twice as wide
// (attention.key_length) and RoPE base 1,000,000, and rotate a quarter
// of each head: rope_freqs, which only global layers read, holds 1 for
// each of the first HeadDim/4 pairs and 1e30, which stops a pair from
// turning, for the others, as the converter writes Gemma 4's
// "proportional" RoPE.
func layoutGemma4(o Options) ([]kv, []tensorSpec, error) {
	if o.StateSize != 0 || o.Pooling != "" {
		return nil, nil, fmt.Errorf("inferencetest: StateSize and Pooling do not apply to architecture gemma4")
	}
	o.Layers = cmp.Or(o.Layers, gemma4SWAPattern)
	o.KVHeads = cmp.Or(o.KVHeads, 2)
	o.SlidingWindow = cmp.Or(o.SlidingWindow, 32)
	if err := o.sizes(2048); err != nil {
		return nil, nil, err
	}
	if o.Layers < gemma4SWAPattern {
		return nil, nil, fmt.Errorf("inferencetest: Layers %d: gemma4 needs at least %d, so that a layer is global", o.Layers, gemma4SWAPattern)
	}
	if err := o.attentionHeads(); err != nil {
		return nil, nil, err
	}
	if o.HeadDim%4 != 0 {
		return nil, nil, fmt.Errorf("inferencetest: HeadDim %d: gemma4's global layers rotate pairs in a quarter of their heads, twice as wide, so it must be a multiple of 4", o.HeadDim)
	}
	typ, fileType, err := weightType(o.Type, o.Embd, o.FF, o.Heads*o.HeadDim)
	if err != nil {
		return nil, nil, err
	}
	if o.Tokenizer == nil {
		o.Tokenizer = Gemma4Tokenizer()
	}
	nVocab, tokKVs, err := textVocab(o)
	if err != nil {
		return nil, nil, err
	}

	global := func(layer int) bool { return (layer+1)%gemma4SWAPattern == 0 }
	sliding := make([]bool, o.Layers)
	for i := range sliding {
		sliding[i] = !global(i)
	}
	hdSWA, hdGlobal := o.HeadDim, 2*o.HeadDim
	p := o.Arch + "."
	kvs := append(shapeKVs(o, fileType, nVocab),
		kv{p + "feed_forward_length", uint32(o.FF)},
		kv{p + "attention.head_count", uint32(o.Heads)},
		kv{p + "attention.head_count_kv", uint32(o.KVHeads)},
		kv{p + "attention.key_length", uint32(hdGlobal)},
		kv{p + "attention.value_length", uint32(hdGlobal)},
		kv{p + "attention.key_length_swa", uint32(hdSWA)},
		kv{p + "attention.value_length_swa", uint32(hdSWA)},
		kv{p + "attention.layer_norm_rms_epsilon", float32(1e-6)},
		kv{p + "attention.sliding_window", uint32(o.SlidingWindow)},
		kv{p + "attention.sliding_window_pattern", sliding},
		kv{p + "attention.shared_kv_layers", uint32(0)},
		kv{p + "embedding_length_per_layer_input", uint32(0)},
		kv{p + "rope.freq_base", float32(1e6)},
		kv{p + "rope.freq_base_swa", float32(1e4)},
		kv{p + "rope.dimension_count", uint32(hdGlobal)},
		kv{p + "rope.dimension_count_swa", uint32(hdSWA)},
		kv{p + "final_logit_softcapping", float32(30)},
	)
	kvs = append(kvs, tokKVs...)

	// rope_freqs: one factor per pair of a global head.
	freqs := make([]float32, hdGlobal/2)
	for i := range freqs {
		freqs[i] = 1
		if i >= hdGlobal/8 {
			freqs[i] = 1e30
		}
	}
	embd, ff, vocab := uint64(o.Embd), uint64(o.FF), uint64(nVocab)
	ts := []tensorSpec{
		matrix("token_embd.weight", typ, embd, vocab),
		{name: "rope_freqs.weight", shape: []uint64{uint64(len(freqs))}, typ: typeF32, values: freqs},
	}
	for i := range o.Layers {
		b := fmt.Sprintf("blk.%d.", i)
		hd := uint64(hdSWA)
		if global(i) {
			hd = uint64(hdGlobal)
		}
		q, kvw := uint64(o.Heads)*hd, uint64(o.KVHeads)*hd
		ts = append(ts, norm(b+"attn_norm.weight", embd))
		ts = append(ts, attention(b, typ, embd, q, kvw)...)
		ts = append(ts,
			norm(b+"attn_q_norm.weight", hd),
			norm(b+"attn_k_norm.weight", hd),
			norm(b+"post_attention_norm.weight", embd),
		)
		ts = append(ts, feedForward(b, typ, embd, ff)...)
		ts = append(ts,
			norm(b+"post_ffw_norm.weight", embd),
			norm(b+"layer_output_scale.weight", 1),
		)
	}
	return kvs, append(ts, outputTensors(o, typ, embd, vocab)...), nil
}
