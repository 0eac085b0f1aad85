#!/usr/bin/env python3
"""Checks the include graph of include/vnnx against the layers of docs/ARCHITECTURE.md.

The table "Folders of include/vnnx/" says, per folder, what it may include: other folders
(and then whatever those may include, transitively), single headers such as
format/builtin_operator, and libraries (fmt, flatbuffers, Hana: not inherited, a folder that
includes a library's header names it itself). A header may include its
own folder and what its row allows; any other project or library include is a violation.
Top-level headers (vnnx.hpp, vnnx/format.hpp) are checked as members of the folder they are
the face of (vnnx.hpp: everything).

Usage: check_layers.py [--list]   (--list prints every folder's allowed set too)
Exit status 1 when a header includes a higher layer.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
INCLUDE = ROOT / "include"
ARCH = ROOT / "docs" / "ARCHITECTURE.md"
LIBS = {"fmt": "fmt/", "flatbuffers": "flatbuffers/", "Hana": "boost/"}
PROJECT = re.compile(r'^\s*#\s*include\s+["<]vnnx/([^">]+)[">]')
SYSTEM = re.compile(r'^\s*#\s*include\s+<([^>]+)>')


def read_table():
    rows = {}
    in_table = False
    for line in ARCH.read_text().splitlines():
        if line.startswith("## Folders of `include/vnnx/`"):
            in_table = True
            continue
        if in_table and line.startswith("## "):
            break
        cells = [c.strip() for c in line.split("|")]
        if not in_table or len(cells) < 6 or not cells[1].startswith("`") or not cells[1].endswith("/`"):
            continue
        folder = cells[1].strip("`").rstrip("/")
        allowed = re.sub(r"\([^)]*\)", "", cells[4])  # notes in parentheses are prose
        rows[folder] = [a.strip() for a in allowed.split(",") if a.strip()]
    if not rows:
        sys.exit(f"check_layers: no folder table found in {ARCH}")
    return rows


def closure(rows):
    """Per folder: the folders, single headers and libraries it may include."""
    out = {}

    def visit(folder, seen):
        folders, files, libs = set(), set(), set()
        for item in rows.get(folder, []):
            if item in rows:
                if item in seen:
                    continue
                folders.add(item)
                f2, h2, l2 = visit(item, seen | {item})
                folders |= f2
                files |= h2  # a library is not inherited: each row names the ones it uses itself
            elif "/" in item:
                files.add(item + ".hpp")
            elif item in LIBS:
                libs.add(item)
        return folders, files, libs

    for folder in rows:
        out[folder] = visit(folder, {folder})
    return out


def main():
    rows = read_table()
    allowed = closure(rows)
    if "--list" in sys.argv:
        for f, (folders, files, libs) in sorted(allowed.items()):
            print(f"{f}: {', '.join(sorted(folders | files | libs)) or '-'}")
    violations = []
    checked = 0
    for path in sorted(INCLUDE.rglob("*.hpp")) + sorted(INCLUDE.rglob("*.h")):
        rel = path.relative_to(INCLUDE / "vnnx").as_posix() if path.is_relative_to(INCLUDE / "vnnx") else None
        if rel is None:
            continue  # include/vnnx.hpp: the umbrella includes everything
        folder = rel.split("/")[0] if "/" in rel else rel.removesuffix(".hpp")
        if folder not in allowed:
            violations.append(f"{rel}: folder '{folder}' has no row in docs/ARCHITECTURE.md")
            continue
        folders, files, libs = allowed[folder]
        checked += 1
        for n, line in enumerate(path.read_text().splitlines(), 1):
            m = PROJECT.match(line)
            if m:
                target = m.group(1)
                tfolder = target.split("/")[0] if "/" in target else target.removesuffix(".hpp")
                if tfolder == folder or tfolder in folders or target in files:
                    continue
                violations.append(f"{rel}:{n}: includes vnnx/{target}, but {folder}/ may include only "
                                  f"{', '.join(sorted(folders | files)) or 'itself'}")
                continue
            m = SYSTEM.match(line)
            if m:
                for lib, prefix in LIBS.items():
                    if m.group(1).startswith(prefix) and lib not in libs:
                        violations.append(f"{rel}:{n}: includes <{m.group(1)}>, but {folder}/ may not use {lib}")
    for v in violations:
        print(f"check_layers: {v}")
    print(f"check_layers: {checked} headers, {len(violations)} include(s) of a higher layer")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
