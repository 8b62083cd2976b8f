#!/usr/bin/env python3
"""Learning curves from rltrain run directories, as one self-contained SVG (standard library only).

    tools/plot_curves.py --out docs/curves/ant.svg --title "Ant (CPU, 2 cores)" runs/ant-s1 runs/ant-s2

Each RUN is a run directory (or its metrics.csv). The figure has two panels: mean episode return
against env steps, and against wall-clock seconds (the `wall_seconds` column: time spent in the
training loop). Runs are labelled with their directory name, or LABEL=RUN to name one. A row whose
mean_return is not a number (no episode finished yet) is skipped. With --target, a dashed line
marks the task's threshold.
"""
import argparse
import csv
import math
import os
import sys
from xml.sax.saxutils import escape

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]


def read_run(spec):
    label, path = (spec.split("=", 1) if "=" in spec and not os.path.exists(spec) else (None, spec))
    csv_path = os.path.join(path, "metrics.csv") if os.path.isdir(path) else path
    if not os.path.isfile(csv_path):
        sys.exit(f"plot_curves: {csv_path}: no such file (expected a run directory or its metrics.csv)")
    rows = []
    with open(csv_path, newline="") as f:
        reader = csv.DictReader(f)
        for key in ("env_steps", "wall_seconds", "mean_return"):
            if key not in (reader.fieldnames or []):
                sys.exit(f"plot_curves: {csv_path}: column '{key}' is missing")
        for line, r in enumerate(reader, start=2):
            try:
                steps, wall, ret = float(r["env_steps"]), float(r["wall_seconds"]), float(r["mean_return"])
            except ValueError:
                sys.exit(f"plot_curves: {csv_path}:{line}: not a number")
            if math.isfinite(ret):
                rows.append((steps, wall, ret))
    if label is None:
        label = os.path.basename(os.path.normpath(path if os.path.isdir(path) else os.path.dirname(csv_path)))
    return label, rows


def nice_ticks(lo, hi, n=5):
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw), default=10 * mag)
    first = math.ceil(lo / step) * step
    ticks = []
    t = first
    while t <= hi + 1e-9 * step:
        ticks.append(t)
        t += step
    return ticks


def fmt(v):
    a = abs(v)
    if a >= 1e9:
        return f"{v / 1e9:g}G"
    if a >= 1e6:
        return f"{v / 1e6:g}M"
    if a >= 1e3:
        return f"{v / 1e3:g}k"
    return f"{v:g}"


def panel(runs, xi, xlabel, x0, y0, w, h, ylo, yhi, target):
    xs = [r[xi] for _, rows in runs for r in rows]
    xhi = max(xs) if xs else 1.0
    out = [f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="none" stroke="#444"/>']

    def sx(v):
        return x0 + w * v / xhi

    def sy(v):
        return y0 + h - h * (v - ylo) / (yhi - ylo)

    for t in nice_ticks(0, xhi):
        out.append(f'<line x1="{sx(t):.1f}" y1="{y0}" x2="{sx(t):.1f}" y2="{y0 + h}" stroke="#ddd"/>')
        out.append(f'<text x="{sx(t):.1f}" y="{y0 + h + 16}" text-anchor="middle">{fmt(t)}</text>')
    for t in nice_ticks(ylo, yhi):
        out.append(f'<line x1="{x0}" y1="{sy(t):.1f}" x2="{x0 + w}" y2="{sy(t):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{x0 - 6}" y="{sy(t) + 4:.1f}" text-anchor="end">{fmt(t)}</text>')
    if target is not None:
        out.append(f'<line x1="{x0}" y1="{sy(target):.1f}" x2="{x0 + w}" y2="{sy(target):.1f}" '
                   f'stroke="#000" stroke-dasharray="6,4"/>')
    for k, (label, rows) in enumerate(runs):
        pts = " ".join(f"{sx(r[xi]):.1f},{sy(r[2]):.1f}" for r in rows)
        out.append(f'<polyline class="run" data-label="{escape(label)}" points="{pts}" fill="none" '
                   f'stroke="{COLOURS[k % len(COLOURS)]}" stroke-width="1.8"/>')
    out.append(f'<text x="{x0 + w / 2}" y="{y0 + h + 36}" text-anchor="middle">{escape(xlabel)}</text>')
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", metavar="RUN", help="run directory or metrics.csv, optionally LABEL=RUN")
    ap.add_argument("--out", required=True, help="SVG file to write")
    ap.add_argument("--title", default="", help="figure title")
    ap.add_argument("--target", type=float, default=None, help="dashed line at this return")
    args = ap.parse_args()

    runs = [read_run(s) for s in args.runs]
    ys = [r[2] for _, rows in runs for r in rows] + ([args.target] if args.target is not None else [])
    if not ys:
        sys.exit("plot_curves: no finished episodes in any run")
    ylo, yhi = min(ys), max(ys)
    pad = 0.05 * (yhi - ylo or 1.0)
    ylo, yhi = ylo - pad, yhi + pad

    W, H, pw, ph = 1140, 400, 380, 270
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="22" text-anchor="middle" font-size="15">{escape(args.title)}</text>',
           f'<text x="18" y="{50 + ph / 2}" transform="rotate(-90 18 {50 + ph / 2})" text-anchor="middle">mean episode return</text>']
    svg += panel(runs, 0, "env steps", 70, 50, pw, ph, ylo, yhi, args.target)
    svg += panel(runs, 1, "wall seconds (training loop)", 70 + pw + 60, 50, pw, ph, ylo, yhi, args.target)
    lx = 70 + 2 * pw + 80
    for k, (label, rows) in enumerate(runs):
        y = 60 + 18 * k
        svg.append(f'<line x1="{lx}" y1="{y}" x2="{lx + 18}" y2="{y}" stroke="{COLOURS[k % len(COLOURS)]}" stroke-width="3"/>')
        svg.append(f'<text x="{lx + 24}" y="{y + 4}">{escape(label)}</text>')
    svg.append("</svg>")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(svg) + "\n")
    print(f"plot_curves: wrote {args.out} ({len(runs)} runs, {sum(len(r) for _, r in runs)} points)")


if __name__ == "__main__":
    main()
