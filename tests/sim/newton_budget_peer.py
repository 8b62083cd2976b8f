#!/usr/bin/env python3
"""Peer test: the float Newton solve under a scene's iterations budget answers as MuJoCo 3 run as the
file sets it (iterations, warm start), where the converged answer is far from it.

Usage: newton_budget_peer.py PATH/TO/stage_times SOURCE_DIR

Runs `stage_times SCENE --keyframe K --ctrl-noise 0.3 --warmup 10 --envs 4 --steps 25 --newton-stops`
on MuJoCo Playground's Go1 (iterations 1) and G1 (iterations 3) scenes: on MuJoCo's own states and warm
starts, |qacc - qacc_MuJoCo| / |qacc_MuJoCo| of rltrain's pipeline solve (the budget from the warm
start) and of its solve run to convergence, both against MuJoCo's answer at the file's settings.
Measured (twenty-second session, 8 envs x 25 steps): Go1 median 5.4e-7, p90 7.0e-6 (converged:
median 0.25); G1 median 2.8e-6, p90 3.5e-4 (converged: median 3.2e-3). What is left is the line
search (ours exact, MuJoCo's stopped at ls_iterations 5 or ls_tolerance). Required: the pipeline's
median below 1e-4 and its p90 below 1e-2, and the converged median at least 100 times the
pipeline's (the budget matters on these scenes, and it is the one honoured).
Exit status: 0 pass, 1 a failure.
"""
import re
import subprocess
import sys

SCENES = [("go1/scene_mjx_feetonly_flat_terrain.xml", "home", 1), ("g1/scene_mjx_feetonly_flat_terrain.xml", "knees_bent", 3)]


def stats(text, header):
    m = re.search(re.escape(header) + r"[^\n]*\n\s+median ([\d.e+-]+) p90 ([\d.e+-]+)", text)
    if not m:
        sys.exit(f"FAIL: no '{header}' line in stage_times' output:\n{text}")
    return float(m[1]), float(m[2])


def main():
    tool, src = sys.argv[1], sys.argv[2]
    failures = []
    for scene, key, budget in SCENES:
        out = subprocess.run([tool, f"{src}/envs/assets/{scene}", "--keyframe", key, "--ctrl-noise", "0.3", "--warmup",
                              "10", "--envs", "4", "--steps", "25", "--newton-stops"], capture_output=True, text=True,
                             check=True).stdout
        if f"iterations {budget}," not in out or f"(budget {budget}, warm start 1)" not in out:
            failures.append(f"{scene}: MuJoCo's or rltrain's budget is not {budget} with a warm start")
        med, p90 = stats(out, "the pipeline (budget")
        cmed, cp90 = stats(out, "float converged:")
        print(f"{scene}: budget {budget}: pipeline against MuJoCo as the file sets it median {med:.1e} p90 {p90:.1e}; "
              f"converged median {cmed:.1e} p90 {cp90:.1e}")
        if not (med < 1e-4 and p90 < 1e-2):
            failures.append(f"{scene}: pipeline median {med:.1e} (limit 1e-4), p90 {p90:.1e} (limit 1e-2)")
        if not cmed > 100 * med:
            failures.append(f"{scene}: the converged answer (median {cmed:.1e}) is not far from MuJoCo's budgeted one")
    for f in failures:
        print("FAIL:", f)
    print("FAIL" if failures else "PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
