#!/usr/bin/env python3
"""Turns measure.py's output into the kernel_details subset `perfcast validate` reads.

  python3 convert.py CONFIGS.csv KERNELS.csv[.gz] OUT.csv
      one row per measured configuration: the median over its profiled calls of the summed
      device time of the kernels (and memsets) one call launched, as vidur sums an operator's
      kernels; written with the op type, shapes and dtypes perfcast's profile mapping reads.
  python3 convert.py --spread A.csv B.csv
      the run-to-run difference of two converted files of the same configurations: mean and
      median |A - B| / B in percent (the floor no model can beat on these rows).

Row conventions (the subset has no layout or mask column, so the shapes carry them, as the
mapping reads CANN's rows):
  - MatMul: x [M, K]; w [N, K] (F.linear) -> [M, N]; BatchMatMul: [B, M, K]; [B, K, N].
  - FlashAttentionScore: q [B, Nq, Sq, D]; k, v [B, Nkv, Skv, D] (BNSD) -> [B, Nq, Sq, D]; a
    causal call (is_causal=True, no mask tensor) carries CANN's compressed causal mask shape
    [2048, 2048] (bool) as its fourth input, which is how the mapping reads a causal row.
    FlashAttentionScoreGrad: q, k, v, dy, then that mask when causal -> dq, dk, dv; its call
    also ran the forward pass (autograd needs it): kernels whose name says 'fprop' are left
    out of the grad row.
  - Block Dim: the chip's 132 SMs on every row, as the vidur converter writes the A100's 108
    (the grids are in KERNELS.csv).
  - Name: '<type> cfg<N> <hot|cold>' (measure.py says what the conditions are).
Configurations whose calls launched no kernel (a transpose of a [1, W] tensor is a view) are
not written; the count is printed.
"""
import csv
import gzip
import json
import statistics
import sys
from collections import defaultdict

SMS = 132
CUBE = {"MatMul", "BatchMatMul", "FlashAttentionScore", "FlashAttentionScoreGrad"}
DT = {"bf16": "BF16", "fp16": "FLOAT16", "fp32": "FLOAT", "fp64": "DOUBLE", "int32": "INT32"}


def dims(*d):
    return ",".join(str(x) for x in d)


def row_of(op, p):
    """(input shapes, input types, output shapes, output types) of one configuration."""
    t = DT[p["dtype"]]
    if op == "MatMul":
        m, n, k = p["m"], p["n"], p["k"]
        return [dims(m, k), dims(n, k)], [t, t], [dims(m, n)], [t]
    if op == "BatchMatMul":
        b, m, n, k = p["b"], p["m"], p["n"], p["k"]
        return [dims(b, m, k), dims(b, k, n)], [t, t], [dims(b, m, n)], [t]
    if op.startswith("FlashAttentionScore"):
        q = dims(p["b"], p["hq"], p["sq"], p["d"])
        kv = dims(p["b"], p["hkv"], p["skv"], p["d"])
        ins, types = [q, kv, kv], [t, t, t]
        if op.endswith("Grad"):
            ins.append(q)
            types.append(t)
        if p["causal"]:
            ins.append(dims(2048, 2048))
            types.append("BOOL")
        if op.endswith("Grad"):
            return ins, types, [q, kv, kv], [t, t, t]
        return ins, types, [q], [t]
    shapes = p["shapes"].split(";")
    x = [int(v) for v in shapes[0].split(",")]
    if op == "GatherV2":
        return [shapes[0], dims(p["tokens"])], [t, "INT64"], [dims(p["tokens"], x[1])], [t]
    if op == "Cast":
        return [shapes[0]], [t], [shapes[0]], [DT[p["to"]]]
    if op == "ReduceSum":
        return [shapes[0]], [t], [dims(*x[:-1])], [t]
    if op == "Transpose":  # a 2-D .t(), or the dimensions `perm` names
        out = [x[i] for i in p["perm"]] if "perm" in p else [x[1], x[0]]
        return [shapes[0]], [t], [dims(*out)], [t]
    if op == "LayerNorm":  # native_layer_norm also writes the rows' mean and rstd (fp32)
        rows = x[0]
        return shapes, [t] * len(shapes), [shapes[0], dims(rows, 1), dims(rows, 1)], \
            [t, "FLOAT", "FLOAT"]
    return shapes, [t] * len(shapes), [shapes[0]], [t]


def opener(path):
    return gzip.open(path, "rt", newline="") if path.endswith(".gz") else open(path, newline="")


def convert(configs_path, kernels_path, out_path):
    configs = {}
    with open(configs_path, newline="") as f:
        for r in csv.DictReader(f):
            if r["condition"] != "failed":
                configs[r["config"]] = r
    per_call = defaultdict(lambda: defaultdict(float))
    with opener(kernels_path) as f:
        for r in csv.DictReader(f):
            c = configs.get(r["config"])
            if c is None:
                continue
            if c["type"] == "FlashAttentionScoreGrad" and "fprop" in r["kernel"]:
                continue
            per_call[r["config"]][int(r["call"])] += float(r["duration_us"])
    written = empty = 0
    with open(out_path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["Name", "Type", "Accelerator Core", "Duration(us)", "Block Dim",
                    "Input Shapes", "Input Data Types", "Output Shapes", "Output Data Types"])
        for cid in sorted(configs, key=int):
            c = configs[cid]
            calls = per_call.get(cid)
            if not calls:
                empty += 1
                continue
            op = c["type"]
            ins, in_t, outs, out_t = row_of(op, json.loads(c["params"]))
            w.writerow([f"{op} cfg{cid} {c['condition']}", op,
                        "AI_CORE" if op in CUBE else "AI_VECTOR_CORE",
                        f"{statistics.median(calls.values()):.3f}", SMS, ";".join(ins),
                        ";".join(in_t), ";".join(outs), ";".join(out_t)])
            written += 1
    print(f"{out_path}: {written} rows; {empty} configurations launched no kernel")


def spread(a_path, b_path):
    def load(p):
        with open(p, newline="") as f:
            return {r["Name"]: float(r["Duration(us)"]) for r in csv.DictReader(f)}
    a, b = load(a_path), load(b_path)
    d = sorted(abs(a[k] - b[k]) / b[k] * 100 for k in a if k in b and b[k] > 0)
    print(f"{len(d)} rows in both: mean {statistics.mean(d):.2f} %, median "
          f"{statistics.median(d):.2f} %, max {d[-1]:.1f} %")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--spread":
        spread(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4:
        convert(*sys.argv[1:])
    else:
        sys.exit(__doc__)
