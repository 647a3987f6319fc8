#!/usr/bin/env python3
"""Kernels the CUDA calibration back end does not time, measured through PyTorch on GPU 0
(docs/calibration.md "Kernels measured with PyTorch"):
- attention: causal attention forward and backward through scaled_dot_product_attention, per back
  end (FlashAttention-2, cuDNN fused attention, memory-efficient), at the attention shapes of the
  transformer cases clustersim validates against; TFLOP/s count a causal attention's FLOPs (half of
  4*b*h*s^2*d forward, 2.5x that backward);
- memory_bound: eager elementwise, norm, softmax and cross-entropy kernels, as bytes per second;
- layers: one Llama-style decoder layer as eager code, forward and forward + backward, with the
  profiler's per-kernel device time.
Needs PyTorch with CUDA; used by scripts/gpu-check.sh.

Usage: scripts/gpu-kernel-bench.py OUT.json
"""
import json
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

# (label, micro-batch, query heads on a rank, kv heads on a rank, sequence, head dim)
SHAPES = [
    ("llama3-8b tp1 s8192", 1, 32, 8, 8192, 128),
    ("llama3-70b tp4 s8192", 1, 16, 2, 8192, 128),
    ("llama3-70b tp8 s8192", 1, 8, 1, 8192, 128),
    ("llama3.1-405b tp8 s8192", 1, 16, 1, 8192, 128),
    ("llama2-7b tp1 s4096", 1, 32, 32, 4096, 128),
    ("llama2-70b tp4 s4096", 1, 16, 2, 4096, 128),
    ("gpt3-175b tp4 s2048", 1, 24, 24, 2048, 128),
    ("gpt3-175b tp8 s2048 mb2", 2, 12, 12, 2048, 128),
    ("llama2-13b tp2 s2048 mb4", 4, 20, 20, 2048, 128),
]
BACKENDS = [
    ("flash", SDPBackend.FLASH_ATTENTION),
    ("cudnn", SDPBackend.CUDNN_ATTENTION),
    ("efficient", SDPBackend.EFFICIENT_ATTENTION),
]


def failure(e):
    """One line naming what went wrong with a measurement (recorded in its row, not fatal)."""
    return f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"


def timed(fn, iters=10):
    """Mean seconds per call over `iters` calls after 3 warm-ups, between CUDA events."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    for _ in range(iters):
        fn()
    end.record()
    end.synchronize()
    return begin.elapsed_time(end) * 1e-3 / iters


def measure(b, h, hkv, s, d, backend, causal=True):
    """(forward s, backward s, how GQA ran): with fewer kv heads the back end is first asked to
    take them as they are (enable_gqa); one that refuses gets k and v expanded to every query
    head, as eager model code does (the expansion is not timed)."""
    dev = torch.device("cuda", 0)
    q = torch.randn(b, h, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(b, hkv, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(b, hkv, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True)

    def run(k, v, gqa):
        kw = {"enable_gqa": True} if gqa else {}
        with sdpa_kernel([backend]):
            fwd = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, **kw))
            grad = torch.randn(b, h, s, d, device=dev, dtype=torch.bfloat16)

            def both():
                o = F.scaled_dot_product_attention(q, k, v, is_causal=causal, **kw)
                torch.autograd.grad(o, (q, k, v), grad)

            total = timed(both)
        return fwd, max(total - fwd, 0.0)

    if hkv == h:
        return (*run(k, v, False), "none")
    try:
        return (*run(k, v, True), "native")
    except Exception:
        ke = k.detach().repeat_interleave(h // hkv, dim=1).requires_grad_()
        ve = v.detach().repeat_interleave(h // hkv, dim=1).requires_grad_()
        return (*run(ke, ve, False), "expanded")


# Memory-bound kernels as eager PyTorch code launches them, on a [tokens, width] bf16 tensor:
# (label, bytes moved per call as the kernel model counts them, callable factory).
def memory_kernels():
    dev = torch.device("cuda", 0)
    t, h = 8192, 8192
    x = torch.randn(t, h, device=dev, dtype=torch.bfloat16)
    y = torch.randn(t, h, device=dev, dtype=torch.bfloat16)
    w = torch.ones(h, device=dev, dtype=torch.bfloat16)
    gate = torch.randn(t, 2 * h, device=dev, dtype=torch.bfloat16)
    vocab = 16032  # Llama 3's 128256 over TP 8
    logits = torch.randn(t, vocab, device=dev, dtype=torch.float32)
    labels = torch.randint(0, vocab, (t,), device=dev)
    e = 2  # bytes of a bf16 element
    n = t * h
    return [
        ("copy", 2 * n * e, lambda: x.clone()),
        ("add", 3 * n * e, lambda: x + y),
        ("rms_norm", 2 * n * e, lambda: F.rms_norm(x, (h,), w)),
        ("layer_norm", 2 * n * e, lambda: F.layer_norm(x, (h,), w)),
        ("silu_mul", 3 * n * e, lambda: F.silu(gate[:, :h]) * gate[:, h:]),
        ("gelu", 2 * n * e, lambda: F.gelu(x, approximate="tanh")),
        ("softmax", 2 * n * e, lambda: torch.softmax(x, dim=-1)),
        ("cross_entropy_fp32", t * vocab * 4, lambda: F.cross_entropy(logits, labels)),
    ]


def measure_memory_kernels():
    rows = []
    print("# memory-bound kernels (eager PyTorch, bf16 8192 x 8192)")
    for label, nbytes, fn in memory_kernels():
        row = {"kernel": label, "bytes": nbytes}
        try:
            s = timed(fn, iters=20)
            row.update(seconds=s, bytes_per_s=nbytes / s)
            print(f"  {label:20} {s * 1e6:9.1f} us {nbytes / s / 1e9:8.1f} GB/s")
        except Exception as e:
            row["error"] = failure(e)
            print(f"  {label:20} not measured: {row['error']}")
        rows.append(row)
    torch.cuda.empty_cache()
    return rows


class DecoderLayer(torch.nn.Module):
    """A Llama-style layer as eager PyTorch code (HF Transformers-like): RMSNorm, fused QKV,
    rotary left out (a few elementwise kernels), kv heads expanded, SDPA attention, output projection,
    residual, RMSNorm, SwiGLU MLP, residual."""

    def __init__(self, h, heads, kv_heads, f):
        super().__init__()
        self.h, self.heads, self.kv, self.d = h, heads, kv_heads, h // heads
        self.n1 = torch.nn.RMSNorm(h)
        self.n2 = torch.nn.RMSNorm(h)
        self.qkv = torch.nn.Linear(h, (heads + 2 * kv_heads) * self.d, bias=False)
        self.o = torch.nn.Linear(h, h, bias=False)
        self.up = torch.nn.Linear(h, 2 * f, bias=False)
        self.down = torch.nn.Linear(f, h, bias=False)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.n1(x)).split(
            [self.heads * self.d, self.kv * self.d, self.kv * self.d], dim=-1)
        q = q.view(b, s, self.heads, self.d).transpose(1, 2)
        k = k.view(b, s, self.kv, self.d).transpose(1, 2)
        v = v.view(b, s, self.kv, self.d).transpose(1, 2)
        if self.kv != self.heads:  # HF's repeat_kv: eager code expands the kv heads
            k = k.repeat_interleave(self.heads // self.kv, dim=1)
            v = v.repeat_interleave(self.heads // self.kv, dim=1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, s, self.h))
        g, u = self.up(self.n2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(g) * u)


# (label, micro-batch, sequence, hidden, heads, kv heads, ffn)
LAYERS = [
    ("llama2-7b layer mb1 s4096", 1, 4096, 4096, 32, 32, 11008),
    ("llama3-8b layer mb1 s8192", 1, 8192, 4096, 32, 8, 14336),
]


def measure_layers():
    from torch.profiler import ProfilerActivity, profile
    rows = []
    dev = torch.device("cuda", 0)
    print("# one decoder layer, forward + backward, eager PyTorch bf16")
    for label, b, s, h, heads, kv, f in LAYERS:
        row = {"layer": label, "batch": b, "seq": s, "hidden": h, "heads": heads,
               "kv_heads": kv, "ffn": f}
        try:
            layer = DecoderLayer(h, heads, kv, f).to(dev, torch.bfloat16)
            x = torch.randn(b, s, h, device=dev, dtype=torch.bfloat16, requires_grad=True)
            grad = torch.randn(b, s, h, device=dev, dtype=torch.bfloat16)
            fwd = timed(lambda: layer(x), iters=10)

            def step():
                layer(x).backward(grad)

            total = timed(step, iters=10)
            row.update(forward_s=fwd, forward_backward_s=total)
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(5):
                    step()
                torch.cuda.synchronize()
            kernels = {}
            for ev in prof.key_averages():
                t = getattr(ev, "device_time_total", None)
                if t is None:
                    t = getattr(ev, "cuda_time_total", 0)
                if t and ev.count:
                    kernels[ev.key] = {"count_per_step": ev.count / 5, "us_per_step": t / 5}
            row["kernels"] = kernels
            print(f"  {label:28} forward {fwd * 1e3:7.3f} ms, forward + backward "
                  f"{total * 1e3:7.3f} ms, {len(kernels)} kernel names")
            del layer, x, grad
        except Exception as e:
            row["error"] = failure(e)
            print(f"  {label:28} not measured: {row['error']}")
        rows.append(row)
        torch.cuda.empty_cache()
    return rows


# Not causal, and head dimension 64: shapes the causal fit never saw, to check it out of sample
# (label, micro-batch, heads, kv heads, sequence, head dim, causal).
EXTRA_SHAPES = [
    ("noncausal h32 s8192 d128", 1, 32, 32, 8192, 128, False),
    ("noncausal h16 s4096 d128", 1, 16, 16, 4096, 128, False),
    ("noncausal h24 s2048 d128", 1, 24, 24, 2048, 128, False),
    ("noncausal b8 h16 s512 d64", 8, 16, 16, 512, 64, False),
    ("causal h32 s4096 d64", 1, 32, 32, 4096, 64, True),
    ("causal h12 s2048 d64 mb4", 4, 12, 12, 2048, 64, True),
]


def attention_sweep(shapes, backends):
    rows = []
    for label, b, h, hkv, s, d, causal in shapes:
        flops_fwd = 4.0 * b * h * s * s * d / (2 if causal else 1)  # causal: half the scores
        for name, backend in backends:
            row = {"shape": label, "batch": b, "heads": h, "kv_heads": hkv, "seq": s,
                   "head_dim": d, "causal": causal, "dtype": "bf16", "backend": name}
            try:
                fwd, bwd, gqa = measure(b, h, hkv, s, d, backend, causal)
                row.update(forward_s=fwd, backward_s=bwd, gqa=gqa,
                           forward_flops_per_s=flops_fwd / fwd,
                           backward_flops_per_s=2.5 * flops_fwd / bwd if bwd > 0 else None)
                print(f"  {label:29} {name:9} {fwd * 1e6:10.1f} {flops_fwd / fwd / 1e12:8.1f} "
                      f"{bwd * 1e6:10.1f} {2.5 * flops_fwd / bwd / 1e12 if bwd > 0 else 0:8.1f}")
            except Exception as e:  # a back end that refuses a shape is recorded, not fatal
                row["error"] = failure(e)
                print(f"  {label:29} {name:9} not measured: {row['error']}")
            rows.append(row)
            torch.cuda.empty_cache()
    return rows


def main():
    """argv: OUT.json [PARTS], PARTS a comma list of attention, memory_bound, layers,
    attention_extra (default: the first three)."""
    out_path = sys.argv[1]
    parts = (sys.argv[2] if len(sys.argv) > 2 else "attention,memory_bound,layers").split(",")
    props = torch.cuda.get_device_properties(0)
    print(f"# attention on {props.name} ({props.multi_processor_count} SMs), torch {torch.__version__}")
    print("#  shape                         backend     fwd (us)  TFLOP/s   bwd (us)  TFLOP/s")
    try:
        cudnn = torch.backends.cudnn.version()
    except RuntimeError as e:  # a cuDNN other than PyTorch's on the library path
        cudnn = f"unknown: {str(e).splitlines()[0][:120]}"
    doc = {"gpu": props.name, "sms": props.multi_processor_count, "torch": torch.__version__,
           "cuda": torch.version.cuda, "cudnn": cudnn,
           "measured_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    runs = {
        "attention": lambda: attention_sweep([(*x, True) for x in SHAPES], BACKENDS),
        "attention_extra": lambda: attention_sweep(EXTRA_SHAPES, BACKENDS[:2]),
        "memory_bound": measure_memory_kernels,
        "layers": measure_layers,
    }
    for part in parts:
        try:
            doc[part] = runs[part]()
        except Exception as e:  # one part failing keeps the others
            doc[part] = {"error": failure(e)}
            print(f"# {part} failed: {failure(e)}")
    with open(out_path, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
