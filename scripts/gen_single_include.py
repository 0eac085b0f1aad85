#!/usr/bin/env python3
"""Generates single_include/vnnx.hpp from include/vnnx.hpp by inlining every project header once.

Usage: gen_single_include.py [--check]
With --check nothing is written; the exit status is 1 when the committed file is stale.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
INCLUDE = ROOT / "include"
OUT = ROOT / "single_include" / "vnnx.hpp"
LOCAL = re.compile(r'^\s*#\s*include\s+"(vnnx[^"]*)"')
SYSTEM = re.compile(r'^\s*#\s*include\s+<([^>]+)>')
PRAGMA_ONCE = re.compile(r'^\s*#\s*pragma\s+once\s*$')


def expand(path, seen, system_seen, out):
    rel = path.relative_to(INCLUDE).as_posix()
    if rel in seen:
        return
    seen.add(rel)
    out.append(f"// ---- begin {rel}\n")
    for line in path.read_text().splitlines(keepends=True):
        if PRAGMA_ONCE.match(line):
            continue
        m = LOCAL.match(line)
        if m:
            expand(INCLUDE / m.group(1), seen, system_seen, out)
            continue
        m = SYSTEM.match(line)
        if m and m.group(1) in system_seen:
            continue
        if m:
            system_seen.add(m.group(1))
        out.append(line)
    out.append(f"// ---- end {rel}\n")


def generate():
    out = ["// vnnx single header, generated from include/ by scripts/gen_single_include.py. Do not edit.\n",
           "#pragma once\n"]
    expand(INCLUDE / "vnnx.hpp", set(), set(), out)
    return "".join(out)


def main():
    text = generate()
    if "--check" in sys.argv[1:]:
        current = OUT.read_text() if OUT.exists() else ""
        if current != text:
            print("single_include/vnnx.hpp is stale: run scripts/gen_single_include.py", file=sys.stderr)
            return 1
        print("single_include/vnnx.hpp is current")
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    tmp = OUT.with_suffix(".hpp.tmp")
    tmp.write_text(text)
    tmp.replace(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
