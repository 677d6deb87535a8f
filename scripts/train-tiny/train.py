#!/usr/bin/env python3
"""train.py trains a tiny model of scripts/train-tiny on what `train-tiny
data` wrote into DIR, and writes its weights as DIR/weights.bin
(float32, little-endian) and DIR/weights.json (each tensor's GGUF name:
offset and count of floats), which `train-tiny write` turns into a GGUF
file. DIR's config.json says which model:

  - the chat model: llama.cpp's qwen3 as it computes it (RMS norms,
    per-head RMS norms of queries and keys, NeoX rotary embeddings,
    grouped-query attention, a SwiGLU feed-forward layer), its loss on
    each sequence's answer tokens only;
  - the embedding model (arch nomic-bert): llama.cpp's nomic-bert,
    mean-pooled, its loss contrastive on paraphrase pairs.

Deterministic from config.json's seed and the thread count, on CPU:

    python3 scripts/train-tiny/train.py DIR [--steps N] [--batch N] [--lr X]
"""

import argparse
import json
import math
import os
import random
import struct
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


_rope_cache = {}


def rope(x, base, start=0):
    # x: (batch, heads, seq, dim), at positions start...; NeoX: pairs
    # (i, i + dim/2).
    b, h, t, d = x.shape
    key = (start, t, d, base)
    if key not in _rope_cache:
        half = d // 2
        inv = base ** (-torch.arange(0, half, dtype=torch.float32) * 2 / d)
        ang = torch.arange(start, start + t, dtype=torch.float32)[:, None] * inv[None, :]
        _rope_cache[key] = (ang.cos(), ang.sin())
    cos, sin = _rope_cache[key]
    half = d // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


_masks = {}


def causal(t, past):
    """The mask of t new positions after past cached ones."""
    if (t, past) not in _masks:
        _masks[(t, past)] = torch.ones(t, past + t, dtype=torch.bool).tril(diagonal=past)
    return _masks[(t, past)]


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        e, h, kv, hd, ff, eps = c["embd"], c["heads"], c["kv_heads"], c["head_dim"], c["ff"], c["rms_eps"]
        self.h, self.kv, self.hd, self.base = h, kv, hd, c["rope_base"]
        self.attn_norm = RMSNorm(e, eps)
        self.attn_q = nn.Linear(e, h * hd, bias=False)
        self.attn_k = nn.Linear(e, kv * hd, bias=False)
        self.attn_v = nn.Linear(e, kv * hd, bias=False)
        self.attn_q_norm = RMSNorm(hd, eps)
        self.attn_k_norm = RMSNorm(hd, eps)
        self.attn_output = nn.Linear(h * hd, e, bias=False)
        self.ffn_norm = RMSNorm(e, eps)
        self.ffn_gate = nn.Linear(e, ff, bias=False)
        self.ffn_up = nn.Linear(e, ff, bias=False)
        self.ffn_down = nn.Linear(ff, e, bias=False)

    def forward(self, x, past=None):
        """x: the new positions; past: the (keys, values) of cached
        positions before them, rotated and repeated, or None. Returns the
        output and the (keys, values) of all positions."""
        b, t, _ = x.shape
        n = 0 if past is None else past[0].shape[2]
        y = self.attn_norm(x)
        q = self.attn_q_norm(self.attn_q(y).view(b, t, self.h, self.hd)).transpose(1, 2)
        k = self.attn_k_norm(self.attn_k(y).view(b, t, self.kv, self.hd)).transpose(1, 2)
        v = self.attn_v(y).view(b, t, self.kv, self.hd).transpose(1, 2)
        q, k = rope(q, self.base, n), rope(k, self.base, n)
        rep = self.h // self.kv
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        if past is not None:
            k = torch.cat([past[0].expand(b, -1, -1, -1), k], dim=2)
            v = torch.cat([past[1].expand(b, -1, -1, -1), v], dim=2)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(self.hd)
        att = att.masked_fill(~causal(t, n), float("-inf")).softmax(-1)
        o = (att @ v).transpose(1, 2).reshape(b, t, self.h * self.hd)
        x = x + self.attn_output(o)
        y = self.ffn_norm(x)
        return x + self.ffn_down(F.silu(self.ffn_gate(y)) * self.ffn_up(y)), (k, v)


class Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.token_embd = nn.Embedding(c["vocab"], c["embd"])
        self.blocks = nn.ModuleList(Block(c) for _ in range(c["layers"]))
        self.output_norm = RMSNorm(c["embd"], c["rms_eps"])
        self.output = nn.Linear(c["embd"], c["vocab"], bias=False)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.normal_(p, std=0.02)

    def forward(self, tokens, prefix=None):
        """The logits of tokens; prefix, a (1, P) tensor of tokens shared
        by every sequence before them, is run first without gradients
        (its keys and values are the cache the sequences attend to)."""
        past = [None] * len(self.blocks)
        if prefix is not None:
            with torch.no_grad():
                x = self.token_embd(prefix)
                for i, blk in enumerate(self.blocks):
                    x, past[i] = blk(x)
        x = self.token_embd(tokens)
        for i, blk in enumerate(self.blocks):
            x, _ = blk(x, past[i])
        return self.output(self.output_norm(x))

    def gguf_tensors(self):
        """The weights under their GGUF names, each flattened as GGUF
        stores it (a matrix's rows one after the other)."""
        out = {"token_embd.weight": self.token_embd.weight,
               "output_norm.weight": self.output_norm.weight,
               "output.weight": self.output.weight}
        for i, blk in enumerate(self.blocks):
            for name in ["attn_norm", "attn_q", "attn_k", "attn_v", "attn_q_norm", "attn_k_norm", "attn_output",
                         "ffn_norm", "ffn_gate", "ffn_up", "ffn_down"]:
                out[f"blk.{i}.{name}.weight"] = getattr(blk, name).weight
        return out


class EncoderBlock(nn.Module):
    """A layer of llama.cpp's nomic-bert: bidirectional attention with
    NeoX rotary positions from one fused projection, then SwiGLU, each
    added to its input and layer-normed after (post-norm)."""

    def __init__(self, c):
        super().__init__()
        e, ff, eps = c["embd"], c["ff"], c["norm_eps"]
        self.h, self.hd, self.base = c["heads"], e // c["heads"], c["rope_base"]
        self.attn_qkv = nn.Linear(e, 3 * e, bias=False)
        self.attn_output = nn.Linear(e, e, bias=False)
        self.attn_output_norm = nn.LayerNorm(e, eps=eps)
        self.ffn_gate = nn.Linear(e, ff, bias=False)
        self.ffn_up = nn.Linear(e, ff, bias=False)
        self.ffn_down = nn.Linear(ff, e, bias=False)
        self.layer_output_norm = nn.LayerNorm(e, eps=eps)

    def forward(self, x, pad):
        """x: (batch, seq, embd); pad: (batch, seq), True at padding."""
        b, t, e = x.shape
        q, k, v = (y.reshape(b, t, self.h, self.hd).transpose(1, 2) for y in self.attn_qkv(x).split(e, -1))
        q, k = rope(q, self.base), rope(k, self.base)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(self.hd)
        att = att.masked_fill(pad[:, None, None, :], float("-inf")).softmax(-1)
        o = (att @ v).transpose(1, 2).reshape(b, t, e)
        x = self.attn_output_norm(x + self.attn_output(o))
        return self.layer_output_norm(x + self.ffn_down(F.silu(self.ffn_gate(x)) * self.ffn_up(x)))


class Encoder(nn.Module):
    """llama.cpp's nomic-bert embedding model, mean-pooled and
    L2-normalised as the engine returns its vectors."""

    def __init__(self, c):
        super().__init__()
        e = c["embd"]
        self.token_embd = nn.Embedding(c["vocab"], e)
        self.token_types = nn.Parameter(torch.zeros(2, e))
        self.token_embd_norm = nn.LayerNorm(e, eps=c["norm_eps"])
        self.blocks = nn.ModuleList(EncoderBlock(c) for _ in range(c["layers"]))
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.normal_(p, std=0.02)

    def forward(self, tokens, pad):
        # Every input is of token type 0.
        x = self.token_embd_norm(self.token_embd(tokens) + self.token_types[0])
        for blk in self.blocks:
            x = blk(x, pad)
        keep = (~pad).float()[..., None]
        return F.normalize((x * keep).sum(1) / keep.sum(1), dim=-1)

    def gguf_tensors(self):
        out = {"token_embd.weight": self.token_embd.weight, "token_types.weight": self.token_types,
               "token_embd_norm.weight": self.token_embd_norm.weight, "token_embd_norm.bias": self.token_embd_norm.bias}
        for i, blk in enumerate(self.blocks):
            for name in ["attn_qkv", "attn_output", "ffn_gate", "ffn_up", "ffn_down"]:
                out[f"blk.{i}.{name}.weight"] = getattr(blk, name).weight
            for name in ["attn_output_norm", "layer_output_norm"]:
                out[f"blk.{i}.{name}.weight"] = getattr(blk, name).weight
                out[f"blk.{i}.{name}.bias"] = getattr(blk, name).bias
        return out


def padded(seqs):
    """seqs as a (len, longest) tensor padded with [PAD] (0), and where
    the padding is."""
    t = max(len(s) for s in seqs)
    tokens = torch.zeros(len(seqs), t, dtype=torch.long)
    pad = torch.ones(len(seqs), t, dtype=torch.bool)
    for i, s in enumerate(seqs):
        tokens[i, :len(s)] = torch.tensor(s, dtype=torch.long)
        pad[i, :len(s)] = False
    return tokens, pad


def contrastive(model, batch, tau=0.05):
    """InfoNCE both ways: each phrasing A's vector must be nearest its
    pair B's among every B and near fact of the batch, and B's nearest
    A's. Returns the loss and the share of A nearest their B."""
    n = len(batch)
    tokens, pad = padded([r["a"] for r in batch] + [r["b"] for r in batch] + [r["apart"] for r in batch])
    v = model(tokens, pad)
    a, b, apart = v[:n], v[n:2 * n], v[2 * n:]
    labels = torch.arange(n)
    ab = a @ torch.cat([b, apart]).T / tau
    ba = b @ torch.cat([a, apart]).T / tau
    loss = (F.cross_entropy(ab, labels) + F.cross_entropy(ba, labels)) / 2
    return loss, (ab.argmax(-1) == labels).float().mean().item()


def batches(rows, size, rng):
    """Batches of one skill each, the skills in turn: sequences of a
    skill share their prompt's first tokens (a tool's system prompt),
    which run once per batch."""
    by = {}
    for r in rows:
        by.setdefault(r["skill"], []).append(r)
    gens = [shuffled(v, size, rng) for _, v in sorted(by.items())]
    while True:
        for g in gens:
            yield next(g)


def shuffled(rows, size, rng):
    order = list(range(len(rows)))
    while True:
        rng.shuffle(order)
        for i in range(0, len(order) - size + 1, size):
            yield [rows[j] for j in order[i:i + size]]


def collate(batch, pad):
    """The batch's shared prefix (None when it is short), its tokens
    after it, padded, and their targets (-100 where the loss does not
    count)."""
    shared = min(len(r["tokens"]) for r in batch)
    for r in batch:
        t0 = batch[0]["tokens"]
        shared = min(shared, next((i for i, (a, b) in enumerate(zip(t0, r["tokens"])) if a != b), shared))
    # The prefix stays before every answer, and is worth its own pass.
    shared = min(shared, min(r["target"][0] for r in batch) - 1)
    if shared < 32:
        shared = 0
    t = max(len(r["tokens"]) for r in batch) - shared
    tokens = torch.full((len(batch), t), pad, dtype=torch.long)
    targets = torch.full((len(batch), t), -100, dtype=torch.long)
    for i, r in enumerate(batch):
        toks = torch.tensor(r["tokens"][shared:], dtype=torch.long)
        tokens[i, :len(toks)] = toks
        a, b = r["target"][0] - shared, r["target"][1] - shared
        # Position p predicts token p+1: the answer's tokens a..b-1 are
        # predicted at a-1..b-2.
        targets[i, a - 1:b - 1] = toks[a:b]
    prefix = torch.tensor([batch[0]["tokens"][:shared]], dtype=torch.long) if shared else None
    return prefix, tokens, targets


def load(model, d):
    """Sets the model's weights from weights.bin and weights.json."""
    index = json.load(open(os.path.join(d, "weights.json")))
    data = open(os.path.join(d, "weights.bin"), "rb").read()
    with torch.no_grad():
        for name, t in model.gguf_tensors().items():
            off, n = index[name]
            v = struct.unpack_from(f"<{n}f", data, off * 4)
            t.copy_(torch.tensor(v, dtype=torch.float32).view_as(t))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--resume", action="store_true",
                    help="start from DIR's weights.bin instead of random weights (a second stage, its batches drawn with the seed plus one)")
    args = ap.parse_args()
    c = json.load(open(os.path.join(args.dir, "config.json")))
    seed = int(c["seed"])
    random.seed(seed)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(args.threads)
    rows = [json.loads(l) for l in open(os.path.join(args.dir, "train.jsonl"))]
    embed = c.get("arch") == "nomic-bert"
    model = Encoder(c) if embed else Model(c)
    if args.resume:
        load(model, args.dir)
        seed += 1
    # Norm gains are not decayed: the per-head query and key norms bound
    # attention's logits by their gains, and copying a name from the
    # context needs sharp attention, so those gains must grow.
    matrices = [p for p in model.parameters() if p.dim() > 1]
    gains = [p for p in model.parameters() if p.dim() == 1]
    opt = torch.optim.AdamW([{"params": matrices, "weight_decay": 0.01}, {"params": gains, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.98))
    warm = max(1, args.steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(1, s / args.steps))))
    gen = (shuffled if embed else batches)(rows, args.batch, random.Random(seed))
    start = time.time()
    for step in range(args.steps):
        batch = next(gen)
        if embed:
            loss, nearest = contrastive(model, batch)
            what = f"nearest {nearest:.3f}"
        else:
            prefix, tokens, targets = collate(batch, pad=256)
            logits = model(tokens, prefix)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-100)
            what = batch[0]["skill"]
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 50 == 0 or step == args.steps - 1:
            print(f"step {step:5d}  loss {loss.item():.4f}  {what:13s} {time.time() - start:6.1f} s", flush=True)
    index, offset = {}, 0
    with open(os.path.join(args.dir, "weights.bin"), "wb") as f:
        for name, t in model.gguf_tensors().items():
            v = t.detach().float().contiguous().view(-1).tolist()
            f.write(struct.pack(f"<{len(v)}f", *v))
            index[name] = [offset, len(v)]
            offset += len(v)
    json.dump(index, open(os.path.join(args.dir, "weights.json"), "w"), indent=1)
    # What the engine must compute from these weights: the first pair's
    # first vector, or the next-token log-probabilities after the first
    # sequence's prompt.
    with torch.no_grad():
        r = rows[0]
        if embed:
            check = {"tokens": r["a"], "embedding": model(*padded([r["a"]]))[0].tolist()}
        else:
            prompt = r["tokens"][:r["target"][0]]
            check = {"prompt": prompt, "logprobs": model(torch.tensor([prompt])).log_softmax(-1)[0, -1].tolist()}
    json.dump(check, open(os.path.join(args.dir, "check.json"), "w"))
    print(f"trained {args.steps} steps in {time.time() - start:.0f} s; {offset} weights", flush=True)


if __name__ == "__main__":
    sys.exit(main())
