#!/usr/bin/env python3
"""Capsule-box contacts from MuJoCo 3 (the `mujoco` wheel), the expected values of
tests/sim/test_contacts.cpp's CapsuleBoxFollowsMujoco (sim/contact.h capsule_box: mjc_CapsuleBox).

Usage:
  capsule_box_cases.py [--seed S] [--cases N] [--out tests/data/capsule_box_cases.txt]

Each case is a free capsule (radius r, half-length hl, geom margin mc) and a free box (half sizes
sx sy sz, geom margin mb) in the pose qpos (capsule's 7 then box's 7), no gravity; MuJoCo's
mj_forward gives the contacts (capsule = geom 0, box = geom 1: MuJoCo's geom1 is the lower type,
the capsule; normal from the capsule to the box). The poses are drawn around the cases the
collider tells apart (and that a uniform draw seldom hits):
  face     the capsule near a face, its axis in the face's plane (then turned by 0, 1e-6, 1e-3,
           0.05 or 0.3 rad), resting on or sunk into the face or just above it (margin);
  edge     the capsule's centre near one of the 12 edges, any axis;
  corner   near one of the 8 corners, any axis;
  inside   the centre inside the box (deep), any axis;
  random   a uniform draw around the box, any axis.
Half of the cases turn the box too. Cases with no contact are kept (the test checks that none is
made). Knife-edge poses, whose contacts MuJoCo itself changes for a 1e-12 nudge (robust() below:
mostly an axis exactly in the plane of a turned box's face, where the branch taken follows the
sign of a 1e-17 rounding residue), are drawn again; their number is printed. The file (text, one number per field, %.17g):
  case  r hl mc sx sy sz mb  qpos[14]  ncon
  contact  pos[3] normal[3] dist          (ncon lines, MuJoCo's order)
Printed: the version of mujoco used and how many cases of each contact count.
"""
from __future__ import annotations

import argparse
import sys

XML = """<mujoco><option gravity="0 0 0"/><worldbody>
<body name="capsule"><freejoint/><geom type="capsule" size="{r!r} {hl!r}" margin="{mc!r}"/></body>
<body name="box"><freejoint/><geom type="box" size="{sx!r} {sy!r} {sz!r}" margin="{mb!r}"/></body>
</worldbody></mujoco>"""


def axis_quat(k, angle, np):
    """The rotation by `angle` about coordinate axis k, as a (w, x, y, z) quaternion."""
    q = np.zeros(4)
    q[0] = np.cos(angle / 2)
    q[1 + k] = np.sin(angle / 2)
    return q


def draw_case(rng, mujoco, np):
    """One case: sizes, margins and the pose (capsule and box qpos), by the kinds above."""
    r, hl = rng.uniform(0.01, 0.1), rng.uniform(0.02, 0.3)
    size = rng.uniform(0.02, 0.3, 3)
    mc, mb = float(rng.choice([0.0, 0.0, 0.01])), float(rng.choice([0.0, 0.0, 5e-4]))

    def unit_quat():
        q = rng.normal(size=4)
        return q / np.linalg.norm(q)

    def mul(a, b):
        out = np.zeros(4)
        mujoco.mju_mulQuat(out, a, b)
        return out

    kind = rng.choice(["face", "face", "edge", "corner", "inside", "random"])
    if kind == "face":
        f = int(rng.integers(0, 3))
        pc = rng.uniform(-1.2, 1.2, 3) * size
        pc[f] = rng.choice([-1, 1]) * (size[f] + r + rng.uniform(-0.02, 0.01))
        g = (f + 1 + int(rng.integers(0, 2))) % 3  # the capsule's axis along box axis g
        qc = {0: axis_quat(1, np.pi / 2, np), 1: axis_quat(0, -np.pi / 2, np), 2: np.array([1.0, 0, 0, 0])}[g]
        qc = mul(axis_quat(f, rng.uniform(-np.pi, np.pi) * rng.choice([0, 1]), np), qc)
        qc = mul(axis_quat(int(rng.integers(0, 3)), float(rng.choice([0, 1e-6, 1e-3, 0.05, 0.3])), np), qc)
    elif kind == "edge":
        pc = np.sign(rng.uniform(-1, 1, 3)) * size
        e = int(rng.integers(0, 3))
        pc[e] = rng.uniform(-1.2, 1.2) * size[e]
        pc = pc + rng.normal(size=3) * r
        qc = unit_quat()
    elif kind == "corner":
        pc = np.sign(rng.uniform(-1, 1, 3)) * (size + rng.uniform(-0.5, 1.2) * r)
        qc = unit_quat()
    elif kind == "inside":
        pc = rng.uniform(-1, 1, 3) * size
        qc = unit_quat()
    else:
        pc = rng.uniform(-1, 1, 3) * (size + hl + r)
        qc = unit_quat()
    # Turn the box (and the capsule's pose with it, so the kind is kept) half of the time.
    qpos = np.zeros(14)
    qb = unit_quat() if rng.random() < 0.5 else np.array([1.0, 0, 0, 0])
    pb = rng.uniform(-0.5, 0.5, 3)
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, qb)
    qpos[0:3] = pb + rot.reshape(3, 3) @ pc
    qpos[3:7] = mul(qb, qc)
    qpos[7:10] = pb
    qpos[10:14] = qb
    return dict(r=r, hl=hl, mc=mc, sx=size[0], sy=size[1], sz=size[2], mb=mb), qpos


def contact_set(m, d, qpos, mujoco, np):
    """MuJoCo's contacts at qpos: (pos, normal, dist) rows, in its order."""
    d.qpos[:] = qpos
    mujoco.mj_forward(m, d)
    return np.array([[*c.pos, *c.frame[:3], c.dist] for c in d.contact[:d.ncon]]).reshape(-1, 7)


def robust(m, d, qpos, rng, mujoco, np):
    """Whether MuJoCo's contacts at qpos stand a 1e-12 nudge of the pose (4 random nudges of every
    qpos entry, quaternions renormalised): the same count, each value within 1e-9. A pose that is
    exactly degenerate (a capsule axis exactly in a face's plane, of a turned box) takes a branch
    on the sign of a 1e-17 rounding residue (the octant of the axis), which the test's own
    kinematics need not reproduce bit for bit: such poses are drawn again."""
    ref = contact_set(m, d, qpos, mujoco, np)
    for _ in range(4):
        q = qpos + rng.uniform(-1e-12, 1e-12, qpos.size)
        for a in (3, 10):
            q[a:a + 4] /= np.linalg.norm(q[a:a + 4])
        got = contact_set(m, d, q, mujoco, np)
        if got.shape != ref.shape or (got.size and np.max(np.abs(got - ref)) > 1e-9):
            return False
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--cases", type=int, default=400)
    ap.add_argument("--out", default="tests/data/capsule_box_cases.txt")
    a = ap.parse_args(argv)
    import mujoco
    import numpy as np

    rng = np.random.default_rng(a.seed)
    lines = [f"# capsule-box contacts of mujoco {mujoco.__version__} (tools/capsule_box_cases.py --seed {a.seed} "
             f"--cases {a.cases})",
             "# case r hl mc sx sy sz mb qpos[14] ncon / contact pos[3] normal[3] dist"]
    tally = {}
    knife = 0
    while sum(tally.values()) < a.cases:
        p, qpos = draw_case(rng, mujoco, np)
        # The sizes as written (repr: the exact doubles) are what the test's MJCF compiles.
        m = mujoco.MjModel.from_xml_string(XML.format(**{k: float(v) for k, v in p.items()}))
        d = mujoco.MjData(m)
        if not robust(m, d, qpos, rng, mujoco, np):
            knife += 1
            continue
        d.qpos[:] = qpos
        mujoco.mj_forward(m, d)
        cons = d.contact[:d.ncon]
        for c in cons:
            assert (c.geom1, c.geom2) == (0, 1), "MuJoCo's geom1 is the capsule"
        fields = [p["r"], p["hl"], p["mc"], p["sx"], p["sy"], p["sz"], p["mb"], *d.qpos]
        lines.append("case " + " ".join(f"{float(v):.17g}" for v in fields) + f" {d.ncon}")
        for c in cons:
            vals = [*c.pos, *c.frame[:3], c.dist]
            lines.append("contact " + " ".join(f"{float(v):.17g}" for v in vals))
        tally[int(d.ncon)] = tally.get(int(d.ncon), 0) + 1
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"mujoco {mujoco.__version__}: {a.cases} cases, by contact count {dict(sorted(tally.items()))}, "
          f"{knife} knife-edge poses drawn and left out -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
