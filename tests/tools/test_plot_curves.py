#!/usr/bin/env python3
"""tools/plot_curves.py on synthetic run directories: the SVG parses, has one polyline per run and
panel with one point per row that has a finished episode, and bad input stops with the file named."""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SCRIPT = sys.argv[1]
HEADER = "iteration,env_steps,wall_seconds,mean_return,mean_length,episodes\n"


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


with tempfile.TemporaryDirectory() as tmp:
    a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
    os.makedirs(a), os.makedirs(b)
    with open(os.path.join(a, "metrics.csv"), "w") as f:
        f.write(HEADER + "1,512,0.1,nan,0,0\n2,1024,0.2,10.5,10,3\n3,1536,0.3,20,20,4\n")
    with open(os.path.join(b, "metrics.csv"), "w") as f:
        f.write(HEADER + "1,512,0.2,5,5,2\n2,1024,0.4,7,7,2\n3,1536,0.6,30,30,1\n4,2048,0.8,40,40,1\n")
    out = os.path.join(tmp, "fig", "curves.svg")
    r = run("--out", out, "--title", "test", "--target", "35", a, "B=" + b)
    assert r.returncode == 0, r.stderr
    root = ET.parse(out).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    lines = root.findall(f"{ns}polyline")
    assert len(lines) == 4, len(lines)  # 2 runs x 2 panels
    counts = sorted(len(p.get("points").split()) for p in lines)
    assert counts == [2, 2, 4, 4], counts  # run a's NaN row is skipped
    labels = {p.get("data-label") for p in lines}
    assert labels == {"a", "B"}, labels
    # x of the last point of the env-steps panel is the panel's right edge (max env steps).
    xs = [float(pt.split(",")[0]) for p in lines for pt in p.get("points").split()]
    assert max(xs) > min(xs)

    bad = os.path.join(tmp, "bad")
    os.makedirs(bad)
    with open(os.path.join(bad, "metrics.csv"), "w") as f:
        f.write("iteration,env_steps\n1,2\n")
    r = run("--out", out, bad)
    assert r.returncode != 0 and "wall_seconds" in r.stderr and "bad" in r.stderr, r.stderr
    r = run("--out", out, os.path.join(tmp, "missing"))
    assert r.returncode != 0 and "missing" in r.stderr, r.stderr
print("ok")
