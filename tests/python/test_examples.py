"""examples/: the ONNX-driven env (an exported CartPole policy run by onnxruntime on make_vec) and the
torch PPO example (CartPole to 475 where torch is installed; a one-line message without it); the
rltrain.Physics example."""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

from conftest import SOURCE_DIR

EXAMPLES = SOURCE_DIR / "examples"


def run_example(name, *args, timeout=120):
    return subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ))


def test_onnx_example_drives_the_env(cartpole_run, rltrain_bin, tmp_path):
    pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (tools/setup.sh --test installs it)")
    model = tmp_path / "cartpole.onnx"
    r = subprocess.run([rltrain_bin, "export", "--checkpoint", str(cartpole_run), "--out", str(model)],
                       capture_output=True, text=True, timeout=60)
    if r.returncode == 2 and "built without" in r.stderr:
        pytest.skip(f"this rltrain has no ONNX export: {r.stderr.strip()}")
    assert r.returncode == 0, r.stderr
    r = run_example("onnx_policy.py", str(model), "--episodes", "32", "--seed", "3")
    assert r.returncode == 0, r.stderr
    mean = float(re.search(r"mean return (-?[0-9.]+)", r.stdout).group(1))
    assert mean >= 475, r.stdout  # the config trains to a sampled 475; its deterministic actor scores ~500


def test_torch_ppo_example():
    if importlib.util.find_spec("torch") is None:
        r = run_example("ppo_torch.py", "--env", "cartpole")
        assert r.returncode == 1 and r.stderr.strip() == (
            "examples/ppo_torch.py: torch is not installed (pip install torch); nothing was trained"), r.stderr
        pytest.skip("torch is not installed: the example's CartPole-475 run did not run")
    r = run_example("ppo_torch.py", "--env", "cartpole", "--target", "475", timeout=900)
    assert r.returncode == 0 and "reached mean return" in r.stdout, r.stdout + r.stderr


def test_physics_example():
    """examples/physics_batch.py: Go1 standing on its noisy home targets, boxes following mocap hands."""
    r = run_example("physics_batch.py", "--num-envs", "8", "--seconds", "0.5", "--threads", "2")
    assert r.returncode == 0, r.stderr
    height = float(re.search(r"height min (-?[0-9.]+)", r.stdout).group(1))
    assert height > 0.15, r.stdout  # every Go1 still stands (its trunk ~0.27 m up)
    lag = float(re.search(r"at most ([0-9.]+) m from their welded pose", r.stdout).group(1))
    assert lag < 0.1, r.stdout  # measured 0.063 m at 1.6 m/s (the weld's solref 0.02 s)
