#!/usr/bin/env python3
"""How a trained policy uses its action box: plays checkpoints' deterministic policies on their task
(observation noise off) and prints, per group of action components, the mean |action| (the value the
policy gives, before the env clamps it to the box), the mean |change| from one control step to the
next, and how often that change flips sign between consecutive steps (1.0: the action chatters
back and forth every step; a smooth action gives ~0.3 or less).

    PYTHONPATH=build/python tools/action_chatter.py CHECKPOINT [CHECKPOINT ...] [--envs 16]
        [--steps 200] [--skip 50] [--groups legs=0:12,waist=12:15,arms=15:29] [--seed 3]

Each env plays from a reset for --steps control steps; the first --skip are left out. A squashed
policy (policy.squash = "tanh") reports its squashed actions. Needs the Python front end built
(`-DRLTRAIN_PYTHON=ON`, or `pip install .`); prints a SKIP line and exits 77 without it.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np


def parse_groups(text, act_dim):
    if not text:
        return [("all", 0, act_dim)]
    groups = []
    for item in text.split(","):
        name, sep, span = item.partition("=")
        lo, sep2, hi = span.partition(":")
        try:
            a, b = int(lo), int(hi)
        except ValueError:
            sys.exit(f"action_chatter.py: --groups {item!r}: expected NAME=LO:HI")
        if not sep or not sep2 or not 0 <= a < b <= act_dim:
            sys.exit(f"action_chatter.py: --groups {item!r}: expected NAME=LO:HI within 0..{act_dim}")
        groups.append((name, a, b))
    return groups


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoints", nargs="+")
    ap.add_argument("--envs", type=int, default=16)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--skip", type=int, default=50)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--groups", default="", help="NAME=LO:HI,... spans of action components (default: all)")
    args = ap.parse_args()
    if args.envs < 1 or args.steps < args.skip + 3 or args.skip < 0:
        sys.exit("action_chatter.py: --envs must be positive and --steps at least --skip + 3")
    try:
        import rltrain
    except ImportError as e:
        print(f"SKIP: the rltrain Python module is not importable ({e}); set PYTHONPATH=build/python")
        sys.exit(77)
    for ck in args.checkpoints:
        try:
            policy = rltrain.load_policy(ck)
            try:
                env = rltrain.make_vec(policy.env, num_envs=args.envs, seed=args.seed, num_threads=1, noise_level=0.0)
            except rltrain.ConfigError:  # a task without observation noise
                env = rltrain.make_vec(policy.env, num_envs=args.envs, seed=args.seed, num_threads=1)
        except (rltrain.ConfigError, rltrain.CheckpointError) as e:
            sys.exit(f"action_chatter.py: {e}")
        obs, _ = env.reset(seed=args.seed)
        actions = []
        for _ in range(args.steps):
            a = np.asarray(policy(obs), dtype=np.float64).reshape(args.envs, -1)
            actions.append(a.copy())
            obs, *_ = env.step(a.astype(np.float32))
        acts = np.array(actions)[args.skip:]  # (steps, envs, act_dim)
        step = np.diff(acts, axis=0)
        flips = (step[1:] * step[:-1]) < 0
        cells = []
        for name, lo, hi in parse_groups(args.groups, acts.shape[2]):
            cells.append(f"{name}: |a| {np.abs(acts[:, :, lo:hi]).mean():.2f}, |da| {np.abs(step[:, :, lo:hi]).mean():.2f}, "
                         f"flips {flips[:, :, lo:hi].mean():.2f}")
        print(f"{ck} ({policy.env}): " + "; ".join(cells))


if __name__ == "__main__":
    main()
