#!/usr/bin/env python3
"""Env steps/s through Python (rltrain.make_vec) against `rltrain bench` on the same envs, one thread.

usage: PYTHONPATH=build/python tools/bench_python.py build/rltrain [--envs cartpole,ant] [--num-envs 4096]

Per env: `rltrain bench --env E --num-envs N --threads 1 --no-ppo` (each step draws random actions on the
executor, VecEnv::sample_actions, then steps), then make_vec(E, N, num_threads=1) doing the same work
from Python: env.step(env.sample_actions(t)) through the Gymnasium API (action check, views, the info
dict with its done mask), and the extension module alone (env._core.step(env._core.sample_actions(...))).
Also env.step with actions drawn beforehand (no drawing in the loop). Prints the best of --repeats
runs; docs/RESULTS.md records the figures.
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


def python_steps_per_s(env_name, n, steps, mode):
    env = rltrain.make_vec(env_name, num_envs=n, seed=0, num_threads=1)
    env.reset()
    if mode == "gymnasium":  # what rltrain bench does, through RltrainVectorEnv.step

        def one(t):
            env.step(env.sample_actions(t + 3, seed=7))
    elif mode == "core":  # the extension module alone
        core = env._core

        def one(t):
            core.step(core.sample_actions(7, t + 3))
    else:  # "predrawn": env.step on actions drawn before the loop
        pool = [np.array(env.sample_actions(k, seed=7)) for k in range(8)]

        def one(t):
            env.step(pool[t % 8])
    for t in range(-3, 0):  # warm-up, as rltrain bench
        one(t)
    t0 = time.perf_counter()
    for t in range(steps):
        one(t)
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
    print(f"{'env':10} {'num_envs':>8} {'rltrain bench':>14} {'make_vec step':>14} {'_core.step':>12} "
          f"{'predrawn':>10} {'python cost':>12}")
    for env in args.envs.split(","):
        steps = STEPS.get(env, 20)
        cli = max(cli_steps_per_s(args.rltrain_bin, env, args.num_envs, steps) for _ in range(args.repeats))
        rates = {mode: max(python_steps_per_s(env, args.num_envs, steps, mode) for _ in range(args.repeats))
                 for mode in ("gymnasium", "core", "predrawn")}
        print(f"{env:10} {args.num_envs:8d} {cli:14.4g} {rates['gymnasium']:14.4g} {rates['core']:12.4g} "
              f"{rates['predrawn']:10.4g} {100 * (1 - rates['gymnasium'] / cli):11.1f}%")

if __name__ == "__main__":
    main()
