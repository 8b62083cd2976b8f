#!/usr/bin/env python3
"""Checks the project's #include lines against the folder table of docs/ARCHITECTURE.md.

The table's rows read  | `folder/` | what it holds | `a`, `b`, ... |  where the last column lists the
folders whose headers the folder may include (itself always). Every quoted include of a source file
in a listed folder ("x/y.h") must name an allowed folder, and the graph of folder includes must have
no cycle. tests/ and tools/ may include anything and are not checked. Exit 0 when clean, 1 with one
line per violation, 2 when the table cannot be read.

usage: check_includes.py [REPO_ROOT]
"""
import pathlib
import re
import sys

SOURCE_SUFFIXES = {".h", ".hpp", ".cuh", ".cpp", ".cc", ".cu"}
ROW = re.compile(r"^\|\s*`([a-z_]+)/`\s*\|[^|]*\|([^|]*)\|\s*$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"')


def read_table(doc):
    allowed = {}
    if not doc.is_file():
        return allowed
    for line in doc.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if m:
            names = re.findall(r"`([a-z_]+)/?`", m.group(2))
            allowed[m.group(1)] = set(names) | {m.group(1)}
    return allowed


def find_cycle(graph):
    state = {}  # 1 visiting, 2 done

    def visit(node, path):
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path + [node, nxt]
            if nxt not in state:
                found = visit(nxt, path + [node])
                if found:
                    return found
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [])
            if found:
                return found[found.index(found[-1]):]
    return None


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    doc = root / "docs" / "ARCHITECTURE.md"
    allowed = read_table(doc)
    if not allowed:
        print(f"{doc}: no folder table (rows like | `sim/` | holds | `sim` |)")
        return 2
    errors = []
    graph = {}
    for folder in sorted(allowed):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
                continue
            rel = path.relative_to(root)
            for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if not m or not (root / m.group(1)).is_dir():
                    continue
                target = m.group(1)
                if target != folder:
                    graph.setdefault(folder, set()).add(target)
                if target not in allowed[folder]:
                    errors.append(f"{rel}:{n}: includes {target}/ but {folder}/ may include only "
                                  f"{', '.join(sorted(allowed[folder]))} (docs/ARCHITECTURE.md)")
    cycle = find_cycle(graph)
    if cycle:
        errors.append("folder include cycle: " + " -> ".join(cycle))
    for e in errors:
        print(e)
    checked = sum(1 for f in allowed for p in (root / f).rglob("*") if p.suffix in SOURCE_SUFFIXES)
    print(f"check_includes: {checked} files in {len(allowed)} folders, {len(errors)} violations")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
