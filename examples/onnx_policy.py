"""Drives an rltrain env with a policy exported to ONNX (`rltrain export`), run by onnxruntime.

    rltrain train --config configs/cartpole.toml --run-dir runs/cp
    rltrain export --checkpoint runs/cp --out cartpole.onnx
    python examples/onnx_policy.py cartpole.onnx --episodes 32

The model maps raw observations (float32 [N, obs_dim]; the normalizer is folded in) to actions
(float32 [N, act_dim]; a discrete env's index as a float). Each of --episodes envs plays one
episode; prints the mean return. The env is the one named in the model's metadata ("env").
"""
import argparse
import sys

import numpy as np

try:
    import onnxruntime as ort
except ImportError:
    sys.exit("examples/onnx_policy.py: onnxruntime is not installed (pip install onnxruntime)")

import rltrain


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", help="an .onnx file written by rltrain export")
    p.add_argument("--env", default=None, help="default: the env in the model's metadata")
    p.add_argument("--episodes", type=int, default=32)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    session = ort.InferenceSession(args.model, providers=["CPUExecutionProvider"])
    meta = session.get_modelmeta().custom_metadata_map
    env_name = args.env or meta["env"]
    envs = rltrain.make_vec(env_name, num_envs=args.episodes, seed=args.seed)
    discrete = envs.single_action_space.shape == ()

    obs, _ = envs.reset()
    returns = np.full(args.episodes, np.nan)
    for _ in range(envs.max_episode_steps + 1):
        (action,) = session.run(["action"], {"obs": obs})
        obs, _, term, trunc, info = envs.step(action[:, 0].astype(np.int64) if discrete else action)
        first = (term | trunc) & np.isnan(returns)
        returns[first] = info["episode_return"][first]
        if not np.isnan(returns).any():
            break
    envs.close()
    print(f"{env_name}: {args.episodes} episodes with {args.model}: mean return {returns.mean():.3f}, "
          f"std {returns.std():.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
