#!/usr/bin/env python3
"""Box-box contacts from MuJoCo 3 (the `mujoco` wheel), the expected values of
tests/sim/test_contacts.cpp's BoxBoxFollowsMujoco (sim/contact.h box_box: mjc_BoxBox).

Usage:
  box_box_cases.py [--seed S] [--cases N] [--out tests/data/box_box_cases.txt]

Each case is two free boxes (half sizes a0 a1 a2 and b0 b1 b2, geom margins ma and mb) in the pose
qpos (box a's 7 then box b's 7), no gravity; MuJoCo's mj_forward gives the contacts (box a = geom 0
= MuJoCo's geom1, normal from a to b). The poses are drawn around the cases the collider tells
apart (and that a uniform draw seldom hits):
  face      b on a face of a, its faces along a's, then turned by 1e-9, 1e-6, 1e-3, 0.05 or 0.3 rad
            about a random axis and spun about the face normal half of the time; resting on, sunk
            into or just above the face (margin);
  parallel  b on a face of a, turned by at most 1e-9..1e-4 rad (nearly parallel faces, edge axes
            near the rounding cut), sunk by up to 1 mm;
  tie       b on a face of a, turned by 0.01..0.15 rad, then slid along the face to where the best
            separation of a's face axes equals the best of b's (the case of issue 16: two face axes
            of nearly the same penetration), offset from the tie by +-1e-10..1e-4 of the size;
  edge      an edge of b across an edge of a (random orientations), crossing, just apart or sunk;
  corner    a corner of b against a face, edge or corner of a (random orientation);
  deep      b's centre inside a (random orientation);
  random    a uniform draw around a (random orientations).
Half of the cases turn box a too (the whole pose with it). Cases with no contact are kept (the test
checks that none is made). Knife-edge poses are drawn again, their number printed: those whose
contacts MuJoCo itself changes for a 1e-12 nudge (robust() below: a corner on a clipping plane, an
edge axis on the face-preference threshold), and those whose best face axes of a and of b are tied
within rounding (rounding_tie(): faces exactly parallel, where which box is the reference, and so
the contacts' order, follows the last bits of each side's kinematics; a random nudge shows it only
now and then). The file (text, one number per field, %.17g):
  case  a0 a1 a2 ma b0 b1 b2 mb  qpos[14]  ncon
  contact  pos[3] normal[3] dist          (ncon lines, MuJoCo's order)
Printed: the version of mujoco used, how many cases of each kind and of each contact count.
"""
from __future__ import annotations

import argparse
import sys

XML = """<mujoco><option gravity="0 0 0"/><worldbody>
<body name="a"><freejoint/><geom type="box" size="{a0!r} {a1!r} {a2!r}" margin="{ma!r}"/></body>
<body name="b"><freejoint/><geom type="box" size="{b0!r} {b1!r} {b2!r}" margin="{mb!r}"/></body>
</worldbody></mujoco>"""

KINDS = ["face", "face", "parallel", "tie", "tie", "edge", "edge", "corner", "deep", "random"]


def axis_quat(axis, angle, np):
    """The rotation by `angle` about the unit vector `axis`, as a (w, x, y, z) quaternion."""
    return np.array([np.cos(angle / 2), *(np.sin(angle / 2) * np.asarray(axis, dtype=float))])


def quat_mat(q, mujoco, np):
    r = np.zeros(9)
    mujoco.mju_quat2Mat(r, q)
    return r.reshape(3, 3)


def face_seps(sa, sb, rb, pb, np):
    """MuJoCo's separations along a's three face axes and b's (a at the origin, unrotated; b at pb
    with rotation rb): |c.l| - radius_a - radius_b."""
    ra = np.abs(rb)
    sep_a = np.abs(pb) - sa - ra @ sb
    sep_b = np.abs(rb.T @ -pb) - sb - ra.T @ sa
    return sep_a, sep_b


def draw_case(rng, mujoco, np):
    """One case: sizes, margins and the pose (a's and b's qpos), by the kinds above."""
    sa, sb = rng.uniform(0.02, 0.3, 3), rng.uniform(0.02, 0.3, 3)
    ma, mb = float(rng.choice([0.0, 0.0, 0.01])), float(rng.choice([0.0, 0.0, 5e-4]))

    def unit_quat():
        q = rng.normal(size=4)
        return q / np.linalg.norm(q)

    def unit_vec():
        v = rng.normal(size=3)
        return v / np.linalg.norm(v)

    def mul(x, y):
        out = np.zeros(4)
        mujoco.mju_mulQuat(out, x, y)
        return out

    kind = str(rng.choice(KINDS))
    ident = np.array([1.0, 0, 0, 0])
    if kind in ("face", "parallel", "tie"):
        f = int(rng.integers(0, 3))
        side = float(rng.choice([-1, 1]))
        n = np.zeros(3)
        n[f] = side
        if kind == "tie":
            sb = sa * rng.uniform(0.6, 1.5, 3)  # faces of like size: both face axes matter
        qb = axis_quat(n, rng.uniform(-np.pi, np.pi), np) if rng.random() < 0.5 else ident
        if kind == "face":
            turn = float(rng.choice([1e-9, 1e-6, 1e-3, 0.05, 0.3]))
        elif kind == "parallel":
            turn = float(10 ** rng.uniform(-9, -4))
        else:
            turn = rng.uniform(0.01, 0.15)
        qb = mul(axis_quat(unit_vec(), turn, np), qb)
        rb = quat_mat(qb, mujoco, np)
        pb = rng.uniform(-1.1, 1.1, 3) * sa
        pb[f] = 0
        # b's extent along n, then its height over the face: sunk, resting, or just above
        depth = {"face": rng.uniform(-0.02, 0.01), "parallel": rng.uniform(-1e-3, 0), "tie": rng.uniform(-0.01, 0)}[kind]
        pb[f] = side * (sa[f] + np.abs(rb[f]) @ sb + depth)
        if kind == "tie":
            # slide along a tangent until the best face separations of a and b are equal
            t = np.zeros(3)
            t[(f + 1 + int(rng.integers(0, 2))) % 3] = 1
            if rng.random() < 0.5:
                t = t + np.eye(3)[3 - f - int(np.argmax(t))]
                t /= np.linalg.norm(t)
            def gap(s):
                sep_a, sep_b = face_seps(sa, sb, rb, pb + s * t, np)
                return sep_a.max() - sep_b.max()
            grid = np.linspace(-2, 2, 81) * sa.max()
            vals = np.array([gap(s) for s in grid])
            flips = np.nonzero(np.sign(vals[:-1]) != np.sign(vals[1:]))[0]
            if flips.size:
                k = int(rng.choice(flips))
                lo, hi = grid[k], grid[k + 1]
                for _ in range(200):
                    mid = 0.5 * (lo + hi)
                    if np.sign(gap(mid)) == np.sign(vals[k]):
                        lo = mid
                    else:
                        hi = mid
                off = float(rng.choice([1e-10, 1e-9, 1e-7, 1e-5, 1e-4])) * float(rng.choice([-1, 1])) * sa.max()
                pb = pb + (0.5 * (lo + hi) + off) * t
    elif kind == "edge":
        # a's edge along axis i at corner signs ca; b's edge along its axis j, through a point of a's
        i = int(rng.integers(0, 3))
        ca = np.sign(rng.uniform(-1, 1, 3))
        pa = ca * sa
        pa[i] = rng.uniform(-0.9, 0.9) * sa[i]
        qb = unit_quat()
        rb = quat_mat(qb, mujoco, np)
        j = int(rng.integers(0, 3))
        cb = np.sign(rng.uniform(-1, 1, 3))
        eb = cb * sb
        eb[j] = rng.uniform(-0.9, 0.9) * sb[j]
        out = ca.copy()
        out[i] = 0
        out /= np.linalg.norm(out)
        pb = pa - rb @ eb + out * rng.uniform(-0.01, 0.005)
    elif kind == "corner":
        qb = unit_quat()
        rb = quat_mat(qb, mujoco, np)
        target = np.sign(rng.uniform(-1, 1, 3)) * sa
        for k in range(3):  # a face, edge or corner of a: free coordinates inside
            if rng.random() < 0.5:
                target[k] = rng.uniform(-0.9, 0.9) * sa[k]
        if np.all(np.abs(target) < sa):
            target[0] = sa[0] * np.sign(target[0] or 1)
        eb = np.sign(rng.uniform(-1, 1, 3)) * sb
        pb = target - rb @ eb + unit_vec() * rng.uniform(0, 0.01)
    elif kind == "deep":
        qb = unit_quat()
        pb = rng.uniform(-1, 1, 3) * sa
    else:
        qb = unit_quat()
        pb = rng.uniform(-1, 1, 3) * (sa + sb)
    qpos = np.zeros(14)
    qa = unit_quat() if rng.random() < 0.5 else ident
    pa0 = rng.uniform(-0.5, 0.5, 3)
    ra = quat_mat(qa, mujoco, np)
    qpos[0:3] = pa0
    qpos[3:7] = qa
    qpos[7:10] = pa0 + ra @ pb
    qpos[10:14] = mul(qa, qb)
    return kind, dict(a0=sa[0], a1=sa[1], a2=sa[2], ma=ma, b0=sb[0], b1=sb[1], b2=sb[2], mb=mb), qpos


def contact_set(m, d, qpos, mujoco, np):
    """MuJoCo's contacts at qpos: (pos, normal, dist) rows, in its order."""
    d.qpos[:] = qpos
    mujoco.mj_forward(m, d)
    return np.array([[*c.pos, *c.frame[:3], c.dist] for c in d.contact[:d.ncon]]).reshape(-1, 7)


def robust(m, d, qpos, rng, mujoco, np):
    """Whether MuJoCo's contacts at qpos stand a 1e-12 nudge of the pose (16 random nudges of every
    qpos entry, quaternions renormalised): the same count, each value within 1e-9. A pose on a knife
    edge (two axes tied within rounding, a vertex exactly on a clipping plane or on the margin)
    takes a branch on the sign of a rounding residue, which the test's own kinematics need not
    reproduce bit for bit: such poses are drawn again."""
    ref = contact_set(m, d, qpos, mujoco, np)
    for _ in range(16):
        q = qpos + rng.uniform(-1e-12, 1e-12, qpos.size)
        for a in (3, 10):
            q[a:a + 4] /= np.linalg.norm(q[a:a + 4])
        got = contact_set(m, d, q, mujoco, np)
        if got.shape != ref.shape or (got.size and np.max(np.abs(got - ref)) > 1e-9):
            return False
    return True


def rounding_tie(m, d, np):
    """Whether the best face separation of box a (geom 0) and the best of box b (geom 1), as
    mjc_BoxBox computes them from MuJoCo's geom poses, are within 1e-12 of the summed half sizes."""
    size1, size2 = m.geom_size[0], m.geom_size[1]
    mat1, mat2 = d.geom_xmat[0].reshape(3, 3), d.geom_xmat[1].reshape(3, 3)
    rot = mat1.T @ mat2
    pos21 = mat1.T @ (d.geom_xpos[1] - d.geom_xpos[0])
    pos12 = mat2.T @ (d.geom_xpos[0] - d.geom_xpos[1])
    sep1 = np.abs(pos21) - size1 - np.abs(rot) @ size2
    sep2 = np.abs(pos12) - size2 - np.abs(rot).T @ size1
    return abs(sep1.max() - sep2.max()) <= 1e-12 * (size1.sum() + size2.sum())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--cases", type=int, default=600)
    ap.add_argument("--out", default="tests/data/box_box_cases.txt")
    a = ap.parse_args(argv)
    import mujoco
    import numpy as np

    rng = np.random.default_rng(a.seed)
    lines = [f"# box-box contacts of mujoco {mujoco.__version__} (tools/box_box_cases.py --seed {a.seed} "
             f"--cases {a.cases})",
             "# case a0 a1 a2 ma b0 b1 b2 mb qpos[14] ncon / contact pos[3] normal[3] dist"]
    tally, kinds, knife = {}, {}, {}
    while sum(tally.values()) < a.cases:
        kind, p, qpos = draw_case(rng, mujoco, np)
        # The sizes as written (repr: the exact doubles) are what the test's MJCF compiles.
        m = mujoco.MjModel.from_xml_string(XML.format(**{k: float(v) for k, v in p.items()}))
        d = mujoco.MjData(m)
        if not robust(m, d, qpos, rng, mujoco, np):
            knife[kind] = knife.get(kind, 0) + 1
            continue
        d.qpos[:] = qpos
        mujoco.mj_forward(m, d)
        if rounding_tie(m, d, np):
            knife[kind] = knife.get(kind, 0) + 1
            continue
        cons = d.contact[:d.ncon]
        for c in cons:
            assert (c.geom1, c.geom2) == (0, 1), "MuJoCo's geom1 is box a"
        fields = [p["a0"], p["a1"], p["a2"], p["ma"], p["b0"], p["b1"], p["b2"], p["mb"], *d.qpos]
        lines.append("case " + " ".join(f"{float(v):.17g}" for v in fields) + f" {d.ncon}")
        for c in cons:
            vals = [*c.pos, *c.frame[:3], c.dist]
            lines.append("contact " + " ".join(f"{float(v):.17g}" for v in vals))
        tally[int(d.ncon)] = tally.get(int(d.ncon), 0) + 1
        kinds[kind] = kinds.get(kind, 0) + 1
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"mujoco {mujoco.__version__}: {a.cases} cases, by kind {dict(sorted(kinds.items()))}, by contact count "
          f"{dict(sorted(tally.items()))}; knife-edge poses drawn and left out, by kind "
          f"{dict(sorted(knife.items()))} ({sum(knife.values())}) -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
