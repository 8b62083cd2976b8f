"""rltrain.train and rltrain.load_policy: the C++ trainer from Python (GIL released), a checkpoint's
policy against Policy::act (policy_actions) and `rltrain eval`, bad input with the CLI's messages."""
import re
import subprocess
import threading
import time

import numpy as np
import pytest

import rltrain
from conftest import SOURCE_DIR, cli_error, tool

CARTPOLE = str(SOURCE_DIR / "configs" / "cartpole.toml")


def test_policy_matches_cpp_policy_act(cartpole_run, tmp_path):
    """load_policy(run)(obs) is Policy::act(obs, deterministic) as rltrain eval runs it, bit for bit."""
    actions_tool = tool("RLTRAIN_POLICY_ACTIONS")
    policy = rltrain.load_policy(cartpole_run)
    assert (policy.env, policy.obs_dim, policy.discrete) == ("cartpole", 4, True)
    obs = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)
    obs.tofile(tmp_path / "obs.bin")
    subprocess.run([actions_tool, str(cartpole_run), "act", str(tmp_path / "obs.bin"), str(tmp_path / "act.bin")],
                   check=True, timeout=60)
    ref = np.fromfile(tmp_path / "act.bin", dtype=np.float32)
    got = policy(obs)
    assert got.dtype == np.int64 and got.shape == (64,)
    assert np.array_equal(got, ref.astype(np.int64))
    assert policy(obs[3]) == got[3]  # one observation in, one action out


def test_sampled_policy_replays_rltrain_eval(cartpole_run, rltrain_bin):
    """The policy driving make_vec, sampled with eval's keys, gives `rltrain eval`'s mean return."""
    episodes, seed = 32, 5
    out = subprocess.run([rltrain_bin, "eval", "--checkpoint", str(cartpole_run), "--episodes", str(episodes),
                          "--seed", str(seed), "--device", "cpu"], check=True, capture_output=True, text=True).stdout
    cli_mean = float(re.search(r"mean return (-?[0-9.]+)", out).group(1))
    policy = rltrain.load_policy(cartpole_run)
    env = rltrain.make_vec("cartpole", num_envs=episodes, seed=seed)
    obs, _ = env.reset()
    returns = np.full(episodes, np.nan)
    for t in range(env.max_episode_steps + 1):
        obs, _, term, trunc, info = env.step(policy(obs, deterministic=False, step=t))
        first = (term | trunc) & np.isnan(returns)
        returns[first] = info["episode_return"][first]
        if not np.isnan(returns).any():
            break
    assert f"{returns.mean():.3f}" == f"{cli_mean:.3f}", (returns.mean(), out)


def test_shipped_policy_file_acts_as_its_run(cartpole_run, rltrain_bin, tmp_path):
    """A policy file (`rltrain export --format policy`) loads as its run does and acts the same; the
    Go1 policy the repository ships loads with its task's sizes."""
    pf = tmp_path / "cartpole.safetensors"
    subprocess.run([rltrain_bin, "export", "--checkpoint", str(cartpole_run), "--format", "policy", "--out", str(pf)],
                   check=True, capture_output=True, timeout=60)
    obs = np.random.default_rng(1).normal(size=(64, 4)).astype(np.float32)
    assert np.array_equal(rltrain.load_policy(pf)(obs), rltrain.load_policy(cartpole_run)(obs))
    go1 = rltrain.load_policy(SOURCE_DIR / "configs" / "policies" / "go1_joystick.safetensors")
    assert (go1.env, go1.obs_dim, go1.discrete) == ("go1_joystick", 48, False)
    env = rltrain.make_vec("go1_joystick", num_envs=2, seed=0)
    obs, _ = env.reset()
    act = go1(obs)
    assert act.shape == (2, 12) and np.isfinite(act).all()


def test_train_from_python_releases_the_gil(tmp_path):
    result = {}
    worker = threading.Thread(target=lambda: result.update(r=rltrain.train(
        CARTPOLE, overrides={"train.stop_at_target": False, "train.total_env_steps": 409600, "train.threads": 1},
        run_dir=tmp_path / "run", quiet=True)))
    ticks = 0
    start = time.perf_counter()
    worker.start()
    while worker.is_alive():
        ticks += 1
        time.sleep(0.001)
    elapsed = time.perf_counter() - start
    r = result["r"]
    assert isinstance(r, rltrain.TrainResult) and r.env_steps == 409600 and not r.diverged and r.stop_signal == 0
    for name in ["config.toml", "metrics.csv", "summary.json", "checkpoints/latest.safetensors"]:
        assert (tmp_path / "run" / name).exists(), name
    # this thread kept running while the trainer worked (a held GIL would have stopped it at ~1 tick;
    # released, it ticks every millisecond or so, fewer on a loaded machine)
    assert elapsed > 0.2 and ticks >= 20, (ticks, elapsed)
    # resume from Python: the run continues to a larger budget
    r2 = rltrain.train(resume=tmp_path / "run", overrides=["train.total_env_steps=413696"], quiet=True)
    assert r2.env_steps == 413696


def test_bad_input_raises_the_cli_messages(rltrain_bin, tmp_path):
    missing = str(tmp_path / "missing.toml")
    with pytest.raises(rltrain.ConfigError) as e:
        rltrain.train(missing, run_dir=tmp_path / "r", quiet=True)
    assert str(e.value) == cli_error(rltrain_bin, "train", "--config", missing, "--run-dir", str(tmp_path / "r"))
    with pytest.raises(rltrain.ConfigError) as e:
        rltrain.train(CARTPOLE, overrides={"ppo.num_stepz": 3}, run_dir=tmp_path / "r", quiet=True)
    assert str(e.value) == cli_error(rltrain_bin, "train", "--config", CARTPOLE, "--set", "ppo.num_stepz=3",
                                     "--run-dir", str(tmp_path / "r"))
    with pytest.raises(rltrain.CheckpointError) as e:
        rltrain.load_policy(tmp_path / "nothing")
    assert str(e.value) == cli_error(rltrain_bin, "eval", "--checkpoint", str(tmp_path / "nothing"))
    with pytest.raises(rltrain.ConfigError, match="config or resume is required"):
        rltrain.train()


def test_policy_bad_observations(cartpole_run):
    policy = rltrain.load_policy(cartpole_run)
    with pytest.raises(ValueError, match=r"policy: obs: expected shape \(2, 4\), got \(2, 3\)"):
        policy(np.zeros((2, 3), np.float32))


def test_policy_torch_in_torch_out(cartpole_run):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    policy = rltrain.load_policy(cartpole_run)
    obs = np.random.default_rng(1).normal(size=(8, 4)).astype(np.float32)
    out = policy(torch.from_numpy(obs))
    assert isinstance(out, torch.Tensor) and np.array_equal(out.numpy(), policy(obs))
