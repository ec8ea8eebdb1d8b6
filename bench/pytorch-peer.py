"""The PyTorch peer of bench/device.ts (issue 30 §4): a Qwen2 of the Qwen-shaped model's
dimensions with random weights, fp16, eager attention, greedy, at 1, 8 and 16 streams (one batch
of that many prompts of the same length, generated together).

With Hugging Face transformers installed: Qwen2ForCausalLM from a Qwen2Config, its own
generate(). Without it: the same model in torch alone, as transformers' eager Qwen2 computes it
(RMSNorm, q/k/v with biases, rotate-half rotary, grouped KV heads repeated, softmax in float32,
SwiGLU, lm_head tied to the embedding and run on the last position only, the cache grown by
concatenation), with a greedy loop. Prints one JSON object: the engine and, per stream count,
aggregate tok/s (all new tokens over the batch's wall time, prefill included), per-stream decode
tok/s ((new tokens - 1) over the time after the first token) and time to first token (a separate
generate of one token on the same batch).

usage: python3 bench/pytorch-peer.py --hidden 896 --layers 24 --heads 14 --kv-heads 2 --head-dim 64
       --intermediate 4864 --vocab 151936 [--streams 1,8,16] [--new-tokens 64] [--prompt-tokens 40]
       [--rounds 3] [--device cuda] [--dtype float16]
"""
import argparse
import json
import math
import statistics
import time

import torch
from torch import nn


def args_of():
    p = argparse.ArgumentParser()
    for name in ("hidden", "layers", "heads", "kv-heads", "head-dim", "intermediate", "vocab"):
        p.add_argument(f"--{name}", type=int, required=True)
    p.add_argument("--streams", default="1,8,16")
    p.add_argument("--new-tokens", type=int, default=64)
    p.add_argument("--prompt-tokens", type=int, default=40)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--dtype", default="float16")
    p.add_argument("--torch-only", action="store_true", help="the torch-only model even where transformers is installed")
    return p.parse_args()


class Qwen2Layer(nn.Module):
    def __init__(self, a):
        super().__init__()
        h, d = a.hidden, a.head_dim
        self.heads, self.kv_heads, self.head_dim = a.heads, a.kv_heads, d
        self.input_norm = nn.Parameter(torch.ones(h))
        self.post_norm = nn.Parameter(torch.ones(h))
        self.q = nn.Linear(h, a.heads * d, bias=True)
        self.k = nn.Linear(h, a.kv_heads * d, bias=True)
        self.v = nn.Linear(h, a.kv_heads * d, bias=True)
        self.o = nn.Linear(a.heads * d, h, bias=False)
        self.gate = nn.Linear(h, a.intermediate, bias=False)
        self.up = nn.Linear(h, a.intermediate, bias=False)
        self.down = nn.Linear(a.intermediate, h, bias=False)


def rms_norm(x, w, eps=1e-6):
    x32 = x.float()
    return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class TorchQwen2(nn.Module):
    """transformers' eager Qwen2, in torch alone (used where transformers is not installed)."""

    def __init__(self, a):
        super().__init__()
        self.a = a
        self.embed = nn.Embedding(a.vocab, a.hidden)
        self.layers = nn.ModuleList(Qwen2Layer(a) for _ in range(a.layers))
        self.norm = nn.Parameter(torch.ones(a.hidden))
        self.inv_freq = 1.0 / (10000 ** (torch.arange(0, a.head_dim, 2).float() / a.head_dim))
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)

    def forward(self, ids, past_len, cache):
        b, s = ids.shape
        x = self.embed(ids)
        pos = torch.arange(past_len, past_len + s, device=ids.device).float()
        freqs = torch.outer(pos, self.inv_freq.to(ids.device))
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
        mask = None
        if s > 1:
            mask = torch.full((s, past_len + s), float("-inf"), device=ids.device).triu(past_len + 1)
        for i, L in enumerate(self.layers):
            h = rms_norm(x, L.input_norm)
            q = L.q(h).view(b, s, L.heads, L.head_dim).transpose(1, 2)
            k = L.k(h).view(b, s, L.kv_heads, L.head_dim).transpose(1, 2)
            v = L.v(h).view(b, s, L.kv_heads, L.head_dim).transpose(1, 2)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            if cache[i] is not None:
                k = torch.cat((cache[i][0], k), dim=2)
                v = torch.cat((cache[i][1], v), dim=2)
            cache[i] = (k, v)
            rep = L.heads // L.kv_heads
            kr, vr = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
            w = torch.matmul(q, kr.transpose(2, 3)) / math.sqrt(L.head_dim)
            if mask is not None:
                w = w + mask
            w = torch.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
            attn = torch.matmul(w, vr).transpose(1, 2).reshape(b, s, -1)
            x = x + L.o(attn)
            h = rms_norm(x, L.post_norm)
            x = x + L.down(nn.functional.silu(L.gate(h)) * L.up(h))
        last = rms_norm(x[:, -1:], self.norm)
        return last @ self.embed.weight.T

    @torch.no_grad()
    def greedy(self, ids, new_tokens):
        cache = [None] * self.a.layers
        logits = self(ids, 0, cache)
        past = ids.shape[1]
        out = [logits[:, -1].argmax(-1)]
        for _ in range(new_tokens - 1):
            logits = self(out[-1][:, None], past, cache)
            past += 1
            out.append(logits[:, -1].argmax(-1))
        return torch.stack(out, dim=1)


def on_device(device):
    """Weights made where they run (torch >= 2: its device context), else made on the CPU and moved."""
    import contextlib

    try:
        return torch.device(device) if int(torch.__version__.split(".")[0]) >= 2 else contextlib.nullcontext()
    except ValueError:
        return contextlib.nullcontext()


def build(a, dtype):
    if not a.torch_only:
        try:
            import transformers
            from transformers import Qwen2Config, Qwen2ForCausalLM
        except ImportError:
            transformers = None
        if transformers is not None:
            if a.hidden != a.heads * a.head_dim:
                raise SystemExit(f"transformers' Qwen2 needs hidden = heads x head_dim ({a.hidden} != {a.heads} x {a.head_dim})")
            cfg = Qwen2Config(
                vocab_size=a.vocab, hidden_size=a.hidden, intermediate_size=a.intermediate, num_hidden_layers=a.layers,
                num_attention_heads=a.heads, num_key_value_heads=a.kv_heads, max_position_embeddings=4096,
                tie_word_embeddings=True, rope_theta=10000.0, use_cache=True,
            )
            cfg._attn_implementation = "eager"
            with on_device(a.device):
                model = Qwen2ForCausalLM(cfg).to(a.device, dtype).eval()
            attn = getattr(model.config, "_attn_implementation", "?")

            @torch.no_grad()
            def generate(ids, n):
                out = model.generate(
                    input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=n, min_new_tokens=n,
                    do_sample=False, eos_token_id=None, pad_token_id=0,
                )
                return out[:, ids.shape[1]:]

            return f"transformers {transformers.__version__} Qwen2ForCausalLM, attn_implementation {attn}", generate
    with on_device(a.device):
        model = TorchQwen2(a).to(a.device, dtype).eval()
    return "torch-only Qwen2 (transformers' eager computation, its generate() replaced by a greedy loop)", model.greedy


def sync(device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def main():
    a = args_of()
    dtype = getattr(torch, a.dtype)
    torch.manual_seed(0)
    t0 = time.perf_counter()
    engine, generate = build(a, dtype)
    load_s = time.perf_counter() - t0
    gen = torch.Generator().manual_seed(1)
    out = {"engine": engine, "torch": torch.__version__, "device": a.device, "dtype": a.dtype, "load_s": round(load_s, 2), "streams": {}}
    if a.device.startswith("cuda"):
        out["gpu"] = torch.cuda.get_device_name(0)
    for streams in [int(s) for s in a.streams.split(",")]:
        def batch():
            return torch.randint(100, 5000, (streams, a.prompt_tokens), generator=gen).to(a.device)

        generate(batch(), 4)  # warm-up: kernels and allocator for this batch
        rounds = []
        for _ in range(a.rounds):
            ids = batch()
            sync(a.device)
            t = time.perf_counter()
            generate(ids, 1)
            sync(a.device)
            ttft = time.perf_counter() - t
            t = time.perf_counter()
            new = generate(ids, a.new_tokens)
            sync(a.device)
            wall = time.perf_counter() - t
            tokens = new.shape[0] * new.shape[1]
            rounds.append({"aggregate": tokens / wall, "decode": (new.shape[1] - 1) / max(wall - ttft, 1e-9), "ttft": ttft * 1000})
        med = lambda k: round(statistics.median(r[k] for r in rounds), 2)
        out["streams"][str(streams)] = {
            "aggregate_tokens_per_s": med("aggregate"), "per_stream_decode_tokens_per_s": med("decode"), "ttft_ms": med("ttft"),
            "rounds": len(rounds), "prompt_tokens": a.prompt_tokens, "new_tokens_per_request": a.new_tokens,
        }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
