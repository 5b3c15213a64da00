#!/usr/bin/env python3
"""Writes bursty_ctr.csv: a synthetic request trace (no recorded one is published) for
`perfcast whatif --replay` and its tests. 0.5 s of requests: Poisson at 6000 QPS, with a burst at
4x that rate for the first 50 ms of every 250 ms; batch sizes drawn from ../bs_hist_seed.csv
(the field guide's request histogram). Seeded: the same file on every run.

    python3 tests/data/traces/make_bursty.py
"""
import csv
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    with open(os.path.join(HERE, "..", "bs_hist_seed.csv")) as f:
        rows = [r for r in csv.reader(l for l in f if not l.startswith("#"))][1:]
    sizes = [int(r[0]) for r in rows]
    weights = [float(r[1]) for r in rows]
    rng = random.Random(20261207)
    base_qps, burst, period_ms, burst_ms, span_ms = 6000.0, 4.0, 250.0, 50.0, 500.0
    t = 0.0
    out = []
    while True:
        rate = base_qps * (burst if t % period_ms < burst_ms else 1.0)
        t += rng.expovariate(rate) * 1000.0
        if t >= span_ms:
            break
        out.append((t, rng.choices(sizes, weights)[0]))
    with open(os.path.join(HERE, "bursty_ctr.csv"), "w") as f:
        f.write("# synthetic: tests/data/traces/make_bursty.py (Poisson 6000 QPS, 4x bursts of "
                "50 ms every 250 ms)\n")
        f.write("time_ms,bs\n")
        for t, bs in out:
            f.write("%.4f,%d\n" % (t, bs))
    print("bursty_ctr.csv: %d requests" % len(out))


if __name__ == "__main__":
    main()
