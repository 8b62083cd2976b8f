#!/usr/bin/env python3
"""Contact counts and contact sets of MuJoCo's mjc_Convex pairs over random poses, rltrain against
the `mujoco` wheel (issue 16: the pairs whose contact count differs from a single point).

For each geom pair type (capsule, cylinder, box, mesh against cylinder, box, mesh; the pairs MuJoCo
3.17 sends to mjc_Convex with multicontact) and each margin, one model: a fixed geom and a free body
with the other, and --poses keyframes of the free body near contact (a random orientation, one of
the geom's axes turned toward the other by a small angle, or exactly aligned; the height set by
bisection on MuJoCo's mj_geomDistance to a distance in [-depth, margin]). rltrain's forward pass at
each keyframe (`rltrain rollout --inspect`, its "contact") is compared with MuJoCo's mj_forward:
the same count per pose, each MuJoCo contact matched to the nearest of ours, the worst difference
in point, normal and dist.

Usage: multicontact_peer.py RLTRAIN [--pairs cylinder-box,...] [--margins 0,0.01] [--poses N]
                            [--seed S] [--tol T] [--show K]
Prints one row per pair and margin: poses, MuJoCo's contact-count histogram, mismatched counts, the
worst difference; exit 1 when a count differs or a difference exceeds --tol, 77 without mujoco.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

try:
    import mujoco
    import numpy as np
except ImportError:
    print("multicontact_peer: the mujoco module is not installed; skipped")
    sys.exit(77)

# A hull with slanted sides (8 vertices) and a 12-sided prism: faces of 4 and 12 corners.
MESHES = """
    <mesh name="frustum" vertex="-0.3 -0.3 -0.1  0.3 -0.3 -0.1  0.3 0.3 -0.1  -0.3 0.3 -0.1
                                 -0.25 -0.25 0.1  0.25 -0.25 0.1  0.25 0.25 0.1  -0.25 0.25 0.1"/>
    <mesh name="prism" vertex="{prism}"/>"""


def prism_vertices(r=0.09, h=0.05, n=12):
    v = []
    for z in (-h, h):
        for k in range(n):
            a = 2 * np.pi * (k + 0.3) / n
            v += [r * np.cos(a), r * np.sin(a), z]
    return " ".join(f"{x:.6f}" for x in v)


SIZES = {"capsule": 'size="0.05 0.12"', "cylinder": 'size="0.08 0.06"', "box": 'size="0.1 0.08 0.06"',
         "mesh": 'mesh="prism"'}
BASE = {"capsule": 'size="0.1 0.25" euler="0 90 0"', "cylinder": 'size="0.3 0.1"',
        "box": 'size="0.3 0.3 0.1"', "mesh": 'mesh="frustum"'}


def model_xml(fixed, free, margin, keys):
    key_xml = "\n".join(f'    <key name="k{i}" qpos="{" ".join(f"{x:.17g}" for x in q)}"/>' for i, q in enumerate(keys))
    return f"""<mujoco model="multicontact {fixed} {free} margin {margin}">
  <option timestep="0.002"/>
  <asset>{MESHES.format(prism=prism_vertices())}
  </asset>
  <worldbody>
    <geom name="fixed" type="{fixed}" {BASE[fixed]}/>
    <body name="free" pos="0 0 0.4">
      <freejoint/>
      <geom name="free" type="{free}" {SIZES[free]} margin="{margin}"/>
    </body>
  </worldbody>
  <keyframe>
{key_xml}
  </keyframe>
</mujoco>
"""


def quat_mul(a, b):
    return np.array([a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
                     a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
                     a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
                     a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]])


def axis_angle(axis, angle):
    axis = np.asarray(axis, float)
    axis = axis / np.linalg.norm(axis)
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])


def random_poses(m, n, margin, rng):
    """n free-body poses near contact with the fixed geom (see the module doc)."""
    d = mujoco.MjData(m)
    poses = []
    quarter = [axis_angle([1, 0, 0], a) for a in (0, np.pi / 2, np.pi, -np.pi / 2)] + \
              [axis_angle([0, 1, 0], a) for a in (np.pi / 2, -np.pi / 2)]
    while len(poses) < n:
        kind = len(poses) % 3
        if kind == 0:
            q = rng.normal(size=4)
        else:
            q = quarter[rng.integers(len(quarter))]
            q = quat_mul(axis_angle([0, 0, 1], rng.uniform(-np.pi, np.pi)), q)
            if kind == 1:
                q = quat_mul(axis_angle(rng.normal(size=3), rng.uniform(1e-3, 0.08)), q)
        q = q / np.linalg.norm(q)
        xy = rng.uniform(-0.1, 0.1, 2)
        target = rng.uniform(-0.004, margin if margin > 0 else 0.0) if rng.random() < 0.85 else -0.004
        lo, hi = -0.5, 1.0
        for _ in range(60):  # bisection on the distance (monotone enough along z for these shapes)
            z = 0.5 * (lo + hi)
            d.qpos[:3] = [xy[0], xy[1], z]
            d.qpos[3:7] = q
            mujoco.mj_kinematics(m, d)
            dist = mujoco.mj_geomDistance(m, d, 0, 1, 1.0, None)
            if dist > target:
                hi = z
            else:
                lo = z
        d.qpos[2] = hi
        mujoco.mj_forward(m, d)
        if d.ncon == 0:
            continue
        poses.append(np.concatenate([[xy[0], xy[1], hi], q]))
    return poses


def compare(d, ours):
    # normals from geom1 to geom2: flipped where the two list the pair in the other order
    mj = [(np.array(c.pos), np.array(c.frame[:3]) * (-1 if c.geom1 > c.geom2 else 1), float(c.dist))
          for c in d.contact[:d.ncon]]
    rl = [(np.array(c["pos"]), np.array(c["normal"]) * (-1 if c["geom"][0] > c["geom"][1] else 1), float(c["dist"]))
          for c in ours]
    if len(mj) != len(rl):
        return None
    worst = 0.0
    used = set()
    for p, n, dist in mj:
        i = min((j for j in range(len(rl)) if j not in used), key=lambda j: np.linalg.norm(rl[j][0] - p))
        used.add(i)
        worst = max(worst, float(np.max(np.abs(rl[i][0] - p))), float(np.max(np.abs(rl[i][1] - n))),
                    abs(rl[i][2] - dist))
    return worst


def run_pair(rltrain, fixed, free, margin, npose, rng, show, workdir, tol):
    m0 = mujoco.MjModel.from_xml_string(model_xml(fixed, free, margin, [np.r_[0, 0, 0.4, 1, 0, 0, 0]]))
    poses = random_poses(m0, npose, margin, rng)
    xml = model_xml(fixed, free, margin, poses)
    path = os.path.join(workdir, f"{fixed}_{free}_{margin}.xml")
    with open(path, "w") as f:
        f.write(xml)
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    keys = [f"k{i}" for i in range(len(poses))]
    only = os.environ.get("MULTICONTACT_PEER_ONLY")  # debugging: one keyframe
    if only:
        keys = [only]
    cmd = [rltrain, "rollout", "--model", path, "--steps", "1", "--ctrl", "zero",
           "--out", os.path.join(workdir, "rl_{key}_{ctrl}.csv"),
           "--inspect", os.path.join(workdir, "inspect_{key}.json"), "--fields", "geom_type"]
    for k in keys:
        cmd += ["--key", k]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=workdir, timeout=600)
    if r.returncode != 0:
        return {"error": (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[0]}
    if os.environ.get("MULTICONTACT_PEER_STDERR"):
        print(r.stderr)
    hist, bad, worst, shown, beyond = {}, 0, 0.0, 0, 0
    for k in keys:
        mujoco.mj_resetDataKeyframe(m, d, int(k[1:]))
        mujoco.mj_forward(m, d)
        with open(os.path.join(workdir, f"inspect_{k}.json")) as f:
            ours = json.load(f)["forward"].get("contact", [])
        hist[d.ncon] = hist.get(d.ncon, 0) + 1
        w = compare(d, ours)
        if w is None:
            bad += 1
        else:
            worst = max(worst, w)
            beyond += w > tol
        if (w is None or w > tol) and shown < show:
            shown += 1
            print(f"  {fixed}-{free} margin {margin} key {k}: MuJoCo {d.ncon}, rltrain {len(ours)}, worst {w}")
            for c in d.contact[:d.ncon]:
                print(f"    mj {np.array2string(c.pos, precision=9)} {np.array2string(c.frame[:3], precision=9)} {c.dist:.9e}")
            for c in ours:
                print(f"    rl {np.array2string(np.array(c['pos']), precision=9)} "
                      f"{np.array2string(np.array(c['normal']), precision=9)} {c['dist']:.9e}")
    return {"poses": len(poses), "hist": dict(sorted(hist.items())), "count_mismatch": bad, "worst": worst,
            "beyond": beyond}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rltrain")
    ap.add_argument("--pairs", default="cylinder-cylinder,box-cylinder,mesh-cylinder,cylinder-box,cylinder-mesh,"
                    "box-mesh,mesh-mesh,mesh-box")
    ap.add_argument("--margins", default="0,0.01")
    ap.add_argument("--poses", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tol", type=float, default=1e-9)
    ap.add_argument("--show", type=int, default=0, help="print the first K differing poses of each pair")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    rltrain = os.path.abspath(a.rltrain)
    ok = True
    with tempfile.TemporaryDirectory() as workdir:
        for pair in a.pairs.split(","):
            fixed, free = pair.split("-")
            for margin in (float(x) for x in a.margins.split(",")):
                res = run_pair(rltrain, fixed, free, margin, a.poses, rng, a.show, workdir, a.tol)
                if "error" in res:
                    print(f"{fixed:>8} (fixed) {free:>8} (free) margin {margin:<5g} rltrain refuses: {res['error']}")
                    ok = False
                    continue
                good = res["count_mismatch"] == 0 and res["worst"] <= a.tol
                ok = ok and good
                print(f"{fixed:>8} (fixed) {free:>8} (free) margin {margin:<5g} poses {res['poses']:3d} "
                      f"MuJoCo counts {res['hist']} count mismatches {res['count_mismatch']:3d} "
                      f"worst {res['worst']:.2e}, {res['beyond']} beyond {a.tol:g} {'ok' if good else 'FAIL'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
