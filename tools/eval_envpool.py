#!/usr/bin/env python3
"""Plays an rltrain go1_joystick policy in EnvPool's C++ port of MuJoCo Playground's task
(sim-to-sim validation, as tools/eval_gymnasium.py does for the Gymnasium tasks).

    tools/eval_envpool.py RUN_CHECKPOINT_OR_POLICY_FILE [--rltrain build/rltrain] [--episodes 20] [--seed 0]

The checkpoint's deterministic policy is exported with `rltrain export` (ONNX: the observation
normalizer folded in, the action clipped to [-1, 1]) and run with onnxruntime on EnvPool's
Go1JoystickFlatTerrain-v1 at EnvPool's defaults (observation noise on;
EnvPool has no domain randomization and no kicks). Then `rltrain eval --deterministic` plays the
same policy on our task with the same settings (the run's config with randomization and kicks
off), and both are printed side by side: mean return, episode length, falls, and the tracking RMS
errors (planar velocity and yaw rate against the command, every step of every episode, as
`rltrain eval` computes them: the command of the observation and the trunk's local velocity of the
privileged state).

Runs where envpool and onnxruntime import (tools/setup.sh --test installs both in
~/.cache/rltrain/envpool-venv: run this script with that venv's python); without them it prints a
SKIP line and exits 77.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

try:
    import envpool
    import onnxruntime as ort
except Exception as e:  # pragma: no cover
    print(f"SKIP: envpool or onnxruntime not importable ({type(e).__name__}: {e})")
    sys.exit(77)

ROOT = Path(__file__).resolve().parent.parent
# Per task: EnvPool's name; where the command sits in the actor observation ("state"); where the
# trunk's local linear velocity and gyro (yaw rate = gyro z) sit in the privileged state.
TASKS = {
    "go1_joystick": ("Go1JoystickFlatTerrain-v1", slice(45, 48), slice(57, 59), 50),
}


def config_text(run: Path) -> str:
    """The resolved config a checkpoint was trained with: a run directory's config.toml, else the
    "config" metadata of the checkpoint or policy file (rl/checkpoint.cpp save_checkpoint)."""
    if run.is_dir():
        return (run / "config.toml").read_text()
    try:
        with run.open("rb") as f:
            n = int.from_bytes(f.read(8), "little")
            return json.loads(f.read(min(n, 100_000_000)))["__metadata__"]["config"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"eval_envpool: {run}: not an rltrain checkpoint or policy file ({type(e).__name__}: {e})",
              file=sys.stderr)
        sys.exit(2)


def config_of(run: Path, tmp: Path) -> tuple[Path, str]:
    text = config_text(run)
    cfg = tmp / "train.toml"
    cfg.write_text(text)
    name = re.search(r'^name\s*=\s*"([^"]+)"', text, re.M).group(1)
    return cfg, name


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoint")
    ap.add_argument("--rltrain", default=str(ROOT / "build/rltrain"))
    ap.add_argument("--episodes", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    run = Path(a.checkpoint)
    with tempfile.TemporaryDirectory() as tmp:
        cfg, task = config_of(run, Path(tmp))
        if task not in TASKS:
            print(f"eval_envpool: {run}: env.name = {task}: only go1_joystick is supported", file=sys.stderr)
            return 2
        peer_name, cmd_at, vel_at, yaw_at = TASKS[task]
        onnx = Path(tmp) / "policy.onnx"
        subprocess.run([a.rltrain, "export", "--checkpoint", str(run), "--out", str(onnx)], check=True)
        sess = ort.InferenceSession(str(onnx), providers=["CPUExecutionProvider"])
        inp = sess.get_inputs()[0].name

        env = envpool.make(peer_name, env_type="gymnasium", num_envs=a.episodes, seed=a.seed)
        obs, _ = env.reset()
        n = a.episodes
        ret, length = np.zeros(n), np.zeros(n, dtype=int)
        alive = np.ones(n, dtype=bool)
        fell = np.zeros(n, dtype=bool)
        lin_sq, yaw_sq, count = 0.0, 0.0, 0
        while alive.any():
            act = sess.run(None, {inp: obs["state"].astype(np.float32)})[0]
            obs, rew, term, trunc, _ = env.step(np.clip(act, -1.0, 1.0))
            cmd, priv = obs["state"][:, cmd_at], obs["privileged_state"]
            live = alive.copy()
            ret[live] += rew[live]
            length[live] += 1
            # The step's command and the velocity it produced (a finished env's observation is the
            # final one: EnvPool resets on the next step).
            err = cmd[live, :2] - priv[live, vel_at]
            lin_sq += float((err ** 2).sum(axis=1).sum())
            yaw_sq += float(((cmd[live, 2] - priv[live, yaw_at]) ** 2).sum())
            count += int(live.sum())
            fell |= live & term
            alive &= ~(term | trunc)

        # Ours, the same policy with EnvPool's settings: noise on, randomization and kicks off.
        ours_cfg = Path(tmp) / "eval.toml"
        text = cfg.read_text()
        text = re.sub(r"^(rand_enable|kick_enable)\s*=.*\n", "", text, flags=re.M)
        text = re.sub(r"^\[env\]\n", "[env]\nrand_enable = 0\nkick_enable = 0\n", text, flags=re.M)
        ours_cfg.write_text(text)
        ours = subprocess.run([a.rltrain, "eval", "--checkpoint", str(run), "--config", str(ours_cfg),
                               "--deterministic", "--episodes", str(a.episodes), "--seed", str(a.seed)],
                              capture_output=True, text=True)
    print(f"{peer_name} (EnvPool {envpool.__version__}), {n} episodes, deterministic policy of {run}:")
    print(f"  mean return {ret.mean():.2f} (std {ret.std():.2f}), mean length {length.mean():.0f}, "
          f"falls {int(fell.sum())} of {n}")
    print(f"  tracking RMS error: planar velocity {np.sqrt(lin_sq / count):.3f} m/s, "
          f"yaw rate {np.sqrt(yaw_sq / count):.3f} rad/s ({count} steps)")
    print(f"rltrain eval on {task} with the same settings:")
    print("  " + (ours.stdout.strip() or ours.stderr.strip()).replace("\n", "\n  "))
    return 0 if ours.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
