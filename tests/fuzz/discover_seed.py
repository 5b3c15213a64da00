#!/usr/bin/env python3
"""Writes a seed for tests/fuzz/fuzz_discover.cpp from a real profiler output folder.

    python3 tests/fuzz/discover_seed.py FOLDER OUT [--bytes N]

Each file under FOLDER becomes a path line (relative to FOLDER's parent, so the folder's own name
is kept: torch_npu's *_ascend_pt, msprof's PROF_*) followed by its first N bytes (default 2048,
cut at the last line end; an SQLite file keeps its 16-byte header only, enough to be taken for a
database) and a NUL byte: the fuzz target's input format. Files are taken in sorted order.
"""
import argparse
import os


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("out")
    ap.add_argument("--bytes", type=int, default=2048)
    args = ap.parse_args()
    base = os.path.dirname(os.path.abspath(args.folder))
    out = bytearray()
    for dirpath, _, names in sorted(os.walk(args.folder)):
        for name in sorted(names):
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                head = f.read(args.bytes)
            if head.startswith(b"SQLite format 3\0"):
                head = head[:16]
            elif len(head) == args.bytes and b"\n" in head:
                head = head[: head.rindex(b"\n") + 1]
            head = head.replace(b"\0", b"")
            rel = os.path.relpath(path, base).replace(os.sep, "/")
            out += rel.encode() + b"\n" + head + b"\0"
    with open(args.out, "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main()
