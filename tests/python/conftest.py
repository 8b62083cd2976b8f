"""Shared set-up of the rltrain Python tests (run by ctest as test `python_package`, label `python`).

ctest sets PYTHONPATH to the build's package (build/python) and names the build's binaries:
RLTRAIN_BIN (the CLI), RLTRAIN_VEC_ENV_TRACE (tests/python/vec_env_trace.cpp), RLTRAIN_POLICY_ACTIONS
(tests/apps/policy_actions.cpp) and RLTRAIN_SOURCE_DIR. Tests that need one of them, or a Python
package that is missing, skip with the reason.
"""
import importlib
import os
import pathlib
import subprocess
import sys

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("RLTRAIN_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))


def tool(var):
    """Path of the build binary named by environment variable var; skips the test without it."""
    path = os.environ.get(var)
    if not path or not os.path.exists(path):
        pytest.skip(f"{var} is not set to a built binary (run through ctest)")
    return path


@pytest.fixture(scope="session")
def rltrain_bin():
    return tool("RLTRAIN_BIN")


@pytest.fixture(scope="session")
def cartpole_run(tmp_path_factory, rltrain_bin):
    """A CartPole run trained to its target by `rltrain train` (about a second), for the policy tests."""
    run_dir = tmp_path_factory.mktemp("cartpole") / "run"
    subprocess.run([rltrain_bin, "train", "--config", str(SOURCE_DIR / "configs" / "cartpole.toml"), "--run-dir",
                    str(run_dir), "--quiet"], check=True, capture_output=True, text=True, timeout=300)
    return run_dir


def cli_error(rltrain_bin, *args):
    """The message `rltrain` prints for bad input (exit code 2), without its 'rltrain: error: ' prefix."""
    r = subprocess.run([rltrain_bin, *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, (r.returncode, r.stderr)
    line = r.stderr.strip()
    assert line.startswith("rltrain: error: ") and "\n" not in line, line
    return line[len("rltrain: error: "):]


@pytest.fixture(scope="module")
def peer():
    """tools/mujoco_peer.py, whose functions run MuJoCo 3 (the `mujoco` wheel); skips without it."""
    mujoco = pytest.importorskip("mujoco", reason="the mujoco wheel (pip install mujoco==3.17.0) is not installed")
    if not mujoco.__version__.startswith("3."):
        pytest.skip(f"mujoco {mujoco.__version__} is not MuJoCo 3")
    sys.path.insert(0, str(SOURCE_DIR / "tools"))
    return importlib.import_module("mujoco_peer")


def mujoco_model(peer, source):
    """MuJoCo's model of an MJCF path or XML string, given the peer's converged solver budget."""
    import mujoco

    m = mujoco.MjModel.from_xml_string(source) if isinstance(source, str) else \
        mujoco.MjModel.from_xml_path(str(source))
    peer.converge(m, {})
    return m
