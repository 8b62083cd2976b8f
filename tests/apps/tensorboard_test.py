#!/usr/bin/env python3
"""`rltrain train`'s TensorBoard event files, read by TensorBoard's own EventAccumulator.

Usage: tensorboard_test.py PATH/TO/rltrain [--built-without]

Trains CartPole for 3 iterations (a checkpoint at iteration 2 and the final one at 3), then acts out
a crash after iteration 3 that left the checkpoint of iteration 2 as the latest (iter_000002 copied
over latest.safetensors) and resumes for 2 iterations: metrics.csv is trimmed to iteration 2 and
iterations 3 and 4 are run again. Pendulum (observation normalization; 128 steps per iteration, so
no 200-step episode ends in iteration 1 and mean_return is NaN there) runs 2 iterations without a
resume. Checks, per run:
  - every metrics.csv column is the scalar <group>/<column>, one value per row, at step = that
    row's env_steps, equal to the CSV's value as a float32 (within one float32 ulp: the CSV holds
    the double with 9 digits; NaN as NaN);
  - the config is text under `config` (the newest equal to config.toml in a toml code block);
  - the resumed run has two event files, read in write order; TensorBoard drops the first file's
    iteration 3 (the SessionLog START of the second file), but the first file still holds it
    (nothing written is lost).
Every event file passes the reader's CRC-32C checks (a bad CRC raises DataLossError).

Exit status: 0 pass, 1 a failure, 77 tensorboard not importable or rltrain built without it.
"""
import csv
import glob
import math
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GROUPS = {
    "iteration": "progress", "env_steps": "progress", "wall_seconds": "progress",
    "mean_return": "episode", "mean_length": "episode", "episodes": "episode",
    "policy_loss": "loss", "value_loss": "loss", "entropy": "loss",
    "approx_kl": "ppo", "clip_frac": "ppo", "explained_variance": "ppo", "learning_rate": "ppo",
    "env_steps_per_second": "perf",
    "nonfinite_resets": "health", "skipped_updates": "health",
}

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def run(rltrain, *args):
    r = subprocess.run([rltrain, *args], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        raise SystemExit(f"rltrain {' '.join(args)}: exit {r.returncode}")


def load(path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    ea = EventAccumulator(path, size_guidance={"scalars": 0, "tensors": 0})
    ea.Reload()
    return ea


def same_float32(csv_text, value):
    import numpy as np
    want = float(csv_text)
    if math.isnan(want):
        return math.isnan(value)
    f = np.float32(want)
    return abs(np.float32(value) - f) <= np.spacing(abs(f))


def check_run(name, run_dir):
    with open(os.path.join(run_dir, "metrics.csv")) as f:
        rows = list(csv.DictReader(f))
    ea = load(run_dir)
    tags = set(ea.Tags()["scalars"])
    want_tags = {f"{GROUPS[c]}/{c}" for c in rows[0]}
    check(set(rows[0]) == set(GROUPS), f"{name}: metrics.csv columns {sorted(rows[0])}")
    check(tags == want_tags, f"{name}: scalar tags {sorted(tags)}, expected {sorted(want_tags)}")
    compared = 0
    for column in rows[0]:
        tag = f"{GROUPS[column]}/{column}"
        if tag not in tags:
            continue
        events = ea.Scalars(tag)
        check(len(events) == len(rows), f"{name}: {tag} has {len(events)} values, metrics.csv {len(rows)} rows")
        for row, ev in zip(rows, events):
            check(ev.step == int(row["env_steps"]), f"{name}: {tag} step {ev.step}, env_steps {row['env_steps']}")
            check(same_float32(row[column], ev.value),
                  f"{name}: {tag} at iteration {row['iteration']}: {ev.value} vs metrics.csv {row[column]}")
            compared += 1
    texts = ea.Tensors("config") if "config" in ea.Tags()["tensors"] else []
    check(len(texts) >= 1, f"{name}: no config text")
    if texts:
        with open(os.path.join(run_dir, "config.toml")) as f:
            want = "```toml\n" + f.read() + "```\n"
        got = texts[-1].tensor_proto.string_val[0].decode()
        check(got == want, f"{name}: config text differs from config.toml")
    print(f"{name}: {compared} scalars over {len(rows)} iterations equal metrics.csv; config text ok")
    return ea


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    rltrain = sys.argv[1]
    if "--built-without" in sys.argv:
        print("SKIP: rltrain was built without TensorBoard output (protobuf or Boost missing)")
        return 77
    try:
        import numpy  # noqa: F401
        import tensorboard.backend.event_processing.event_accumulator  # noqa: F401
    except ImportError as e:
        print(f"SKIP: {e} (tools/setup.sh --test installs tensorboard)")
        return 77
    tmp = tempfile.mkdtemp(prefix="rlt_tb_")
    try:
        # CartPole with a crash and a resume.
        cart = os.path.join(tmp, "cartpole")
        run(rltrain, "train", "--config", os.path.join(REPO, "configs", "cartpole.toml"), "--run-dir", cart,
            "--iterations", "3", "--set", "train.checkpoint_every=2", "--quiet")
        shutil.copy(os.path.join(cart, "checkpoints", "iter_000002.safetensors"),
                    os.path.join(cart, "checkpoints", "latest.safetensors"))
        first = glob.glob(os.path.join(cart, "events.out.tfevents.*"))
        check(len(first) == 1, f"cartpole: {len(first)} event files after the first call")
        run(rltrain, "train", "--resume", cart, "--iterations", "2", "--quiet")
        files = sorted(glob.glob(os.path.join(cart, "events.out.tfevents.*")))
        check(len(files) == 2 and files[0] == first[0],
              f"cartpole: after the resume {files} (the first call's {first} must sort first)")
        ea = check_run("cartpole (resumed)", cart)
        iters = [int(e.value) for e in ea.Scalars("progress/iteration")]
        check(iters == [1, 2, 3, 4], f"cartpole: TensorBoard shows iterations {iters}, expected [1, 2, 3, 4]")
        # The first file alone still holds the iteration run before the crash.
        old = os.path.join(tmp, "first_file")
        os.makedirs(old)
        shutil.copy(first[0], old)
        old_iters = [int(e.value) for e in load(old).Scalars("progress/iteration")]
        check(old_iters == [1, 2, 3], f"cartpole: the first event file holds iterations {old_iters}, expected [1, 2, 3]")

        # Pendulum: normalized observations, NaN mean return in iteration 1.
        pend = os.path.join(tmp, "pendulum")
        run(rltrain, "train", "--config", os.path.join(REPO, "configs", "pendulum.toml"), "--run-dir", pend,
            "--iterations", "2", "--set", "ppo.num_steps=128", "--quiet")
        ea = check_run("pendulum", pend)
        returns = [e.value for e in ea.Scalars("episode/mean_return")]
        check(math.isnan(returns[0]), f"pendulum: iteration 1's mean return {returns[0]} (expected NaN: no episode ended)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} failures")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
