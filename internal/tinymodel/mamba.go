package tinymodel

import (
	"cmp"
	"fmt"
	"math"
)

// ssmConvKernel is the number of positions a Mamba block's convolution
// spans, <arch>.ssm.conv_kernel, as in the published models.
const ssmConvKernel = 4

// fanIn is the scale that gives random weights the standard deviation
// 1/sqrt(n), as PyTorch's default initialisation roughly does for a layer
// of n inputs. A Mamba block at weightStd would pass on almost nothing of
// its state: a chain of small matrices makes the recurrent part of its
// output vanish next to the rest, and logits would barely depend on what
// came before, which is what tests of its memory look at.
func fanIn(n int) float32 {
	return float32(1 / (weightStd * math.Sqrt(float64(n))))
}

// layoutMamba is layout for Arch "mamba" (llama.cpp's LLM_ARCH_MAMBA) and
// "jamba" (LLM_ARCH_JAMBA, without experts): the layers of mamba, and the
// even layers of jamba, are Mamba blocks; jamba's odd layers attend, with
// no positional encoding, and every jamba layer ends with the gated
// feed-forward layer.
//
// A Mamba block normalises its input, projects it to 2*Embd channels x and
// as many gates z, convolves x over the last ssmConvKernel positions, and
// runs a selective scan over the result: per channel, a state h of
// StateSize values becomes exp(dt*A)*h + dt*B*x, and the output is C·h +
// D*x, gated by silu(z) and projected back to Embd. dt, B and C come from x
// through ssm_x (dt through a further rank ceil(Embd/16) projection,
// ssm_dt, and a softplus). Jamba normalises dt, B and C first
// (ssm_dt_norm, ssm_b_norm, ssm_c_norm).
//
// The weights are drawn so that the state carries: the block's matrices
// have unit-gain scales (fanIn) rather than weightStd; A, which converters
// store as -exp(A_log), lies in [-1.5, -0.5), so every step decays the
// state and it stays finite however long the sequence; the bias of dt puts
// dt near softplus(-2.25) = 0.1, so that a step keeps about exp(-0.1) of
// the state and a token shows in the logits for some tens of tokens after
// it; D is 1.
//
// The small tensors, ssm_conv1d, ssm_dt, ssm_a, ssm_d and the biases, are
// F32 whatever the type (llama.cpp's quantizer leaves ssm_conv1d, ssm_a and
// ssm_d alone, and ssm_dt's rows of ceil(Embd/16) values fit no block);
// ssm_in, ssm_x and ssm_out take the type.
func layoutMamba(o Options) ([]kv, []tensorSpec, error) {
	jamba := o.Arch == "jamba"
	if o.HeadDim != 0 || o.SlidingWindow != 0 || o.Pooling != "" {
		return nil, nil, fmt.Errorf("inferencetest: HeadDim, SlidingWindow and Pooling do not apply to architecture %s", o.Arch)
	}
	if !jamba && (o.Heads != 0 || o.KVHeads != 0 || o.FF != 0) {
		return nil, nil, fmt.Errorf("inferencetest: Heads, KVHeads and FF do not apply to architecture mamba, which has no attention and no feed-forward layer")
	}
	o.StateSize = cmp.Or(o.StateSize, 16)
	if jamba {
		o.KVHeads = cmp.Or(o.KVHeads, 2)
	}
	if err := o.sizes(2048); err != nil {
		return nil, nil, err
	}
	ff, rows := o.Embd, o.Embd // the rows of the matrices of the type
	if jamba {
		if o.Layers < 2 {
			return nil, nil, fmt.Errorf("inferencetest: Layers %d: jamba needs at least 2, a Mamba block and an attention layer", o.Layers)
		}
		if o.Embd%o.Heads != 0 {
			return nil, nil, fmt.Errorf("inferencetest: Embd %d is not a multiple of Heads %d", o.Embd, o.Heads)
		}
		if o.Heads%o.KVHeads != 0 {
			return nil, nil, fmt.Errorf("inferencetest: Heads %d is not a multiple of KVHeads %d", o.Heads, o.KVHeads)
		}
		ff = o.FF
	}
	typ, fileType, err := weightType(o.Type, o.Embd, ff, rows)
	if err != nil {
		return nil, nil, err
	}
	nVocab, tokKVs, err := textVocab(o)
	if err != nil {
		return nil, nil, err
	}
	inner, dtRank := 2*o.Embd, (o.Embd+15)/16
	attends := func(layer int) bool { return jamba && layer%2 == 1 }

	p := o.Arch + "."
	kvs := shapeKVs(o, fileType, nVocab)
	if jamba {
		// A layer with no key-value heads is a Mamba block.
		kvHeads := make([]int32, o.Layers)
		for i := range kvHeads {
			if attends(i) {
				kvHeads[i] = int32(o.KVHeads)
			}
		}
		kvs = append(kvs,
			kv{p + "feed_forward_length", uint32(o.FF)},
			kv{p + "attention.head_count", uint32(o.Heads)},
			kv{p + "attention.head_count_kv", kvHeads},
		)
	} else {
		// Unused, but written as llama.cpp's converter writes them.
		kvs = append(kvs,
			kv{p + "feed_forward_length", uint32(0)},
			kv{p + "attention.head_count", uint32(0)},
		)
	}
	kvs = append(kvs,
		kv{p + "ssm.conv_kernel", uint32(ssmConvKernel)},
		kv{p + "ssm.inner_size", uint32(inner)},
		kv{p + "ssm.state_size", uint32(o.StateSize)},
		kv{p + "ssm.time_step_rank", uint32(dtRank)},
		kv{p + "attention.layer_norm_rms_epsilon", float32(1e-5)},
	)
	if !jamba {
		kvs = append(kvs, kv{p + "ssm.dt_b_c_rms", false})
	}
	kvs = append(kvs, tokKVs...)

	embd, vocab := uint64(o.Embd), uint64(nVocab)
	in, state, rank := uint64(inner), uint64(o.StateSize), uint64(dtRank)
	ts := []tensorSpec{matrix("token_embd.weight", typ, embd, vocab)}
	for i := range o.Layers {
		b := fmt.Sprintf("blk.%d.", i)
		ts = append(ts, norm(b+"attn_norm.weight", embd))
		if attends(i) {
			ts = append(ts, attention(b, typ, embd, embd, uint64(o.KVHeads*(o.Embd/o.Heads)))...)
			ts = append(ts, feedForward(b, typ, embd, uint64(o.FF))...)
			continue
		}
		ts = append(ts,
			scaled(matrix(b+"ssm_in.weight", typ, embd, 2*in), fanIn(o.Embd)),
			f32(b+"ssm_conv1d.weight", fanIn(ssmConvKernel), 0, ssmConvKernel, in),
			f32(b+"ssm_conv1d.bias", 0, 0, in),
			scaled(matrix(b+"ssm_x.weight", typ, in, rank+2*state), fanIn(inner)),
			f32(b+"ssm_dt.weight", fanIn(dtRank), 0, rank, in),
			f32(b+"ssm_dt.bias", 10, -2.25, in),
			f32(b+"ssm_a", 14, -1, state, in),
			norm(b+"ssm_d", in),
			scaled(matrix(b+"ssm_out.weight", typ, in, embd), fanIn(inner)),
		)
		if jamba {
			ts = append(ts,
				norm(b+"ssm_dt_norm.weight", rank),
				norm(b+"ssm_b_norm.weight", state),
				norm(b+"ssm_c_norm.weight", state),
			)
			ts = append(ts, feedForward(b, typ, embd, uint64(o.FF))...)
		}
	}
	return kvs, append(ts, outputTensors(o, typ, embd, vocab)...), nil
}
