#!/usr/bin/env python3
"""Where a joystick policy falls: plays a checkpoint's deterministic policy on its task and, for
every episode that terminates before its time limit, prints the step it ended at and the command
(vx, vy, yaw rate, as the observation carries it) then and 1 s before, with the trunk's
local velocity 1 s before (the observation's first three values).

    PYTHONPATH=build/python tools/joystick_falls.py RUN_OR_CHECKPOINT [--envs 200] [--seed 3]
        [--steps 1000] [--set key=value ...]

Each env plays one episode (the first; what follows a reset is not counted). The env is the
checkpoint's (go1_joystick, go1_joystick_rough, g1_joystick, g1_joystick_rough), at the task's defaults unless --set overrides a
key (e.g. --set noise_level=0). Needs the Python front end built (`-DRLTRAIN_PYTHON=ON`, or
`pip install .`); prints a SKIP line and exits 77 without it.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

# where each joystick task's actor observation holds the command (vx, vy, yaw rate); the header of
# envs/<task>.h has the table
COMMAND_AT = {"go1_joystick": 45, "go1_joystick_rough": 45, "g1_joystick": 9, "g1_joystick_rough": 9}


def parse_value(text):
    try:
        return float(text)
    except ValueError:
        sys.exit(f"joystick_falls.py: --set {text!r}: expected a number")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoint")
    ap.add_argument("--envs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--steps", type=int, default=1000, help="control steps to play (the episode limit)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="an env parameter")
    args = ap.parse_args()
    if args.envs < 1 or args.steps < 1:
        sys.exit("joystick_falls.py: --envs and --steps must be positive")
    try:
        import rltrain
    except ImportError as e:
        print(f"SKIP: the rltrain Python module is not importable ({e}); set PYTHONPATH=build/python")
        sys.exit(77)
    params = {}
    for kv in args.set:
        key, sep, value = kv.partition("=")
        if not sep:
            sys.exit(f"joystick_falls.py: --set {kv!r}: expected KEY=VALUE")
        params[key] = parse_value(value)
    try:
        policy = rltrain.load_policy(args.checkpoint)
        if policy.env not in COMMAND_AT:
            sys.exit(f"joystick_falls.py: {args.checkpoint}: env {policy.env!r} is not a joystick task "
                     f"({', '.join(COMMAND_AT)})")
        env = rltrain.make_vec(policy.env, num_envs=args.envs, seed=args.seed, num_threads=1, **params)
    except (rltrain.ConfigError, rltrain.CheckpointError) as e:
        sys.exit(f"joystick_falls.py: {e}")
    c = COMMAND_AT[policy.env]
    obs, _ = env.reset(seed=args.seed)
    window = int(round(1.0 / 0.02))  # 1 s of 0.02 s control steps
    history = [[] for _ in range(args.envs)]
    finished = np.zeros(args.envs, dtype=bool)
    falls = []
    for step in range(args.steps):
        before = obs.copy()
        obs, _, terminated, truncated, _ = env.step(policy(obs))
        for i in np.flatnonzero(~finished):
            history[i].append(np.concatenate([before[i, c:c + 3], before[i, 0:3]]))
            del history[i][:-window]
            if terminated[i]:
                falls.append((i, step, np.array(history[i])))
            if terminated[i] or truncated[i]:
                finished[i] = True
    print(f"{policy.env}, {args.envs} episodes (seed {args.seed}, deterministic): {len(falls)} terminated early")
    np.set_printoptions(precision=2, suppress=True)
    for i, step, h in falls:
        print(f"  env {i}, step {step}: command {h[-1, 0:3]} (1 s before: {h[0, 0:3]}), "
              f"local velocity 1 s before {h[0, 3:6]}")


if __name__ == "__main__":
    main()
