package tinymodel

import (
	"cmp"
	"fmt"
)

// qwen35FullAttentionInterval is <arch>.full_attention_interval of the
// published Qwen3.5 models: every fourth layer attends, the others are
// linear-attention layers.
const qwen35FullAttentionInterval = 4

// Qwen35Template is the chat template of Options{Arch: "qwen35"} with the
// default vocabulary: [ChatML], whose generation prompt opens the
// assistant's thinking as Qwen3.5's template does, with
// <|im_start|>assistant\n<think>\n, or, when enable_thinking is false,
// closes it at once with <|im_start|>assistant\n<think>\n\n</think>\n\n.
const Qwen35Template = `{%- for message in messages -%}
{{- '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<|im_start|>assistant\n' -}}
{%- if enable_thinking is defined and enable_thinking is false -%}
{{- '<think>\n\n</think>\n\n' -}}
{%- else -%}
{{- '<think>\n' -}}
{%- endif -%}
{%- endif -%}`

// layoutQwen35 is layout for Arch "qwen35", as llama.cpp's converter
// writes Qwen3.5 (Qwen3_5ForCausalLM, conversion/qwen.py
// Qwen3_5TextModel), with o.NextN multi-token-prediction blocks; and for
// "qwen35moe", the same with each feed-forward layer a mixture of
// experts (ffn_gate_inp, ffn_{gate,up,down}_exps) beside a gated shared
// expert (ffn_gate_inp_shexp, ffn_{gate,up,down}_shexp), as llama.cpp
// loads Qwen3.5-MoE.
//
// Layer i attends when (i+1) is a multiple of the full-attention interval
// (4), and is a gated delta net ("linear attention") otherwise. A
// full-attention layer is Qwen3's (RMS norms on each head's queries and
// keys) with an output gate: attn_q is twice as wide, each head's queries
// followed by as many gate values. RoPE turns a quarter of each head
// (rope.dimension_count), with M-RoPE sections (rope.dimension_sections)
// split 11:11:10 as Qwen3.5's [11, 11, 10, 0]. A linear-attention layer
// projects the input to queries and keys of LinearKeyHeads heads and
// values of LinearValueHeads heads, all StateSize wide (attn_qkv),
// convolves them over the last 4 positions (ssm_conv1d), and runs the
// delta rule over a StateSize×StateSize state per value head, with a decay from ssm_a,
// ssm_alpha and ssm_dt.bias and a learning rate from ssm_beta; its output
// is normalised per head (ssm_norm), gated by attn_gate and projected back
// (ssm_out). Every layer then normalises (post_attention_norm) into the
// gated feed-forward layer.
//
// The weights are drawn so that the state carries, as for mamba: the
// linear-attention matrices have unit-gain scales (fanIn), ssm_a (which
// converters store as -exp(A_log)) lies in [-1.5, -0.5), and ssm_dt.bias
// puts the decay near exp(-0.1) per token. ssm_conv1d, ssm_dt.bias and
// ssm_a are F32 whatever the type.
//
// The converter's _Qwen35MtpMixin appends Qwen3.5's multi-token-prediction
// (MTP) blocks after the model's own: block_count counts them,
// nextn_predict_layers says how many, and each, whatever its index, is a
// full-attention block (mtp.layers.i renamed blk.<Layers+i>) with the
// NextN tensors beside: nextn.eh_proj (mtp.fc, Embd from the normalised
// embedding and hidden state side by side) and the norms nextn.enorm
// (mtp.pre_fc_norm_embedding), nextn.hnorm (mtp.pre_fc_norm_hidden) and
// nextn.shared_head_norm (mtp.norm). Qwen3.5 has no embed_tokens or
// shared_head.head of its own there: the MTP blocks share token_embd and
// the output layer, so the converter writes no nextn.embed_tokens or
// nextn.shared_head_head.
func layoutQwen35(o Options) ([]kv, []tensorSpec, error) {
	if o.SlidingWindow != 0 || o.Pooling != "" {
		return nil, nil, fmt.Errorf("inferencetest: SlidingWindow and Pooling do not apply to architecture qwen35")
	}
	o.Layers = cmp.Or(o.Layers, qwen35FullAttentionInterval)
	o.KVHeads = cmp.Or(o.KVHeads, 2)
	if err := o.sizes(2048); err != nil {
		return nil, nil, err
	}
	if o.Layers < qwen35FullAttentionInterval {
		return nil, nil, fmt.Errorf("inferencetest: Layers %d: qwen35 needs at least %d, so that a layer attends", o.Layers, qwen35FullAttentionInterval)
	}
	if err := o.attentionHeads(); err != nil {
		return nil, nil, err
	}
	if o.HeadDim%8 != 0 {
		return nil, nil, fmt.Errorf("inferencetest: HeadDim %d: qwen35 rotates pairs in a quarter of each head, so it must be a multiple of 8", o.HeadDim)
	}
	o.StateSize = cmp.Or(o.StateSize, o.HeadDim)
	o.LinearKeyHeads = cmp.Or(o.LinearKeyHeads, o.KVHeads)
	o.LinearValueHeads = cmp.Or(o.LinearValueHeads, o.Heads)
	if o.LinearValueHeads%o.LinearKeyHeads != 0 {
		return nil, nil, fmt.Errorf("inferencetest: LinearValueHeads %d is not a multiple of LinearKeyHeads %d", o.LinearValueHeads, o.LinearKeyHeads)
	}
	inner := o.LinearValueHeads * o.StateSize // the values' width in a linear-attention layer
	typ, fileType, err := weightType(o.Type, o.Embd, o.FF, o.Heads*o.HeadDim)
	if err != nil {
		return nil, nil, err
	}
	if typ == typeQ8_0 && inner%q8Block != 0 {
		return nil, nil, fmt.Errorf("inferencetest: Q8_0 needs LinearValueHeads*StateSize (%d) to be a multiple of %d", inner, q8Block)
	}
	if o.Tokenizer == nil {
		o.Tokenizer = ByteLevel()
		o.Tokenizer.Pre = "qwen35"
		o.Tokenizer.ChatTemplate = Qwen35Template
	}
	nVocab, tokKVs, err := textVocab(o)
	if err != nil {
		return nil, nil, err
	}

	ropeDim := o.HeadDim / 4 // partial_rotary_factor 0.25
	p := o.Arch + "."
	blocks := o
	blocks.Layers += o.NextN // block_count counts the MTP blocks
	kvs := append(shapeKVs(blocks, fileType, nVocab),
		kv{p + "feed_forward_length", uint32(o.FF)},
		kv{p + "attention.head_count", uint32(o.Heads)},
		kv{p + "attention.head_count_kv", uint32(o.KVHeads)},
		kv{p + "attention.key_length", uint32(o.HeadDim)},
		kv{p + "attention.value_length", uint32(o.HeadDim)},
		kv{p + "attention.layer_norm_rms_epsilon", float32(1e-6)},
		kv{p + "rope.freq_base", float32(1e7)},
		kv{p + "rope.dimension_count", uint32(ropeDim)},
		kv{p + "rope.dimension_sections", qwen35Sections(ropeDim / 2)},
		kv{p + "ssm.conv_kernel", uint32(ssmConvKernel)},
		kv{p + "ssm.state_size", uint32(o.StateSize)},
		kv{p + "ssm.group_count", uint32(o.LinearKeyHeads)},
		kv{p + "ssm.time_step_rank", uint32(o.LinearValueHeads)},
		kv{p + "ssm.inner_size", uint32(inner)},
		kv{p + "full_attention_interval", uint32(qwen35FullAttentionInterval)},
	)
	if o.NextN > 0 {
		kvs = append(kvs, kv{p + "nextn_predict_layers", uint32(o.NextN)})
	}
	moe := o.Arch == "qwen35moe"
	if moe {
		kvs = append(kvs,
			kv{p + "expert_count", uint32(qwen35Experts)},
			kv{p + "expert_used_count", uint32(qwen35ExpertsUsed)},
			kv{p + "expert_feed_forward_length", uint32(o.FF)},
			kv{p + "expert_shared_feed_forward_length", uint32(o.FF)},
		)
	}
	kvs = append(kvs, tokKVs...)

	embd, ff, vocab := uint64(o.Embd), uint64(o.FF), uint64(nVocab)
	q, kvw, hd := uint64(o.Heads*o.HeadDim), uint64(o.KVHeads*o.HeadDim), uint64(o.HeadDim)
	in, heads := uint64(inner), uint64(o.LinearValueHeads)
	qkv := uint64(2*o.LinearKeyHeads*o.StateSize) + in // queries, keys and values of a linear-attention layer
	ts := []tensorSpec{matrix("token_embd.weight", typ, embd, vocab)}
	for i := range o.Layers + o.NextN {
		b := fmt.Sprintf("blk.%d.", i)
		mtp := i >= o.Layers
		ts = append(ts, norm(b+"attn_norm.weight", embd))
		if mtp || (i+1)%qwen35FullAttentionInterval == 0 {
			ts = append(ts,
				matrix(b+"attn_q.weight", typ, embd, 2*q), // queries and gates
				matrix(b+"attn_k.weight", typ, embd, kvw),
				matrix(b+"attn_v.weight", typ, embd, kvw),
				norm(b+"attn_q_norm.weight", hd),
				norm(b+"attn_k_norm.weight", hd),
				matrix(b+"attn_output.weight", typ, q, embd),
			)
		} else {
			ts = append(ts,
				scaled(matrix(b+"attn_qkv.weight", typ, embd, qkv), fanIn(o.Embd)),
				scaled(matrix(b+"attn_gate.weight", typ, embd, in), fanIn(o.Embd)),
				matrix(b+"ssm_beta.weight", typ, embd, heads),
				matrix(b+"ssm_alpha.weight", typ, embd, heads),
				f32(b+"ssm_conv1d.weight", fanIn(ssmConvKernel), 0, ssmConvKernel, qkv),
				f32(b+"ssm_dt.bias", 10, -2.25, heads),
				f32(b+"ssm_a", 14, -1, heads),
				norm(b+"ssm_norm.weight", uint64(o.StateSize)),
				scaled(matrix(b+"ssm_out.weight", typ, in, embd), fanIn(inner)),
			)
		}
		ts = append(ts, norm(b+"post_attention_norm.weight", embd))
		if moe {
			ne := uint64(qwen35Experts)
			ts = append(ts,
				matrix(b+"ffn_gate_inp.weight", typeF32, embd, ne),
				tensorSpec{name: b + "ffn_gate_exps.weight", shape: []uint64{embd, ff, ne}, typ: typ},
				tensorSpec{name: b + "ffn_up_exps.weight", shape: []uint64{embd, ff, ne}, typ: typ},
				tensorSpec{name: b + "ffn_down_exps.weight", shape: []uint64{ff, embd, ne}, typ: typ},
				f32(b+"ffn_gate_inp_shexp.weight", 1, 0, embd),
				matrix(b+"ffn_gate_shexp.weight", typ, embd, ff),
				matrix(b+"ffn_up_shexp.weight", typ, embd, ff),
				matrix(b+"ffn_down_shexp.weight", typ, ff, embd),
			)
		} else {
			ts = append(ts,
				matrix(b+"ffn_gate.weight", typ, embd, ff),
				matrix(b+"ffn_up.weight", typ, embd, ff),
				matrix(b+"ffn_down.weight", typ, ff, embd),
			)
		}
		if mtp {
			ts = append(ts,
				matrix(b+"nextn.eh_proj.weight", typ, 2*embd, embd),
				norm(b+"nextn.enorm.weight", embd),
				norm(b+"nextn.hnorm.weight", embd),
				norm(b+"nextn.shared_head_norm.weight", embd),
			)
		}
	}
	return kvs, append(ts, outputTensors(o, typ, embd, vocab)...), nil
}

// A qwen35moe model's experts: how many, and how many a token uses.
const (
	qwen35Experts     = 4
	qwen35ExpertsUsed = 2
)

// qwen35Sections returns rope.dimension_sections for pairs rotated pairs
// per head, split 11:11:10 between position, row and column as
// Qwen3.5's [11, 11, 10, 0] for 32 pairs.
func qwen35Sections(pairs int) []int32 {
	col := pairs * 10 / 32
	pos := (pairs - col + 1) / 2
	return []int32{int32(pos), int32(pairs - col - pos), int32(col), 0}
}
