#!/usr/bin/env python3
"""Peer test: one MJCF file in MuJoCo 3 (the `mujoco` wheel) and in `rltrain rollout`.

Usage:
  mujoco_peer.py MODEL.xml RLTRAIN [--steps N] [--key NAME] [--ctrl zero,random] [--seed S] [--mocap FILE]
                 [--substeps K] [--factor F] [--atol A] [--nudges K] [--contacts TOL [--print-contacts]]
                 [--json] [--no-check]

For each start (qpos0, or the keyframe --key) and each control mode (zero; random):
  1. compiled sizes: nq, nv and the joints (names, in order) that rltrain's CSV header implies,
     against MuJoCo's compiled model;
  2. the trajectory: `rltrain rollout` (CSV: time, qpos, qvel, ctrl, ncon per control step) and MuJoCo's
     mj_step loop from the same state and controls, over N control steps;
  3. MuJoCo's own sensitivity: MuJoCo again from qpos + each of --nudges (32) perturbations (each
     coordinate uniform in +-1e-9, seeded, quaternions renormalised; stepped by mujoco.rollout, bit
     for bit the mj_step loop), compared with its unperturbed run: at each step the largest spread
     of the 32. They are drawn 1, then 1, 2, 4, 8, 16 more while the run is outside the bound (the bound
     only grows with them, so the verdict is that of all 32; --all-nudges draws all 32 for the report). One nudge is not enough where a contact switches on the last bit (a foot on a height
     field, a sphere resting exactly on a plane): how far MuJoCo goes then depends on the direction
     of the nudge, and a single direction can leave the contact as it was, measuring 1e-7 where
     others measure 0.06 (G1's rough terrain, step 14 from home). The first nudge is the one the
     check drew when it drew one, so the envelope only grows with their number.
Before the trajectories, the compiled model and one forward pass at each start (the JSON of
`rltrain inspect`, written by the same `rltrain rollout --inspect`: one rltrain process and one
compile per file, which MuJoCo also compiles once):
  0. compiled: sizes (nq nv nbody njnt ngeom nsite nu neq nsensordata) equal; body masses, inertia
     tensors in the body frame, principal moments, centres of mass, body, geom and site positions,
     primitive geom sizes, dof damping and armature, joint stiffness and limits, body and dof
     inverse weights within 1e-6 relative (max |rltrain - MuJoCo| over max(max |MuJoCo|, a floor));
     body_iquat (bodies of distinct principal moments), geom_quat and site_quat within 1e-6 (q or
     -q: MuJoCo's principal axes, in its order and signs); body, geom and site sameframe flags equal (the count that differ);
     forward (at qpos0 and at each keyframe checked, its ctrl held, as mj_forward): body and com
     positions, qfrc_bias, qfrc_passive, actuator_force, qfrc_actuator, qacc_smooth,
     qfrc_constraint, qacc and sensordata within 1e-6 relative (floor 1e-3); with --contacts TOL,
     also the contact sets of those forward passes (`rltrain inspect`'s "contact": the contacts
     that act, with MuJoCo's dist): the same count, and each MuJoCo contact matched to the
     nearest of rltrain's for the same geom pair, point, normal and dist within TOL absolute
     (--print-contacts lists both sets).
The error of rltrain against MuJoCo is then judged against that sensitivity: at every step,
    |rltrain - mujoco| <= F * max_k |mujoco(qpos0 + nudge_k) - mujoco| + A   (per qpos and per qvel, max norm)
with F = 10 and A = 1e-6 by default (A covers the first steps, where the perturbed runs have not yet
drifted). Also reported: the first step's implied acceleration ((qvel1 - qvel0) / dt) error relative
to max(|qacc|, 1), how many steps the contact counts differ, and the largest err/tolerance (1 = on
the bound) and its step.

Controls: zero holds the keyframe's ctrl (or 0), as `rltrain rollout --ctrl zero` does. Random
controls are Philox-keyed inside rltrain. If the CSV carries the controls (columns named
`ctrl_<actuator>`, the proposed rollout addition), MuJoCo replays them; otherwise MuJoCo replays
a Python twin of rltrain's random_ctrl (sim/actuators.h, sim/philox.h: Philox4x32-10, stream
kAction, counter (env 0, control step, 0, k), uniform with 24 bits in each actuator's ctrlrange,
[-1, 1] where not ctrllimited), which the report marks as "twin".

Mocap bodies: rltrain's CSV carries the mocap poses held during each step (`mocap_<body>_x ... _qz`:
the start's, or those of a `--mocap FILE` script, passed on to `rltrain rollout --mocap`); MuJoCo
replays them (d.mocap_pos, d.mocap_quat before each step; in the nudged runs as mujoco.rollout
controls with control_spec CTRL | MOCAP_POS | MOCAP_QUAT). Compiled: nmocap, body_mocapid,
key_mpos and key_mquat are compared too.

`mujoco_peer.py corpus RLTRAIN [--allow-refusal] [--groups ...] [--shard K/N]` runs the same check on
every file of the MJCF corpus (tools/mjcf_corpus.py; exit 77 when its packages are missing), or on
the K-th of N shards (ctest runs the corpus as N such tests, on all cores): whole robots (the files
that share a mesh folder), dealt largest first by an estimate of their cost; one process checks a
shard's files robot by robot, and MuJoCo's asset cache keeps a robot's decoded meshes for its
files (MuJoCo compiles the 87 files in 13 CPU-s so, 33 without: a full cache takes no more, so it
is emptied when the next robot starts). The Menagerie files of
tools/mesh_polygons_peer.py's corpus set also get its mesh-polygon check, from the same compiles.
With --allow-refusal a file that rltrain refuses is listed instead of failed (the state until
issue 16 is done: drop the flag then).

Exit status: 0 agree within the tolerance (or --no-check), 1 a mismatch, 2 rltrain (or MuJoCo)
refused a model, 77 `mujoco`/`numpy` not importable or the corpus missing (the check is skipped).
MuJoCo writes MUJOCO_LOG.TXT into the working directory on warnings: this runs in a temp dir.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import mujoco
    import mujoco.rollout
except Exception as e:  # ImportError, or a broken install
    print(f"SKIP: cannot import mujoco/numpy ({e!r}); `pip install mujoco` to run this peer test")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mesh_polygons_peer import DEFAULT_CORPUS as MESH_POLYGON_FILES  # noqa: E402
from mesh_polygons_peer import MESH_FIELDS  # noqa: E402
from mesh_polygons_peer import compare_meshes as compare_mesh_polygons  # noqa: E402

PERTURBATION = 1e-9
NUDGES = 32         # independent 1e-9 perturbations; MuJoCo's sensitivity is the largest spread among them
NUDGE_SEED = 12345  # their generator's seed (the first is the single nudge of the check before there were 8)
MUJOCO_CACHE_BYTES = 1 << 30  # MuJoCo's asset cache: the largest robot (Apollo) fills 520 MB

# ---------------------------------------------------------------------------------------------
# rltrain's random controls, twinned (sim/philox.h, sim/actuators.h)

_M32 = 0xFFFFFFFF


def philox4x32_10(ctr, k0, k1):
    c0, c1, c2, c3 = ctr
    for _ in range(10):
        p0 = 0xD2511F53 * c0
        p1 = 0xCD9E8D57 * c2
        hi0, lo0 = p0 >> 32, p0 & _M32
        hi1, lo1 = p1 >> 32, p1 & _M32
        c0, c1, c2, c3 = (hi1 ^ c1 ^ k0) & _M32, lo1, (hi0 ^ c3 ^ k1) & _M32, lo0
        k0 = (k0 + 0x9E3779B9) & _M32
        k1 = (k1 + 0xBB67AE85) & _M32
    return c0, c1, c2, c3


# Random123's known answer (also tests/sim/test_philox.cpp): the twin is checked before it is used.
assert philox4x32_10((0, 0, 0, 0), 0, 0) == (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)

K_ACTION = 4  # RngStream::kAction


def random_ctrl(ctrl_range, seed: int, env: int, step: int):
    """rltrain's random_ctrl(range, nu, seed, env, step) in double."""
    nu = len(ctrl_range)
    k0 = seed & _M32
    k1 = ((seed >> 32) ^ ((K_ACTION * 0x9E3779B9) & _M32)) & _M32
    out = np.zeros(nu)
    ctr3 = 0
    for u in range(0, nu, 4):
        bits = philox4x32_10((env & _M32, step & _M32, 0, ctr3), k0, k1)
        ctr3 += 1
        for k in range(4):
            if u + k < nu:
                lo, hi = ctrl_range[u + k]
                out[u + k] = lo + (hi - lo) * ((bits[k] >> 8) * (1.0 / 16777216.0))
    return out


def ctrl_sample_range(m):
    """As rltrain's ctrl_sample_range: ctrlrange where ctrllimited, else [-1, 1]."""
    r = []
    for u in range(m.nu):
        lim = bool(m.actuator_ctrllimited[u])
        r.append(tuple(m.actuator_ctrlrange[u]) if lim else (-1.0, 1.0))
    return r


# ---------------------------------------------------------------------------------------------
# The two simulators


def joint_columns(m):
    """rltrain's CSV columns for MuJoCo's compiled model (apps/rollout.cpp rollout_columns)."""
    pos, vel = [], []
    for j in range(m.njnt):
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint{j}"
        t = m.jnt_type[j]
        if t == mujoco.mjtJoint.mjJNT_FREE:
            pos += [name + s for s in ("_x", "_y", "_z", "_qw", "_qx", "_qy", "_qz")]
            vel += [name + s for s in ("_vx", "_vy", "_vz", "_wx", "_wy", "_wz")]
        elif t == mujoco.mjtJoint.mjJNT_BALL:
            pos += [name + s for s in ("_qw", "_qx", "_qy", "_qz")]
            vel += [name + s for s in ("_wx", "_wy", "_wz")]
        else:
            pos.append(name)
            vel.append(name + "_v")
    return pos, vel


def run_rltrain(rltrain, model, keys, modes, steps, seed, substeps, fields, workdir, mocap=None):
    """One `rltrain rollout` for every start and control mode of a model (one compile): ({key:
    inspect JSON}, {(key, mode): (CSV header, rows)}), or (None, rltrain's first error line).
    keys: start names ('qpos0' or a keyframe); fields: the "model" arrays of the inspect JSON."""
    cmd = [rltrain, "rollout", "--model", model, "--steps", str(steps), "--seed", str(seed),
           "--substeps", str(substeps), "--ctrl", ",".join(modes),
           "--out", os.path.join(workdir, "rl_{key}_{ctrl}.csv"),
           "--inspect", os.path.join(workdir, "inspect_{key}.json"), "--fields", ",".join(fields)]
    for k in keys:
        cmd += ["--key", k]
    if mocap:
        cmd += ["--mocap", mocap]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=workdir, timeout=600)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[0]
    inspect, runs = {}, {}
    for k in keys:
        with open(os.path.join(workdir, f"inspect_{k}.json")) as f:
            inspect[k] = json.load(f)
        for mode in modes:
            path = os.path.join(workdir, f"rl_{k}_{mode}.csv")
            with open(path) as f:
                header = f.readline().strip().split(",")
            runs[(k, mode)] = (header, np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2))
    return (inspect, runs), r.stderr.strip()


def _start(m, d, key_id):
    if key_id >= 0:
        mujoco.mj_resetDataKeyframe(m, d, key_id)
    else:
        mujoco.mj_resetData(m, d)


def run_mujoco(m, key_id, steps, substeps, ctrls, mocaps=None):
    """States (steps+1) x (1 + nq + nv) and contact counts (steps) of MuJoCo's loop. mocaps: None, or
    (steps x 7 nmocap) rows of rltrain's CSV (per mocap body x y z qw qx qy qz, held during the step)."""
    d = mujoco.MjData(m)
    _start(m, d, key_id)
    nq, nv = m.nq, m.nv
    states = np.empty((steps + 1, 1 + nq + nv))
    ncon = np.empty(steps, dtype=int)
    states[0, 0], states[0, 1:1 + nq], states[0, 1 + nq:] = d.time, d.qpos, d.qvel
    for t in range(steps):
        if ctrls is not None:
            d.ctrl[:] = ctrls[t]
        if mocaps is not None:
            per_body = mocaps[t].reshape(m.nmocap, 7)
            d.mocap_pos[:], d.mocap_quat[:] = per_body[:, :3], per_body[:, 3:]
        for _ in range(substeps):
            mujoco.mj_step(m, d)
        states[t + 1, 0], states[t + 1, 1:1 + nq], states[t + 1, 1 + nq:] = d.time, d.qpos, d.qvel
        ncon[t] = d.ncon
    return states, ncon


def nudges(nq, count=NUDGES):
    """(count x nq): each coordinate uniform in +-PERTURBATION, from NUDGE_SEED (row-major, so the
    first row is the single nudge the check drew before it drew several, and a larger count only
    adds rows)."""
    return np.random.default_rng(NUDGE_SEED).uniform(-PERTURBATION, PERTURBATION, (count, nq))


def run_mujoco_nudged(m, key_id, steps, substeps, ctrls, dqpos, mocaps=None):
    """MuJoCo from the start with qpos + each row of dqpos (quaternions renormalised), as
    run_mujoco's states: (len(dqpos) x steps+1 x 1+nq+nv). mujoco.rollout steps them in C with
    mj_step, bit for bit the loop of run_mujoco (same start, controls and zero warm start)."""
    d = mujoco.MjData(m)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    init = np.empty((len(dqpos), mujoco.mj_stateSize(m, spec)))
    for k, dq in enumerate(dqpos):
        _start(m, d, key_id)
        d.qpos[:] += dq
        mujoco.mj_normalizeQuat(m, d.qpos)
        mujoco.mj_getState(m, d, init[k], spec)
    held = np.array(d.ctrl)  # the start's ctrl (the keyframe's, or 0)
    ctrl = np.repeat(ctrls if ctrls is not None else held[None, :], substeps if ctrls is not None else 1, axis=0)
    control, control_spec = (ctrl[None] if m.nu else None), mujoco.mjtState.mjSTATE_CTRL
    if mocaps is not None and steps:
        # the mocap poses as controls (mujoco.rollout's control_spec: ctrl, then mocap_pos, mocap_quat),
        # each control step's repeated over its substeps, the ctrl held where it is not given
        per_body = mocaps.reshape(steps, m.nmocap, 7)
        ctrl_steps = ctrls if ctrls is not None else np.repeat(held[None, :], steps, axis=0)
        control = np.repeat(np.concatenate((ctrl_steps.reshape(steps, m.nu), per_body[:, :, :3].reshape(steps, -1),
                                            per_body[:, :, 3:].reshape(steps, -1)), axis=1), substeps, axis=0)[None]
        control_spec = (mujoco.mjtState.mjSTATE_CTRL | mujoco.mjtState.mjSTATE_MOCAP_POS
                        | mujoco.mjtState.mjSTATE_MOCAP_QUAT)
    n = 1 + m.nq + m.nv
    out = np.empty((len(dqpos), steps + 1, n))
    out[:, 0] = init[:, :n]  # mjSTATE_FULLPHYSICS starts with time, qpos, qvel
    if steps:
        state, _ = mujoco.rollout.rollout(m, d, init, control, control_spec=control_spec, nstep=steps * substeps)
        out[:, 1:] = state[:, substeps - 1::substeps, :n]
    return out


def compare(m, header, rl, mj, mj_pert, rl_ncon, mj_ncon, factor, atol):
    nq, nv = m.nq, m.nv
    q = slice(1, 1 + nq)
    v = slice(1 + nq, 1 + nq + nv)
    err_q = np.max(np.abs(rl[:, q] - mj[:, q]), axis=1) if nq else np.zeros(len(rl))
    err_v = np.max(np.abs(rl[:, v] - mj[:, v]), axis=1) if nv else np.zeros(len(rl))
    # MuJoCo's own spread at each step: the largest over the nudged runs (mj_pert: K x steps+1 x ...)
    sen_q = np.max(np.abs(mj_pert[:, :, q] - mj[None, :, q]), axis=(0, 2)) if nq else np.zeros(len(rl))
    sen_v = np.max(np.abs(mj_pert[:, :, v] - mj[None, :, v]), axis=(0, 2)) if nv else np.zeros(len(rl))
    tol_q = factor * sen_q + atol
    tol_v = factor * sen_v + atol
    bad = np.nonzero((err_q > tol_q) | (err_v > tol_v))[0]
    # how close the run comes to its bound (1 = on it), and where
    margin = np.maximum(err_q / tol_q, err_v / tol_v)
    h = m.opt.timestep
    res = {
        "steps": len(rl) - 1,
        "time_max_diff": float(np.max(np.abs(rl[:, 0] - mj[:, 0]))),
        "max_err_qpos": float(err_q.max()), "max_err_qvel": float(err_v.max()),
        "max_sens_qpos": float(sen_q.max()), "max_sens_qvel": float(sen_v.max()),
        "at": {},
        "first_bad_step": int(bad[0]) if len(bad) else None,
        "bad_steps": int(len(bad)),
        "worst_ratio": float(margin.max()), "worst_ratio_step": int(margin.argmax()),
        "ncon_mismatch_steps": int(np.sum(rl_ncon != mj_ncon)) if rl_ncon is not None else None,
    }
    for k in sorted({1, 10, len(rl) - 1}):
        if k < len(rl):
            res["at"][k] = {"err_qpos": float(err_q[k]), "err_qvel": float(err_v[k]),
                            "sens_qpos": float(sen_q[k]), "sens_qvel": float(sen_v[k])}
    if len(rl) > 1 and nv:
        sub = 1  # implied acceleration over the first control step
        acc_rl = (rl[1, v] - rl[0, v]) / (h * sub)
        acc_mj = (mj[1, v] - mj[0, v]) / (h * sub)
        res["step1_qacc_rel_err"] = float(np.max(np.abs(acc_rl - acc_mj) / np.maximum(np.abs(acc_mj), 1.0)))
    return res


def _rel(a, b, floor):
    """max |a - b| relative to max(max |b|, floor); inf when the shapes differ."""
    a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if a.shape != b.shape:
        return float("inf")
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), floor))


def _quat_err(a, b):
    """max over rows of min(max |a - b|, max |a + b|) for (n x 4) quaternions; inf when the shapes differ."""
    a, b = np.asarray(a, dtype=float).reshape(-1, 4), np.asarray(b, dtype=float).reshape(-1, 4)
    if a.shape != b.shape:
        return float("inf")
    if a.size == 0:
        return 0.0
    return float(np.max(np.minimum(np.abs(a - b).max(axis=1), np.abs(a + b).max(axis=1))))


def _quat_mat(q):
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


COMPILED_RTOL = 1e-6  # the bound for compiled quantities and one forward pass, in double
# The arrays of rltrain inspect's "model" that compare_compiled reads (rltrain writes only these:
# a Menagerie robot's whole model is 40-100 MB of JSON, mostly its meshes).
COMPILED_FIELDS = ("body_mass", "body_inertia", "body_iquat", "body_ipos", "body_pos", "geom_pos", "geom_quat",
                   "geom_size", "site_pos", "site_quat", "body_sameframe", "geom_sameframe", "site_sameframe",
                   "dof_damping", "dof_armature", "jnt_stiffness", "jnt_range", "body_invweight0",
                   "body_invweight0_rot", "dof_invweight0", "actuator_kind", "actuator_gainprm", "actuator_biasprm",
                   "actuator_dynprm", "actuator_acc0", "actuator_lengthrange", "body_mocapid", "key_mpos",
                   "key_mquat")
PRIMITIVES = (2, 3, 4, 5, 6)  # sphere, capsule, ellipsoid, cylinder, box: geom_size comparable


def compare_compiled(m, ins):
    """Compiled sizes, masses, inertias (as tensors in the body frame, and the principal moments and
    axes as MuJoCo orders and signs them), centres of mass, geom and site placement, the sameframe
    flags (a count of those that differ), geom sizes, joint and dof parameters, and the inverse
    weights, each as a relative error against MuJoCo's (0 = equal)."""
    sizes = ins["sizes"]
    res = {"sizes": {k: [sizes[k], int(getattr(m, k))] for k in
                     ("nq", "nv", "nbody", "njnt", "ngeom", "nsite", "nu", "neq", "nsensordata", "nmocap")
                     if sizes.get(k, 0) != int(getattr(m, k))}}
    if res["sizes"]:
        res["pass"] = False
        return res
    mod = ins["model"]
    err = {}
    nb = m.nbody
    err["body_mass"] = _rel(mod["body_mass"], m.body_mass, 1e-9)
    rl_i = np.array(mod["body_inertia"]).reshape(nb, 3)
    rl_q = np.array(mod["body_iquat"]).reshape(nb, 4)
    tens_rl = [_quat_mat(rl_q[b]) @ np.diag(rl_i[b]) @ _quat_mat(rl_q[b]).T for b in range(nb)]
    tens_mj = [_quat_mat(m.body_iquat[b]) @ np.diag(m.body_inertia[b]) @ _quat_mat(m.body_iquat[b]).T for b in range(nb)]
    err["body_inertia_tensor"] = max((_rel(tens_rl[b], tens_mj[b], 1e-12) for b in range(1, nb)), default=0.0)
    err["body_ipos"] = _rel(mod["body_ipos"], m.body_ipos, 1e-3)
    err["body_pos"] = _rel(mod["body_pos"], m.body_pos, 1e-3)
    err["geom_pos"] = _rel(mod["geom_pos"], m.geom_pos, 1e-3)
    # The frames themselves, as MuJoCo's compiler chooses them (its eigen solver's axis order and
    # signs; q and -q are one rotation), and the sameframe flags with which kinematics copies a body's
    # or its inertial frame's pose: each flag that differs counts 1.
    # (bodies with two principal moments within 1e-9 of each other are left to the tensor above: the
    # axes in their plane follow the last bits of the geoms' inertias, and a capsule's mass is not yet
    # MuJoCo's to the last bit, sim/mjcf_inertia.cpp)
    inert = m.body_inertia
    spread = np.minimum(np.minimum(np.abs(inert[:, 0] - inert[:, 1]), np.abs(inert[:, 1] - inert[:, 2])),
                        np.abs(inert[:, 0] - inert[:, 2]))
    distinct = spread > 1e-9 * np.maximum(np.abs(inert).max(axis=1), 1e-300)
    err["body_iquat"] = _quat_err(np.array(mod["body_iquat"]).reshape(-1, 4)[distinct], m.body_iquat[distinct])
    err["body_inertia"] = _rel(mod["body_inertia"], m.body_inertia, 1e-12)
    err["geom_quat"] = _quat_err(mod["geom_quat"], m.geom_quat)
    if m.nsite:
        err["site_pos"] = _rel(mod["site_pos"], m.site_pos, 1e-3)
        err["site_quat"] = _quat_err(mod["site_quat"], m.site_quat)
    for f in ("body_sameframe", "geom_sameframe", "site_sameframe"):
        if mod.get(f) is not None and getattr(m, f).size:
            ours, theirs = np.asarray(mod[f]).ravel(), getattr(m, f).ravel()
            err[f] = float(np.count_nonzero(ours != theirs)) if ours.shape == theirs.shape else float("inf")
    prim = [g for g in range(m.ngeom) if m.geom_type[g] in PRIMITIVES]
    err["geom_size"] = _rel(np.array(mod["geom_size"]).reshape(-1, 3)[prim], m.geom_size[prim], 1e-3) if prim else 0.0
    # <flag damper/spring="disable">: MuJoCo keeps the values and skips them at run time; rltrain's
    # compiler folds the flag in (zeros), so the effective values are compared.
    damper_off = bool(m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_DAMPER)
    spring_off = bool(m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_SPRING)
    err["dof_damping"] = _rel(mod["dof_damping"], 0 * m.dof_damping if damper_off else m.dof_damping, 1e-9)
    err["dof_armature"] = _rel(mod["dof_armature"], m.dof_armature, 1e-9)
    err["jnt_stiffness"] = _rel(mod["jnt_stiffness"], 0 * m.jnt_stiffness if spring_off else m.jnt_stiffness, 1e-9)
    lim = [j for j in range(m.njnt) if m.jnt_limited[j]]
    if lim and mod.get("jnt_range"):
        err["jnt_range"] = _rel(np.array(mod["jnt_range"]).reshape(-1, 2)[lim], m.jnt_range[lim], 1e-3)
    err["body_invweight0"] = _rel(mod["body_invweight0"], m.body_invweight0[:, 0], 1e-9)
    if "body_invweight0_rot" in mod:  # (the rotational column: weld rows' diagApprox)
        err["body_invweight0_rot"] = _rel(mod["body_invweight0_rot"], m.body_invweight0[:, 1], 1e-9)
    err["dof_invweight0"] = _rel(mod["dof_invweight0"], m.dof_invweight0, 1e-9)
    # Actuators of MuJoCo's general form: their gain, bias and dynamics parameters (rltrain keeps 10,
    # 10 and 3 of them), actuator_acc0 (mj_setConst) and actuator_lengthrange (a muscle's: given,
    # from a limit, or from the compile-time simulation, sim/mjcf_lengthrange.cpp).
    gen = [u for u in range(m.nu) if mod.get("actuator_kind") and mod["actuator_kind"][u] == 3]
    if gen and mod.get("actuator_gainprm"):
        ngain = len(mod["actuator_gainprm"]) // m.nu
        ndyn = len(mod["actuator_dynprm"]) // m.nu
        for f, n in (("actuator_gainprm", ngain), ("actuator_biasprm", ngain), ("actuator_dynprm", ndyn)):
            err[f] = _rel(np.array(mod[f]).reshape(m.nu, n)[gen], getattr(m, f)[gen, :n], 1e-9)
    if mod.get("actuator_acc0"):
        err["actuator_acc0"] = _rel(mod["actuator_acc0"], m.actuator_acc0, 1e-9)
    if mod.get("actuator_lengthrange"):
        err["actuator_lengthrange"] = _rel(np.array(mod["actuator_lengthrange"]).reshape(-1, 2),
                                           m.actuator_lengthrange, 1e-6)
    # Mocap bodies: which bodies (a count of the ids that differ), and the keyframes' mpos, mquat
    # (MuJoCo's defaults, the body's pose, where a keyframe leaves them out; mquat normalized).
    if m.nmocap:
        ours = np.asarray(mod.get("body_mocapid") or [], dtype=int).ravel()
        err["body_mocapid"] = float(np.count_nonzero(ours != m.body_mocapid)) if ours.shape == m.body_mocapid.shape else float("inf")
        if m.nkey:
            err["key_mpos"] = _rel(mod.get("key_mpos", []), m.key_mpos, 1e-3) if len(mod.get("key_mpos", [])) == m.key_mpos.size else float("inf")
            err["key_mquat"] = _rel(mod.get("key_mquat", []), m.key_mquat, 1) if len(mod.get("key_mquat", [])) == m.key_mquat.size else float("inf")
    res["rel_err"] = err
    res["worst"] = max(err, key=err.get) if err else None
    res["pass"] = all(e <= COMPILED_RTOL for e in err.values())
    return res


FORWARD_FIELDS = ("xpos", "xipos", "qfrc_bias", "qfrc_passive", "actuator_force", "qfrc_actuator",
                  "qacc_smooth", "qfrc_constraint", "qacc", "sensordata")


def compare_forward(m, key_id, ins, contacts=None, verbose_contacts=False):
    """One forward pass (mj_forward) at the start state with its ctrl: each field's relative error
    (max |rltrain - MuJoCo| over max(max |MuJoCo|, 1e-3)). With `contacts` (an absolute tolerance),
    the contact sets too (compare_contacts): the same count, and each difference within it."""
    d = mujoco.MjData(m)
    if key_id >= 0:
        mujoco.mj_resetDataKeyframe(m, d, key_id)
    else:
        mujoco.mj_resetData(m, d)
    mujoco.mj_forward(m, d)
    f = ins["forward"]
    err = {k: _rel(f[k], getattr(d, k), 1e-3) for k in FORWARD_FIELDS}
    worst = max(err, key=err.get)
    res = {"rel_err": err, "worst": worst, "pass": all(e <= COMPILED_RTOL for e in err.values())}
    if contacts is not None and "contact" in f:
        res["contacts"] = compare_contacts(d, f["contact"])
        if verbose_contacts:
            print_contacts(d, f["contact"])
        res["pass"] = res["pass"] and res["contacts"]["count"][0] == res["contacts"]["count"][1] and \
            res["contacts"]["worst"] <= contacts
    return res


def compare_contacts(d, ours):
    """The contact sets of one forward pass (rltrain inspect's "contact": those that act, with
    MuJoCo's dist): counts, and per geom pair each MuJoCo contact matched to the nearest of ours
    (point), the worst absolute difference in point, normal and dist."""
    mj = [{"geom": sorted((int(c.geom1), int(c.geom2))), "pos": np.array(c.pos), "normal": np.array(c.frame[:3]),
           "dist": float(c.dist), "swap": int(c.geom1) > int(c.geom2)} for c in d.contact[:d.ncon]]
    rl = [{"geom": sorted(c["geom"]), "pos": np.array(c["pos"]), "normal": np.array(c["normal"]),
           "dist": float(c["dist"]), "swap": c["geom"][0] > c["geom"][1]} for c in ours]
    worst = {"pos": 0.0, "normal": 0.0, "dist": 0.0}
    used = set()
    unmatched = 0
    for c in mj:
        cand = [(float(np.linalg.norm(r["pos"] - c["pos"])), i) for i, r in enumerate(rl)
                if i not in used and r["geom"] == c["geom"]]
        if not cand:
            unmatched += 1
            continue
        _, i = min(cand)
        used.add(i)
        r = rl[i]
        nr = -r["normal"] if r["swap"] != c["swap"] else r["normal"]
        worst["pos"] = max(worst["pos"], float(np.max(np.abs(r["pos"] - c["pos"]))))
        worst["normal"] = max(worst["normal"], float(np.max(np.abs(nr - c["normal"]))))
        worst["dist"] = max(worst["dist"], abs(r["dist"] - c["dist"]))
    w = max(worst.values()) if not unmatched else float("inf")
    return {"count": [len(rl), len(mj)], "unmatched": unmatched, "abs_err": worst, "worst": w}


def print_contacts(d, ours):
    print("    MuJoCo contacts (geom1 geom2 pos normal dist):")
    for c in d.contact[:d.ncon]:
        print(f"      {c.geom1:3d} {c.geom2:3d} {np.array2string(c.pos, precision=6)} "
              f"{np.array2string(c.frame[:3], precision=6)} {c.dist:.6e}")
    print("    rltrain contacts:")
    for c in ours:
        print(f"      {c['geom'][0]:3d} {c['geom'][1]:3d} {np.array2string(np.array(c['pos']), precision=6)} "
              f"{np.array2string(np.array(c['normal']), precision=6)} {c['dist']:.6e}")


def converge(m, report):
    """rltrain solves the constraint problem to convergence whatever the file's solver budget
    (docs/MJCF.md, option iterations/tolerance); MuJoCo stops at `iterations` (MuJoCo Playground's
    files ask for 1 to 5 Newton iterations) or `tolerance`. To compare the same answer, MuJoCo gets a
    converged budget: at least 1000 iterations and 100 line-search iterations, tolerance 1e-14
    (the file's solver kept). Recorded in the report."""
    before = (int(m.opt.iterations), int(m.opt.ls_iterations), float(m.opt.tolerance))
    m.opt.iterations = max(int(m.opt.iterations), 1000)
    m.opt.ls_iterations = max(int(m.opt.ls_iterations), 100)
    m.opt.tolerance = min(float(m.opt.tolerance), 1e-14)
    after = (int(m.opt.iterations), int(m.opt.ls_iterations), float(m.opt.tolerance))
    if after != before:
        report["converged_from"] = {"iterations": before[0], "ls_iterations": before[1], "tolerance": before[2]}


def check_model(model: str, rltrain: str, a, tmp: str, mesh_polygons: bool = False):
    """(exit code, report) for one model: 0 agree, 1 mismatch, 2 refused by rltrain or MuJoCo.
    With mesh_polygons, also its compiled mesh polygons against MuJoCo's (tools/mesh_polygons_peer.py)."""
    report = {"model": model, "mujoco_version": mujoco.__version__, "runs": []}
    try:
        m = mujoco.MjModel.from_xml_path(model)
    except Exception as e:  # noqa: BLE001
        report["error"] = f"MuJoCo cannot load it: {e}"
        return 2, report
    if a.converged:
        converge(m, report)
    keys = a.key
    if keys is None:
        keys = ["qpos0"] + ([mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_KEY, 0) or ""] if m.nkey else [])
        keys = [k for k in keys if k != ""]  # an unnamed keyframe cannot be named to rltrain
    key_ids = {}
    for key in keys:
        key_ids[key] = -1 if key == "qpos0" else mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, key)
        if key_ids[key] < 0 and key != "qpos0":
            report["error"] = f"MuJoCo has no keyframe {key!r}"
            return 2, report
    modes = [c for c in a.ctrl.split(",") if c]
    fields = COMPILED_FIELDS + (MESH_FIELDS if mesh_polygons else ())
    # rltrain's compiled model, its forward pass at each start and every trajectory: one process, one
    # compile (a model it refuses fails here)
    got, msg = run_rltrain(rltrain, model, keys, modes, a.steps, a.seed, a.substeps, fields, tmp, a.mocap)
    if got is None:
        report["error"] = f"rltrain refuses it: {msg}"
        return 2, report
    inspect, runs = got
    ins = inspect[keys[0]]
    report["compiled"] = compare_compiled(m, ins)
    ok_compiled = report["compiled"]["pass"]
    ok = ok_compiled
    if mesh_polygons and ok_compiled:
        code, rep = compare_mesh_polygons(ins["model"], m)
        report["mesh_polygons"] = rep
        ok = ok and code == 0
    pos_cols, vel_cols = joint_columns(m)
    exp_header = ["time"] + pos_cols + vel_cols
    report["mujoco_sizes"] = {k: int(getattr(m, k)) for k in ("nq", "nv", "nu", "njnt", "nbody", "ngeom", "nkey")}
    dqpos = nudges(m.nq, a.nudges)
    report["forward"] = {}
    for key in keys:
        key_id = key_ids[key]
        if ok_compiled:
            fw = compare_forward(m, key_id, inspect[key], a.contacts, a.print_contacts)
            report["forward"][key] = fw
            ok = ok and fw["pass"]
        for mode in modes:
            header, rl = runs[(key, mode)]
            run = {"start": key, "ctrl": mode}
            ctrl_cols = [i for i, c in enumerate(header) if c.startswith("ctrl_")]
            mocap_cols = [i for i, c in enumerate(header) if c.startswith("mocap_")]
            ncon_col = header.index("ncon") if "ncon" in header else None
            state_cols = [i for i, c in enumerate(header)
                          if not c.startswith("ctrl_") and not c.startswith("mocap_") and c != "ncon"]
            # the mocap poses rltrain held during each step (its start's, or a --mocap script's), replayed
            mocaps = rl[1:, mocap_cols] if mocap_cols else None
            if m.nmocap and len(mocap_cols) != 7 * m.nmocap:
                run["mocap_columns"] = f"{len(mocap_cols)} mocap columns, MuJoCo has nmocap {m.nmocap}"
                report["runs"].append(run)
                ok = False
                continue
            run["sizes_match"] = [header[i] for i in state_cols] == exp_header
            if not run["sizes_match"]:
                core = [header[i] for i in state_cols]
                run["sizes"] = {"rltrain_columns": len(core) - 1, "mujoco_nq_plus_nv": m.nq + m.nv,
                                "first_difference": next((f"{x} vs {y}" for x, y in zip(core, exp_header) if x != y), "length")}
                report["runs"].append(run)
                ok = False
                continue
            if ctrl_cols:
                ctrls = rl[1:, ctrl_cols]
                run["ctrl_source"] = "csv"
            elif mode == "random":
                rngs = ctrl_sample_range(m)
                ctrls = np.array([random_ctrl(rngs, a.seed, 0, t) for t in range(a.steps)]) if m.nu else None
                run["ctrl_source"] = "twin"
            else:
                ctrls = None  # hold the keyframe's ctrl or 0
                run["ctrl_source"] = "held"
            mj, mj_ncon = run_mujoco(m, key_id, a.steps, a.substeps, ctrls, mocaps)
            rl_ncon = rl[1:, ncon_col] if ncon_col is not None else None
            # The nudged runs, 1, then 1, 2, 4, 8, 16 more while the run is outside the bound: the bound only
            # grows with them, so the verdict is the verdict of all of them (--all-nudges draws all,
            # for a report of the full envelope), at a 32nd of the cost where one suffices.
            mjp = np.empty((0, a.steps + 1, 1 + m.nq + m.nv))
            while len(mjp) < len(dqpos):
                more = dqpos[len(mjp):len(dqpos) if a.all_nudges else max(2 * len(mjp), 1)]
                mjp = np.concatenate((mjp, run_mujoco_nudged(m, key_id, a.steps, a.substeps, ctrls, more, mocaps)))
                res = compare(m, header, rl[:, state_cols], mj, mjp, rl_ncon, mj_ncon, a.factor, a.atol)
                if res["first_bad_step"] is None:
                    break
            res["nudges"] = len(mjp)
            run.update(res)
            run["pass"] = run["first_bad_step"] is None
            ok = ok and run["pass"]
            report["runs"].append(run)
    report["pass"] = ok
    return (0 if ok else 1), report


def print_report(report, a, name):
    if "error" in report:
        print(f"{name}: {report['error'].replace(report['model'], name)}")
        return
    s = report["mujoco_sizes"]
    print(f"{name}: MuJoCo {report['mujoco_version']}: nq {s['nq']} nv {s['nv']} nu {s['nu']} "
          f"njnt {s['njnt']} nbody {s['nbody']} ngeom {s['ngeom']}; tolerance {a.factor:g} x sensitivity + {a.atol:g}")
    if "converged_from" in report:
        c = report["converged_from"]
        print(f"  MuJoCo run converged (the file asks for iterations {c['iterations']}, ls_iterations "
              f"{c['ls_iterations']}, tolerance {c['tolerance']:g})")
    c = report.get("compiled", {})
    if c.get("sizes"):
        print(f"  compiled: SIZES DIFFER (rltrain, MuJoCo): {c['sizes']}")
    elif c:
        print(f"  compiled: worst relative error {c['rel_err'][c['worst']]:.1e} ({c['worst']}) "
              + ("ok" if c["pass"] else f"MISMATCH (> {COMPILED_RTOL:g})"))
    for k, fw in report.get("forward", {}).items():
        if "rel_err" in fw:
            print(f"  forward at {k:<8} worst relative error {fw['rel_err'][fw['worst']]:.1e} ({fw['worst']}) "
                  + ("ok" if fw["pass"] else f"MISMATCH (> {COMPILED_RTOL:g})"))
            if "contacts" in fw:
                cc = fw["contacts"]
                e = cc["abs_err"]
                print(f"             contacts rltrain {cc['count'][0]} MuJoCo {cc['count'][1]}, unmatched {cc['unmatched']}; "
                      f"max |err| pos {e['pos']:.1e} normal {e['normal']:.1e} dist {e['dist']:.1e} "
                      f"(tolerance {a.contacts:g})")
        else:
            print(f"  forward at {k:<8} {fw['worst']}")
    mp = report.get("mesh_polygons")
    if mp is not None:
        if "error" in mp:
            print(f"  mesh polygons: {mp['error']}")
        else:
            ms = mp["meshes"]
            print(f"  mesh polygons (tools/mesh_polygons_peer.py): {sum(r['pass'] for r in ms)} of {len(ms)} meshes equal "
                  f"MuJoCo's ({sum(r['polygons'] for r in ms)} polygons)")
            for r in ms:
                if not r["pass"]:
                    print(f"    DIFF {r['mesh']}: {r['polygons']} polygons (ours {r['ours']}), {r['in_place']} in place, "
                          f"{r['as_cycles']} as cycles, {r['reversed']} reversed; polymap {r['polymap_equal']} of "
                          f"{r['vertices']}; {r['normal_over']} normals over their bound")
    for r in report["runs"]:
        head = f"  start {r['start']:<8} ctrl {r['ctrl']:<6}"
        if not r["sizes_match"]:
            print(f"{head} SIZES DIFFER: {r['sizes']}")
            continue
        print(f"{head} ({r['ctrl_source']}) {r['steps']} steps: "
              f"max |err| qpos {r['max_err_qpos']:.2e} qvel {r['max_err_qvel']:.2e}; "
              f"MuJoCo's 1e-9 sensitivity ({r['nudges']} of {a.nudges} nudges) qpos {r['max_sens_qpos']:.2e} "
              f"qvel {r['max_sens_qvel']:.2e}; "
              f"step-1 qacc rel err {r.get('step1_qacc_rel_err', float('nan')):.2e}; "
              f"ncon differs on {r['ncon_mismatch_steps']} steps; "
              f"worst err/tolerance {r['worst_ratio']:.2g} (step {r['worst_ratio_step']}); "
              + ("ok" if r["pass"] else f"MISMATCH from step {r['first_bad_step']} ({r['bad_steps']} steps over)"))
        for k, e in r["at"].items():
            print(f"      step {k:>4}: err qpos {e['err_qpos']:.2e} qvel {e['err_qvel']:.2e} | "
                  f"sens qpos {e['sens_qpos']:.2e} qvel {e['sens_qvel']:.2e}")


@functools.lru_cache(maxsize=None)
def asset_group(path):
    """The folder of a model's first mesh file, resolved (or the model's path when it has none), from
    MuJoCo's parse of the file (no compile): the corpus files of one robot share it, and MuJoCo's
    asset cache (main) keeps their decoded meshes."""
    try:
        spec = mujoco.MjSpec.from_file(path)
    except Exception:  # noqa: BLE001 (check_model reports MuJoCo's error)
        return path
    files = [ms.file for ms in spec.meshes if ms.file]
    if not files:
        return path
    return os.path.dirname(os.path.realpath(os.path.join(os.path.dirname(path), spec.meshdir, files[0])))


def shard(targets, k, n):
    """The K-th of N shards of targets [(path, name)]: whole asset groups (asset_group), dealt
    largest first to the shard with the least estimated cost so far, in corpus order within a shard,
    files of one group together. The estimate is rough (a robot's stepping cost is not known before
    it is compiled): per file 1 + M / 20, per group M / 20 more (MuJoCo decodes the meshes once, for
    its first file), M the group's mesh folder in MB; it splits the 87 files 9 / 14 / 13 / 17 CPU-s
    (13 each would be even)."""
    groups = {}
    for t in targets:
        groups.setdefault(asset_group(t[0]), []).append(t)

    def folder_mb(key):
        if not os.path.isdir(key):
            return 0.0
        return sum(os.path.getsize(os.path.join(key, f)) for f in os.listdir(key)
                   if os.path.isfile(os.path.join(key, f))) / 1e6

    cost = {key: (len(files) + 1) * folder_mb(key) / 20 + len(files) for key, files in groups.items()}
    load = [0.0] * n
    mine = []
    for key in sorted(groups, key=lambda g: (-cost[g], groups[g][0][1])):
        i = min(range(n), key=lambda j: (load[j], j))
        load[i] += cost[key]
        if i == k - 1:
            mine.append(key)
    order = {t[1]: i for i, t in enumerate(targets)}
    mine.sort(key=lambda g: order[groups[g][0][1]])
    return [t for g in mine for t in groups[g]]


def parse_shard(text):
    """K/N with 1 <= K <= N, else a one-line error (exit 2)."""
    try:
        k, n = (int(v) for v in text.split("/"))
    except ValueError:
        k = n = 0
    if not 1 <= k <= n:
        print(f"mujoco_peer.py: --shard {text}: expected K/N with 1 <= K <= N", file=sys.stderr)
        sys.exit(2)
    return k, n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="an MJCF file, or 'corpus': every file of tools/mjcf_corpus.py")
    ap.add_argument("rltrain")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--key", action="append", default=None,
                    help="start from this keyframe (repeatable; 'qpos0' for the model's qpos0; default: qpos0, and the first keyframe if any)")
    ap.add_argument("--ctrl", default="zero,random", help="comma-separated: zero, random")
    ap.add_argument("--mocap", default=None,
                    help="CSV of mocap poses per control step (rltrain rollout --mocap); MuJoCo replays the "
                         "mocap columns of rltrain's CSV")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--substeps", type=int, default=1)
    ap.add_argument("--factor", type=float, default=10.0, help="F: tolerance = F * MuJoCo's 1e-9 sensitivity + A")
    ap.add_argument("--as-written", dest="converged", action="store_false",
                    help="run MuJoCo with the file's own solver budget (iterations, ls_iterations, tolerance) "
                         "instead of a converged one (the default: rltrain solves to convergence)")
    ap.add_argument("--atol", type=float, default=1e-6, help="A")
    ap.add_argument("--nudges", type=int, default=NUDGES,
                    help="independent 1e-9 perturbations of qpos; the sensitivity is their largest spread at each step")
    ap.add_argument("--all-nudges", action="store_true",
                    help="run every nudge (default: 1, then more only while a run is outside the bound; same verdict)")
    ap.add_argument("--contacts", type=float, default=None, metavar="TOL",
                    help="also compare the contact sets of the forward passes (count; point, normal and dist "
                         "within TOL absolute)")
    ap.add_argument("--print-contacts", action="store_true", help="with --contacts: list both contact sets")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--no-check", action="store_true", help="report only; exit 0 unless rltrain refuses")
    ap.add_argument("--groups", default=None, help="corpus: comma-separated groups (default: tools/mjcf_corpus.py's)")
    ap.add_argument("--known-mismatch", action="append", default=[],
                    help="corpus: a file (its corpus name) whose mismatch is reported, not failed; it fails "
                         "if it starts to match (so the list is kept honest)")
    ap.add_argument("--shard", default=None, metavar="K/N",
                    help="corpus: only every N-th file from the K-th (1-based), so ctest runs the corpus as N tests")
    ap.add_argument("--allow-refusal", action="store_true",
                    help="corpus: a file rltrain refuses is listed, not failed (until the MJCF issue is done)")
    a = ap.parse_args(argv)
    if a.mocap:
        a.mocap = os.path.abspath(a.mocap)  # the checks run in a temp directory
    if a.nudges < 1:
        ap.error("--nudges: expected at least 1")

    if mujoco.__version__.split(".")[0] != "3":
        print(f"warning: the reference is MuJoCo 3 (tools/setup.sh --test pins 3.17.0); this is {mujoco.__version__}",
              file=sys.stderr)
    rltrain = os.path.abspath(a.rltrain)
    if a.model == "corpus":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import mjcf_corpus  # noqa: PLC0415
        missing = mjcf_corpus.missing_packages()
        if missing:
            print(f"SKIP: corpus packages missing: {', '.join(missing)} (tools/setup.sh --test installs them)")
            return 77
        groups = tuple(a.groups.split(",")) if a.groups else mjcf_corpus.GROUPS
        targets = [(f.path, f.name) for f in mjcf_corpus.locate_corpus(groups)]
        if a.shard:
            k, n = parse_shard(a.shard)
            shards = [shard(targets, j, n) for j in range(1, n + 1)]
            dealt = sorted(t for s in shards for t in s)
            if dealt != sorted(targets):  # every file in exactly one shard, or the split is wrong
                print(f"mujoco_peer.py: --shard {a.shard}: the shards deal {len(dealt)} files, the corpus has "
                      f"{len(targets)}", file=sys.stderr)
                return 2
            targets = shards[k - 1]
    else:
        targets = [(os.path.abspath(a.model), a.model)]
    reports, codes = [], []
    with tempfile.TemporaryDirectory(prefix="mujoco_peer_") as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)  # MuJoCo writes MUJOCO_LOG.TXT into the working directory
        try:
            cache = mujoco.mj_getCache()
            mujoco.mj_setCacheCapacity(cache, max(mujoco.mj_getCacheCapacity(cache), MUJOCO_CACHE_BYTES))
            group = None
            for path, name in targets:
                # MuJoCo decodes a robot's meshes once for all its files from its asset cache; emptied
                # when the next robot starts (a full cache takes no more, so later robots would decode
                # theirs for every file)
                if a.model == "corpus" and asset_group(path) != group:
                    group = asset_group(path)  # (cached)
                    mujoco.mj_clearCache(cache)
                code, rep = check_model(path, rltrain, a, tmp, mesh_polygons=name in MESH_POLYGON_FILES)
                rep["name"] = name
                if code == 2 and a.allow_refusal and rep.get("error", "").startswith("rltrain refuses"):
                    rep["refused"] = True
                    code = 0
                if name in a.known_mismatch:
                    rep["known_mismatch"] = True
                    code = 0 if code == 1 else 1  # a known mismatch that now matches fails: update the list
                codes.append(code)
                reports.append(rep)
                if not a.json:
                    print_report(rep, a, name)
        finally:
            os.chdir(cwd)
    checked = sum(1 for r in reports if "runs" in r and r["runs"])
    refused = sum(1 for r in reports if r.get("refused"))
    failed = sum(1 for c in codes if c != 0)
    if a.json:
        print(json.dumps(reports[0] if len(reports) == 1 and a.model != "corpus" else reports, indent=1))
    else:
        if a.model == "corpus":
            known = sum(1 for r in reports if r.get("known_mismatch"))
            print(f"corpus: {len(reports)} files, {checked} compared with MuJoCo, {refused} refused by rltrain "
                  f"(allowed), {known} known mismatches, {failed} failed")
        print("PASS" if not failed else "FAIL")
    if any(c == 2 for c in codes):
        return 2
    return 0 if not failed or a.no_check else 1


if __name__ == "__main__":
    sys.exit(main())
