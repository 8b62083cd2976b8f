#!/usr/bin/env python3
"""Peer test: the float Newton solve under a scene's iterations budget answers as MuJoCo 3 run as the
file sets it (iterations, warm start), where the converged answer is far from it.

Usage: newton_budget_peer.py PATH/TO/stage_times SOURCE_DIR

Runs `stage_times SCENE --keyframe K --ctrl-noise 0.3 --warmup 10 --envs 4 --steps 25 --newton-stops`
on MuJoCo Playground's Go1 (iterations 1) and G1 (iterations 3) scenes: on MuJoCo's own states and warm
starts, |qacc - qacc_MuJoCo| / |qacc_MuJoCo| of rltrain's pipeline solve (the budget from the warm
start) and of its solve run to convergence, both against MuJoCo's answer at the file's settings.
Measured (twenty-third session, 8 envs x 25 steps, MuJoCo's line search under the budget): Go1 median
5.0e-7, p90 1.9e-6, p99 6.3e-6, max 2.7e-5 (converged: median 0.25); G1 median 2.4e-6, p90 5.0e-6, p99
9.8e-6, max 6.4e-5 (converged: median 3.2e-3): float's rounding. With the exact line search (twenty-
second session) the p99 was 1.2e-2 and 8.7e-3, the max 6.2e-2 and 0.26. Required: the pipeline's median
below 2e-5, its p99 below 2e-4 and its max below 2e-3, and the converged median at least 100 times the
pipeline's (the budget matters on these scenes, and it is the one honoured).
Exit status: 0 pass, 1 a failure.
"""
import re
import subprocess
import sys

SCENES = [("go1/scene_mjx_feetonly_flat_terrain.xml", "home", 1), ("g1/scene_mjx_feetonly_flat_terrain.xml", "knees_bent", 3)]


def stats(text, header):
    m = re.search(re.escape(header) + r"[^\n]*\n\s+median ([\d.e+-]+) p90 ([\d.e+-]+) p99 ([\d.e+-]+) max ([\d.e+-]+)", text)
    if not m:
        sys.exit(f"FAIL: no '{header}' line in stage_times' output:\n{text}")
    return float(m[1]), float(m[2]), float(m[3]), float(m[4])


def main():
    tool, src = sys.argv[1], sys.argv[2]
    failures = []
    for scene, key, budget in SCENES:
        out = subprocess.run([tool, f"{src}/envs/assets/{scene}", "--keyframe", key, "--ctrl-noise", "0.3", "--warmup",
                              "10", "--envs", "4", "--steps", "25", "--newton-stops"], capture_output=True, text=True,
                             check=True).stdout
        if f"iterations {budget}," not in out or f"(budget {budget}, warm start 1)" not in out:
            failures.append(f"{scene}: MuJoCo's or rltrain's budget is not {budget} with a warm start")
        med, p90, p99, top = stats(out, "the pipeline (budget")
        cmed, cp90, _, _ = stats(out, "float converged:")
        print(f"{scene}: budget {budget}: pipeline against MuJoCo as the file sets it median {med:.1e} p90 {p90:.1e} "
              f"p99 {p99:.1e} max {top:.1e}; converged median {cmed:.1e} p90 {cp90:.1e}")
        if not (med < 2e-5 and p99 < 2e-4 and top < 2e-3):
            failures.append(f"{scene}: pipeline median {med:.1e} (limit 2e-5), p99 {p99:.1e} (limit 2e-4), "
                            f"max {top:.1e} (limit 2e-3)")
        if not cmed > 100 * med:
            failures.append(f"{scene}: the converged answer (median {cmed:.1e}) is not far from MuJoCo's budgeted one")
    for f in failures:
        print("FAIL:", f)
    print("FAIL" if failures else "PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
