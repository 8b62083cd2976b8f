#!/usr/bin/env python3
"""Plays an rltrain checkpoint's policy in Gymnasium's own MuJoCo env (sim-to-sim validation).

    tools/eval_gymnasium.py runs/hopper [--episodes 10] [--seed 0] [--xml envs/assets/hopper.xml] [--json]

A policy trained in our simulator is run in the reference implementation of its task, Gymnasium's
`<Task>-v4` env on MuJoCo, and its mean return and forward speed are printed, to be compared with
`rltrain eval --checkpoint RUN --deterministic`. CHECKPOINT is a run directory (its
checkpoints/latest.safetensors) or a .safetensors file. Python is a test peer only: rltrain never
needs it. Needs numpy, gymnasium (>= 1.0, with its MuJoCo envs), mujoco and safetensors; without
them it prints a SKIP line and exits 77 (the convention of tests/envs/gym_lockstep.py).

Tasks (v4 is the version envs/<task>.h documents; v5 changed some observations and rewards):
| ours        | Gymnasium      | obs | act | map[j]: our action driving Gymnasium's actuator j     |
|-------------|----------------|-----|-----|-------------------------------------------------------|
| ant         | Ant-v4         | 27  | 8   | 6 7 0 1 2 3 4 5 (legs FR FL BL BR; ours FL BL BR FR)  |
| halfcheetah | HalfCheetah-v4 | 17  | 6   | identity                                              |
| hopper      | Hopper-v4      | 11  | 3   | identity                                              |
| walker2d    | Walker2d-v4    | 17  | 6   | identity                                              |
Observations need no map: each of these envs observes qpos[k:] and qvel (Hopper and Walker2d
clip qvel to +-10) and the joints (so qpos and qvel) come in the same order in both models. The
action map is not typed in: it is derived from the models. Our MJCF file (envs/assets/<task>.xml)
and the model Gymnasium runs are compiled with MuJoCo; joint k must have the same type and world
axis in both (and, for hinge and free joints, a world anchor within 0.15 m: the legs are tens of
centimetres apart, our cheetah's joints sit up to 0.09 m from Gymnasium's), so qpos order agrees;
then Gymnasium's actuator j gets our action for the actuator that drives the joint at the same qpos
address. A model that fails this check is refused. humanoid is refused: our 12-body model's
observation (332) is not Gymnasium's (376: 14 bodies), and our cinert, cvel and cfrc_ext are taken
about other points (docs/ARCHITECTURE.md, envs/humanoid.h).

Policy (rl/actor_critic.h, rl/mlp.h): `learner/params` is one float32 buffer [actor MLP | log_std
(act_dim) | critic MLP], each MLP layer by layer W (in x out, row-major) then b (out), hidden
activation from [policy] (tanh | elu | relu), output linear; the action is the Gaussian mean
clipped to [-1, 1] (deterministic, as `rltrain eval --deterministic`). With ppo.normalize_obs the
observation is first clip((x - learner/obs_mean) / sqrt(learner/obs_var + 1e-8), +-ppo.clip_obs)
(rl/ppo_math.h). Everything is read from the checkpoint: the resolved config (TOML) is in its
metadata. Arithmetic is float32, as ours.

Env parameters: [env] overrides of the reward and termination (ctrl_cost_weight, healthy_reward,
healthy_z_min, ...) become the Gymnasium kwargs of the same meaning, max_episode_steps the episode
limit; training-only ones (dr_*, obs_noise, push_*) are ignored with a note; any other is refused.

--xml FILE runs Gymnasium's env class on another MJCF file (e.g. ours, envs/assets/hopper.xml), as
its xml_file argument does; the action map is derived for that model in the same way (identity for
ours). The robot is the file's, the simulation settings Gymnasium's, so that only the model
differs; each change is printed as a note: the timestep and integrator become those of Gymnasium's
file (our hopper and walker2d files say 0.005 s, Gymnasium steps 4 x 0.002 s; its Hopper, Walker2d
and Ant files ask for RK4, ours for nothing, i.e. MuJoCo's Euler, under which one of our ant
policies, 3750 in rltrain, scored ~800 instead of ~3400 with RK4), and on Hopper and Walker2d a rootz slide with ref 0 gets ref = the torso's
height at qpos0 (moves no body; Gymnasium reads qpos[1] as the torso height, its files give rootz
ref=1.25). MuJoCo's own contact model applies, which is rltrain's too (its only contact and limit
law, sim/constraints.h).
--keep-integrator keeps the file's integrator (ours: MuJoCo's Euler, which rltrain's physics
follows step by step) instead of Gymnasium's: with our ant file, whose timestep is Gymnasium's, the
simulation is then the one the policy trained in, so the return should match `rltrain eval`'s up to
the episodes drawn. --xml needs mujoco >= 3.2 (mujoco.MjSpec); with an older one it stops with that message.

Output: mean and std (population) of the episode return, mean length, and mean forward speed, the
x displacement over the episode / (steps * dt) of the x that the task's reward differentiates
(rootx, or for Ant the torso body's frame origin; ours differentiates our torso's centre of mass,
which is at that origin); --json prints one object with the per-episode values.
Episode i starts from env.reset(seed=SEED + i). Bad input (file, metadata key, env) stops with exit
code 2 and one line naming the file and the key.
"""
import argparse
import importlib
import inspect
import json
import os
import sys

try:
    import numpy as np
    import mujoco
    import gymnasium as gym
    from safetensors import safe_open
except Exception as e:  # ImportError, or a broken install
    print(f"SKIP: cannot import numpy/gymnasium/mujoco/safetensors ({e!r}); "
          "`pip install gymnasium[mujoco] safetensors` to run this check")
    sys.exit(77)

try:
    import tomllib  # Python >= 3.11
except ImportError:
    try:
        import tomli as tomllib
    except ImportError as e:
        print(f"SKIP: cannot import tomllib or tomli ({e!r}); Python >= 3.11 or `pip install tomli`")
        sys.exit(77)

# MuJoCo's default warning handler also appends to MUJOCO_LOG.TXT in the working directory
# (Gymnasium's half_cheetah.xml warns that settotalmass is deprecated): send warnings to stderr only.
if hasattr(mujoco, "set_mju_user_warning"):
    mujoco.set_mju_user_warning(lambda msg: print(f"mujoco: warning: {msg}", file=sys.stderr))

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FORMAT = "rltrain-checkpoint-1"  # rl/checkpoint.h kCheckpointFormat
ANCHOR_TOL = 0.15                # m, joint anchors of our model vs the target model (see above)
AXIS_TOL = 1e-3                  # 1 - |cos| between joint axes

# name -> Gymnasium id, observation and action sizes, the body whose frame x Gymnasium's reward
# differentiates (None: rootx, qpos[0]), whether its qpos[1] is the torso height (rootz ref).
TASKS = {
    "ant": dict(gym_id="Ant-v4", obs_dim=27, act_dim=8, x_body="torso", rootz_height=False),
    "halfcheetah": dict(gym_id="HalfCheetah-v4", obs_dim=17, act_dim=6, x_body=None, rootz_height=False),
    "hopper": dict(gym_id="Hopper-v4", obs_dim=11, act_dim=3, x_body=None, rootz_height=True),
    "walker2d": dict(gym_id="Walker2d-v4", obs_dim=17, act_dim=6, x_body=None, rootz_height=True),
}
REFUSED = {
    "humanoid": "our humanoid's observation (332: 12 bodies; cinert, cvel and cfrc_ext about the torso origin) "
                "does not mean what Humanoid-v4's (376: 14 bodies, about subtree centres of mass) means; "
                "see envs/humanoid.h",
}
TRAINING_ONLY = ("dr_", "obs_noise", "push_")  # [env] keys of training only (randomization, noise, pushes)
SCALAR_PARAMS = ("forward_reward_weight", "ctrl_cost_weight", "healthy_reward", "reset_noise_scale")
# ours -> (Gymnasium's range kwarg, which end; None: symmetric, (-v, v)): healthy_z_min -> healthy_z_range[0]
RANGE_PARAMS = {
    "healthy_z_min": ("healthy_z_range", 0),
    "healthy_z_max": ("healthy_z_range", 1),
    "healthy_angle_max": ("healthy_angle_range", None),
    "healthy_state_max": ("healthy_state_range", None),
}


class BadInput(Exception):
    """One line naming the file and the key; exit code 2."""


def fail(msg):
    print(f"eval_gymnasium: {msg}", file=sys.stderr)
    sys.exit(2)


# --- checkpoint -----------------------------------------------------------------------------------


def resolve_checkpoint(path):
    if os.path.isdir(path):
        latest = os.path.join(path, "checkpoints", "latest.safetensors")
        if not os.path.isfile(latest):
            raise BadInput(f"{path}: a directory without checkpoints/latest.safetensors")
        return latest
    if not os.path.isfile(path):
        raise BadInput(f"{path}: no such checkpoint file")
    return path


class Policy:
    """The actor of a checkpoint: obs (float64 from Gymnasium) -> deterministic action in [-1, 1]."""

    ACTIVATIONS = {
        "tanh": np.tanh,
        "relu": lambda z: np.maximum(z, np.float32(0)),
        "elu": lambda z: np.where(z > 0, z, np.expm1(np.minimum(z, np.float32(0)))).astype(np.float32),
    }

    def __init__(self, path):
        self.path = path
        try:
            f = safe_open(path, "numpy")
        except Exception as e:
            raise BadInput(f"{path}: not a safetensors file ({e})")
        meta = f.metadata() or {}
        if meta.get("format") != FORMAT:
            raise BadInput(f'{path}: metadata "format": expected "{FORMAT}", got {meta.get("format")!r} '
                           "(not an rltrain checkpoint?)")
        if "config" not in meta:
            raise BadInput(f'{path}: metadata "config": missing')
        try:
            self.config = tomllib.loads(meta["config"])
        except tomllib.TOMLDecodeError as e:
            raise BadInput(f'{path}: metadata "config": not TOML ({e})')
        for section in ("env", "policy", "ppo"):
            if not isinstance(self.config.get(section, {}), dict):
                raise BadInput(f'{path}: metadata "config" [{section}]: expected a table')
        cfg_env, pol, ppo = self.config.get("env", {}), self.config.get("policy", {}), self.config.get("ppo", {})
        self.env = meta.get("env", cfg_env.get("name"))
        if self.env in REFUSED:
            raise BadInput(f'{path}: metadata "env": {self.env} is not supported: {REFUSED[self.env]}')
        if self.env not in TASKS:
            raise BadInput(f'{path}: metadata "env": {self.env!r} has no Gymnasium MuJoCo counterpart here '
                           f"(supported: {', '.join(sorted(TASKS))})")
        task = TASKS[self.env]
        for key, want in (("obs_dim", task["obs_dim"]), ("head_dim", task["act_dim"])):
            got = meta.get(key)
            if got != str(want):
                raise BadInput(f'{path}: metadata "{key}": expected {want} for {self.env}, got {got!r} '
                               "(a discrete policy, or another env?)")
        try:  # checkpoints from before asymmetric actor-critic have none: the critic read obs
            critic_in = int(meta.get("critic_obs_dim", "0")) or task["obs_dim"]
        except ValueError:
            raise BadInput(f'{path}: metadata "critic_obs_dim": expected an integer, got {meta["critic_obs_dim"]!r}')
        self.obs_dim, self.act_dim = task["obs_dim"], task["act_dim"]
        hidden = pol.get("hidden", [64, 64])
        if not isinstance(hidden, list) or not all(isinstance(h, int) and not isinstance(h, bool) and h > 0 for h in hidden):
            raise BadInput(f'{path}: metadata "config" policy.hidden: expected a list of positive integers, got {hidden!r}')
        act_name = pol.get("activation", "tanh")
        if act_name not in self.ACTIVATIONS:
            raise BadInput(f'{path}: metadata "config" policy.activation: expected tanh | elu | relu, got {act_name!r}')
        self.activation = self.ACTIVATIONS[act_name]
        self.normalize = ppo.get("normalize_obs", True)
        if not isinstance(self.normalize, bool):
            raise BadInput(f'{path}: metadata "config" ppo.normalize_obs: expected true or false, got {self.normalize!r}')
        clip_obs = ppo.get("clip_obs", 10.0)
        if isinstance(clip_obs, bool) or not isinstance(clip_obs, (int, float)) or not clip_obs > 0:
            raise BadInput(f'{path}: metadata "config" ppo.clip_obs: expected a positive number, got {clip_obs!r}')
        self.clip_obs = np.float32(clip_obs)
        keys = set(f.keys())
        for key in ("learner/params",) + (("learner/obs_mean", "learner/obs_var") if self.normalize else ()):
            if key not in keys:
                raise BadInput(f'{path}: tensor "{key}": missing')
        params = f.get_tensor("learner/params")
        if params.dtype != np.float32 or params.ndim != 1:
            raise BadInput(f'{path}: tensor "learner/params": expected a flat float32 buffer, got {params.dtype} {params.shape}')
        sizes = [self.obs_dim] + list(hidden) + [self.act_dim]
        actor_n = sum((a + 1) * b for a, b in zip(sizes[:-1], sizes[1:]))
        critic_sizes = [critic_in] + list(hidden) + [1]
        critic_n = sum((a + 1) * b for a, b in zip(critic_sizes[:-1], critic_sizes[1:]))
        if params.size != actor_n + self.act_dim + critic_n:
            raise BadInput(f'{path}: tensor "learner/params": {params.size} values, expected {actor_n + self.act_dim + critic_n} '
                           f"for hidden {hidden} (actor {actor_n} + log_std {self.act_dim} + critic {critic_n})")
        self.layers, at = [], 0
        for ni, no in zip(sizes[:-1], sizes[1:]):
            w = params[at:at + ni * no].reshape(ni, no)
            at += ni * no
            self.layers.append((w, params[at:at + no]))
            at += no
        if self.normalize:
            self.mean = f.get_tensor("learner/obs_mean").astype(np.float32)
            var = f.get_tensor("learner/obs_var").astype(np.float32)
            if self.mean.shape != (self.obs_dim,) or var.shape != (self.obs_dim,):
                raise BadInput(f'{path}: tensor "learner/obs_mean"/"learner/obs_var": expected ({self.obs_dim},), '
                               f"got {self.mean.shape}/{var.shape}")
            self.inv_std = np.float32(1) / np.sqrt(var + np.float32(1e-8))

    def act(self, obs):
        x = np.asarray(obs, dtype=np.float32)
        if self.normalize:
            x = np.clip((x - self.mean) * self.inv_std, -self.clip_obs, self.clip_obs)
        for i, (w, b) in enumerate(self.layers):
            x = x @ w + b
            if i + 1 < len(self.layers):
                x = self.activation(x)
        return np.clip(x, np.float32(-1), np.float32(1))


# --- Gymnasium env --------------------------------------------------------------------------------


def gym_env_class(gym_id):
    try:
        entry = gym.spec(gym_id).entry_point
    except Exception as e:  # gymnasium.error.NameNotFound / VersionNotFound
        raise BadInput(f"gymnasium {gym.__version__} has no {gym_id} ({e})")
    if callable(entry):
        return entry
    module, name = entry.split(":")
    return getattr(importlib.import_module(module), name)


def env_kwargs(policy, cls):
    """Gymnasium kwargs and the episode limit from the checkpoint's [env] overrides, and notes."""
    task, kwargs, notes, max_steps = policy.env, {}, [], 1000
    defaults = {k: p.default for k, p in inspect.signature(cls.__init__).parameters.items()}
    for key, value in policy.config.get("env", {}).items():
        where = f'{policy.path}: metadata "config" env.{key}'
        if key in ("name", "num_envs"):
            continue
        if not key.startswith(TRAINING_ONLY) and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise BadInput(f"{where}: expected a number, got {value!r}")
        if key.startswith(TRAINING_ONLY):
            notes.append(f"env.{key} = {value} is training-only here (Gymnasium's env has none): ignored")
        elif key == "max_episode_steps":
            max_steps = int(value)
        elif key == "terminate_when_unhealthy" and key in defaults:
            kwargs[key] = bool(value)
        elif key in SCALAR_PARAMS and key in defaults:
            kwargs[key] = float(value)
        elif key == "forward_reward_weight" and task == "ant" and float(value) == 1.0:
            pass  # Ant-v4 has no such kwarg: its weight is 1
        elif key in RANGE_PARAMS and RANGE_PARAMS[key][0] in defaults:
            name, end = RANGE_PARAMS[key]
            rng = list(kwargs.get(name, defaults[name]))
            if end is None:
                rng = [-float(value), float(value)]
            else:
                rng[end] = float(value)
            kwargs[name] = tuple(rng)
        else:
            raise BadInput(f"{where}: no counterpart in Gymnasium's {TASKS[task]['gym_id']}")
    return kwargs, max_steps, notes


def make_env(policy, xml, keep_integrator=False):
    """An instance of Gymnasium's env class for the task (on `xml` if given), the episode limit, notes."""
    task = TASKS[policy.env]
    cls = gym_env_class(task["gym_id"])
    kwargs, max_steps, notes = env_kwargs(policy, cls)
    env = cls(**kwargs)
    if xml is None:
        return env, max_steps, notes
    xml = os.path.abspath(xml)
    if not os.path.isfile(xml):
        raise BadInput(f"--xml {xml}: no such file")
    # The simulation settings of Gymnasium's own file: the timestep (dt / frame_skip) and integrator.
    timestep, integrator = float(env.model.opt.timestep), int(env.model.opt.integrator)
    env.close()

    class OnXml(cls):
        # MujocoEnv.__init__ compiles self.fullpath in _initialize_simulation, the one hook its v4
        # subclasses (which hard-code their file name) leave open.
        def _initialize_simulation(self):
            if not hasattr(mujoco, "MjSpec"):
                raise BadInput(f"--xml {xml}: needs mujoco >= 3.2 (mujoco.MjSpec); this is {mujoco.__version__}")
            try:
                spec = mujoco.MjSpec.from_file(xml)
            except Exception as e:
                raise BadInput(f"--xml {xml}: MuJoCo cannot load it ({e})")
            if task["rootz_height"]:
                rootz = spec.joint("rootz")
                if rootz is None or rootz.type != mujoco.mjtJoint.mjJNT_SLIDE:
                    raise BadInput(f"--xml {xml}: {task['gym_id']} needs a slide joint named rootz")
                probe = spec.compile()
                d = mujoco.MjData(probe)
                mujoco.mj_forward(probe, d)
                torso_z = float(d.xpos[probe.body("torso").id][2])
                if rootz.ref == 0.0 and abs(torso_z) > 1e-9:
                    rootz.ref = torso_z
                    notes.append(f"rootz ref 0 -> {torso_z:g} (qpos[1] = the torso height, as in Gymnasium's file)")
            if abs(spec.option.timestep - timestep) > 1e-12:
                notes.append(f"timestep {spec.option.timestep:g} s -> {timestep:g} s (Gymnasium's file's)")
                spec.option.timestep = timestep
            if int(spec.option.integrator) != integrator and not keep_integrator:
                names = {int(v): v.name.replace("mjINT_", "") for v in mujoco.mjtIntegrator.__members__.values()}
                notes.append(f"integrator {names[int(spec.option.integrator)]} -> {names[integrator]} (Gymnasium's file's)")
                spec.option.integrator = integrator
            model = spec.compile()
            model.vis.global_.offwidth = max(model.vis.global_.offwidth, self.width)
            model.vis.global_.offheight = max(model.vis.global_.offheight, self.height)
            self.fullpath = xml
            return model, mujoco.MjData(model)

    try:
        return OnXml(**kwargs), max_steps, notes
    except BadInput:
        raise
    except Exception as e:  # a model Gymnasium's env class cannot run (a missing body, ...)
        raise BadInput(f"--xml {xml}: Gymnasium's {task['gym_id']} cannot run it ({type(e).__name__}: {e})")


def joint_frames(model):
    """World axis and anchor of each joint at qpos0."""
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    return data.xaxis.copy(), data.xanchor.copy()


def action_map(ours, target, where):
    """map[j] = the index in our action vector of the actuator driving the joint that the target
    model's actuator j drives. Checks first that both models have the same joints in the same order."""
    if ours.njnt != target.njnt or ours.nq != target.nq or ours.nv != target.nv or ours.nu != target.nu:
        raise BadInput(f"{where}: {target.njnt} joints, nq {target.nq}, nv {target.nv}, nu {target.nu}; "
                       f"our model has {ours.njnt}, {ours.nq}, {ours.nv}, {ours.nu}")
    axis_o, anchor_o = joint_frames(ours)
    axis_t, anchor_t = joint_frames(target)
    for j in range(ours.njnt):
        name = mujoco.mj_id2name(target, mujoco.mjtObj.mjOBJ_JOINT, j)
        if ours.jnt_type[j] != target.jnt_type[j] or ours.jnt_qposadr[j] != target.jnt_qposadr[j]:
            raise BadInput(f"{where}: joint {j} ({name}) has another type or qpos address than ours")
        if 1.0 - abs(float(axis_o[j] @ axis_t[j])) > AXIS_TOL or float(axis_o[j] @ axis_t[j]) < 0:
            raise BadInput(f"{where}: joint {j} ({name}) axis {axis_t[j].round(3)}, ours {axis_o[j].round(3)}")
        if ours.jnt_type[j] != mujoco.mjtJoint.mjJNT_SLIDE and np.linalg.norm(anchor_o[j] - anchor_t[j]) > ANCHOR_TOL:
            raise BadInput(f"{where}: joint {j} ({name}) at {anchor_t[j].round(3)}, ours at {anchor_o[j].round(3)} "
                           f"(more than {ANCHOR_TOL} m apart)")

    def driven_qposadr(model, k):
        if model.actuator_trntype[k] != mujoco.mjtTrn.mjTRN_JOINT:
            raise BadInput(f"{where}: actuator {k} does not drive a joint")
        return int(model.jnt_qposadr[model.actuator_trnid[k, 0]])

    ours_by_q = {driven_qposadr(ours, k): k for k in range(ours.nu)}
    amap = []
    for j in range(target.nu):
        q = driven_qposadr(target, j)
        if q not in ours_by_q:
            raise BadInput(f"{where}: actuator {j} drives qpos[{q}], which no actuator of ours drives")
        amap.append(ours_by_q[q])
    if sorted(amap) != list(range(ours.nu)):
        raise BadInput(f"{where}: actuators do not map one to one onto ours ({amap})")
    return amap


# --- evaluation -----------------------------------------------------------------------------------


def evaluate(policy, env, amap, max_steps, episodes, seed):
    x_body = TASKS[policy.env]["x_body"]
    data = env.unwrapped.data

    def forward_x():
        return float(data.body(x_body).xpos[0]) if x_body else float(data.qpos[0])

    returns, lengths, speeds = [], [], []
    for ep in range(episodes):
        obs, _ = env.reset(seed=seed + ep)
        x0, ret, n = forward_x(), 0.0, 0
        while n < max_steps:
            a = policy.act(obs)
            obs, r, terminated, _, _ = env.step(a[amap])
            ret += float(r)
            n += 1
            if terminated:
                break
        returns.append(ret)
        lengths.append(n)
        speeds.append((forward_x() - x0) / (n * env.unwrapped.dt))
    return returns, lengths, speeds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoint", help="run directory or .safetensors file")
    ap.add_argument("--episodes", type=int, default=10, help="episodes to play (default 10)")
    ap.add_argument("--seed", type=int, default=0, help="episode i resets with seed SEED + i (default 0)")
    ap.add_argument("--xml", help="run Gymnasium's env on this MJCF file instead of its own")
    ap.add_argument("--keep-integrator", action="store_true",
                    help="with --xml: keep the file's integrator (ours: Euler) instead of Gymnasium's")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()
    if args.episodes < 1:
        fail(f"--episodes: expected a positive integer, got {args.episodes}")
    if args.keep_integrator and not args.xml:
        fail("--keep-integrator: only with --xml (Gymnasium's own file keeps its own settings)")
    try:
        path = resolve_checkpoint(args.checkpoint)
        policy = Policy(path)
        task = TASKS[policy.env]
        env, max_steps, notes = make_env(policy, args.xml, args.keep_integrator)
        our_xml = os.path.join(REPO, "envs", "assets", f"{policy.env}.xml")
        try:
            ours = mujoco.MjModel.from_xml_path(our_xml)
        except Exception as e:
            raise BadInput(f"{our_xml}: MuJoCo cannot load it ({e})")
        amap = action_map(ours, env.unwrapped.model, args.xml or task["gym_id"])
    except BadInput as e:
        fail(str(e))
    returns, lengths, speeds = evaluate(policy, env, amap, max_steps, args.episodes, args.seed)
    result = {
        "checkpoint": path,
        "env": policy.env,
        "gymnasium_env": task["gym_id"],
        "model": env.unwrapped.fullpath,
        "timestep": float(env.unwrapped.model.opt.timestep),
        "dt": float(env.unwrapped.dt),
        "episodes": args.episodes,
        "seed": args.seed,
        "action_map": amap,
        "notes": notes,
        "mean_return": float(np.mean(returns)),
        "std_return": float(np.std(returns)),
        "mean_length": float(np.mean(lengths)),
        "mean_forward_speed": float(np.mean(speeds)),
        "returns": returns,
        "lengths": lengths,
        "forward_speeds": speeds,
    }
    if args.json:
        print(json.dumps(result))
        return
    for n in notes:
        print(f"note: {n}")
    where = task["gym_id"] + (f" on {args.xml}" if args.xml else "")
    print(f"{policy.env} in {where}: {args.episodes} episodes (deterministic), mean return {result['mean_return']:.3f}, "
          f"std {result['std_return']:.3f}, mean length {result['mean_length']:.1f}, "
          f"mean forward speed {result['mean_forward_speed']:.3f} m/s")


if __name__ == "__main__":
    main()
