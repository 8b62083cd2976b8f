#!/usr/bin/env python3
"""Steps rltrain's go1_joystick or go1_joystick_rough (envs/go1_joystick.h) in lockstep with
EnvPool's Go1JoystickFlatTerrain-v1 / Go1JoystickRoughTerrain-v1 (a C++ port of MuJoCo Playground's
tasks on MuJoCo 3) and with MuJoCo 3 itself, both on the scenes vendored in envs/assets/go1/.

Usage: go1_peer.py PATH/TO/joystick_trace [--rough] [--episodes N] [--steps N]   (default: 4 episodes)

EnvPool runs with observation noise off (noise_level 0; it has no domain randomization and no kicks);
joystick_trace with noise and randomization off. EnvPool exposes no qpos/qvel, so each episode's start
state is rebuilt from EnvPool's first privileged observation: the home pose with joint angles from
the observation, the trunk's angular velocity = gyro and its linear velocity = the imu velocimeter
minus gyro x (imu offset), at a planar position and yaw of our own (a seeded draw from Playground's
reset ranges, x, y ~ U(-0.5, 0.5), yaw ~ U(-3.14, 3.14)). The start observation does not depend on
them: on the flat floor the task is invariant under planar translation and yaw, and on the rough
terrain the robot starts in the air (home pose at 0.35 m: the feet ~2 cm above the highest
terrain), so no contact sees where it is. After the start, the rough terrain under our robot is not
EnvPool's. The command of each step is EnvPool's (read off its observation); the actions are a fixed
seeded sequence of small random actions.

What can and cannot agree: Playground's scene runs MuJoCo's Newton solver with iterations=1,
ls_iterations=5, which stops before convergence, from MuJoCo's warm start. rltrain's env does the
same (the budget, the warm start and MuJoCo's line search, sim/constraints.h): on MuJoCo's own states
and warm starts within float's rounding of MuJoCo's answer (p99 ~1e-5; ctest newton_budget_peer).
But run as the scene sets it from our rebuilt start (warm start zero, as EnvPool's reset leaves it),
the first step's observation was already 0.03-0.6 from EnvPool's (8 episodes, twenty-third session),
and so was MuJoCo 3.17's own (the python package, iterations 1 and ls_iterations 5 as the file: 0.12-
0.41 on 4 episodes, where converged MuJoCo is 1.1-2.0 from it): the gap is between MuJoCo 3.17 and
EnvPool's build (its bundled MuJoCo's budgeted solve, or its model edits), not in our solver. So no
lockstep with EnvPool can be tight; checks 1 and 3 run joystick_trace with "converged" (the solve to
convergence, the task's code unchanged) against MuJoCo converged. The checks:
 1. EnvPool's start privileged state (a forward pass) against ours, to 1e-4, all but the
    accelerometer (it carries the solver's acceleration);
 2. the reward-term formulas of envs/go1_joystick.h's table, evaluated on EnvPool's own privileged
    states, against the terms EnvPool reports (1e-4 relative): both compute the same terms from the
    same quantities (tests/envs/test_go1_joystick.cpp checks our code against that table);
 3. against MuJoCo 3 itself with a converged solver (iterations 100, ls_iterations 50, the python
    `mujoco` package): (a) each control step alone, joystick_trace started from MuJoCo's state, the
    physical part of the privileged state (ONE_STEP_*); (b) the whole run from the same start
    state, commands and actions: the observation (Playground's, computed here from MuJoCo's data),
    the privileged state (with the task's contact and air-time state), each reward term and
    termination (TOL), until a threshold event (a foot landing or slipping in one substep and not
    the other) takes the run away: such runs are counted, at most DIVERGED_MAX of the episodes;
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


def scene_path(rough):
    from pathlib import Path
    terrain = "rough" if rough else "flat"
    return Path(__file__).resolve().parents[2] / "envs" / "assets" / "go1" / f"scene_mjx_feetonly_{terrain}_terrain.xml"


def mujoco_reference(rough, qpos, qvel, commands, actions, iterations=100, ls_iterations=50):
    """Playground's step on MuJoCo 3 with a converged solver: per step obs, priv[48:119], terms, done, and
    the state (qpos, qvel) the step started from."""
    import mujoco
    m = mujoco.MjModel.from_xml_path(str(scene_path(rough)))
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
        start = (d.qpos.copy(), d.qvel.copy())
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
        out.append((obs, priv, t, done, start))
        last_act = a
        air = air * ~contact
        last_contact = contact
        peak = peak * ~contact
        if done:
            break
    return out


# Tolerances of check 3 (float32 against MuJoCo's float64, both converged), set from the worst error
# measured (printed) over 32 episodes with a margin; a sign or formula slip is O(0.1..10).
# One control step from MuJoCo's state, |ours - MuJoCo| - rtol |MuJoCo| <= atol: flat worst 2.6e-4;
# rough worst 5.0e-3 (a joint velocity). The rough terrain's larger figure is the contacts: where a
# foot touches several of the height field's prisms, their points and normals come from our EPA,
# not MuJoCo's nativeccd (sim/hfield.h), and differ (in double, rltrain rollout against MuJoCo from
# the same state: one substep 1e-9 on most steps, up to ~2e-4 where a foot sinks onto prism walls).
ONE_STEP_RTOL = 1e-3
ONE_STEP_ATOL = {False: 2e-3, True: 2e-2}
# The runs (check 3's second part), compared until a step exceeds TOL: worst obs 8.4e-4 flat, 7.3e-3
# rough; priv 2.1e-3, 1.6e-2; terms 3.6e-4, 3.8e-3 (relative). The default 4 episodes: 6.4e-4 and
# 3.7e-4 obs, 2.1e-3 and 7.1e-4 priv, 2.9e-4 and 1.1e-4 terms.
TOL = {"obs": 1e-2, "priv": 2e-2, "term": 5e-3}
# Runs that leave MuJoCo's at a threshold event, as a fraction of the episodes: 1 of 32 flat (episode
# 16 step 8: a calf's velocity 0.47 rad/s off in one step, while that step from MuJoCo's own state
# agrees to 1.4e-4), 3 of 32 rough; none of the default 4 on either.
DIVERGED_MAX = 0.25
STEPS_MUJOCO = 25
HOME_Z = {False: 0.278, True: 0.35}  # keyframe "home" of the flat and rough scenes


def main():
    trace = sys.argv[1]
    episodes = 4
    steps = 10
    rough = "--rough" in sys.argv
    for k, a in enumerate(sys.argv):
        if a == "--episodes":
            episodes = int(sys.argv[k + 1])
        if a == "--steps":
            steps = int(sys.argv[k + 1])
    peer_name = "Go1JoystickRoughTerrain-v1" if rough else "Go1JoystickFlatTerrain-v1"
    env = envpool.make(peer_name, env_type="gymnasium", num_envs=1, noise_level=0.0, seed=7)
    rng = np.random.default_rng(5)
    failures = []
    diverged = []
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
        x, y = rng.uniform(-0.5, 0.5, 2)
        yaw = rng.uniform(-3.14, 3.14)
        c, s = np.cos(yaw), np.sin(yaw)
        qpos = [x, y, HOME_Z[rough], np.cos(0.5 * yaw), 0.0, 0.0, np.sin(0.5 * yaw)] + list(Q0 + p0[63:75])
        v_body = linvel - np.cross(gyro, IMU)  # the trunk origin's velocity, trunk frame (= imu frame)
        v_world = [c * v_body[0] - s * v_body[1], s * v_body[0] + c * v_body[1], v_body[2]]
        qvel = v_world + list(gyro) + list(p0[75:87])
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
        req = {"converged": True, "task": "go1_joystick_rough" if rough else "go1_joystick", "qpos": qpos, "qvel": qvel,
               "commands": [p[0].tolist() for p in peer],
               "actions": acts[:len(peer)].tolist()}
        out = json.loads(subprocess.run([trace], input=json.dumps(req), capture_output=True, text=True,
                                        check=True).stdout)
        # 1. the start state
        e0 = np.abs(np.array(out["critic0"]) - p0)
        e0[51:54] = 0  # accelerometer: the solver's acceleration
        e0[60:62] = 0  # global angular velocity x, y: turned by the yaw (EnvPool's, ours); |xy| compared below
        e0[103:115] = 0  # feet world velocities: turned by the yaw too; |xy| and z compared below
        note("1. start privileged state", e0.max(), 1e-4, f"(episode {ep}, index {int(e0.argmax())})")
        fo, fp = np.array(out["critic0"][103:115]).reshape(4, 3), p0[103:115].reshape(4, 3)
        note("1. start feet |v_xy|, v_z", max(np.abs(np.hypot(fo[:, 0], fo[:, 1]) - np.hypot(fp[:, 0], fp[:, 1])).max(),
                                            np.abs(fo[:, 2] - fp[:, 2]).max()), 1e-4)
        note("1. start |global angvel xy|",
             abs(np.hypot(*out["critic0"][60:62]) - np.hypot(*p0[60:62])), 1e-4)
        # 3. against converged MuJoCo. Each control step alone, from MuJoCo's state at its start: the
        # physical part of the privileged state (48-98: sensors, joints, actuator forces; 103-114: feet
        # velocities), |ours - MuJoCo| <= atol + rtol |MuJoCo| ...
        ref = mujoco_reference(rough, qpos, qvel, req["commands"][:STEPS_MUJOCO], req["actions"][:STEPS_MUJOCO])
        one = [{"converged": True, "task": req["task"], "qpos": start[0].tolist(), "qvel": start[1].tolist(),
                "commands": [req["commands"][t]], "actions": [req["actions"][t]]}
               for t, (_, _, _, _, start) in enumerate(ref)]
        replies = json.loads(subprocess.run([trace], input=json.dumps(one), capture_output=True, text=True,
                                            check=True).stdout)
        phys = np.r_[0:51, 55:67]  # of priv[48:119]
        for t, (rep, (_, rp, _, _, _)) in enumerate(zip(replies, ref)):
            got, want = np.array(rep["steps"][0]["critic"][48:119])[phys], rp[phys]
            e = np.abs(got - want) - ONE_STEP_RTOL * np.abs(want)
            note("3. MuJoCo one step, priv physics", e.max(), ONE_STEP_ATOL[rough],
                 f"(episode {ep} step {t}, index {48 + int(phys[e.argmax()])})")
        # ... and the whole run from the same start: the observation, the privileged state (with the task's
        # contact, air-time and feet state), each reward term and termination. A run may leave MuJoCo's at
        # a threshold event (a foot landing or a stick-slip change in one substep and not the other, from
        # the float32-sized state difference a run builds up): then the rest of that episode is not
        # compared, and the episode counts as diverged (at most DIVERGED_MAX of them).
        for t, (ro, rp, rt, rd, _) in enumerate(ref):
            st = out["steps"][t]
            e_obs = np.abs(np.array(st["obs"]) - ro).max()
            e_priv = np.abs(np.array(st["critic"][48:119]) - rp).max()
            e_term = (np.abs(np.array(st["terms"]) - rt) / np.maximum(1.0, np.abs(rt))) if "terms" in st else np.zeros(1)
            if e_obs > TOL["obs"] or e_priv > TOL["priv"] or e_term.max() > TOL["term"]:
                diverged.append(f"episode {ep} step {t}: obs {e_obs:.1e}, priv {e_priv:.1e}, terms {e_term.max():.1e}")
                break
            note("3. MuJoCo obs", e_obs)
            note("3. MuJoCo priv 48-118", e_priv)
            note("3. MuJoCo terms (relative)", e_term.max())
            if bool(st["terminated"]) != bool(rd):
                failures.append(f"episode {ep} step {t}: terminated {st['terminated']} vs MuJoCo {rd}")
        # 4. against EnvPool (printed)
        for t, st in enumerate(out["steps"][:steps]):
            cmd, o, pr, r, te, terms = peer[t]
            note("4. EnvPool obs (printed only)", np.abs(np.array(st["obs"]) - o).max())
            note("4. EnvPool reward (printed only)", abs(st["reward"] - r))
            note("4. EnvPool last act, command", np.abs(np.array(st["obs"][33:48]) - o[33:48]).max(), 1e-6)
    print(f"go1_peer: {'rough' if rough else 'flat'} terrain, {episodes} episodes against EnvPool {envpool.__version__} and MuJoCo {__import__('mujoco').__version__}")
    for name, err in worst.items():
        print(f"  {name:40s} worst {err:.3e}")
    print(f"  runs that left MuJoCo's at a threshold event: {len(diverged)} of {episodes} (at most {DIVERGED_MAX * episodes:.0f})")
    for d in diverged:
        print(f"    {d}")
    if len(diverged) > DIVERGED_MAX * episodes:
        failures.append(f"{len(diverged)} of {episodes} runs left MuJoCo's")
    return failures


if __name__ == "__main__":
    failures = main()
    for f in failures[:10]:
        print("MISMATCH:", f)
    print("FAIL" if failures else "PASS")
    sys.exit(1 if failures else 0)
