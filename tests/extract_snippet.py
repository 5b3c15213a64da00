#!/usr/bin/env python3
"""Writes the README's C++ snippet (between <!-- snippet --> and <!-- /snippet -->) to a file,
so that the Meson build compiles it as a static test (CMake does the same in tests/CMakeLists.txt).
Usage: extract_snippet.py README.md OUT.cpp"""
import re
import sys

text = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r"<!-- snippet -->\n```cpp\n(.*?)\n```\n<!-- /snippet -->", text, re.S)
if not m:
    sys.exit("README.md: no ```cpp block between <!-- snippet --> and <!-- /snippet -->")
with open(sys.argv[2], "w", encoding="utf-8") as out:
    out.write(m.group(1) + "\n")
