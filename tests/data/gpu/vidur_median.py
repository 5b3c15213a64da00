#!/usr/bin/env python3
"""Keep the median columns of a vidur mlp.csv (microsoft/vidur's MLP profiler output) and its
model / token / tensor-parallel columns, in the original order and with values unchanged.

    python3 tests/data/gpu/vidur_median.py ORIGINAL OUT

tests/data/README.md lists the files written with it and the sha256 of each original."""
import csv
import sys


def main(src, dst):
    with open(src, newline='') as f:
        rows = list(csv.reader(f))
    keep = [i for i, h in enumerate(rows[0])
            if h.endswith('.median') or not h.startswith('time_stats.')]
    with open(dst, 'w', newline='') as f:
        w = csv.writer(f, lineterminator='\n')
        for r in rows:
            w.writerow([r[i] for i in keep])


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
