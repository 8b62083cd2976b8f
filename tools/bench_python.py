#!/usr/bin/env python3
"""Env steps/s through Python (rltrain.make_vec) against `rltrain bench` on the same envs, one thread.

usage: PYTHONPATH=build/python tools/bench_python.py build/rltrain [--envs cartpole,ant] [--num-envs 4096]

Per env: `rltrain bench --env E --num-envs N --threads 1 --no-ppo` (random actions drawn in C++), then
make_vec(E, N, num_threads=1) stepped from Python with pre-drawn random actions, twice: through the
Gymnasium API (env.step: action conversion, views, the info dict with its done mask) and through the
extension module alone (env._core.step). Prints a table; docs/RESULTS.md records the figures.
"""
import argparse
import re
import subprocess
import time

import numpy as np

import rltrain

STEPS = {"cartpole": 2000, "ant": 20}  # per measurement: ~0.3-5 s on one core


def cli_steps_per_s(rltrain_bin, env, n, steps):
    out = subprocess.run([rltrain_bin, "bench", "--env", env, "--num-envs", str(n), "--threads", "1", "--no-ppo",
                          "--device", "cpu", "--steps", str(steps)], check=True, capture_output=True, text=True).stdout
    row = next(line for line in out.splitlines() if line.startswith(env + " "))
    return float(row.split()[2])


def python_steps_per_s(env_name, n, steps, through_gymnasium):
    env = rltrain.make_vec(env_name, num_envs=n, seed=0, num_threads=1)
    env.reset()
    actions = [env._actions(env.action_space.sample()) for _ in range(8)]
    step = env.step if through_gymnasium else env._core.step
    for a in actions[:2]:  # warm-up
        step(a)
    t0 = time.perf_counter()
    for i in range(steps):
        step(actions[i % len(actions)])
    dt = time.perf_counter() - t0
    env.close()
    return n * steps / dt


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("rltrain_bin")
    p.add_argument("--envs", default="cartpole,ant")
    p.add_argument("--num-envs", type=int, default=4096)
    p.add_argument("--repeats", type=int, default=3, help="best of this many measurements each")
    args = p.parse_args()
    print(f"{'env':10} {'num_envs':>8} {'rltrain bench':>14} {'make_vec step':>14} {'_core.step':>12} {'python cost':>12}")
    for env in args.envs.split(","):
        steps = STEPS.get(env, 20)
        cli = max(cli_steps_per_s(args.rltrain_bin, env, args.num_envs, steps) for _ in range(args.repeats))
        gym = max(python_steps_per_s(env, args.num_envs, steps, True) for _ in range(args.repeats))
        core = max(python_steps_per_s(env, args.num_envs, steps, False) for _ in range(args.repeats))
        print(f"{env:10} {args.num_envs:8d} {cli:14.4g} {gym:14.4g} {core:12.4g} {100 * (1 - gym / cli):11.1f}%")


if __name__ == "__main__":
    main()
