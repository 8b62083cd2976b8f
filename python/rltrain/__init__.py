"""rltrain from Python: Gymnasium vector envs, the PPO trainer and trained policies (DESIGN.md D11).

    import rltrain
    envs = rltrain.make_vec("ant", num_envs=4096, device="cpu", seed=0)   # a gymnasium.vector.VectorEnv
    obs, info = envs.reset()
    obs, reward, terminated, truncated, info = envs.step(envs.action_space.sample())
    result = rltrain.train("configs/cartpole.toml", overrides={"train.total_env_steps": 200_000}, run_dir="runs/cp")
    policy = rltrain.load_policy("runs/cp")                               # numpy in, numpy out
    actions = policy(obs)
    phys = rltrain.Physics("model.xml", num_envs=64)                    # any MJCF file, batched (physics.py)
    phys.ctrl = ctrl; phys.step(10); phys.qpos, phys.xpos, phys.sensordata

Everything runs in rltrain's C++ core (the extension module rltrain._core); bad arguments raise
ConfigError / CheckpointError / MjcfError (ValueError) with the messages the rltrain CLI prints.
"""
import signal

from . import _core
from ._core import CheckpointError, ConfigError, IoError, MjcfError, TrainResult
from .physics import Physics

__all__ = ["make_vec", "train", "load_policy", "envs", "Physics", "TrainResult", "ConfigError", "CheckpointError", "MjcfError",
           "IoError"]


def envs():
    """Names of every env (``rltrain envs --names``)."""
    return _core.env_names()


def make_vec(env_id, num_envs=1, device="cpu", seed=0, *, num_threads=0, copy=False, gymnasium_info=True, **params):
    """``num_envs`` copies of env ``env_id`` as a ``gymnasium.vector.VectorEnv`` (rltrain.vector.RltrainVectorEnv).

    device: ``cpu``, ``cuda`` or ``auto``; num_threads: CPU threads (0: one per core); seed: the first
    reset's seed; copy: return copies instead of views of the batch buffers; gymnasium_info=False: no
    ``final_obs``/``final_info`` (Gymnasium's per-env objects) in a step's info, only rltrain's batched
    keys (``final_obs_batch``, ...: the fast path for batched trainers); params: the env's
    parameters (``rltrain envs`` lists them), e.g. ``max_episode_steps=200`` or a robot task's
    domain randomization.
    """
    from .vector import RltrainVectorEnv  # gymnasium is needed for envs only

    return RltrainVectorEnv(env_id, num_envs, device, seed, num_threads, copy, gymnasium_info, **params)


def load_policy(checkpoint, device="cpu", num_threads=0):
    """A checkpoint's policy (a .safetensors file or a run directory) as a callable (rltrain.policy.Policy)."""
    from .policy import Policy

    return Policy(checkpoint, device, num_threads)


def _toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, str):
        return value
    return repr(value)


def train(config=None, overrides=(), run_dir=None, *, resume=None, seed=None, device=None, iterations=0,
          restart=False, quiet=False):
    """Runs ``rltrain train`` in this process (the C++ trainer, with the GIL released).

    config: a TOML file (configs/<task>.toml); overrides: ``{"ppo.num_steps": 256}`` or
    ``["ppo.num_steps=256"]`` (``--set``); run_dir, resume, seed, device, iterations, restart, quiet: as
    the CLI's flags. Returns a TrainResult. Ctrl-C stops at the end of the iteration after writing a
    checkpoint and raises KeyboardInterrupt (continue with ``train(resume=run_dir)``).
    """
    if config is None and resume is None:
        raise ConfigError("rltrain.train: config or resume is required")
    if config is not None and resume is not None:
        raise ConfigError("rltrain.train: config and resume exclude each other (a resumed run keeps its config)")
    if isinstance(overrides, dict):
        overrides = [f"{k}={_toml_value(v)}" for k, v in overrides.items()]
    r = _core.train(None if config is None else str(config), [str(o) for o in overrides],
                    None if run_dir is None else str(run_dir), None if resume is None else str(resume), seed, device,
                    iterations, restart, quiet)
    if r.stop_signal == signal.SIGINT:
        raise KeyboardInterrupt(f"training stopped after writing a checkpoint; resume with "
                                f"rltrain.train(resume={r.run_dir!r})")
    return r
