#!/usr/bin/env python3
"""`rltrain export`'s ONNX models, run by onnxruntime, against the policies they came from.

Usage: onnx_export_test.py PATH/TO/rltrain PATH/TO/policy_actions [--built-without]

For each task below, a 2-iteration `rltrain train` run (observation normalizer and weights already
moved off their initial values), exported with `rltrain export --checkpoint RUN_DIR`, then 2000
observations: 1000 the env produced under the policy (policy_actions rollout) and 1000 drawn around
them at 15x their spread, so that the normalizer's clip at +-10 is hit. onnxruntime's actions must
match Policy::act(deterministic) (policy_actions act: the path rltrain eval --deterministic takes)
within 1e-5 (discrete: the same index). Tasks: cartpole (discrete, no normalization), acrobot
(discrete, normalized, ReLU), pendulum (continuous, normalized), ant (continuous, 27 -> 8, [64, 64]),
quadruped (ELU, [128, 64]), pendulum with policy.squash = "tanh" (the mean squashed into [-2, 2]). The model's interface is checked too: input `obs` [N, obs_dim], output
`action` [N, act_dim], float32, any N (1 and 2000 rows).
Controls (the test can fail): iteration 1's policy, and on the normalized tasks the same policy
with the normalizer's clip or the whole normalizer switched off, must each differ from the model
by more than 1e-3 on these observations (so the weights, the normalizer and the clip all show).
Bad input: a missing checkpoint, a file that is not one, an unwritable --out: exit 2 with one
line, and no file left behind.

Exit status: 0 pass, 1 a failure, 77 numpy/onnxruntime not importable or rltrain built without ONNX.
"""
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOL = 1e-5
TASKS = [
    ("cartpole", []),
    ("acrobot", ["policy.activation=relu"]),
    ("pendulum", []),
    ("ant", ["env.num_envs=32", "ppo.num_minibatches=4"]),
    ("quadruped", ["env.num_envs=16", "ppo.num_minibatches=4"]),
    ("pendulum:tanh", ["policy.squash=tanh"]),  # the tanh-squashed policy: center + scale * tanh(mean)
]

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def run(*cmd, expect=0):
    r = subprocess.run(list(cmd), capture_output=True, text=True)
    if expect is not None and r.returncode != expect:
        print(r.stdout, r.stderr)
        raise SystemExit(f"{' '.join(cmd)}: exit {r.returncode}, expected {expect}")
    return r


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    rltrain, tool = sys.argv[1], sys.argv[2]
    if "--built-without" in sys.argv:
        print("SKIP: rltrain was built without ONNX export (libonnx-dev missing)")
        return 77
    try:
        import numpy as np
        import onnxruntime as ort
    except ImportError as e:
        print(f"SKIP: {e} (tools/setup.sh --test installs onnxruntime)")
        return 77
    tmp = tempfile.mkdtemp(prefix="rlt_onnx_")
    rng = np.random.default_rng(3)
    try:
        for label, overrides in TASKS:
            config = label.split(":")[0]
            task = label.replace(":", "_")
            run_dir = os.path.join(tmp, task)
            sets = []
            for o in overrides + ["train.checkpoint_every=1"]:
                sets += ["--set", o]
            run(rltrain, "train", "--config", os.path.join(REPO, "configs", f"{config}.toml"), "--run-dir", run_dir,
                "--iterations", "2", "--quiet", *sets)
            model = os.path.join(tmp, f"{task}.onnx")
            out = run(rltrain, "export", "--checkpoint", run_dir, "--out", model).stdout
            check(os.path.isfile(model) and "written to" in out, f"{task}: export printed {out!r}")
            sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
            ins, outs = sess.get_inputs(), sess.get_outputs()
            check([i.name for i in ins] == ["obs"] and [o.name for o in outs] == ["action"],
                  f"{task}: inputs {[i.name for i in ins]}, outputs {[o.name for o in outs]}")
            obs_dim, act_dim = ins[0].shape[1], outs[0].shape[1]
            check(ins[0].type == "tensor(float)" and outs[0].type == "tensor(float)", f"{task}: not float32")

            env_obs = os.path.join(tmp, f"{task}_env.f32")
            run(tool, run_dir, "rollout", "1000", env_obs)
            o_env = np.fromfile(env_obs, dtype=np.float32).reshape(1000, obs_dim)
            mu, sd = o_env.mean(0), o_env.std(0) + 1e-3
            o_wide = (mu + 15.0 * sd * rng.standard_normal((1000, obs_dim))).astype(np.float32)
            obs = np.concatenate([o_env, o_wide])
            obs_file, act_file = os.path.join(tmp, f"{task}_obs.f32"), os.path.join(tmp, f"{task}_act.f32")
            obs.tofile(obs_file)
            run(tool, run_dir, "act", obs_file, act_file)
            want = np.fromfile(act_file, dtype=np.float32).reshape(2000, act_dim)
            got = sess.run(None, {"obs": obs})[0]
            check(got.shape == (2000, act_dim) and got.dtype == np.float32, f"{task}: action {got.shape} {got.dtype}")
            err = float(np.abs(got - want).max())
            discrete = "discrete" in sess.get_modelmeta().custom_metadata_map.get("action", "")
            if discrete:
                check(np.array_equal(got, want), f"{task}: {int((got != want).sum())} of 2000 actions differ")
            check(err <= TOL, f"{task}: max |onnx - policy| = {err:.3g} > {TOL}")
            one = sess.run(None, {"obs": obs[:1]})[0]
            check(np.array_equal(one, got[:1]), f"{task}: one row gives {one}, in the batch {got[:1]}")
            # Control: iteration 1's policy on the same observations is another function.
            run(tool, os.path.join(run_dir, "checkpoints", "iter_000001.safetensors"), "act", obs_file, act_file)
            other = np.fromfile(act_file, dtype=np.float32).reshape(2000, act_dim)
            ctrl = float(np.abs(got - other).max())
            check(ctrl > 1e-3, f"{task}: iteration 1's policy is within {ctrl:.3g} of the exported iteration 2")
            if task != "cartpole":  # normalized
                for mode in ("act-noclip", "act-nonorm"):
                    run(tool, run_dir, mode, obs_file, act_file)
                    other = np.fromfile(act_file, dtype=np.float32).reshape(2000, act_dim)
                    away = float(np.abs(got - other).max())
                    check(away > 1e-3, f"{task}: the policy run {mode} is within {away:.3g} of the model")
            print(f"{task}: obs {obs_dim} -> action {act_dim}{' (discrete)' if discrete else ''}: "
                  f"max |onnx - policy| over 2000 observations {err:.3g} (iteration 1's policy: {ctrl:.3g} away)")

        # Bad input: exit 2, one line, nothing left behind.
        cart = os.path.join(tmp, "cartpole")
        bad = [
            (["--checkpoint", os.path.join(tmp, "missing"), "--out", os.path.join(tmp, "bad.onnx")], "bad.onnx"),
            (["--checkpoint", os.path.join(cart, "config.toml"), "--out", os.path.join(tmp, "bad.onnx")], "bad.onnx"),
            (["--checkpoint", cart, "--out", os.path.join(tmp, "no_dir", "p.onnx")], None),
            (["--checkpoint", cart, "--out", os.path.join(tmp, "a_dir")], None),
        ]
        os.makedirs(os.path.join(tmp, "a_dir"))
        for args, name in bad:
            before = set(os.listdir(tmp))
            r = run(rltrain, "export", *args, expect=None)
            lines = r.stderr.strip().splitlines()
            check(r.returncode == 2 and len(lines) == 1 and lines[0].startswith("rltrain: error: "),
                  f"export {' '.join(args)}: exit {r.returncode}, stderr {r.stderr!r}")
            check(set(os.listdir(tmp)) == before and os.listdir(os.path.join(tmp, "a_dir")) == [],
                  f"export {' '.join(args)}: left {sorted(set(os.listdir(tmp)) - before)}")
            print(f"bad input: {lines[0] if lines else ''}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} failures")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
