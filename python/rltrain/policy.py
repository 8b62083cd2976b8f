"""A trained policy as a callable (`rltrain.load_policy`): rl/policy.h's Policy::act from Python."""
import os
import sys

import numpy as np

from . import _core


class Policy:
    """A checkpoint's policy: observations in, actions out.

    ``policy(obs)`` takes a numpy array (``(obs_dim,)`` or ``(N, obs_dim)``, raw observations: the
    checkpoint's normalizer is applied inside) and returns numpy actions: ``(N, act_dim)`` float32 for
    a continuous env (the Gaussian's mean, or a sample; not clipped, as in training: envs clip), or
    ``(N,)`` int64 indices for a discrete one. A torch tensor goes in and comes out through DLPack
    (float32, on the policy's device). ``deterministic=False`` samples from the Philox stream that
    ``rltrain eval`` uses, keyed by (row, ``step``).
    """

    def __init__(self, checkpoint, device="cpu", num_threads=0):
        self._core = _core.Policy(os.fspath(checkpoint), device, num_threads)
        spec = self._core.spec
        self.env = spec.name
        self.obs_dim = spec.observation.dim
        self.act_dim = spec.action.dim
        self.discrete = spec.action.discrete
        self.checkpoint = self._core.path
        self.device = self._core.device

    @property
    def config_toml(self):
        """The resolved config the checkpoint was trained with, as TOML."""
        return self._core.config_toml

    def __call__(self, obs, deterministic=True, step=0):
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(obs, torch.Tensor):
            single = obs.dim() == 1
            x = obs.reshape(1, -1) if single else obs
            out = torch.from_dlpack(self._core.act(x.float().contiguous(), deterministic, step)).clone()
            if self.discrete:
                out = out[:, 0].long()
            return out[0] if single else out
        x = np.asarray(obs, dtype=np.float32)
        single = x.ndim == 1
        x = np.ascontiguousarray(x.reshape(1, -1) if single else x)
        out = np.array(self._core.act(x, deterministic, step))  # a copy: the policy's buffer is reused
        if self.discrete:
            out = out[:, 0].astype(np.int64)
        return out[0] if single else out
