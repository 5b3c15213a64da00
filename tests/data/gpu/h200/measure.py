#!/usr/bin/env python3
"""Per-kernel device times of GEMMs, attention and element-wise ops on one CUDA GPU.

The harness of issue 13, item 6: it runs each configuration (an op, its shapes, its dtype) a
few times under torch.profiler, and writes every CUDA kernel (and memset) each call launched,
with its device duration, grid and block, as the profiler (Kineto / CUPTI) recorded them.
convert.py beside this turns that file into the kernel_details subset `perfcast validate`
reads. Nothing here is timed on the host: the durations are CUPTI's device timestamps.

Conditions:
  - inputs are random (torch.randn / randint), never zeros;
  - 'hot': every call reuses the same tensors (inputs of up to 60 MB stay in L2 between calls);
    'cold': calls rotate over copies whose total is at least 4x the L2, so each call reads its
    inputs from HBM, as the first op after a large producer would;
  - clocks are left as found; nvidia-smi is sampled every second while the script runs.

Usage: python3 measure.py OUT_DIR     (writes kernels.csv, configs.csv, env.txt, clocks.csv)
       PERFCAST_SET=alignment python3 measure.py OUT_DIR     (the GEMM alignment set only)
       PERFCAST_SET=rows16 python3 measure.py OUT_DIR        (GEMMs with 16-byte rows)
       PERFCAST_SET=unseen python3 measure.py OUT_DIR        (shapes no other set has)
       PERFCAST_SET=walks python3 measure.py OUT_DIR         (the element-walk rules' cases)
"""
import bisect
import csv
import gzip
import json
import os
import random
import subprocess
import sys
import threading
import time

import torch
import torch.nn.functional as F

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
CALLS = 8        # profiled calls per configuration (the converter takes their median)
WARMUP = 3       # unprofiled calls first
L2_BYTES = 60 * 1024 * 1024  # replaced by the device's own figure below when torch gives it

dev = torch.device("cuda")
props = torch.cuda.get_device_properties(dev)
L2_BYTES = getattr(props, "L2_cache_size", L2_BYTES) or L2_BYTES
SMS = props.multi_processor_count
torch.backends.cuda.matmul.allow_tf32 = False  # fp32 GEMMs as fp32 (PyTorch's default)
torch.manual_seed(13)
random.seed(13)


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
    except Exception as e:  # noqa: BLE001 - the environment record is best effort
        return f"({cmd[0]} failed: {e})\n"


# ---- the environment --------------------------------------------------------------------
with open(os.path.join(OUT, "env.txt"), "w") as f:
    f.write(f"date_utc: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n")
    f.write(f"torch: {torch.__version__}  cuda: {torch.version.cuda}  "
            f"cudnn: {torch.backends.cudnn.version()}\n")
    f.write(f"device: {props.name}  sms: {SMS}  memory: {props.total_memory}  "
            f"l2: {L2_BYTES}  cc: {props.major}.{props.minor}\n")
    f.write(run(["nvidia-smi"]))
    f.write(run(["nvidia-smi", "-q", "-d", "CLOCK,POWER,PERFORMANCE,MEMORY,TEMPERATURE"]))

stop = threading.Event()


def sample_clocks():
    q = "timestamp,clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu,utilization.gpu"
    with open(os.path.join(OUT, "clocks.csv"), "w") as f:
        f.write(q + "\n")
        while not stop.is_set():
            f.write(run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader,nounits"]))
            f.flush()
            stop.wait(1.0)


sampler = threading.Thread(target=sample_clocks, daemon=True)
sampler.start()

# ---- the configurations -----------------------------------------------------------------
# Each: (op type as perfcast reads it, dict of parameters, make() -> list of input sets,
# call(inputs) -> None). Input sets are rotated over for 'cold'.
configs = []


def nbytes(ts):
    return sum(t.numel() * t.element_size() for t in ts if isinstance(t, torch.Tensor))


def copies_for(one_set_bytes, cold):
    if not cold:
        return 1
    return max(2, min(64, -(-4 * L2_BYTES // max(one_set_bytes, 1))))


def add(op, params, make, call, cold=False):
    configs.append((op, params, make, call, cold))


BF16, FP16, FP32 = torch.bfloat16, torch.float16, torch.float32
DN = {BF16: "bf16", FP16: "fp16", FP32: "fp32"}

# GEMMs: F.linear(x [M, K], w [N, K]) -> [M, N] (cuBLAS through PyTorch).
llama = [(6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336),   # Llama-3-8B layer
         (10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672)]  # Llama-3-70B layer
tokens = [1, 8, 32, 128, 512, 1024, 2048, 4096, 8192]


def gemm(m, n, k, dt, cold):
    def make():
        x = torch.randn(m, k, device=dev, dtype=dt)
        w = torch.randn(n, k, device=dev, dtype=dt)
        c = copies_for(nbytes([x, w]), cold)
        return [(x, w)] + [(torch.randn_like(x), torch.randn_like(w)) for _ in range(c - 1)]
    add("MatMul", {"m": m, "n": n, "k": k, "dtype": DN[dt]}, make, lambda s: F.linear(*s), cold)


for (n, k) in llama:
    for m in tokens:
        gemm(m, n, k, BF16, False)
for (n, k) in llama[:4]:
    for m in tokens:
        gemm(m, n, k, FP16, False)
for (n, k) in llama[:4]:
    for m in [1, 32, 512]:
        gemm(m, n, k, BF16, True)
rng = random.Random(7)
for _ in range(40):  # shapes no library tunes for: odd sizes, thin and wide
    gemm(rng.randint(1, 6000), rng.randint(64, 12000), rng.randint(64, 12000), BF16, False)
for (m, n, k) in [(256, 512, 1024), (2048, 512, 1024), (2048, 256, 512), (2048, 1, 256),
                  (8192, 1024, 429), (8192, 400, 1024), (512, 64, 128), (16384, 256, 256)]:
    gemm(m, n, k, FP16, False)  # CTR-model towers
for (m, n, k) in [(4096, 4096, 4096), (8192, 8192, 8192), (1024, 1024, 1024), (512, 4096, 4096)]:
    gemm(m, n, k, FP32, False)


def bmm(b, m, n, k, dt):
    def make():
        return [(torch.randn(b, m, k, device=dev, dtype=dt), torch.randn(b, k, n, device=dev,
                                                                          dtype=dt))]
    add("BatchMatMul", {"b": b, "m": m, "n": n, "k": k, "dtype": DN[dt]}, make,
        lambda s: torch.bmm(*s))


for (b, m, n, k) in [(8, 128, 128, 64), (32, 128, 128, 64), (32, 512, 512, 128),
                     (64, 1024, 1024, 128), (128, 2048, 64, 2048), (16, 4096, 4096, 128)]:
    bmm(b, m, n, k, BF16)


# Attention: scaled_dot_product_attention on [B, N, S, D], flash backend where it runs.
def attention(b, hq, hkv, sq, skv, d, causal, backward=False):
    def make():
        q = torch.randn(b, hq, sq, d, device=dev, dtype=BF16, requires_grad=backward)
        k = torch.randn(b, hkv, skv, d, device=dev, dtype=BF16, requires_grad=backward)
        v = torch.randn(b, hkv, skv, d, device=dev, dtype=BF16, requires_grad=backward)
        dy = torch.randn(b, hq, sq, d, device=dev, dtype=BF16) if backward else None
        return [(q, k, v, dy)]

    def call(s):
        q, k, v, dy = s
        if backward:
            q.grad = k.grad = v.grad = None
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=hq != hkv)
            o.backward(dy)
        else:
            F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=hq != hkv)
    add("FlashAttentionScoreGrad" if backward else "FlashAttentionScore",
        {"b": b, "hq": hq, "hkv": hkv, "sq": sq, "skv": skv, "d": d, "causal": causal,
         "dtype": "bf16"}, make, call)


for b in [1, 4]:
    for s in [512, 1024, 2048, 4096, 8192]:
        for (hq, hkv) in [(32, 32), (32, 8)]:
            for causal in [True, False]:
                attention(b, hq, hkv, s, s, 128, causal)
for causal in [True, False]:
    attention(4, 16, 16, 2048, 2048, 64, causal)
    attention(8, 64, 8, 1024, 1024, 128, causal)
for b in [1, 16, 64]:
    for skv in [1024, 4096, 16384]:
        attention(b, 32, 8, 1, skv, 128, False)  # decode: one query token
for s in [1024, 4096]:
    for causal in [True, False]:
        attention(1, 32, 32, s, s, 128, causal, backward=True)


# Element-wise and row-wise ops on [R, W].
def vec(op, shapes, dt, fn, cold, extra=None, int_input=None):
    def make():
        def one():
            ts = [torch.randn(*sh, device=dev, dtype=dt) for sh in shapes]
            if int_input is not None:
                ts.append(torch.randint(0, int_input[0], int_input[1], device=dev))
            return tuple(ts)
        first = one()
        c = copies_for(nbytes(first), cold)
        return [first] + [one() for _ in range(c - 1)]
    p = {"shapes": ";".join(",".join(str(d) for d in sh) for sh in shapes), "dtype": DN[dt]}
    if extra:
        p.update(extra)
    add(op, p, make, fn, cold)


sizes = [1 << e for e in (12, 14, 16, 18, 20, 22, 24, 26, 28)]
for cold in [False, True]:
    for dt in [BF16, FP32]:
        for n in sizes:
            w = min(n, 4096)
            r = n // w
            sh = (r, w)
            vec("Add", [sh, sh], dt, lambda s: torch.add(s[0], s[1]), cold)
            vec("Mul", [sh, (w,)], dt, lambda s: torch.mul(s[0], s[1]), cold)
            vec("Cast", [sh], dt, (lambda s: s[0].to(FP32)) if dt != FP32
                else (lambda s: s[0].to(BF16)), cold, {"to": "fp32" if dt != FP32 else "bf16"})
            if dt == BF16:
                vec("Mul", [sh, sh], dt, lambda s: torch.mul(s[0], s[1]), cold)
                vec("Exp", [sh], dt, lambda s: torch.exp(s[0]), cold)
                vec("Sigmoid", [sh], dt, lambda s: torch.sigmoid(s[0]), cold)
                vec("Silu", [sh], dt, lambda s: F.silu(s[0]), cold)
                vec("Gelu", [sh], dt, lambda s: F.gelu(s[0]), cold)
                vec("Tanh", [sh], dt, lambda s: torch.tanh(s[0]), cold)
                vec("ZerosLike", [sh], dt, lambda s: torch.zeros_like(s[0]), cold)
                vec("Fill", [sh], dt, lambda s: s[0].fill_(1.5), cold)
                vec("Softmax", [sh], dt, lambda s: torch.softmax(s[0], -1), cold)
                vec("LayerNorm", [sh, (w,), (w,)], dt,
                    lambda s: F.layer_norm(s[0], (s[0].shape[-1],), s[1], s[2]), cold)
                vec("RmsNorm", [sh, (w,)], dt,
                    lambda s: F.rms_norm(s[0], (s[0].shape[-1],), s[1]), cold)
                vec("ReduceSum", [sh], dt, lambda s: s[0].sum(-1), cold)
                vec("Transpose", [sh], dt, lambda s: s[0].t().contiguous(), cold)
# Row width matters for the row-wise ops: one size, several widths.
for w in [128, 1024, 8192, 16384]:
    sh = ((1 << 24) // w, w)
    vec("RmsNorm", [sh, (w,)], BF16, lambda s: F.rms_norm(s[0], (s[0].shape[-1],), s[1]), False)
    vec("Softmax", [sh], BF16, lambda s: torch.softmax(s[0], -1), False)
    vec("LayerNorm", [sh, (w,), (w,)], BF16,
        lambda s: F.layer_norm(s[0], (s[0].shape[-1],), s[1], s[2]), False)
# Embedding lookups (vocabulary x hidden table, T indices).
for (vocab, e) in [(32000, 4096), (128256, 4096), (1000000, 64)]:
    for t in [1, 64, 1024, 8192, 65536]:
        vec("GatherV2", [(vocab, e)], BF16, lambda s: F.embedding(s[1], s[0]), False,
            {"tokens": t}, int_input=(vocab, (t,)))

# PERFCAST_SET=alignment: only GEMMs around aligned sizes (K, N, M one to eight elements off a
# multiple of 8), measured after the model's shares for unaligned rows were fixed (commit
# a38221e), to score them on shapes their fit never saw.
if os.environ.get("PERFCAST_SET", "main") == "alignment":
    configs.clear()
    for dt in [BF16, FP16, FP32]:
        for m in [512, 2048, 8192]:
            for (n, k) in [(4096, 4096), (4096, 4095), (4096, 4094), (4096, 4092), (4096, 4088),
                           (4097, 4096), (4098, 4096), (4100, 4096), (11008, 4096),
                           (11007, 4096), (4096, 11007), (4096, 11006)]:
                if dt == FP32 and m == 8192:
                    continue
                gemm(m, n, k, dt, False)
        for (m, n, k) in [(2047, 4096, 4096), (2049, 4096, 4096), (8191, 4096, 4096),
                          (1, 4096, 4095), (1, 4095, 4096), (32, 4096, 4095), (128, 14335, 4096)]:
            if dt != FP32:
                gemm(m, n, k, dt, False)

# PERFCAST_SET=rows16: GEMMs whose K or N rows are 16- but not 32-byte aligned (K or N = 8 mod 16
# in 16-bit), and a few aligned to 4 or 8 bytes, measured after the Hopper presets took a 16-byte
# alignment unit (the commit after 0d9c879), to score it on shapes nothing was fitted on.
if os.environ.get("PERFCAST_SET", "main") == "rows16":
    configs.clear()
    for dt in [BF16, FP16]:
        for m in [256, 1024, 4096]:
            for (n, k) in [(4096, 1032), (4096, 2056), (4096, 4104), (8192, 3080), (8192, 5128),
                           (4096, 8200), (2056, 4096), (6152, 4096), (12296, 4096),
                           (4096, 2050), (6148, 4096), (4096, 3082)]:
                gemm(m, n, k, dt, False)

# PERFCAST_SET=unseen: shapes of none of the sets above (another model family's GEMMs and
# attention, element-wise and row-wise ops at sizes and row widths the main set does not use,
# fp16 besides bf16 and fp32), measured before the session that changed the model for them
# (after 65c71d5) and kept unread until those changes were committed: a hold-out for them.
if os.environ.get("PERFCAST_SET", "main") == "unseen":
    configs.clear()
    qwen = [(4608, 3584), (3584, 3584), (37888, 3584), (3584, 18944)]  # Qwen2.5-7B layer
    for (n, k) in qwen:
        for m in [1, 16, 96, 640, 3000, 8192]:
            gemm(m, n, k, BF16, False)
    for (hq, hkv, d) in [(28, 4, 128), (40, 8, 128), (16, 16, 64)]:
        for s in [768, 3000]:
            attention(2, hq, hkv, s, s, d, True)
        for (b, skv) in [(1, 2048), (8, 8192), (32, 500)]:
            attention(b, hq, hkv, 1, skv, d, False)
    for cold in [False, True]:
        for (r, w) in [(1, 3000), (7, 5120), (96, 3584), (640, 2560), (3000, 3072),
                       (8192, 5120), (20000, 6000)]:
            sh = (r, w)
            for dt in [BF16, FP16]:
                vec("Add", [sh, sh], dt, lambda s: torch.add(s[0], s[1]), cold)
                vec("Mul", [sh, (w,)], dt, lambda s: torch.mul(s[0], s[1]), cold)
                vec("Silu", [sh], dt, lambda s: F.silu(s[0]), cold)
                vec("Cast", [sh], dt, lambda s: s[0].to(FP32), cold, {"to": "fp32"})
                vec("RmsNorm", [sh, (w,)], dt,
                    lambda s: F.rms_norm(s[0], (s[0].shape[-1],), s[1]), cold)
                vec("Softmax", [sh], dt, lambda s: torch.softmax(s[0], -1), cold)
            vec("Cast", [sh], FP32, lambda s: s[0].to(BF16), cold, {"to": "bf16"})
            vec("ZerosLike", [sh], BF16, lambda s: torch.zeros_like(s[0]), cold)
            vec("Fill", [sh], FP32, lambda s: s[0].fill_(0.5), cold)
            vec("LayerNorm", [sh, (w,), (w,)], BF16,
                lambda s: F.layer_norm(s[0], (s[0].shape[-1],), s[1], s[2]), cold)
            vec("ReduceSum", [sh], BF16, lambda s: s[0].sum(-1), cold)
            vec("Exp", [sh], FP32, lambda s: torch.exp(s[0]), cold)
            vec("Gelu", [sh], BF16, lambda s: F.gelu(s[0]), cold)
            if r > 1:
                vec("Transpose", [sh], BF16, lambda s: s[0].t().contiguous(), cold)
    for w in [256, 512, 2048, 32000]:  # row widths between and beyond the main set's
        sh = (max(1, (3 << 22) // w), w)
        vec("RmsNorm", [sh, (w,)], BF16, lambda s: F.rms_norm(s[0], (s[0].shape[-1],), s[1]), False)
        vec("Softmax", [sh], BF16, lambda s: torch.softmax(s[0], -1), False)
        vec("LayerNorm", [sh, (w,), (w,)], BF16,
            lambda s: F.layer_norm(s[0], (s[0].shape[-1],), s[1], s[2]), False)
        vec("ReduceSum", [sh], BF16, lambda s: s[0].sum(-1), False)
    for (vocab, e) in [(151936, 3584), (50257, 768)]:
        for t in [16, 512, 4096]:
            vec("GatherV2", [(vocab, e)], BF16, lambda s: F.embedding(s[1], s[0]), False,
                {"tokens": t}, int_input=(vocab, (t,)))

# PERFCAST_SET=walks: the element-walk rules (docs/model.md, "Element walks") on cases the sets
# above lack, written after they were committed (e8650aa) and not yet run (the session that wrote
# it had no GPU left): row broadcasts ([R, W] + [R, 1]), a one-element operand, 3-D broadcasts,
# narrowing and integer casts, and 3-D transposes that keep or move the innermost axis (`perm`:
# the output's dimensions as input axes). Score it as held out from the walks.
if os.environ.get("PERFCAST_SET", "main") == "walks":
    configs.clear()
    for (r, w) in [(300, 3000), (4096, 4096), (65536, 1024)]:
        sh = (r, w)
        vec("Add", [sh, (r, 1)], BF16, lambda s: torch.add(s[0], s[1]), False)
        vec("Mul", [sh, (1,)], BF16, lambda s: torch.mul(s[0], s[1]), False)
        vec("Mul", [sh, (w,)], FP16, lambda s: torch.mul(s[0], s[1]), False)
        vec("Cast", [sh], FP32, lambda s: s[0].to(FP16), False, {"to": "fp16"})
        vec("Cast", [sh], FP16, lambda s: s[0].to(BF16), False, {"to": "bf16"})
    for (b, t, h) in [(4, 512, 4096), (16, 2048, 1024)]:
        vec("Mul", [(b, t, h), (h,)], BF16, lambda s: torch.mul(s[0], s[1]), False)
        vec("Add", [(b, t, h), (b, 1, h)], BF16, lambda s: torch.add(s[0], s[1]), False)
        vec("Transpose", [(b, t, h)], BF16, lambda s: s[0].transpose(0, 1).contiguous(), False,
            {"perm": [1, 0, 2]})
        vec("Transpose", [(b, t, h)], BF16, lambda s: s[0].transpose(1, 2).contiguous(), False,
            {"perm": [0, 2, 1]})
    for n in [1 << 20, 1 << 26]:
        sh = (n // 4096, 4096)
        vec("Cast", [sh], FP32, lambda s: s[0].to(torch.float64), False, {"to": "fp64"})

        def int_cast(s):
            return s[0].to(FP32)
        configs.append(("Cast", {"shapes": f"{sh[0]},{sh[1]}", "dtype": "int32", "to": "fp32"},
                        (lambda sh=sh: [(torch.randint(0, 1000, sh, device=dev,
                                                       dtype=torch.int32),)]), int_cast, False))

print(f"{len(configs)} configurations on {props.name}, {SMS} SMs, L2 {L2_BYTES} B", flush=True)

# ---- measuring -------------------------------------------------------------------------
failures = []
kernels_file = open(os.path.join(OUT, "kernels.csv"), "w", newline="")
kernels_out = csv.writer(kernels_file)
kernels_out.writerow(["config", "call", "category", "kernel", "grid", "block", "duration_us"])
configs_file = open(os.path.join(OUT, "configs.csv"), "w", newline="")
configs_out = csv.writer(configs_file)
configs_out.writerow(["config", "type", "condition", "params", "input_sets"])
records = 0
GPU_CATS = ("kernel", "gpu_memset", "gpu_memcpy")
t0 = time.time()
BATCH = 40       # configurations per profiler session (keeps each trace small)
for start in range(0, len(configs), BATCH):
    chunk = list(enumerate(configs))[start:start + BATCH]
    ready = []
    for cid, (op, params, make, call, cold) in chunk:
        try:
            sets = make()
            for i in range(WARMUP):
                call(sets[i % len(sets)])
            torch.cuda.synchronize()
            ready.append((cid, sets))
        except Exception as e:  # noqa: BLE001 - recorded, the rest goes on
            failures.append((cid, op, params, f"{type(e).__name__}: {e}"[:300]))
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                            torch.profiler.ProfilerActivity.CUDA]) as prof:
        measured = []
        for cid, sets in ready:
            op, params, make, call, cold = configs[cid]
            try:
                for c in range(CALLS):
                    with torch.profiler.record_function(f"cfg{cid}#{c}"):
                        call(sets[(WARMUP + c) % len(sets)])
                        torch.cuda.synchronize()
                measured.append((cid, sets))
            except Exception as e:  # noqa: BLE001
                failures.append((cid, op, params, f"{type(e).__name__}: {e}"[:300]))
    try:
        path = os.path.join(OUT, f"trace_{start}.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            tr = json.load(f)
        if start == 0:
            with open(path, "rb") as f, gzip.open(os.path.join(OUT, "trace_first.json.gz"), "wb") as g:
                g.write(f.read())
        os.remove(path)
        ev = tr.get("traceEvents", [])
        ann = sorted((e["ts"], e["ts"] + e.get("dur", 0), e["name"]) for e in ev
                     if e.get("cat") == "user_annotation" and e.get("name", "").startswith("cfg"))
        launch = {}  # correlation -> host time of the launch call (runtime or driver API)
        for e in ev:
            if e.get("cat") not in GPU_CATS and e.get("ph") == "X" and \
                    "correlation" in e.get("args", {}):
                launch[e["args"]["correlation"]] = e["ts"]
        starts = [a[0] for a in ann]

        for e in ev:
            if e.get("cat") not in GPU_CATS:
                continue
            a = e.get("args", {})
            ts = launch.get(a.get("correlation"))
            if ts is None:
                continue
            i = bisect.bisect_right(starts, ts) - 1
            if i < 0 or ts > ann[i][1]:
                continue
            cid, call_no = ann[i][2][3:].split("#")
            kernels_out.writerow((int(cid), int(call_no), e.get("cat"), e.get("name", ""),
                                  "x".join(str(x) for x in a.get("grid", [])),
                                  "x".join(str(x) for x in a.get("block", [])), e.get("dur", 0)))
            records += 1
    except Exception as e:  # noqa: BLE001 - the chunk's kernels are lost, not the run
        print(f"  trace of configurations {start}.. not read: {type(e).__name__}: {e}")
        measured = []
    for cid, sets in measured:
        op, params, make, call, cold = configs[cid]
        configs_out.writerow((cid, op, "cold" if cold else "hot",
                              json.dumps(params, sort_keys=True), len(sets)))
    kernels_file.flush()
    configs_file.flush()
    del ready, measured
    torch.cuda.empty_cache()
    print(f"  {min(start + BATCH, len(configs))}/{len(configs)} configurations, "
          f"{records} kernel records, {time.time() - t0:.0f} s", flush=True)

stop.set()
sampler.join(timeout=5)
for cid, op, params, why in failures:
    configs_out.writerow([cid, op, "failed", json.dumps(params, sort_keys=True), why])
kernels_file.close()
configs_file.close()
print(f"done: {len(configs) - len(failures)} measured, {len(failures)} failed, "
      f"{records} kernel records, {time.time() - t0:.0f} s")
for cid, op, params, why in failures[:20]:
    print("FAILED", cid, op, params, why)
