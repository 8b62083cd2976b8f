// MuJoCo's convex-collision object (mjCCDObj) of one geom for sim/mjccd.h: its support function
// and, for a mesh, the hull polygons that multicontact (sim/multiccd.h) reads. Single source.
#pragma once

#include "sim/common.h"
#include "sim/mjccd.h"
#include "sim/model_view.h"
#include "sim/spatial.h"

namespace rlt::mjccd {

// MuJoCo's mjCCDObj of a geom (engine_collision_convex.c's mjc_initCCDObj and support functions:
// sphere, capsule, ellipsoid, cylinder, box with its corner id, a mesh with its vertex id), in the
// frame its pos and mat are given in (the world; sim/hfield.h: the field's frame); margin: the
// pair's active margin, half of it added by sim/mjccd.h's support(). A mesh also carries its hull
// polygons (MuJoCo's mesh_poly* arrays) for multicontact (sim/multiccd.h).
template <class T>
struct GeomObj {
  int type;
  T pos[3], mat[9], size[3];
  T margin;
  int vertindex = -1;
  bool discrete;
  const T* vert = nullptr;       // mesh: mesh_vert + 3 mesh_vertadr, mesh_vertnum of them
  int nvert = 0;
  const int* hull = nullptr;     // mesh: mesh_graph + mesh_graphadr (nullptr: none)
  const int* extrema = nullptr;  // mesh: mesh_extrema + 27 id (nullptr: none)
  int meshindex = -1;            // the last hill-climbing result (hull id; MuJoCo's warm start)
  bool core = false;             // a capsule as its segment (MuJoCo's mjc_lineSupport), the radius apart
  // mesh polygons (sim/model_fields.h mesh_poly*; polynum 0: none, no multicontact)
  int polynum = 0;
  const int* polymapadr = nullptr;  // mesh_polymapadr + mesh_vertadr: per vertex, into polymap
  const int* polymapnum = nullptr;  // mesh_polymapnum + mesh_vertadr
  const int* polymap = nullptr;     // mesh_polymap (polygon ids within the mesh)
  const T* polynormal = nullptr;    // mesh_polynormal + 3 mesh_polyadr (mesh frame)
  const int* polyvertadr = nullptr; // mesh_polyvertadr + mesh_polyadr, into polyvert
  const int* polyvertnum = nullptr; // mesh_polyvertnum + mesh_polyadr
  const int* polyvert = nullptr;    // mesh_polyvert (vertex ids within the mesh)
  // A mesh's support vertex along the local direction l (its mesh id, also left in vertindex), as
  // MuJoCo: below 10 vertices or without a hull, every vertex from the last one found
  // (mjc_meshSupport); else hill climbing on the hull from the better of the last vertex and
  // l's cell of mesh_extrema (mjc_hillclimbSupport).
  RLT_HD int mesh_support(const T l[3]) {
    if (!hull || nvert < 10 || !extrema) {
      T best = T(-3.402823466e38);
      int imax = 0;
      if (vertindex >= 0) imax = vertindex, best = mjccd::v3::dot(l, vert + 3 * imax);
      for (int i = 0; i < nvert; ++i) {
        const T d = mjccd::v3::dot(l, vert + 3 * i);
        if (d > best) best = d, imax = i;
      }
      return vertindex = imax;
    }
    const int nh = hull[0];
    const int* edgeadr = hull + 2;
    const int* ids = hull + 2 + nh;
    const int* edges = hull + 2 + 2 * nh;
    const int cx = (l[0] > T(0.4)) - (l[0] < T(-0.4)) + 1, cy = (l[1] > T(0.4)) - (l[1] < T(-0.4)) + 1,
              cz = (l[2] > T(0.4)) - (l[2] < T(-0.4)) + 1;
    const int seed = extrema[9 * cx + 3 * cy + cz];
    int imax = seed;
    if (meshindex >= 0) {
      const T cached = mjccd::v3::dot(l, vert + 3 * ids[meshindex]), seeded = mjccd::v3::dot(l, vert + 3 * ids[seed]);
      imax = seeded > cached ? seed : meshindex;
    }
    T best = mjccd::v3::dot(l, vert + 3 * ids[imax]);
    for (int prev = -1, guard = 0; imax != prev && guard <= nh; ++guard) {  // each move strictly better
      prev = imax;
      for (int i = edgeadr[prev]; edges[i] >= 0; ++i) {
        const T d = mjccd::v3::dot(l, vert + 3 * ids[edges[i]]);
        if (d > best) best = d, imax = edges[i];
      }
    }
    meshindex = imax;
    return vertindex = ids[imax];
  }
  RLT_HD void center(T res[3]) const { mjccd::v3::copy(res, pos); }
  RLT_HD void to_global(T res[3], const T l[3]) const {
    res[0] = mat[0] * l[0] + mat[1] * l[1] + mat[2] * l[2];
    res[1] = mat[3] * l[0] + mat[4] * l[1] + mat[5] * l[2];
    res[2] = mat[6] * l[0] + mat[7] * l[1] + mat[8] * l[2];
    res[0] += pos[0], res[1] += pos[1], res[2] += pos[2];
  }
  RLT_HD void support(T res[3], const T dir[3]) {
    if (core && type == kGeomCapsule) {  // MuJoCo's mjc_lineSupport: the capsule's segment
      const T t = mat[2] * dir[0] + mat[5] * dir[1] + mat[8] * dir[2];
      const T h = t >= T(0) ? size[1] : -size[1];
      res[0] = mat[2] * h + pos[0], res[1] = h * mat[5] + pos[1], res[2] = h * mat[8] + pos[2];
      return;
    }
    if (type == kGeomSphere) {
      for (int i = 0; i < 3; ++i) res[i] = size[0] * dir[i] + pos[i];
      return;
    }
    T l[3], s[3];
    mjccd::v3::mul_mat_t_vec(l, mat, dir);
    switch (type) {
      case kGeomCapsule:
        for (int i = 0; i < 3; ++i) s[i] = l[i] * size[0];
        s[2] += l[2] >= T(0) ? size[1] : -size[1];
        break;
      case kGeomEllipsoid: {
        for (int i = 0; i < 3; ++i) s[i] = l[i] * size[i];
        const T n2 = s[0] * s[0] + s[1] * s[1] + s[2] * s[2];
        if (n2 < mjccd::Limits<T>::minval2) {
          for (int i = 0; i < 3; ++i) res[i] = mat[3 * i] * size[0] + pos[i];
          return;
        }
        const T inv = T(1) / m_sqrt(n2);
        for (int i = 0; i < 3; ++i) s[i] *= inv * size[i];
        break;
      }
      case kGeomCylinder: {
        const T n2 = l[0] * l[0] + l[1] * l[1];
        const T scl = n2 >= mjccd::Limits<T>::minval2 ? size[0] / m_sqrt(n2) : T(0);
        s[0] = scl * l[0], s[1] = scl * l[1];
        s[2] = l[2] >= T(0) ? size[1] : -size[1];
        vertindex = l[2] >= T(0) ? 0 : 1;  // MuJoCo 3.17: the cap (0 top, 1 bottom), for multicontact
        break;
      }
      case kGeomMesh:
        mjccd::v3::copy(s, vert + 3 * mesh_support(l));
        break;
      default:  // box
        for (int i = 0; i < 3; ++i) s[i] = l[i] >= T(0) ? size[i] : -size[i];
        vertindex = (s[0] > T(0) ? 1 : 0) | (s[1] > T(0) ? 2 : 0) | (s[2] > T(0) ? 4 : 0);
        break;
    }
    to_global(res, s);
  }
};

// Geom g as MuJoCo's mjc_initCCDObj makes it: center c and axes r (world), margin the pair's
// active margin; a mesh with its hull graph, extrema and polygons.
template <class T>
RLT_HD void init_geom_obj(GeomObj<T>* obj, const ModelView<T>& m, int g, const Vec3<T>& c, const Mat3<T>& r,
                          T margin) {
  obj->type = m.geom_type[g], obj->margin = margin;
  obj->discrete = obj->type == kGeomBox || obj->type == kGeomMesh;
  obj->vertindex = obj->meshindex = -1;
  obj->core = false;
  c.store(obj->pos), r.store(obj->mat);
  for (int k = 0; k < 3; ++k) obj->size[k] = m.geom_size[3 * g + k];
  if (obj->type != kGeomMesh) return;
  const int id = m.geom_dataid[g];
  const int va = m.mesh_vertadr[id];
  obj->vert = m.mesh_vert + 3 * va;
  obj->nvert = m.mesh_vertnum[id];
  obj->hull = m.mesh_graphadr[id] >= 0 ? m.mesh_graph + m.mesh_graphadr[id] : nullptr;
  obj->extrema = m.mesh_extrema ? m.mesh_extrema + 27 * id : nullptr;
  if (m.mesh_polynum == nullptr) return;
  const int pa = m.mesh_polyadr[id];
  obj->polynum = m.mesh_polynum[id];
  obj->polymapadr = m.mesh_polymapadr + va, obj->polymapnum = m.mesh_polymapnum + va;
  obj->polymap = m.mesh_polymap;
  obj->polynormal = m.mesh_polynormal + 3 * pa;
  obj->polyvertadr = m.mesh_polyvertadr + pa, obj->polyvertnum = m.mesh_polyvertnum + pa;
  obj->polyvert = m.mesh_polyvert;
}

}  // namespace rlt::mjccd
