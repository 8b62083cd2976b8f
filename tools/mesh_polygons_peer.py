#!/usr/bin/env python3
"""Peer test: rltrain's compiled mesh polygons (mesh_poly*) against MuJoCo 3.17's, mesh by mesh.

Usage:
  mesh_polygons_peer.py RLTRAIN [MODEL.xml ...] [--corpus NAME ...] [--set data|corpus|all]
                        [--no-check] [--json]

Without models, --set (default all) picks the corpus files with colliding meshes (`corpus`, from
tools/mjcf_corpus.py: Menagerie's G1 with and without hands, Spot with and without arm, Barkour,
OP3, and Go1, whose meshes do not collide, so neither side has polygons) and the mesh files of
tests/data/mjcf (`data`). For each model, `rltrain inspect` (every compiled model array as JSON)
beside MuJoCo's mjModel, and for each mesh: mesh_polynum, then per polygon its vertex cycle
(mesh_polyvertnum, mesh_polyvert) in order, and the vertex-to-polygon map (mesh_polymapnum,
mesh_polymap) in order, all equal; mesh_polynormal in the frame of a geom that uses the mesh
(geom_quat takes back the mesh frame's own difference, ~1e-6 on nearly symmetric meshes, reported
apart) within NORMAL_ATOL, or on slivers within their sensitivity bound (below). Reported per mesh:
the polygons whose cycle equals MuJoCo's at the same index, those whose cycle MuJoCo has at some
index (order aside), those MuJoCo has wound the other way, the largest normal error.

multicontact (sim/multiccd.h) takes the first pair of aligned faces it finds among the polygons
through EPA's witness vertices, so the polygons' order decides which faces touch: it must be MuJoCo's.

Exit status: 0 equal (or --no-check), 1 a mismatch, 2 rltrain or MuJoCo refused a model, 77 `mujoco`
not importable or a corpus file missing (the check is skipped).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import mujoco
except Exception as e:  # ImportError, or a broken install
    print(f"SKIP: cannot import mujoco/numpy ({e!r}); `pip install mujoco` to run this peer test")
    sys.exit(77)

# Newell's normal in double in the compiled frame, as MuJoCo 3.17 (sim/mjcf_mesh.cpp): equal to
# rounding (1e-12), but on slivers (area ~1e-13 m^2), whose normals follow their corners' last bits:
# there within NORMAL_ATOL + VERTEX_RTOL * extent * edge / area (counted apart as "sliver").
NORMAL_ATOL = 1e-12
VERTEX_RTOL = 1e-15

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CORPUS = ("menagerie/unitree_g1/g1.xml", "menagerie/unitree_g1/g1_with_hands.xml",
                  "menagerie/boston_dynamics_spot/spot.xml", "menagerie/boston_dynamics_spot/spot_arm.xml",
                  "menagerie/google_barkour_vb/barkour_vb.xml", "menagerie/robotis_op3/op3.xml",
                  "menagerie/unitree_go1/go1.xml")
# The arrays of rltrain inspect's "model" that the comparison reads.
MESH_FIELDS = ("mesh_polyadr", "mesh_polynum", "mesh_polyvertadr", "mesh_polyvertnum", "mesh_polyvert",
               "mesh_polynormal", "mesh_polymapadr", "mesh_polymapnum", "mesh_polymap", "mesh_vertadr",
               "mesh_vertnum", "geom_quat")
DEFAULT_FILES = ("mesh_polygon_order.xml", "mesh_convex.xml", "mesh_plane.xml", "mesh_plane_polygons.xml",
                 "mesh_plane_normals.xml", "mesh_msh.xml", "multiccd_mesh.xml", "multiccd_margin.xml",
                 "multiccd_cylinder.xml")


def inspect(rltrain: str, model: str, tmp: str):
    out = os.path.join(tmp, "inspect.json")
    r = subprocess.run([rltrain, "inspect", "--model", model, "--out", out, "--fields", ",".join(MESH_FIELDS)],
                       capture_output=True, text=True, cwd=tmp, timeout=600)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[0]
    with open(out) as f:
        return json.load(f)["model"], ""


def cycles(polyadr, polynum, vertadr, vertnum, vert, i):
    return [tuple(int(x) for x in vert[vertadr[p]:vertadr[p] + vertnum[p]])
            for p in range(polyadr[i], polyadr[i] + polynum[i])]


def _quat_mat(q):
    r = np.zeros(9)
    mujoco.mju_quat2Mat(r, np.asarray(q, dtype=float))
    return r.reshape(3, 3)


def segments(adr, num, data, lo: int, count: int):
    """Segments lo .. lo+count-1 of a layout where segment s is data[adr[s]:adr[s] + num[s]] (a mesh's
    polygon cycles, a vertex's polygons): (their lengths, their values one after the other)."""
    lens = np.asarray(num[lo:lo + count], dtype=np.int64)
    starts = np.asarray(adr[lo:lo + count], dtype=np.int64)
    idx = np.repeat(starts - (np.cumsum(lens) - lens), lens) + np.arange(int(lens.sum()))
    return lens, np.asarray(data)[idx].astype(np.int64)


def segments_equal(a, b):
    """(per segment k below both counts: equal, all segments and their counts equal) of two segments()."""
    (la, va), (lb, vb) = a, b
    n = min(len(la), len(lb))
    if np.array_equal(la[:n], lb[:n]):
        end = int(la[:n].sum())
        eq = np.ones(n, dtype=bool)
        eq[np.repeat(np.arange(n), la[:n])[va[:end] != vb[:end]]] = False
    else:  # the lengths differ somewhere: segment by segment
        oa, ob = np.cumsum(la) - la, np.cumsum(lb) - lb
        eq = np.array([la[k] == lb[k] and np.array_equal(va[oa[k]:oa[k] + la[k]], vb[ob[k]:ob[k] + lb[k]])
                       for k in range(n)], dtype=bool)
    return eq, len(la) == len(lb) and bool(eq.all())


def compare_mesh(ours: dict, m, i: int) -> dict:
    """One mesh: our polygons against MuJoCo's (ours: MESH_FIELDS as numpy arrays; m: mjModel)."""
    o = ours
    rep = {"mesh": m.mesh(i).name, "polygons": int(m.mesh_polynum[i]), "ours": int(o["mesh_polynum"][i])}
    seg_t = segments(m.mesh_polyvertadr, m.mesh_polyvertnum, m.mesh_polyvert, int(m.mesh_polyadr[i]),
                     int(m.mesh_polynum[i]))
    seg_o = segments(o["mesh_polyvertadr"], o["mesh_polyvertnum"], o["mesh_polyvert"], int(o["mesh_polyadr"][i]),
                     int(o["mesh_polynum"][i]))
    in_place, cycles_equal = segments_equal(seg_o, seg_t)
    rep["in_place"] = int(in_place.sum())
    if cycles_equal:  # every cycle where MuJoCo has it
        rep["as_cycles"], rep["reversed"] = len(in_place), 0
    else:
        theirs = cycles(m.mesh_polyadr, m.mesh_polynum, m.mesh_polyvertadr, m.mesh_polyvertnum, m.mesh_polyvert, i)
        mine = cycles(o["mesh_polyadr"], o["mesh_polynum"], o["mesh_polyvertadr"], o["mesh_polyvertnum"],
                      o["mesh_polyvert"], i)
        have = set(theirs)
        rep["as_cycles"] = sum(1 for a in mine if a in have)
        # the same cycle up to its starting corner, wound the other way (a triangle's corners reversed)
        rev = {tuple(reversed(c)) for c in theirs}
        rep["reversed"] = sum(1 for a in mine if a not in have and any(
            tuple(a[k:] + a[:k]) in rev for k in range(len(a))))
    off_t = np.cumsum(seg_t[0]) - seg_t[0]
    pa, pa_o = int(m.mesh_polyadr[i]), int(o["mesh_polyadr"][i])
    n = len(in_place)
    # The normals in the frame of the first geom that uses the mesh: the mesh's own frame (its
    # principal axes) may be turned by ~1e-6 from MuJoCo's on nearly symmetric meshes (the eigen
    # solver's tolerance, docs/MJCF.md), which geom_quat takes back.
    geoms = [g for g in range(m.ngeom) if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH and m.geom_dataid[g] == i]
    rot_t = rot_o = np.eye(3)
    rep["frame_err"] = 0.0
    if geoms:
        g = geoms[0]
        q_o = np.asarray(ours["geom_quat"], dtype=float).reshape(-1, 4)[g]
        rot_t, rot_o = _quat_mat(m.geom_quat[g]), _quat_mat(q_o)
        rep["frame_err"] = float(np.max(np.abs(q_o - m.geom_quat[g])))
    rep["normal_err"] = rep["normal_err_in_place"] = 0.0
    rep["normal_over"] = rep["normal_sliver"] = 0
    if n:
        nt = np.asarray(m.mesh_polynormal[pa:pa + n]) @ rot_t.T
        no = o["mesh_polynormal"].reshape(-1, 3)[pa_o:pa_o + n] @ rot_o.T
        err = np.max(np.abs(nt - no), axis=1)
        rep["normal_err"] = float(np.max(err))
        rep["normal_err_in_place"] = float(np.max(err[in_place])) if in_place.any() else 0.0
        # a sliver's normal moves by about delta * edge / area when its corners move by delta: the
        # compiled vertices (double, before the float rounding) agree to ~VERTEX_RTOL of the mesh's
        # extent, the rotation into the principal frame rounding apart
        verts = np.asarray(m.mesh_vert[m.mesh_vertadr[i]:m.mesh_vertadr[i] + m.mesh_vertnum[i]], dtype=float)
        extent = float(np.max(np.abs(verts))) if len(verts) else 0.0
        for k in np.nonzero(err > NORMAL_ATOL)[0]:
            c = verts[seg_t[1][off_t[k]:off_t[k] + seg_t[0][k]]]
            d = np.roll(c, -1, axis=0)
            newell = np.sum(np.stack([(c[:, 1] - d[:, 1]) * (c[:, 2] + d[:, 2]), (c[:, 2] - d[:, 2]) * (c[:, 0] + d[:, 0]),
                                      (c[:, 0] - d[:, 0]) * (c[:, 1] + d[:, 1])], axis=1), axis=0)
            area = 0.5 * float(np.linalg.norm(newell))
            edge = float(np.max(np.linalg.norm(d - c, axis=1)))
            bound = NORMAL_ATOL + VERTEX_RTOL * extent * edge / max(area, 1e-300)
            if err[k] <= bound:
                rep["normal_sliver"] += 1
            else:
                rep["normal_over"] += 1
    va, nv = int(m.mesh_vertadr[i]), int(m.mesh_vertnum[i])
    map_eq, maps_equal = segments_equal(
        segments(o["mesh_polymapadr"], o["mesh_polymapnum"], o["mesh_polymap"], int(o["mesh_vertadr"][i]),
                 int(o["mesh_vertnum"][i])),
        segments(m.mesh_polymapadr, m.mesh_polymapnum, m.mesh_polymap, va, nv))
    rep["polymap_equal"] = int(map_eq.sum())
    rep["vertices"] = nv
    rep["pass"] = cycles_equal and maps_equal and rep["normal_over"] == 0
    return rep


def check_model(rltrain: str, path: str, tmp: str) -> tuple[int, dict]:
    try:
        m = mujoco.MjModel.from_xml_path(path)
    except Exception as e:  # noqa: BLE001 (MuJoCo's compile error)
        return 2, {"error": f"MuJoCo refuses it: {e}"}
    ours, err = inspect(rltrain, path, tmp)
    if ours is None:
        return 2, {"error": f"rltrain refuses it: {err}"}
    return compare_meshes(ours, m)


def compare_meshes(ours: dict, m) -> tuple[int, dict]:
    """Every mesh with polygons on either side (ours: rltrain inspect's "model", with MESH_FIELDS;
    m: MuJoCo's mjModel): (0 equal or 1, {"meshes": [compare_mesh per mesh]}); tools/mujoco_peer.py
    calls it on the corpus files of DEFAULT_CORPUS with the model it already compiled."""
    if len(ours.get("mesh_polynum", [])) != m.nmesh:
        return 1, {"error": f"{len(ours.get('mesh_polynum', []))} meshes, MuJoCo {m.nmesh}"}
    ours = {k: np.asarray(ours[k]) for k in MESH_FIELDS}  # once per model, not once per mesh
    meshes = [compare_mesh(ours, m, i) for i in range(m.nmesh) if m.mesh_polynum[i] or ours["mesh_polynum"][i]]
    return (0 if all(r["pass"] for r in meshes) else 1), {"meshes": meshes}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rltrain")
    ap.add_argument("models", nargs="*", help="MJCF files (default: the corpus robots and tests/data/mjcf meshes)")
    ap.add_argument("--corpus", action="append", default=None, metavar="NAME",
                    help="a corpus file by its name (tools/mjcf_corpus.py), e.g. menagerie/unitree_g1/g1.xml")
    ap.add_argument("--set", default="all", choices=("data", "corpus", "all"),
                    help="without models or --corpus: the default files of tests/data/mjcf, of the corpus, or both")
    ap.add_argument("--no-check", action="store_true", help="report only; exit 0 unless a model is refused")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    rltrain = os.path.abspath(a.rltrain)
    targets = [(os.path.abspath(p), p) for p in a.models]
    defaults = not a.models and a.corpus is None
    names = a.corpus if a.corpus is not None else (list(DEFAULT_CORPUS) if defaults and a.set != "data" else [])
    if names:
        sys.path.insert(0, HERE)
        import mjcf_corpus  # noqa: PLC0415
        found = {f.name: f.path for f in mjcf_corpus.locate_corpus()}
        missing = [n for n in names if n not in found]
        if missing:
            print(f"SKIP: corpus files missing: {', '.join(missing)} (tools/setup.sh --test installs them)")
            return 77
        targets += [(found[n], n) for n in names]
    if defaults and a.set != "corpus":
        data = os.path.join(os.path.dirname(HERE), "tests", "data", "mjcf")
        targets += [(os.path.join(data, f), f"tests/data/mjcf/{f}") for f in DEFAULT_FILES]
    reports, codes = [], []
    with tempfile.TemporaryDirectory(prefix="mesh_polygons_peer_") as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)  # MuJoCo writes MUJOCO_LOG.TXT into the working directory
        try:
            for path, name in targets:
                code, rep = check_model(rltrain, path, tmp)
                rep["name"] = name
                reports.append(rep)
                codes.append(code)
        finally:
            os.chdir(cwd)
    if a.json:
        print(json.dumps(reports, indent=1))
    else:
        tot = {"meshes": 0, "meshes_pass": 0, "polygons": 0, "in_place": 0, "as_cycles": 0, "reversed": 0,
               "normal_sliver": 0, "normal_over": 0}
        for rep in reports:
            if "error" in rep:
                print(f"{rep['name']}: {rep['error']}")
                continue
            meshes = rep["meshes"]
            print(f"{rep['name']}: {sum(r['pass'] for r in meshes)} of {len(meshes)} meshes equal")
            for r in meshes:
                tot["meshes"] += 1
                tot["meshes_pass"] += r["pass"]
                for k in ("polygons", "in_place", "as_cycles", "reversed", "normal_sliver", "normal_over"):
                    tot[k] += r[k]
                print(f"  {'ok  ' if r['pass'] else 'DIFF'} {r['mesh']}: {r['polygons']} polygons (ours {r['ours']}), "
                      f"{r['in_place']} in place, {r['as_cycles']} as cycles, {r['reversed']} reversed; "
                      f"polymap {r['polymap_equal']} of {r['vertices']} vertices; normals within "
                      f"{r['normal_err']:.1e} ({r['normal_err_in_place']:.1e} where in place; "
                      f"{r['normal_sliver']} slivers within their bound, {r['normal_over']} over; mesh frame "
                      f"{r['frame_err']:.0e} off)")
        print(f"total: {tot['meshes_pass']} of {tot['meshes']} meshes equal; {tot['in_place']} of {tot['polygons']} "
              f"polygons in place, {tot['as_cycles']} as cycles, {tot['reversed']} reversed; normals beyond "
              f"{NORMAL_ATOL:g}: {tot['normal_sliver']} slivers within their bound, {tot['normal_over']} over")
        print("PASS" if all(c == 0 for c in codes) else "FAIL")
    if any(c == 2 for c in codes):
        return 2
    return 0 if all(c == 0 for c in codes) or a.no_check else 1


if __name__ == "__main__":
    sys.exit(main())
