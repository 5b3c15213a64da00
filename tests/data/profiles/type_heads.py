#!/usr/bin/env python3
"""How far apart kernels' heads are by type: the single-core rows of a kernel_details.csv.

Usage: type_heads.py KERNEL_DETAILS.csv [--max-us X]

Takes the AI_CORE and AI_VECTOR_CORE rows with Block Dim 1, a duration of at most X us (default
3: a head-bound kernel on one core) and input dtypes (an atomic MemSet has none: perfcast maps no
such row), groups them by op type and input shapes, and prints
each group's median duration. Then each group is predicted by the median of every other group's
rows (what a model that knew all the other kernels' heads exactly, and nothing of this one's,
would say) and the absolute percentage errors of all rows are summarized: an estimate (not a
bound) of what any prediction that gives a kernel it has not seen the head of the kernels it has
would miss by (docs/validation.md,
"Where the error sits"). Standard library only.
"""
import csv
import statistics
import sys


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    path = argv[1]
    max_us = 3.0
    if len(argv) == 4 and argv[2] == "--max-us":
        max_us = float(argv[3])
    elif len(argv) != 2:
        print(f"type_heads.py: unexpected arguments {argv[2:]}", file=sys.stderr)
        return 2
    groups = {}
    untyped = 0
    with open(path, newline="") as f:
        for line, r in enumerate(csv.DictReader(f), start=2):
            if r.get("Accelerator Core") not in ("AI_CORE", "AI_VECTOR_CORE"):
                continue
            try:
                cores = int(float(r["Block Dim"]))
                us = float(r["Duration(us)"])
            except (KeyError, ValueError) as e:
                print(f"{path}:{line}: skipped: {e}", file=sys.stderr)
                continue
            if not (cores == 1 and 0 < us <= max_us):
                continue
            if r.get("Input Data Types", "") in ("", "UNDEFINED", "N/A"):
                untyped += 1
                continue
            groups.setdefault((r["Type"], r["Input Shapes"]), []).append(us)
    if len(groups) < 2:
        print(f"{path}: fewer than two groups of single-core rows under {max_us} us")
        return 1
    errors = []
    if untyped:
        print(f"{untyped} rows without input dtypes left out")
    print("type                 input shapes  rows  median us  others' median us")
    for key in sorted(groups, key=lambda k: (-len(groups[k]), k)):
        others = [us for k, v in groups.items() if k != key for us in v]
        guess = statistics.median(others)
        errors += [abs(guess / us - 1) for us in groups[key]]
        print(f"{key[0]:<20} {key[1]:<13} {len(groups[key]):>4}  {statistics.median(groups[key]):9.2f}"
              f"  {guess:17.2f}")
    print(f"{len(errors)} rows, each predicted by the other groups' median: "
          f"MAPE {100 * statistics.mean(errors):.1f} %, median {100 * statistics.median(errors):.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
