#!/usr/bin/env python3
"""MuJoCo 3's speed on one core, to set beside `rltrain bench --model` (issue 16 item 5, issue 21).

Usage: bench_mujoco3.py MODEL.xml [--num-envs 1,1024] [--control-dt 0.05] [--seconds 2 | --steps S] [--json]

What it times: `mujoco.rollout.rollout` (MuJoCo's own C++ loop over mj_step, no Python per step) on
ONE thread (one MjData), `num_envs` independent copies of the model from qpos0 at rest, controls
uniform in each actuator's ctrlrange ([-1, 1] where not limited), redrawn every control step and held
for its physics steps, as `rltrain bench --model` drives its batch. Same model file, so the same
timestep and integrator. The count is physics steps (mj_step calls) per second of wall time;
`rltrain bench` prints the same quantity as "physics/s ... per core". With --seconds each env runs as
many control steps as fit (a robot falling from qpos0 spends its first tenths of a second in the air,
without contacts, so a short run is a cheaper one); --steps S runs S control steps per env, the
states `rltrain bench --steps S` times (it runs 2 more first, untimed).
Exit 77 when the `mujoco` package is missing.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

try:
    import numpy as np
    import mujoco
    from mujoco import rollout
except Exception as e:  # ImportError, or a broken install
    print(f"SKIP: cannot import mujoco/numpy ({e!r}); `pip install mujoco`")
    sys.exit(77)


def controls(m, num_envs, nstep, substeps, rng):
    lo = np.where(m.actuator_ctrllimited, m.actuator_ctrlrange[:, 0], -1.0)
    hi = np.where(m.actuator_ctrllimited, m.actuator_ctrlrange[:, 1], 1.0)
    nctrl = -(-nstep // substeps)
    c = rng.uniform(lo, hi, size=(num_envs, nctrl, m.nu))
    return np.repeat(c, substeps, axis=1)[:, :nstep, :]


def run(m, num_envs, nstep, substeps, rng):
    d = mujoco.MjData(m)
    mujoco.mj_resetData(m, d)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state0 = np.zeros(mujoco.mj_stateSize(m, spec))
    mujoco.mj_getState(m, d, state0, spec)
    init = np.tile(state0, (num_envs, 1))
    ctrl = controls(m, num_envs, nstep, substeps, rng) if m.nu else None
    t0 = time.perf_counter()
    state, _ = rollout.rollout(m, d, init, ctrl, nstep=nstep)  # one MjData: one thread
    elapsed = time.perf_counter() - t0
    finite = bool(np.all(np.isfinite(state[:, -1, :])))
    return num_envs * nstep / elapsed, elapsed, finite


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--num-envs", default="1,1024")
    ap.add_argument("--control-dt", type=float, default=0.05, help="seconds per control step (as rltrain bench)")
    ap.add_argument("--seconds", type=float, default=2.0, help="about this long per batch size")
    ap.add_argument("--steps", type=int, default=0, help="control steps per env (0: as many as --seconds allows)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    m = mujoco.MjModel.from_xml_path(a.model)
    substeps = max(1, round(a.control_dt / m.opt.timestep))
    rng = np.random.default_rng(7)
    results = []
    for n in [int(x) for x in a.num_envs.split(",")]:
        if a.steps > 0:
            nstep = a.steps * substeps
        else:
            # A short run to size the timed one (MuJoCo's loop allocates the states it returns).
            probe_steps = max(substeps, 200 // n * substeps)
            sps, _, _ = run(m, n, probe_steps, substeps, rng)
            nstep = max(substeps, int(sps * a.seconds / n) // substeps * substeps)
            nstep = min(nstep, max(substeps, int(2e8 / (8 * n * (m.nq + m.nv + m.na + 1)))))  # cap the output memory
        sps, elapsed, finite = run(m, n, nstep, substeps, rng)
        results.append({"num_envs": n, "physics_steps": n * nstep, "seconds": elapsed,
                        "physics_steps_per_second": sps, "finite": finite})
    info = {"model": a.model, "mujoco": mujoco.__version__, "timestep": m.opt.timestep,
            "integrator": mujoco.mjtIntegrator(m.opt.integrator).name, "substeps": substeps,
            "threads": 1, "results": results}
    if a.json:
        print(json.dumps(info, indent=1))
    else:
        print(f"MuJoCo {info['mujoco']} rollout, 1 thread: {a.model} ({info['integrator']}, timestep {m.opt.timestep:g} s, "
              f"{substeps} substeps per {a.control_dt:g} s control step)")
        print(f"{'num_envs':>10} {'physics/s':>14} {'steps':>12} {'seconds':>8}")
        for r in results:
            print(f"{r['num_envs']:>10} {r['physics_steps_per_second']:>14.4g} {r['physics_steps']:>12} {r['seconds']:>8.2f}"
                  + ("" if r["finite"] else "  (non-finite states)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
