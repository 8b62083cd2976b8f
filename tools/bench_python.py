#!/usr/bin/env python3
"""Env steps/s through Python (rltrain.make_vec) against `rltrain bench` and EnvPool's Python API, one thread each.

usage: PYTHONPATH=build/python tools/bench_python.py build/rltrain [--envs cartpole,ant] [--num-envs 4096]
       [--repeats 5] [--envpool-python ~/.cache/rltrain/envpool-venv/bin/python]

Per env, each figure in env steps per second of CPU time (the machine may be shared: CPU time is what
other load distorts least), the median of --repeats measurements taken in turns:

  rltrain bench    `rltrain bench --env E --num-envs N --threads 1 --no-ppo`: each step draws random
                   actions on the executor (VecEnv::sample_actions), then steps; its JSON's
                   env_steps_per_cpu_second (process CPU time)
  _core.step       the same two calls through the extension module alone
  make_vec         env.step(env.sample_actions(t)) through the Gymnasium API of make_vec(E, N,
                   num_threads=1): the action check, the views, the info dict with its masks and, on
                   steps where envs finished, Gymnasium's final_obs/final_info
  gymnasium_info=False  the same with make_vec(..., gymnasium_info=False): rltrain's batched keys only
  EnvPool          envpool.make(E', "gymnasium", num_envs=N, batch_size=N, num_threads=1).step(a), a
                   drawn by numpy before the loop (CartPole-v1, Ant-v4); process CPU time (EnvPool steps
                   on its own thread), in the EnvPool virtual environment (tools/setup.sh --test makes it)

rltrain's Python figures are the calling thread's CPU time (num_threads=1 steps on the calling thread).
"Python cost" is 1 - make_vec / rltrain bench: the share of the time Python adds (issue 20: at most 20%).
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import tempfile
import time

import rltrain

STEPS = {"cartpole": 2000, "ant": 20}  # per measurement: ~0.2-2 s on one core
ENVPOOL = {"cartpole": ("CartPole-v1", 200), "ant": ("Ant-v4", 3)}  # EnvPool's env and steps per measurement

ENVPOOL_SCRIPT = r"""
import json, sys, time
import numpy as np, envpool
name, n, steps, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
env = envpool.make(name, env_type="gymnasium", num_envs=n, batch_size=n, num_threads=1, seed=0)
env.reset()
rng = np.random.default_rng(7)
space = env.action_space
if hasattr(space, "n"):
    pool = [rng.integers(0, space.n, n) for _ in range(8)]
else:
    pool = [rng.uniform(space.low, space.high, (n, *space.shape)).astype(space.dtype) for _ in range(8)]
for t in range(3):
    env.step(pool[t % 8])
rates = []
for _ in range(repeats):
    c0 = time.process_time()
    for t in range(steps):
        env.step(pool[t % 8])
    rates.append(n * steps / (time.process_time() - c0))
print(json.dumps({"version": envpool.__version__, "rates": rates}))
"""


def bench_rate(rltrain_bin, env, n, steps):
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "bench.json"
        subprocess.run([rltrain_bin, "bench", "--env", env, "--num-envs", str(n), "--threads", "1", "--no-ppo",
                        "--device", "cpu", "--steps", str(steps), "--json", str(path)], check=True,
                       capture_output=True, text=True)
        return json.loads(path.read_text())["results"][0]["env_steps_per_cpu_second"]


def python_rate(env_name, n, steps, mode):
    env = rltrain.make_vec(env_name, num_envs=n, seed=0, num_threads=1, gymnasium_info=mode != "batched")
    assert env._core.num_threads == 1
    env.reset()
    if mode == "core":
        core = env._core

        def one(t):
            core.step(core.sample_actions(7, t + 3))
    else:
        def one(t):
            env.step(env.sample_actions(t + 3, seed=7))
    for t in range(-3, 0):  # warm-up, as rltrain bench
        one(t)
    c0 = time.thread_time()
    for t in range(steps):
        one(t)
    dt = time.thread_time() - c0
    env.close()
    return n * steps / dt


def envpool_rates(python, env, n, repeats):
    name, steps = ENVPOOL[env]
    out = subprocess.run([python, "-c", ENVPOOL_SCRIPT, name, str(n), str(steps), str(repeats)], check=True,
                         capture_output=True, text=True).stdout
    r = json.loads(out.splitlines()[-1])
    return name, r["version"], r["rates"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("rltrain_bin")
    p.add_argument("--envs", default="cartpole,ant")
    p.add_argument("--num-envs", type=int, default=4096)
    p.add_argument("--repeats", type=int, default=5, help="median of this many measurements each")
    p.add_argument("--envpool-python", default=os.path.expanduser("~/.cache/rltrain/envpool-venv/bin/python"),
                   help="the python of a virtual environment with envpool (skipped where it does not exist)")
    args = p.parse_args()
    cols = ["rltrain bench", "_core.step", "make_vec", "gymnasium_info=False", "EnvPool"]
    print(f"env steps per CPU second, {args.num_envs} envs, one thread, median of {args.repeats}")
    print(f"{'env':10} " + " ".join(f"{c:>20}" for c in cols) + f" {'Python cost':>12} {'(info=False)':>12}")
    for env in args.envs.split(","):
        steps = STEPS.get(env, 20)
        rates = {c: [] for c in cols}
        for _ in range(args.repeats):  # in turns, so that a change of load touches every column alike
            rates["rltrain bench"].append(bench_rate(args.rltrain_bin, env, args.num_envs, steps))
            for col, mode in [("_core.step", "core"), ("make_vec", "gymnasium"), ("gymnasium_info=False", "batched")]:
                rates[col].append(python_rate(env, args.num_envs, steps, mode))
        envpool = "-"
        if os.path.exists(args.envpool_python) and env in ENVPOOL:
            name, version, rates["EnvPool"] = envpool_rates(args.envpool_python, env, args.num_envs, args.repeats)
            envpool = f"{name} (EnvPool {version})"
        med = {c: statistics.median(r) if r else float("nan") for c, r in rates.items()}
        cost = 100 * (1 - med["make_vec"] / med["rltrain bench"])
        cost_batched = 100 * (1 - med["gymnasium_info=False"] / med["rltrain bench"])
        print(f"{env:10} " + " ".join(f"{med[c]:20.4g}" for c in cols) + f" {cost:11.1f}% {cost_batched:11.1f}%"
              + f"   EnvPool: {envpool}")


if __name__ == "__main__":
    main()
