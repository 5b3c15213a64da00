#!/usr/bin/env python3
"""Writes seeds for tests/fuzz/fuzz_msprof_db.cpp from real SQLite exports.

    python3 tests/fuzz/msprof_db_seed.py DB OUT [--tasks N]

Reads DB read-only (immutable: no -wal or -shm file appears beside it) and writes OUT in the
fuzz target's byte format (see fuzz_msprof_db.cpp): byte 0 options (0), byte 1 no column dropped
(255), then the rows of STRING_IDS (only the strings the kept rows use), COMPUTE_TASK_INFO, TASK,
TASK_PMU_INFO, NPU_INFO and AICORE_FREQ, columns in the fuzz target's order. --tasks keeps the
first N op tasks by start time (and their TASK and PMU rows) so that a seed stays small; texts
over 255 bytes are cut to 255.
"""
import argparse
import sqlite3
import struct

TABLES = [
    ("STRING_IDS", ["id", "value"]),
    ("COMPUTE_TASK_INFO", ["name", "globalTaskId", "blockDim", "mixBlockDim", "taskType",
                           "opType", "inputFormats", "inputDataTypes", "inputShapes",
                           "outputFormats", "outputDataTypes", "outputShapes", "attrInfo",
                           "waitNs"]),
    ("TASK", ["startNs", "endNs", "deviceId", "connectionId", "globalTaskId", "globalPid",
              "taskType", "contextId", "streamId", "taskId", "modelId"]),
    ("TASK_PMU_INFO", ["globalTaskId", "name", "value"]),
    ("NPU_INFO", ["id", "name"]),
    ("AICORE_FREQ", ["deviceId", "timestampNs", "freq"]),
]
STRING_COLUMNS = {
    "COMPUTE_TASK_INFO": {"name", "taskType", "opType", "inputFormats", "inputDataTypes",
                          "inputShapes", "outputFormats", "outputDataTypes", "outputShapes",
                          "attrInfo"},
    "TASK": {"taskType"},
    "TASK_PMU_INFO": {"name"},
}


def cell(v):
    if v is None:
        return b"\x00"
    if isinstance(v, int):
        if -128 <= v <= 127:
            return b"\x01" + struct.pack("<b", v)
        return b"\x02" + struct.pack("<q", v)
    if isinstance(v, float):
        return b"\x03" + struct.pack("<d", v)
    data = v.encode() if isinstance(v, str) else bytes(v)
    data = data[:255]
    return (b"\x04" if isinstance(v, str) else b"\x05") + bytes([len(data)]) + data


def columns_of(db, table):
    return {r[1] for r in db.execute("SELECT * FROM pragma_table_info(?)", (table,))}


def select(db, table, cols, where=""):
    have = columns_of(db, table)
    if not have:
        return []
    parts = ['"%s"' % c if c in have else "NULL" for c in cols]
    return db.execute("SELECT %s FROM \"%s\" %s" % (",".join(parts), table, where)).fetchall()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("out")
    ap.add_argument("--tasks", type=int, default=0)
    a = ap.parse_args()
    db = sqlite3.connect("file:%s?mode=ro&immutable=1" % a.db, uri=True)
    keep = None
    if a.tasks:
        keep = {r[0] for r in db.execute(
            "SELECT c.globalTaskId FROM COMPUTE_TASK_INFO c JOIN TASK t USING (globalTaskId) "
            "ORDER BY t.startNs LIMIT ?", (a.tasks,))}
    rows = {}
    for name, cols in TABLES[1:]:
        got = select(db, name, cols)
        if keep is not None and "globalTaskId" in cols:
            i = cols.index("globalTaskId")
            got = [r for r in got if r[i] in keep]
        rows[name] = got
    used = set()
    for name, cols in TABLES[1:]:
        for c in STRING_COLUMNS.get(name, ()):
            i = cols.index(c)
            used.update(r[i] for r in rows[name] if isinstance(r[i], int))
    rows["STRING_IDS"] = [r for r in select(db, "STRING_IDS", ["id", "value"]) if r[0] in used]
    out = bytearray(b"\x00\xff")
    for t, (name, _) in enumerate(TABLES):
        for r in rows[name]:
            out += bytes([t]) + b"".join(cell(v) for v in r)
    with open(a.out, "wb") as f:
        f.write(out)
    print("%s: %d bytes, %s" % (a.out, len(out),
                                ", ".join("%s %d" % (n, len(rows[n])) for n, _ in TABLES)))


if __name__ == "__main__":
    main()
