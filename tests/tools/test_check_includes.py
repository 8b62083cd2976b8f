#!/usr/bin/env python3
"""tools/check_includes.py must pass a clean tree and fail, naming the file and the rule, on an
include that breaks the table and on a folder cycle."""
import pathlib
import subprocess
import sys
import tempfile

TABLE = """# a
| folder | holds | may include |
|---|---|---|
| `sim/` | physics | `sim` |
| `rl/` | learner | `sim` |
| `apps/` | composition | `sim`, `rl` |
"""


def run(checker, root):
    p = subprocess.run([sys.executable, checker, str(root)], capture_output=True, text=True)
    return p.returncode, p.stdout


def tree(files):
    d = pathlib.Path(tempfile.mkdtemp())
    (d / "docs").mkdir()
    (d / "docs" / "ARCHITECTURE.md").write_text(TABLE)
    for name, text in files.items():
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_text(text)
    return d


def main():
    checker = sys.argv[1]
    clean = {"sim/a.h": '#include "sim/b.h"\n', "sim/b.h": "", "rl/c.h": '#include "sim/a.h"\n',
             "apps/m.cpp": '#include "rl/c.h"\n#include "sim/a.h"\n'}
    code, out = run(checker, tree(clean))
    assert code == 0, out
    bad = dict(clean, **{"sim/d.h": '#include "rl/c.h"\n'})  # sim/ reaching up into rl/: a rule and a cycle
    code, out = run(checker, tree(bad))
    assert code == 1, out
    assert "sim/d.h:1: includes rl/" in out, out
    assert "cycle" in out, out
    code, out = run(checker, tree({"sim/a.h": ""}) / "nowhere")
    assert code == 2, out
    print("1 passed, 0 failed")


if __name__ == "__main__":
    main()
