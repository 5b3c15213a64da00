#!/usr/bin/env python3
"""Docs that run: checks README.md and docs/*.md against the built perfcast command.

Usage (from anywhere; commands run with the repository's files at hand):
    tests/doc_check.py PATH/TO/perfcast [--skip-slow] [--no-run] [--jobs N] [FILE.md ...]
    tests/doc_check.py --self-test          the checker's own test (no perfcast needed)

1. Runnable blocks. A fenced block whose fence line is directly preceded by the HTML comment
   `<!-- check -->` (GitHub does not render it) is run and its output compared:

       <!-- check -->
       ```
       $ perfcast chips --format csv                     <- a command: "$ " prompt ...
       name,cube cores,...                               <- ... and the output it prints
       $P validate --chip 910B1 --test x.csv \\           <- or a line starting "$P " (P is the
           --worst 3                                        built command); a trailing "\\"
       scored 3 rows ...                                    continues the command line
       ...                                               <- a line "..." matches any lines
       ```

   Commands run in bash from a scratch folder that links every top-level entry of the
   repository (so `tests/data/...` resolves and `-o params.txt` lands in the scratch folder),
   with `perfcast` on PATH and $P both naming the built command, stdout and stderr together.
   The output must match the shown lines exactly after stripping trailing whitespace (and
   trailing blank lines), numbers included; a line `...` stands for zero or more lines. A
   command that exits non-zero must show its status as a last line `[N]` (as cram does).
   `<!-- check slow -->` marks a block that takes more than a few seconds: --skip-slow skips it.
   `<!-- check sqlite -->` marks a block that reads an SQLite export: --skip-sqlite skips it (the
   build passes it when configured without SQLite). Tags combine: `<!-- check slow sqlite -->`.
   `<!-- check onnx -->` likewise marks a block that imports an ONNX graph: --skip-onnx skips it.
   Blocks whose output depends on timing or the machine stay unmarked, with a comment saying why.
   `--jobs N` runs up to N commands at once, in document order: a command that may write a file
   (one not starting with perfcast, or with a redirection to a file or an output option:
   may_write) runs alone, so each command sees what the commands before it wrote.

2. Links and cited files, in every checked markdown file (outside fenced blocks): each relative
   link [text](path#anchor) names an existing file (and, for .md files, a heading with that
   GitHub anchor); each repository path cited in backticks or prose (`tests/data/...`,
   include/perfcast/..., docs/x.md, ...) exists (globs such as include/perfcast/*.hpp must
   match something; a built program may be cited by its source's stem). Paths under build/ or
   /tmp are outputs, not citations, and are not checked. A path of another repository, cited as
   such, is declared in the file: <!-- doc_check: external docs/en/x.md docs/zh/x.md -->.

Every mismatch is printed as FILE:LINE: what, with a unified diff for outputs; the exit status is
1 when there is any, 0 otherwise.
"""
import argparse
import concurrent.futures
import difflib
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKER = re.compile(r"^\s*<!--\s*check((?:\s+(?:slow|sqlite|onnx))*)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+|~~~+)(.*)$")
ELISION = "..."
COMMAND_TIMEOUT_S = 600

# A repository path: starts with one of the repository's top-level folders or files.
TOP_DIRS = ("include", "tests", "docs", "examples", "bench", "cmake", ".ci")
TOP_FILES = ("README.md", "CMakeLists.txt", "CMakePresets.json", "meson.build",
             "meson_options.txt", ".clang-format")
PATH_RE = re.compile(
    r"(?<![\w./~$-])((?:%s)/[\w.*+-]+(?:/[\w.*+-]+)*/?|(?:%s))(?![\w/<-])" % (
        "|".join(re.escape(d) for d in TOP_DIRS), "|".join(re.escape(f) for f in TOP_FILES)))
LINK_RE = re.compile(r"(?<!!)\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
EXTERNAL_RE = re.compile(r"<!--\s*doc_check:\s*external\s+(.*?)\s*-->")
IMAGE_RE = re.compile(r"!\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)\)")


def show(path):
    rel = os.path.relpath(path, ROOT)
    return path if rel.startswith("..") else rel


class Report:
    def __init__(self):
        self.problems = 0

    def error(self, path, line, message, diff=None):
        self.problems += 1
        print(f"{show(path)}:{line}: {message}")
        if diff:
            sys.stdout.writelines(diff)
            print()


# ---- parsing -------------------------------------------------------------------------------

def fenced_blocks(lines):
    """Yields (marker, fence line index, body lines, first body line index) for each fenced
    block; marker is None (not runnable) or the set of its tags ("slow", "sqlite", "onnx")."""
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = m.group(1), m.group(2)
        j = i + 1
        while j < len(lines):
            c = FENCE.match(lines[j])
            if c and c.group(2).startswith(fence[0] * len(fence)) and not c.group(3).strip():
                break
            j += 1
        marker = None
        if i > 0:
            mm = MARKER.match(lines[i - 1])
            if mm:
                marker = frozenset(mm.group(1).split())
        body = [l[len(indent):] if l.startswith(indent) else l for l in lines[i + 1:j]]
        yield marker, i, body, i + 1
        i = j + 1


def parse_commands(body, first):
    """Splits a runnable block into [(command, command line index, expected lines, index of
    the first expected line)]."""
    items = []
    k = 0
    while k < len(body):
        line = body[k]
        if line.startswith("$ ") or line.startswith("$P ") or line == "$P":
            start = k
            cmd = line[2:] if line.startswith("$ ") else line
            parts = [cmd]
            while parts[-1].rstrip().endswith("\\") and k + 1 < len(body):
                k += 1
                parts.append(body[k])
            items.append([("\n".join(parts)), first + start, [], first + k + 1])
        elif items:
            items[-1][2].append(line)
        elif line.strip():
            return None, first + k
        k += 1
    return items, None


# ---- comparing outputs ------------------------------------------------------------------

def normalise(lines):
    out = [l.rstrip() for l in lines]
    while out and not out[-1]:
        out.pop()
    return out


def matches(expected, actual):
    """True when actual equals expected, each "..." line standing for zero or more lines."""
    memo = {}

    def go(i, j):
        key = (i, j)
        if key in memo:
            return memo[key]
        if i == len(expected):
            r = j == len(actual)
        elif expected[i] == ELISION:
            r = any(go(i + 1, k) for k in range(j, len(actual) + 1))
        else:
            r = j < len(actual) and expected[i] == actual[j] and go(i + 1, j + 1)
        memo[key] = r
        return r

    sys.setrecursionlimit(max(10000, 4 * (len(expected) + len(actual))))
    return go(0, 0)


def shown_as_actual(expected, actual):
    """The actual output with each elided stretch put back as "...", so that the diff against the
    document shows only real differences. Greedy: "..." takes lines up to the next shown line."""
    out, j = [], 0
    for i, e in enumerate(expected):
        if e != ELISION:
            if j < len(actual):
                out.append(actual[j])
                j += 1
            continue
        nxt = next((x for x in expected[i + 1:] if x != ELISION), None)
        if nxt is None:
            j = len(actual)
        else:
            k = j
            while k < len(actual) and actual[k] != nxt:
                k += 1
            if k == len(actual):
                k = j  # the next shown line is missing: elide nothing
            j = k
        out.append(ELISION)
    out.extend(actual[j:])
    return out


def first_difference(expected, shown):
    for n, (a, b) in enumerate(zip(expected, shown)):
        if a != b:
            return n
    return min(len(expected), len(shown))


# ---- running -----------------------------------------------------------------------------

# Programs of examples/ that docs run as `$ NAME ...`, found beside the perfcast binary.
COMPANION_TOOLS = ("vidur_to_kernel_details",)


def scratch_dir(perfcast):
    d = tempfile.mkdtemp(prefix="perfcast-doc-check.")
    for name in os.listdir(ROOT):
        if name != ".git":
            os.symlink(os.path.join(ROOT, name), os.path.join(d, name))
    bindir = os.path.join(d, ".bin")
    os.mkdir(bindir)
    os.symlink(perfcast, os.path.join(bindir, "perfcast"))
    # The example programs the docs run beside perfcast, when they were built next to it.
    for tool in COMPANION_TOOLS:
        built = os.path.join(os.path.dirname(perfcast), tool)
        if os.path.isfile(built):
            os.symlink(built, os.path.join(bindir, tool))
    return d, bindir


def run_command(cmd, cwd, bindir, perfcast):
    env = dict(os.environ)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    env["P"] = perfcast
    env["LC_ALL"] = "C"
    try:
        p = subprocess.run(["bash", "-c", "set -o pipefail\n" + cmd], cwd=cwd, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=COMMAND_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, ["(timed out after %d s)" % COMMAND_TIMEOUT_S]
    lines = normalise(p.stdout.decode("utf-8", "replace").split("\n"))
    if p.returncode != 0:
        lines.append("[%d]" % p.returncode)
    return p.returncode, lines


# A command that may write a file: any that does not start with perfcast (a script may write its
# positional arguments), and a perfcast one with a redirection other than to /dev/null or another
# stream, an output option or a program that changes files or folders. With --jobs it runs alone,
# after every command before it and before every command after it, so that each command sees the
# files the document wrote before it, and nothing it reads changes under it. The others write
# nothing, and run side by side.
PERFCAST_FIRST_RE = re.compile(r"^\s*(?:\$P|perfcast)\s")
WRITES_RE = re.compile(
    r"(?:[0-9]?>>?|&>)\s*(?!/dev/null\b|&)\S"
    r"|(?:^|\s)(?:-o|--output|--svg|--trace)(?:[\s=]|$)"
    r"|(?:^|[\s;&|(])(?:cp|mv|rm|mkdir|touch|ln|cd|tee|sed\s+-i|patch|tar|unzip)(?:\s|$)"
    r"|--split\b")


# Programs that a perfcast command's output may be piped to without writing a file (a
# redirection is caught by WRITES_RE; sed -i by it too).
READ_ONLY_PROGRAMS = {"head", "tail", "grep", "sed", "sort", "cut", "wc", "uniq", "tr", "awk",
                      "cat", "true", "false"}


def may_write(cmd):
    """Whether `cmd` may write a file: see PERFCAST_FIRST_RE above; every program after the first
    (after |, ;, && or ||) must be one of READ_ONLY_PROGRAMS."""
    if not PERFCAST_FIRST_RE.match(cmd) or WRITES_RE.search(cmd):
        return True
    stages = re.split(r"\|\||&&|[|;]", cmd.replace("\\\n", " "))[1:]
    return any((stage.split() or ["?"])[0] not in READ_ONLY_PROGRAMS for stage in stages)


def queue_block(path, fence, body, first, tags, args, rep, ctx):
    """Adds the block's commands to ctx["queue"] (in document order), or reports a malformed
    block."""
    items, bad = parse_commands(body, first)
    if items is None:
        rep.error(path, bad + 1, "runnable block: output before the first command "
                  "(a command line starts with \"$ \" or \"$P \")")
        return
    if not items:
        rep.error(path, fence + 1, "runnable block without a command")
        return
    for cmd, cmd_line, expected_raw, exp_line in items:
        if (("slow" in tags and args.skip_slow) or ("sqlite" in tags and args.skip_sqlite)
                or ("onnx" in tags and args.skip_onnx)):
            ctx["skipped"] += 1
            continue
        ctx["queue"].append((path, cmd, cmd_line, expected_raw, exp_line))


def timed_run(cmd, ctx):
    t0 = time.monotonic()
    _, actual = run_command(cmd, ctx["cwd"], ctx["bindir"], ctx["perfcast"])
    return actual, time.monotonic() - t0


def run_queue(ctx, jobs):
    """Runs ctx["queue"]'s commands, up to `jobs` at a time (a command that may write runs
    alone: may_write), and returns their outputs and times in queue order."""
    queue = ctx["queue"]
    if jobs <= 1:
        return [timed_run(q[1], ctx) for q in queue]
    results = [None] * len(queue)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        pending = {}
        for i, q in enumerate(queue):
            if may_write(q[1]):
                for j, f in pending.items():
                    results[j] = f.result()
                pending = {}
                results[i] = timed_run(q[1], ctx)
            else:
                pending[i] = pool.submit(timed_run, q[1], ctx)
        for j, f in pending.items():
            results[j] = f.result()
    return results


def compare(path, cmd, cmd_line, expected_raw, exp_line, actual, rep):
    expected = normalise(expected_raw)
    actual = normalise(actual)
    if matches(expected, actual):
        return
    shown = shown_as_actual(expected, actual)
    n = first_difference(expected, shown)
    rel = show(path)
    diff = difflib.unified_diff([l + "\n" for l in expected], [l + "\n" for l in shown],
                                f"{rel}:{exp_line + 1} (shown)", "perfcast (printed)",
                                lineterm="\n")
    short = cmd.split("\n")[0]
    rep.error(path, exp_line + n + 1, f"output of `{short}` differs", list(diff))


# ---- links and cited paths ---------------------------------------------------------------

def github_anchor(heading):
    s = heading.strip().lower()
    s = re.sub(r"`", "", s)
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors_of(md_path, cache):
    if md_path in cache:
        return cache[md_path]
    found, seen, in_fence = set(), {}, False
    with open(md_path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if m and not in_fence:
                a = github_anchor(m.group(2))
                n = seen.get(a, 0)
                seen[a] = n + 1
                found.add(a if n == 0 else f"{a}-{n}")
            for m in re.finditer(r"<a\s+(?:name|id)=\"([^\"]+)\"", line):
                found.add(m.group(1))
    cache[md_path] = found
    return found


def exists_in_repo(rel):
    rel = rel.rstrip("/")
    if any(c in rel for c in "*?["):
        return bool(glob.glob(os.path.join(ROOT, rel)))
    # A built program is cited by its source's stem (examples/vidur_to_kernel_details).
    return any(os.path.exists(os.path.join(ROOT, rel + ext)) for ext in ("", ".cpp", ".hpp"))


def check_links_and_paths(path, lines, rep, anchor_cache):
    # Paths of another repository, cited as such: <!-- doc_check: external PATH ... -->
    external = set()
    for line in lines:
        for m in EXTERNAL_RE.finditer(line):
            external.update(m.group(1).split())
    fenced = set()
    for _, fence, body, first in fenced_blocks(lines):
        fenced.update(range(fence, first + len(body) + 1))
    in_comment = False
    for n, line in enumerate(lines):
        if n in fenced:
            continue
        # Skip HTML comments (the check markers and notes for editors).
        text = line
        if in_comment:
            if "-->" not in text:
                continue
            text = text.split("-->", 1)[1]
            in_comment = False
        text = re.sub(r"<!--.*?-->", "", text)
        if "<!--" in text:
            text = text.split("<!--", 1)[0]
            in_comment = True
        for m in list(LINK_RE.finditer(text)) + list(IMAGE_RE.finditer(text)):
            target = m.group(1)
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue  # http:, https:, mailto:
            file_part, _, anchor = target.partition("#")
            dest = path if not file_part else os.path.normpath(
                os.path.join(os.path.dirname(path), file_part))
            if not os.path.exists(dest):
                rep.error(path, n + 1, f"link to {target}: no file {os.path.relpath(dest, ROOT)}")
                continue
            if anchor and dest.endswith(".md") and anchor not in anchors_of(dest, anchor_cache):
                rep.error(path, n + 1, f"link to {target}: no heading with anchor #{anchor} in "
                          f"{os.path.relpath(dest, ROOT)}")
        # Cited repository paths, in code spans and prose (link targets were checked above).
        prose = LINK_RE.sub(lambda m: m.group(0).split("](")[0], text)
        for m in PATH_RE.finditer(prose):
            rel = m.group(1).rstrip(".")
            if "..." in m.group(0) or rel in TOP_DIRS or rel in external:
                continue
            if not exists_in_repo(rel):
                rep.error(path, n + 1, f"cites {rel}, which is not in the repository")


# ---- main ----------------------------------------------------------------------------------

def default_files():
    return [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def check_files(files, args, perfcast):
    rep = Report()
    ctx = {"run": 0, "skipped": 0, "timings": [], "perfcast": perfcast, "queue": []}
    cwd = None
    anchor_cache = {}
    try:
        for path in files:
            path = os.path.abspath(path)
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
            check_links_and_paths(path, lines, rep, anchor_cache)
            if args.no_run:
                continue
            for marker, fence, body, first in fenced_blocks(lines):
                if marker is None:
                    continue
                if cwd is None:
                    cwd, bindir = scratch_dir(perfcast)
                    ctx["cwd"], ctx["bindir"] = cwd, bindir
                queue_block(path, fence, body, first, marker, args, rep, ctx)
        results = run_queue(ctx, getattr(args, "jobs", 1))
        for (path, cmd, cmd_line, expected_raw, exp_line), (actual, t) in zip(ctx["queue"],
                                                                              results):
            ctx["timings"].append((t, path, cmd_line + 1))
            ctx["run"] += 1
            compare(path, cmd, cmd_line, expected_raw, exp_line, actual, rep)
    finally:
        if cwd:
            shutil.rmtree(cwd, ignore_errors=True)
    return rep, ctx


SELF_TEST_DOC = """# Fixture

A [link](#fixture), a [bad link](no-such-file.md) and `tests/no_such_file.csv`.

<!-- check -->
```
$ echo 'scored 13 rows: MAPE 3.7 %'; echo a; echo b; echo c
scored 13 rows: MAPE 3.8 %
...
c
$ false
[1]
```
"""

SELF_TEST_GOOD = """# Fixture

A [link](#fixture) and `tests/doc_check.py`.

<!-- check -->
```
$ echo 'scored 13 rows: MAPE 3.7 %'; echo a; echo b; echo c
scored 13 rows: MAPE 3.7 %
...
c
$ printf 'x  \\n\\n'; exit 2
x
[2]
```
"""


def self_test():
    """The checker fails on a changed number, a broken link and a missing cited file, and passes
    the same document with them right."""
    ok = True
    d = tempfile.mkdtemp(prefix="perfcast-doc-check-self.")
    try:
        bad, good = os.path.join(d, "bad.md"), os.path.join(d, "good.md")
        with open(bad, "w", encoding="utf-8") as f:
            f.write(SELF_TEST_DOC)
        with open(good, "w", encoding="utf-8") as f:
            f.write(SELF_TEST_GOOD)
        args = argparse.Namespace(skip_slow=False, skip_sqlite=False, skip_onnx=False,
                                  no_run=False)
        print("== self-test: a fixture with a wrong number, a broken link, a missing file:")
        rep, _ = check_files([bad], args, "/bin/true")
        if rep.problems != 3:
            print(f"self-test FAILED: expected 3 problems in the bad fixture, got {rep.problems}")
            ok = False
        print("== self-test: the bad fixture again, two commands at a time:")
        args.jobs = 2
        rep, _ = check_files([bad], args, "/bin/true")
        if rep.problems != 3:
            print(f"self-test FAILED: expected 3 problems with --jobs 2, got {rep.problems}")
            ok = False
        args.jobs = 1
        print("== self-test: the same fixture, right:")
        rep, _ = check_files([good], args, "/bin/true")
        if rep.problems != 0:
            print(f"self-test FAILED: expected no problem in the good fixture, got {rep.problems}")
            ok = False
        for cmd in ("$P calibrate x.csv -o p.txt", "echo a > f", "echo a>>f", "cp a b",
                    "$P whatif --svg=w.svg", "x | tee y", "sed -i s/a/b/ f", "cd tests",
                    "$P whatif --format svg --output w.svg", "echo a &> f", "a; rm -f b",
                    "python3 convert.py in.csv out.csv", "$P chips; cp a b",
                    "$P chips | python3 x.py out", "$P chips && sh x.sh", "$P chips | perl -i x",
                    "$P chips | dd of=x"):
            assert may_write(cmd), cmd
        for cmd in ("$P validate --chip 910B1 x.csv 2>/dev/null | sed -n 1p", "$P chips 2>&1",
                    "$P whatif >/dev/null", "$P op --out-dtype fp16", "$P report x.csv --top 3",
                    "$P chips | sed -n 1,3p | tail -1", "$P x 2>&1 | grep 'note:'",
                    "$P validate \\\n    --holdout 0.3 | head -2"):
            assert not may_write(cmd), cmd
        # Conservative on purpose: these write nothing, and run alone.
        assert may_write("$P calibrate x.csv | grep -o 'a[^;]*'") and may_write("$P x # a > b")
        assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
        assert matches(["a", "..."], ["a"])
        assert not matches(["a", "...", "d"], ["a", "b", "c"])
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print("self-test passed" if ok else "self-test failed")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("perfcast", nargs="?", help="the built perfcast command")
    ap.add_argument("files", nargs="*", help="markdown files (default: README.md docs/*.md)")
    ap.add_argument("--skip-slow", action="store_true", help="skip blocks marked slow")
    ap.add_argument("--skip-sqlite", action="store_true",
                    help="skip blocks marked sqlite (a perfcast built without SQLite)")
    ap.add_argument("--skip-onnx", action="store_true",
                    help="skip blocks marked onnx (a perfcast built without ONNX)")
    ap.add_argument("--no-run", action="store_true", help="check links and paths only")
    ap.add_argument("--self-test", action="store_true", help="test the checker itself")
    ap.add_argument("--timings", action="store_true", help="print each command's time")
    ap.add_argument("--jobs", "-j", type=int, default=1,
                    help="commands run at once (a command that may write a file runs alone)")
    args = ap.parse_intermixed_args()  # CMake passes "" for an unset option, anywhere
    args.files = [f for f in args.files if f]
    if args.self_test:
        return self_test()
    if not args.perfcast and not args.no_run:
        ap.error("the path of the built perfcast command is required (or --no-run)")
    perfcast = os.path.abspath(args.perfcast) if args.perfcast else ""
    if perfcast and not os.access(perfcast, os.X_OK):
        ap.error(f"{args.perfcast}: not an executable")
    t0 = time.monotonic()
    rep, ctx = check_files(args.files or default_files(), args, perfcast)
    if args.timings:
        for t, path, line in sorted(ctx["timings"], reverse=True):
            print(f"{t:7.2f} s  {os.path.relpath(path, ROOT)}:{line}")
    print(f"doc_check: {ctx['run']} command(s) run, {ctx['skipped']} skipped (slow / sqlite / onnx), "
          f"{rep.problems} problem(s), {time.monotonic() - t0:.1f} s")
    return 1 if rep.problems else 0


if __name__ == "__main__":
    sys.exit(main())
