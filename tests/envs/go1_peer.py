#!/usr/bin/env python3
"""Steps rltrain's go1_joystick (envs/go1_joystick.h) in lockstep with EnvPool's
Go1JoystickFlatTerrain-v1, a C++ port of MuJoCo Playground's Go1JoystickFlatTerrain on MuJoCo 3.

Usage: go1_peer.py PATH/TO/go1_trace [--episodes N] [--steps N] [-v]

EnvPool runs with observation noise off (noise_level 0; it has no domain randomization and no kicks);
go1_trace with noise and randomization off. EnvPool exposes no qpos/qvel, so each episode's start
state is rebuilt from EnvPool's first privileged observation: the task is invariant under planar
translation and yaw on the flat floor, so the start is the home pose at x = y = 0 with yaw 0, joint
angles from the observation, the trunk's angular velocity = gyro and its linear velocity = the imu
velocimeter minus gyro x (imu offset). The command of each step is EnvPool's (read off its
observation); the actions are a fixed seeded sequence of small random actions.

What can and cannot agree: Playground's scene runs MuJoCo's Newton solver with iterations=1,
ls_iterations=5, which stops before convergence; rltrain always solves the contact and limit
problem to convergence (sim/constraints.h, docs/MJCF.md). MuJoCo itself, from one state, differs
between iterations=1 and a converged solve by up to ~1.5 rad/s (gyro) and ~3 rad/s (joint
velocities) after one control step, so no lockstep with EnvPool can be tight. The checks:
 1. EnvPool's start privileged state (a forward pass) against ours, to 1e-4, all but the
    accelerometer (it carries the solver's acceleration);
 2. the reward-term formulas of envs/go1_joystick.h's table, evaluated on EnvPool's own privileged
    states, against the terms EnvPool reports (1e-4 relative): both compute the same terms from the
    same quantities (tests/envs/test_go1_joystick.cpp checks our code against that table);
 3. lockstep against MuJoCo 3 itself with a converged solver (iterations 100, ls_iterations 50, the
    python `mujoco` package) from the same start state, commands and actions: the observation
    (Playground's, computed here from MuJoCo's data), the privileged state's joint, sensor and
    actuator parts, each reward term and termination, to measured tolerances (TOL);
 4. lockstep against EnvPool: printed only (the solver gap above).
Exit status: 0 agree, 1 a mismatch, 77 envpool not importable.
"""
import json
import subprocess
import sys

import numpy as np

try:
    import envpool  # noqa: F401
except Exception as e:  # pragma: no cover
    print(f"SKIP: envpool not importable ({type(e).__name__}: {e})")
    sys.exit(77)

TERMS = ["tracking_lin_vel", "tracking_ang_vel", "lin_vel_z", "ang_vel_xy", "orientation", "stand_still",
         "termination", "pose", "torques", "action_rate", "energy", "feet_slip", "feet_clearance",
         "feet_height", "feet_air_time", "dof_pos_limits"]
WEIGHTS = [1.0, 0.5, -0.5, -0.05, -5.0, -1.0, -1.0, 0.5, -2e-4, -0.01, -1e-3, -0.1, -2.0, -0.2, 0.1, -1.0]
IMU = np.array([-0.01592, -0.06659, -0.00617])
Q0 = np.array([0.1, 0.9, -1.8, -0.1, 0.9, -1.8, 0.1, 0.9, -1.8, -0.1, 0.9, -1.8])


FEET = ["FR", "FL", "RR", "RL"]


def sensor(d, name):
    return d.sensor(name).data.copy()


def terms_of(cmd, linvel, gyro, glinvel, gangvel, up, qj, qd, tau, action, last_act, feet_vel, foot_z, contact,
             first, peak, air, done, lo, hi):
    """envs/go1_joystick.h's table (Playground's joystick.py), unweighted."""
    cn = np.linalg.norm(cmd)
    vxy = feet_vel[:, :2]
    vn2 = (vxy ** 2).sum(1)
    return np.array([
        np.exp(-((cmd[:2] - linvel[:2]) ** 2).sum() / 0.25),
        np.exp(-(cmd[2] - gyro[2]) ** 2 / 0.25),
        glinvel[2] ** 2,
        (gangvel[:2] ** 2).sum(),
        (up[:2] ** 2).sum(),
        np.abs(qj - Q0).sum() * (cn < 0.01),
        float(done),
        np.exp(-(((qj - Q0) ** 2) * np.array([1.0, 1.0, 0.1] * 4)).sum()),
        np.sqrt((tau ** 2).sum()) + np.abs(tau).sum(),
        ((action - last_act) ** 2).sum(),
        (np.abs(qd) * np.abs(tau)).sum(),
        (vn2 * contact).sum() * (cn > 0.01),
        (np.abs(foot_z - 0.1) * np.sqrt(np.sqrt(vn2))).sum(),
        (((peak / 0.1 - 1.0) ** 2) * first).sum() * (cn > 0.01),
        ((air - 0.1) * first).sum() * (cn > 0.01),
        (-np.minimum(qj - lo, 0.0) + np.maximum(qj - hi, 0.0)).sum(),
    ])


def mujoco_reference(qpos, qvel, commands, actions, iterations=100, ls_iterations=50):
    """Playground's step on MuJoCo 3 with a converged solver: per step obs, priv[48:119], terms, done."""
    import mujoco
    from pathlib import Path
    scene = Path(__file__).resolve().parents[1] / "data" / "go1" / "scene_mjx_feetonly_flat_terrain.xml"
    m = mujoco.MjModel.from_xml_path(str(scene))
    m.opt.iterations, m.opt.ls_iterations = iterations, ls_iterations
    lo, hi = 0.95 * m.jnt_range[1:, 0], 0.95 * m.jnt_range[1:, 1]
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:], d.ctrl[:] = qpos, qvel, Q0
    mujoco.mj_forward(m, d)
    imu = m.site("imu").id
    sites = [m.site(f).id for f in FEET]
    last_act, air, last_contact, peak = np.zeros(12), np.zeros(4), np.zeros(4, bool), np.zeros(4)
    out = []
    for cmd, a in zip(commands, actions):
        cmd, a = np.array(cmd), np.array(a)
        d.ctrl[:] = Q0 + 0.5 * a
        for _ in range(5):
            mujoco.mj_step(m, d)
        contact = np.array([sensor(d, f"{f}_floor_found")[0] > 0 for f in FEET])
        first = (air > 0) & (contact | last_contact)
        air = air + 0.02
        foot_z = d.site_xpos[sites, 2].copy()
        peak = np.maximum(peak, foot_z)
        linvel, gyro = sensor(d, "local_linvel"), sensor(d, "gyro")
        gravity = d.site_xmat[imu].reshape(3, 3).T @ np.array([0, 0, -1.0])
        qj, qd, tau = d.qpos[7:].copy(), d.qvel[6:].copy(), d.actuator_force.copy()
        feet_vel = np.array([sensor(d, f"{f}_global_linvel") for f in FEET])
        obs = np.concatenate([linvel, gyro, gravity, qj - Q0, qd, last_act, cmd])
        priv = np.concatenate([gyro, sensor(d, "accelerometer"), gravity, linvel, sensor(d, "global_angvel"),
                               qj - Q0, qd, tau, last_contact.astype(float), feet_vel.ravel(), air])
        up = sensor(d, "upvector")
        done = up[2] < 0
        t = terms_of(cmd, linvel, gyro, sensor(d, "global_linvel"), sensor(d, "global_angvel"), up, qj, qd, tau, a,
                     last_act, feet_vel, foot_z, contact, first, peak, air, done, lo, hi)
        out.append((obs, priv, t, done))
        last_act = a
        air = air * ~contact
        last_contact = contact
        peak = peak * ~contact
        if done:
            break
    return out


# Tolerances of check 3 (float32 against MuJoCo's float64, both converged), set from the worst error
# measured over the run (printed) with a margin of ~10x; a sign or formula slip is O(0.1..10).
TOL = {"obs": 5e-3, "priv": 1e-2, "term": 3e-3}
STEPS_MUJOCO = 25


def main():
    trace = sys.argv[1]
    episodes = 4
    steps = 10
    for k, a in enumerate(sys.argv):
        if a == "--episodes":
            episodes = int(sys.argv[k + 1])
        if a == "--steps":
            steps = int(sys.argv[k + 1])
    env = envpool.make("Go1JoystickFlatTerrain-v1", env_type="gymnasium", num_envs=1, noise_level=0.0, seed=7)
    rng = np.random.default_rng(5)
    failures = []
    worst = {}

    def note(name, err, limit=None, where=""):
        worst[name] = max(worst.get(name, 0.0), float(err))
        if limit is not None and not err <= limit:
            failures.append(f"{name}: {err:.3e} > {limit:.1e} {where}")

    n = max(steps, STEPS_MUJOCO)
    for ep in range(episodes):
        obs, info = env.reset()
        p0 = obs["privileged_state"][0]
        gyro, linvel = p0[48:51], p0[57:60]
        qpos = [0.0, 0.0, 0.278, 1.0, 0.0, 0.0, 0.0] + list(Q0 + p0[63:75])
        qvel = list(linvel - np.cross(gyro, IMU)) + list(gyro) + list(p0[75:87])
        acts = rng.uniform(-0.3, 0.3, size=(n, 12))
        peer = []
        cmd = obs["state"][0][45:48].copy()
        prev_priv, prev_act = p0, np.zeros(12)
        for t in range(n):
            cmd = obs["state"][0][45:48].copy()
            obs, rew, term, trunc, info = env.step(acts[t][None])
            o, pr = obs["state"][0], obs["privileged_state"][0]
            terms = np.array([float(info[f"reward_{k}"][0]) for k in TERMS])
            peer.append((cmd, o.copy(), pr.copy(), float(rew[0]), bool(term[0]), terms))
            # 2. the table's formulas on EnvPool's own state (the ones its privileged state determines)
            qj, qd, tau = Q0 + pr[63:75], pr[75:87], pr[87:99]
            w = np.array(WEIGHTS)
            ref = {
                "tracking_lin_vel": np.exp(-((cmd[:2] - pr[57:59]) ** 2).sum() / 0.25),
                "tracking_ang_vel": np.exp(-(cmd[2] - pr[50]) ** 2 / 0.25),
                "ang_vel_xy": (pr[60:62] ** 2).sum(),
                "stand_still": np.abs(qj - Q0).sum() * (np.linalg.norm(cmd) < 0.01),
                "termination": float(term[0]),
                "pose": np.exp(-(((qj - Q0) ** 2) * np.array([1.0, 1.0, 0.1] * 4)).sum()),
                "torques": np.sqrt((tau ** 2).sum()) + np.abs(tau).sum(),
                "action_rate": ((acts[t] - prev_act) ** 2).sum(),
                "energy": (np.abs(qd) * np.abs(tau)).sum(),
            }
            for k, name in enumerate(TERMS):
                if name in ref:
                    e = abs(w[k] * ref[name] - terms[k])
                    note(f"2. EnvPool term {name}", e, 1e-4 * max(1.0, abs(terms[k])), f"(episode {ep} step {t})")
            # the reward: clip(dt x sum, 0, 1e4)
            note("2. EnvPool reward = clip(0.02 sum)", abs(min(max(0.02 * terms.sum(), 0), 1e4) - rew[0]), 1e-5)
            prev_act = acts[t]
            if term[0] or trunc[0]:
                break
        req = {"qpos": qpos, "qvel": qvel, "commands": [p[0].tolist() for p in peer],
               "actions": acts[:len(peer)].tolist()}
        out = json.loads(subprocess.run([trace], input=json.dumps(req), capture_output=True, text=True,
                                        check=True).stdout)
        # 1. the start state
        e0 = np.abs(np.array(out["critic0"]) - p0)
        e0[51:54] = 0  # accelerometer: the solver's acceleration
        e0[60:62] = 0  # global angular velocity x, y: turned by EnvPool's yaw (ours is 0); |xy| compared below
        e0[103:115] = 0  # feet world velocities: turned by the yaw too; |xy| and z compared below
        note("1. start privileged state", e0.max(), 1e-4, f"(episode {ep}, index {int(e0.argmax())})")
        fo, fp = np.array(out["critic0"][103:115]).reshape(4, 3), p0[103:115].reshape(4, 3)
        note("1. start feet |v_xy|, v_z", max(np.abs(np.hypot(fo[:, 0], fo[:, 1]) - np.hypot(fp[:, 0], fp[:, 1])).max(),
                                            np.abs(fo[:, 2] - fp[:, 2]).max()), 1e-4)
        note("1. start |global angvel xy|",
             abs(np.hypot(*out["critic0"][60:62]) - np.hypot(*p0[60:62])), 1e-4)
        # 3. against converged MuJoCo
        ref = mujoco_reference(qpos, qvel, req["commands"][:STEPS_MUJOCO], req["actions"][:STEPS_MUJOCO])
        for t, (ro, rp, rt, rd) in enumerate(ref):
            st = out["steps"][t]
            note("3. MuJoCo obs", np.abs(np.array(st["obs"]) - ro).max(), TOL["obs"], f"(episode {ep} step {t})")
            note("3. MuJoCo priv 48-118", np.abs(np.array(st["critic"][48:119]) - rp).max(), TOL["priv"],
                 f"(episode {ep} step {t})")
            if bool(st["terminated"]) != bool(rd):
                failures.append(f"episode {ep} step {t}: terminated {st['terminated']} vs MuJoCo {rd}")
            if "terms" in st:
                e = np.abs(np.array(st["terms"]) - rt) / np.maximum(1.0, np.abs(rt))
                note("3. MuJoCo terms (relative)", e.max(), TOL["term"],
                     f"(episode {ep} step {t}, {TERMS[int(e.argmax())]})")
        # 4. against EnvPool (printed)
        for t, st in enumerate(out["steps"][:steps]):
            cmd, o, pr, r, te, terms = peer[t]
            note("4. EnvPool obs (printed only)", np.abs(np.array(st["obs"]) - o).max())
            note("4. EnvPool reward (printed only)", abs(st["reward"] - r))
            note("4. EnvPool last act, command", np.abs(np.array(st["obs"][33:48]) - o[33:48]).max(), 1e-6)
    print(f"go1_peer: {episodes} episodes against EnvPool {envpool.__version__} and MuJoCo {__import__('mujoco').__version__}")
    for name, err in worst.items():
        print(f"  {name:40s} worst {err:.3e}")
    return failures


if __name__ == "__main__":
    failures = main()
    for f in failures[:10]:
        print("MISMATCH:", f)
    print("FAIL" if failures else "PASS")
    sys.exit(1 if failures else 0)
