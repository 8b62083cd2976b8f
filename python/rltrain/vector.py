"""rltrain's envs as Gymnasium 1.x vector envs (`rltrain.make_vec`).

The envs step in C++ (sim/vec_env.h through the extension module rltrain._core); this file only
declares the spaces, converts actions and hands out views of the batch buffers.
"""
import numpy as np
import gymnasium as gym
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from . import _core


def _box(space):
    low = np.asarray(space.low, dtype=np.float32)
    high = np.asarray(space.high, dtype=np.float32)
    return gym.spaces.Box(low, high, shape=(space.dim,), dtype=np.float32)


def _param_values(params):
    out = {}
    for key, value in params.items():
        if isinstance(value, (bool, int, float, np.number)):
            out[key] = float(value)
        else:
            raise _core.ConfigError(f"make_vec: env.{key}: expected a number or boolean (env parameter), got {value!r}")
    return out


class RltrainVectorEnv(VectorEnv):
    """num_envs copies of one rltrain env, stepped together in C++, as a ``gymnasium.vector.VectorEnv``.

    Made by ``rltrain.make_vec(env_id, num_envs, device, seed, **params)``; ``params`` are the env's
    parameters as ``rltrain envs`` lists them (robot tasks: domain randomization, noise, pushes).

    Autoreset (``metadata["autoreset_mode"] == AutoresetMode.SAME_STEP``): a step that ends an
    episode returns the next episode's first observation; ``info["final_obs"]`` holds the
    observation that ended it, valid in the rows where ``info["_final_obs"]`` is True (an array of
    ``(num_envs, obs_dim)``, not Gymnasium's object array of rows: indexing a row reads the same).
    ``info["episode_return"]`` and ``info["episode_length"]`` hold the return and length of the
    episodes that ended, valid in the same rows (Gymnasium's RecordEpisodeStatistics wrapper adds its
    own ``info["episode"]`` on top). Tasks with privileged critic observations add
    ``info["critic_obs"]`` and ``info["final_critic_obs"]``.

    Zero copy: observations, rewards, terminations, truncations and the info arrays are views of the
    C++ batch buffers (numpy on the CPU; ``torch.from_dlpack`` takes them without a copy, on the CPU
    and, in a CUDA build, on the GPU). They are valid until the next ``step``/``reset``, which
    overwrites them in place; ``copy=True`` returns copies instead (CPU). ``buffers`` maps every
    buffer's name to its view. ``close()`` ends stepping; the buffers are freed once the env and every
    view of them are gone.

    Actions: a numpy array (or list) of ``action_space``'s shape; a DLPack producer (a torch tensor)
    is passed through as is and must then be float32, C-contiguous, ``(num_envs, act_dim)``, on the
    env's device (discrete actions: the index as a float).

    Seeds: one integer keys every env (DESIGN.md D4: env i's episodes are keyed (seed, i, episode));
    ``reset(seed=None)`` uses make_vec's seed on the first reset and seed + k on the k-th.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, env_id, num_envs=1, device="cpu", seed=0, num_threads=0, copy=False, **params):
        self._core = _core.VecEnv(env_id, num_envs, device, num_threads, _param_values(params))
        spec = self._core.spec
        self.num_envs = self._core.num_envs
        self.device = self._core.device
        self.render_mode = None
        self.copy = copy
        self._seed = int(seed)
        self._num_resets = 0
        self._discrete = spec.action.discrete
        self._act_dim = spec.action.dim
        self.env_spec = spec
        self.max_episode_steps = spec.max_episode_steps
        self.single_observation_space = _box(spec.observation)
        if self._discrete:
            self.single_action_space = gym.spaces.Discrete(spec.action.num_actions)
        else:
            self.single_action_space = _box(spec.action)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.buffers = self._core.views()

    @property
    def params(self):
        """(name, value, doc) of every env parameter, as ``rltrain envs`` lists them."""
        return self._core.params()

    def reset(self, *, seed=None, options=None):
        if options and "reset_mask" in options:
            # Gymnasium's partial reset: the masked envs start their next episode (VecEnv::reset_one).
            mask = np.asarray(options["reset_mask"], dtype=bool)
            if mask.shape != (self.num_envs,):
                raise ValueError(f"reset: options['reset_mask']: expected shape ({self.num_envs},), got {mask.shape}")
            for i in np.flatnonzero(mask):
                self._core.reset_one(int(i))
            return self._out(self.buffers["obs"]), {}
        if seed is None:
            seed = self._seed + self._num_resets
        elif not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
            raise ValueError(f"reset: seed: expected one non-negative integer (it keys every env), got {seed!r}")
        self._core.reset(int(seed))
        self._num_resets += 1
        self.buffers = self._core.views()
        info = {}
        if "critic_obs" in self.buffers:
            info["critic_obs"] = self._out(self.buffers["critic_obs"])
        return self._out(self.buffers["obs"]), info

    def step(self, actions):
        self._core.step(self._actions(actions))
        b = self.buffers
        info = {"final_obs": self._out(b["final_obs"]), "episode_return": self._out(b["ep_return"]),
                "episode_length": self._out(b["ep_length"])}
        if "critic_obs" in b:
            info["critic_obs"] = self._out(b["critic_obs"])
            info["final_critic_obs"] = self._out(b["final_critic_obs"])
        if self.device == "cpu":  # on CUDA the flags stay on the device: done = terminated | truncated there
            done = np.logical_or(b["terminated"], b["truncated"])
            info["_final_obs"] = info["_episode_return"] = info["_episode_length"] = done
        return (self._out(b["obs"]), self._out(b["reward"]), self._out(b["terminated"]), self._out(b["truncated"]),
                info)

    def sample_actions(self, step, seed=None):
        """Uniform random actions for every env, drawn in C++ keyed by (seed, step) (VecEnv::sample_actions):
        what ``action_space.sample()`` draws, without Python's per-element cost, as ``rltrain bench`` steps.
        A float32 ``(num_envs, act_dim)`` view (discrete: the index as a float), valid until the next call;
        ``step`` takes it as it is. seed: make_vec's seed by default."""
        return self._core.sample_actions(self._seed if seed is None else int(seed), int(step))

    def close_extras(self, **kwargs):
        self._core.close()
        self.buffers = {}

    def _out(self, view):
        return np.array(view) if self.copy and self.device == "cpu" else view

    def _actions(self, actions):
        if not isinstance(actions, (np.ndarray, list, tuple, int, float, np.number)):
            return actions  # a DLPack producer (torch): handed over as is
        a = np.asarray(actions)
        if self._discrete:
            a = a.astype(np.float32, copy=False).reshape(self.num_envs, 1)
        else:
            a = np.ascontiguousarray(a, dtype=np.float32)
            if a.ndim == 1 and self._act_dim == 1:
                a = a.reshape(self.num_envs, 1)
        return a
