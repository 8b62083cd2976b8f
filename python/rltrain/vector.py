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
    episode returns the next episode's first observation, and its ``info`` carries what Gymnasium's
    own vector envs (SyncVectorEnv, AsyncVectorEnv) put there in that mode, built the same way
    (``VectorEnv._add_info``), and only on a step where some env finished, as theirs:

    * ``info["final_obs"]``: an object array of ``num_envs`` entries, the observation that ended the
      episode (a float32 ``(obs_dim,)`` row) where ``info["_final_obs"]`` is True, else None;
    * ``info["final_info"]``: the finished episodes' info, a dict of ``num_envs`` arrays each with its
      mask: ``episode_return`` and ``episode_length`` (0 where the mask is False), and for tasks with
      privileged critic observations ``critic_obs``, the critic observation that ended the episode;
      ``info["_final_info"]`` marks the envs that finished.

    The rows of ``final_obs`` are views of the final-observation buffer, valid until the next
    ``step``/``reset`` (copies with ``copy=True``); the arrays in ``final_info`` are fresh. These keys
    are built only when some env finished (``_core.step`` counts them), in C++ in one pass each
    (``_core.select_rows``): ``final_obs`` from row views made once per buffer, in an object array that
    is either new or one handed out on an earlier step that nobody holds any more, rewritten in place
    (``_core.ObjectArrayPool``: freeing and making a 4096-slot object array each step cost more than
    the rest of the step's Python; an array someone keeps never changes). rltrain's own keys, on every
    step: ``info["final_obs_batch"]``, the same final observations as one ``(num_envs, obs_dim)``
    view of that buffer (valid in the rows of finished envs, the fast form for batched code: e.g.
    ``torch.from_dlpack``), ``info["episode_return"]`` and ``info["episode_length"]`` (valid where
    ``info["_episode_return"]``/``["_episode_length"]`` is True; Gymnasium's RecordEpisodeStatistics
    wrapper adds its own ``info["episode"]`` on top), and, with critic observations,
    ``info["critic_obs"]`` and ``info["final_critic_obs"]`` (``(num_envs, critic_dim)``, valid in the
    rows of finished envs). On CUDA the termination flags stay on the device, so the masks and the
    Gymnasium keys (which need them on the host) are left out; the ``*_batch``/``final_critic_obs``
    device arrays and ``terminated | truncated`` give the same.

    ``gymnasium_info=False`` leaves out Gymnasium's ``final_obs``/``final_info`` keys (and their
    masks) for code that reads rltrain's batched keys: a step then touches no Python object per
    finished env (CartPole at 4096 envs finishes ~180 a step: with Gymnasium's keys Python costs
    11-14% of ``rltrain bench``'s rate there, without them 4-6%; tools/bench_python.py), and
    ``info["_episode_return"]`` is a view of a mask buffer valid until the next step, like the other views.

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

    def __init__(self, env_id, num_envs=1, device="cpu", seed=0, num_threads=0, copy=False, gymnasium_info=True,
                 **params):
        if not isinstance(gymnasium_info, bool):
            raise ValueError(f"make_vec: gymnasium_info: expected True or False, got {gymnasium_info!r}")
        self._core = _core.VecEnv(env_id, num_envs, device, num_threads, _param_values(params))
        self.gymnasium_info = gymnasium_info
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
        self._final_rows = None  # (num_envs,) object array: the row views of buffers["final_obs"], made on first use
        self._final_obs_arrays = _core.ObjectArrayPool()  # info["final_obs"]: reused once nobody else holds one
        self._done = np.zeros(self.num_envs, dtype=bool)  # gymnasium_info=False: the mask, reused

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
        self._final_rows = None
        self._final_obs_arrays = _core.ObjectArrayPool()  # its arrays hold rows of the views before
        info = {}
        if "critic_obs" in self.buffers:
            info["critic_obs"] = self._out(self.buffers["critic_obs"])
        return self._out(self.buffers["obs"]), info

    def step(self, actions):
        num_done = self._core.step(self._actions(actions))  # None on CUDA
        b = self.buffers
        info = {"final_obs_batch": self._out(b["final_obs"]), "episode_return": self._out(b["ep_return"]),
                "episode_length": self._out(b["ep_length"])}
        if "critic_obs" in b:
            info["critic_obs"] = self._out(b["critic_obs"])
            info["final_critic_obs"] = self._out(b["final_critic_obs"])
        if self.device == "cpu":  # on CUDA the flags stay on the device: done = terminated | truncated there
            if not self.gymnasium_info:
                done = np.logical_or(b["terminated"], b["truncated"], out=self._done)
                info["_episode_return"] = info["_episode_length"] = self._out(done)
            else:
                done = np.logical_or(b["terminated"], b["truncated"])
                info["_episode_return"] = info["_episode_length"] = done
                if num_done:
                    self._add_final(info, done)
        return (self._out(b["obs"]), self._out(b["reward"]), self._out(b["terminated"]), self._out(b["truncated"]),
                info)

    def _add_final(self, info, done):
        """Gymnasium's same-step final_obs/final_info (as VectorEnv._add_info builds them from each finished
        env's final observation and step info) for the envs where done is True. _core.select_rows is
        np.where(done, values, 0 or None) in one pass (numpy's object-array paths cost ~25 ns an element)."""
        rows = info["final_obs_batch"]
        if rows is self.buffers["final_obs"]:  # views: each row's view is made once and handed out again
            if self._final_rows is None:
                self._final_rows = np.empty(self.num_envs, dtype=object)
                for i in range(self.num_envs):
                    self._final_rows[i] = rows[i]
            final_obs = self._final_obs_arrays.select_rows(done, self._final_rows)  # None where the env goes on
        else:  # copy=True: rows of this step's copy
            final_obs = np.empty(self.num_envs, dtype=object)
            for i in np.flatnonzero(done):
                final_obs[i] = rows[i]
        final_info = {"episode_return": _core.select_rows(done, info["episode_return"]), "_episode_return": done,
                      "episode_length": _core.select_rows(done, info["episode_length"]), "_episode_length": done}
        if "final_critic_obs" in info:  # _add_info's arrays: zeros in the envs that did not finish
            final_info["critic_obs"] = _core.select_rows(done, info["final_critic_obs"])
            final_info["_critic_obs"] = done
        info.update(final_obs=final_obs, _final_obs=done, final_info=final_info, _final_info=done)

    def sample_actions(self, step, seed=None):
        """Uniform random actions for every env, drawn in C++ keyed by (seed, step) (VecEnv::sample_actions):
        what ``action_space.sample()`` draws, without Python's per-element cost, as ``rltrain bench`` steps.
        A float32 ``(num_envs, act_dim)`` view (discrete: the index as a float), valid until the next call;
        ``step`` takes it as it is. seed: make_vec's seed by default."""
        return self._core.sample_actions(self._seed if seed is None else int(seed), int(step))

    def close_extras(self, **kwargs):
        self._core.close()
        self.buffers = {}
        self._final_rows = None
        self._final_obs_arrays = None

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
