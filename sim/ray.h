// Ray casting (MuJoCo 3's engine_ray.c), single source: the distance along a ray p + x v (x >= 0)
// to the nearest geom surface, -1 when nothing is hit, and optionally the surface's unit normal there
// (MuJoCo 3's: outward for primitives, the box face's, (v0 - v2) x (v1 - v2) for a mesh or height-field
// triangle whatever side the ray comes from, the side's for a height field's walls). x is in units of |v| (MuJoCo's: v
// need not be a unit vector). Used by the rangefinder sensor (sim/sensors.h).
//
//   ray_geom_local  plane (only its front face, only within its rendered rectangle when its sizes are
//                   positive), sphere, capsule, ellipsoid, cylinder, box: MuJoCo's mju_rayGeom
//   ray_mesh        the mesh's triangles (mesh_face, not its convex hull) after a test against the
//                   box of half sizes geom_size about the geom's origin (MuJoCo's mj_rayMesh; its
//                   BVH only prunes, every triangle the ray crosses is tested here)
//   ray_hfield      the base box, then the grid's triangles under the ray's segment through the top
//                   box and the top box's four sides (MuJoCo's mj_rayHfield)
//   ray_cast        every geom but those of body `bodyexclude` and those MuJoCo's mj_ray skips as
//                   invisible (geom_invisible: rgba alpha 0 without a material, or a material of
//                   alpha 0); static geoms included, no group filter (the rangefinder's mj_ray call:
//                   geomgroup NULL, flg_static 1). Returns the nearest distance and its geom.
// Plain arrays and MuJoCo's arithmetic, step for step, so that distances agree to rounding.
#pragma once

#include "sim/common.h"
#include "sim/dynamics.h"
#include "sim/model_view.h"

namespace rlt {

namespace ray_detail {

constexpr double kMinVal = 1e-15;  // mjMINVAL

template <class T>
RLT_HD RLT_INLINE T r_abs(T x) {
  return x < T(0) ? -x : x;
}
template <class T>
RLT_HD RLT_INLINE T dot3(const T* a, const T* b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
template <class T>
RLT_HD RLT_INLINE void normalize3(T* a) {
  const T n = m_sqrt(dot3(a, a));
  if (n < T(kMinVal)) {
    a[0] = T(1), a[1] = a[2] = T(0);
  } else {
    a[0] /= n, a[1] /= n, a[2] /= n;
  }
}

template <class T>
RLT_HD RLT_INLINE void zero3(T* a) {
  a[0] = a[1] = a[2] = T(0);
}
// a = mat v (mat row-major; a may be v)
template <class T>
RLT_HD RLT_INLINE void mat_vec3(T* a, const T* mat, const T* v) {
  const T t[3] = {v[0], v[1], v[2]};
  for (int k = 0; k < 3; ++k) a[k] = mat[3 * k] * t[0] + mat[3 * k + 1] * t[1] + mat[3 * k + 2] * t[2];
}

// The ray in the frame (pos, mat row-major): lpnt = mat^T (pnt - pos), lvec = mat^T vec.
template <class T>
RLT_HD void ray_map(const T* pos, const T* mat, const T* pnt, const T* vec, T* lpnt, T* lvec) {
  const T dif[3] = {pnt[0] - pos[0], pnt[1] - pos[1], pnt[2] - pos[2]};
  lpnt[0] = mat[0] * dif[0] + mat[3] * dif[1] + mat[6] * dif[2];
  lpnt[1] = mat[1] * dif[0] + mat[4] * dif[1] + mat[7] * dif[2];
  lpnt[2] = mat[2] * dif[0] + mat[5] * dif[1] + mat[8] * dif[2];
  lvec[0] = mat[0] * vec[0] + mat[3] * vec[1] + mat[6] * vec[2];
  lvec[1] = mat[1] * vec[0] + mat[4] * vec[1] + mat[7] * vec[2];
  lvec[2] = mat[2] * vec[0] + mat[5] * vec[1] + mat[8] * vec[2];
}

// Both real roots x[0] <= x[1] of a x^2 + 2 b x + c = 0 (-1 -1 when none); returns the smallest
// non-negative one, -1 if none (MuJoCo's ray_quad).
template <class T>
RLT_HD T ray_quad(T a, T b, T c, T* x) {
  T det = b * b - a * c;
  if (det < T(0) || a < T(kMinVal)) {
    x[0] = x[1] = T(-1);
    return T(-1);
  }
  det = m_sqrt(det);
  x[0] = (-b - det) / a;
  x[1] = (-b + det) / a;
  return x[0] >= T(0) ? x[0] : x[1] >= T(0) ? x[1] : T(-1);
}

// The triangle v (3 vertices) against the ray (lpnt, lvec), b0 and b1 spanning the plane normal to
// lvec (MuJoCo's ray_triangle). normal (optional): the unit normal (v0 - v2) x (v1 - v2) of a hit,
// whatever side the ray comes from (MuJoCo's), else 0.
template <class T>
RLT_HD T ray_triangle(const T v[3][3], const T* lpnt, const T* lvec, const T* b0, const T* b1, T* normal = nullptr) {
  if (normal) zero3(normal);
  T dif[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) dif[i][j] = v[i][j] - lpnt[j];
  T planar[3][2];
  for (int i = 0; i < 3; ++i) planar[i][0] = dot3(b0, dif[i]), planar[i][1] = dot3(b1, dif[i]);
  // all three on one side of an axis: no hit
  if ((planar[0][0] > 0 && planar[1][0] > 0 && planar[2][0] > 0) ||
      (planar[0][0] < 0 && planar[1][0] < 0 && planar[2][0] < 0) ||
      (planar[0][1] > 0 && planar[1][1] > 0 && planar[2][1] > 0) ||
      (planar[0][1] < 0 && planar[1][1] < 0 && planar[2][1] < 0))
    return T(-1);
  // the origin inside the projected triangle: A t = b with A = (p0 - p2, p1 - p2), b = -p2
  const T A[4] = {planar[0][0] - planar[2][0], planar[1][0] - planar[2][0], planar[0][1] - planar[2][1],
                  planar[1][1] - planar[2][1]};
  const T b[2] = {-planar[2][0], -planar[2][1]};
  const T det = A[0] * A[3] - A[1] * A[2];
  if (r_abs(det) < T(kMinVal)) return T(-1);
  const T t0 = (A[3] * b[0] - A[1] * b[1]) / det;
  const T t1 = (-A[2] * b[0] + A[0] * b[1]) / det;
  if (t0 < T(0) || t1 < T(0) || t0 + t1 > T(1)) return T(-1);
  // the ray against the triangle's plane
  const T e0[3] = {v[0][0] - v[2][0], v[0][1] - v[2][1], v[0][2] - v[2][2]};
  const T e1[3] = {v[1][0] - v[2][0], v[1][1] - v[2][1], v[1][2] - v[2][2]};
  const T lp[3] = {lpnt[0] - v[2][0], lpnt[1] - v[2][1], lpnt[2] - v[2][2]};
  T nrm[3] = {e0[1] * e1[2] - e0[2] * e1[1], e0[2] * e1[0] - e0[0] * e1[2], e0[0] * e1[1] - e0[1] * e1[0]};
  const T denom = dot3(lvec, nrm);
  if (r_abs(denom) < T(kMinVal)) return T(-1);
  const T x = -dot3(lp, nrm) / denom;
  if (normal) normalize3(nrm), normal[0] = nrm[0], normal[1] = nrm[1], normal[2] = nrm[2];
  return x;
}

// b0, b1: an orthonormal basis of the plane normal to lvec (MuJoCo's construction).
template <class T>
RLT_HD void normal_plane_basis(const T* lvec, T* b0, T* b1) {
  b0[0] = b0[1] = b0[2] = T(1);
  if (r_abs(lvec[0]) >= r_abs(lvec[1]) && r_abs(lvec[0]) >= r_abs(lvec[2])) b0[0] = T(0);
  else if (r_abs(lvec[1]) >= r_abs(lvec[2])) b0[1] = T(0);
  else b0[2] = T(0);
  const T s = -dot3(lvec, b0) / dot3(lvec, lvec);
  for (int k = 0; k < 3; ++k) b1[k] = b0[k] + s * lvec[k];
  normalize3(b1);
  b0[0] = b1[1] * lvec[2] - b1[2] * lvec[1];
  b0[1] = b1[2] * lvec[0] - b1[0] * lvec[2];
  b0[2] = b1[0] * lvec[1] - b1[1] * lvec[0];
  normalize3(b0);
}

// Each primitive below: normal (optional) gets the unit outward surface normal at the hit (world),
// as MuJoCo 3's mju_rayGeom computes it, or 0 on a miss.
template <class T>
RLT_HD T ray_plane(const T* pos, const T* mat, const T* size, const T* pnt, const T* vec, T* normal = nullptr) {
  if (normal) zero3(normal);
  T lpnt[3], lvec[3];
  ray_map(pos, mat, pnt, vec, lpnt, lvec);
  if (lvec[2] > -T(kMinVal)) return T(-1);  // not towards the front face
  const T x = -lpnt[2] / lvec[2];
  if (x < T(0)) return T(-1);
  const T p0 = lpnt[0] + x * lvec[0], p1 = lpnt[1] + x * lvec[1];
  // only within the rendered rectangle
  if ((size[0] <= T(0) || r_abs(p0) <= size[0]) && (size[1] <= T(0) || r_abs(p1) <= size[1])) {
    if (normal) normal[0] = mat[2], normal[1] = mat[5], normal[2] = mat[8];
    return x;
  }
  return T(-1);
}

// A sphere of squared radius dist_sqr about pos (the world frame: no rotation needed).
template <class T>
RLT_HD T ray_sphere(const T* pos, T dist_sqr, const T* pnt, const T* vec, T* normal = nullptr) {
  const T dif[3] = {pnt[0] - pos[0], pnt[1] - pos[1], pnt[2] - pos[2]};
  const T a = vec[0] * vec[0] + vec[1] * vec[1] + vec[2] * vec[2];
  const T b = vec[0] * dif[0] + vec[1] * dif[1] + vec[2] * dif[2];
  const T c = dif[0] * dif[0] + dif[1] * dif[1] + dif[2] * dif[2] - dist_sqr;
  T xx[2];
  const T x = ray_quad(a, b, c, xx);
  if (normal) {
    if (x < T(0)) {
      zero3(normal);
    } else {
      for (int k = 0; k < 3; ++k) normal[k] = pnt[k] + vec[k] * x - pos[k];
      normalize3(normal);
    }
  }
  return x;
}

template <class T>
RLT_HD T ray_capsule(const T* pos, const T* mat, const T* size, const T* pnt, const T* vec, T* normal = nullptr) {
  if (normal) zero3(normal);
  const T ssz = size[0] + size[1];
  if (ray_sphere(pos, ssz * ssz, pnt, vec) < T(0)) return T(-1);  // bounding sphere
  T lpnt[3], lvec[3];
  ray_map(pos, mat, pnt, vec, lpnt, lvec);
  T x = T(-1), xx[2];
  int part = 0;  // -1 the bottom cap, 0 the round side, 1 the top cap
  // the round side, between the flat ends
  T a = lvec[0] * lvec[0] + lvec[1] * lvec[1];
  T b = lvec[0] * lpnt[0] + lvec[1] * lpnt[1];
  T c = lpnt[0] * lpnt[0] + lpnt[1] * lpnt[1] - size[0] * size[0];
  const T sol = ray_quad(a, b, c, xx);
  if (sol >= T(0) && r_abs(lpnt[2] + sol * lvec[2]) <= size[1]) x = sol;
  // the top half-sphere, then the bottom one
  T ldif[3] = {lpnt[0], lpnt[1], lpnt[2] - size[1]};
  a = dot3(lvec, lvec);
  b = dot3(lvec, ldif);
  c = dot3(ldif, ldif) - size[0] * size[0];
  ray_quad(a, b, c, xx);
  for (int i = 0; i < 2; ++i)
    if (xx[i] >= T(0) && lpnt[2] + xx[i] * lvec[2] >= size[1] && (x < T(0) || xx[i] < x)) x = xx[i], part = 1;
  ldif[2] = lpnt[2] + size[1];
  b = dot3(lvec, ldif);
  c = dot3(ldif, ldif) - size[0] * size[0];
  ray_quad(a, b, c, xx);
  for (int i = 0; i < 2; ++i)
    if (xx[i] >= T(0) && lpnt[2] + xx[i] * lvec[2] <= -size[1] && (x < T(0) || xx[i] < x)) x = xx[i], part = -1;
  if (normal && x >= T(0)) {
    normal[0] = lpnt[0] + lvec[0] * x;
    normal[1] = lpnt[1] + lvec[1] * x;
    normal[2] = part == 0 ? T(0) : lpnt[2] + lvec[2] * x - size[1] * T(part);
    normalize3(normal);
    mat_vec3(normal, mat, normal);
  }
  return x;
}

template <class T>
RLT_HD T ray_ellipsoid(const T* pos, const T* mat, const T* size, const T* pnt, const T* vec, T* normal = nullptr) {
  T lpnt[3], lvec[3];
  ray_map(pos, mat, pnt, vec, lpnt, lvec);
  const T s[3] = {T(1) / (size[0] * size[0]), T(1) / (size[1] * size[1]), T(1) / (size[2] * size[2])};
  const T a = s[0] * lvec[0] * lvec[0] + s[1] * lvec[1] * lvec[1] + s[2] * lvec[2] * lvec[2];
  const T b = s[0] * lvec[0] * lpnt[0] + s[1] * lvec[1] * lpnt[1] + s[2] * lvec[2] * lpnt[2];
  const T c = s[0] * lpnt[0] * lpnt[0] + s[1] * lpnt[1] * lpnt[1] + s[2] * lpnt[2] * lpnt[2] - T(1);
  T xx[2];
  const T x = ray_quad(a, b, c, xx);
  if (normal) {
    if (x < T(0)) {
      zero3(normal);
    } else {  // the gradient of the ellipsoid's function at the hit
      for (int k = 0; k < 3; ++k) normal[k] = s[k] * (lpnt[k] + lvec[k] * x);
      normalize3(normal);
      mat_vec3(normal, mat, normal);
    }
  }
  return x;
}

template <class T>
RLT_HD T ray_cylinder(const T* pos, const T* mat, const T* size, const T* pnt, const T* vec, T* normal = nullptr) {
  if (normal) zero3(normal);
  const T ssz = size[0] * size[0] + size[1] * size[1];
  if (ray_sphere(pos, ssz, pnt, vec) < T(0)) return T(-1);  // bounding sphere
  T lpnt[3], lvec[3];
  ray_map(pos, mat, pnt, vec, lpnt, lvec);
  T x = T(-1);
  int part = 0;  // -1 the bottom, 0 the round side, 1 the top
  // the flat ends
  if (r_abs(lvec[2]) > T(kMinVal)) {
    for (int side = -1; side <= 1; side += 2) {
      const T sol = (T(side) * size[1] - lpnt[2]) / lvec[2];
      if (sol >= T(0)) {
        const T p0 = lpnt[0] + sol * lvec[0], p1 = lpnt[1] + sol * lvec[1];
        if (p0 * p0 + p1 * p1 <= size[0] * size[0] && (x < T(0) || sol < x)) x = sol, part = side;
      }
    }
  }
  // the round side, between the ends
  const T a = lvec[0] * lvec[0] + lvec[1] * lvec[1];
  const T b = lvec[0] * lpnt[0] + lvec[1] * lpnt[1];
  const T c = lpnt[0] * lpnt[0] + lpnt[1] * lpnt[1] - size[0] * size[0];
  T xx[2];
  const T sol = ray_quad(a, b, c, xx);
  if (sol >= T(0) && r_abs(lpnt[2] + sol * lvec[2]) <= size[1] && (x < T(0) || sol < x)) x = sol, part = 0;
  if (normal && x >= T(0)) {
    if (part == 0) {
      normal[0] = lpnt[0] + lvec[0] * x, normal[1] = lpnt[1] + lvec[1] * x, normal[2] = T(0);
      normalize3(normal);
    } else {
      normal[0] = normal[1] = T(0), normal[2] = T(part);
    }
    mat_vec3(normal, mat, normal);
  }
  return x;
}

// The box of half sizes `size`; `all` (optional) gets the distance to each face the ray crosses
// within it (-x, +x, -y, +y, -z, +z; -1 for the others), as MuJoCo's ray_box.
template <class T>
RLT_HD T ray_box(const T* pos, const T* mat, const T* size, const T* pnt, const T* vec, T* all, T* normal = nullptr) {
  if (normal) zero3(normal);
  if (all)
    for (int k = 0; k < 6; ++k) all[k] = T(-1);
  const T ssz = size[0] * size[0] + size[1] * size[1] + size[2] * size[2];
  if (ray_sphere(pos, ssz, pnt, vec) < T(0)) return T(-1);  // bounding sphere
  const int iface[3][2] = {{1, 2}, {0, 2}, {0, 1}};
  T lpnt[3], lvec[3];
  ray_map(pos, mat, pnt, vec, lpnt, lvec);
  T x = T(-1);
  int face_axis = 0, face_side = 0;
  for (int i = 0; i < 3; ++i) {
    if (!(r_abs(lvec[i]) > T(kMinVal))) continue;
    for (int side = -1; side <= 1; side += 2) {
      const T sol = (T(side) * size[i] - lpnt[i]) / lvec[i];
      if (sol < T(0)) continue;
      const T p0 = lpnt[iface[i][0]] + sol * lvec[iface[i][0]];
      const T p1 = lpnt[iface[i][1]] + sol * lvec[iface[i][1]];
      if (r_abs(p0) <= size[iface[i][0]] && r_abs(p1) <= size[iface[i][1]]) {
        if (x < T(0) || sol < x) x = sol, face_axis = i, face_side = side;
        if (all) all[2 * i + (side + 1) / 2] = sol;
      }
    }
  }
  if (normal && x >= T(0)) {
    T n[3] = {T(0), T(0), T(0)};
    n[face_axis] = T(face_side);
    mat_vec3(normal, mat, n);
  }
  return x;
}

}  // namespace ray_detail

// A primitive geom (plane, sphere, capsule, ellipsoid, cylinder, box) at pos with orientation mat
// (row-major), MuJoCo's sizes; -1 for other types (MuJoCo's mju_rayGeom). normal (optional): the
// surface normal at the hit (world), 0 on a miss.
template <class T>
RLT_HD T ray_geom_local(const T* pos, const T* mat, const T* size, const T* pnt, const T* vec, int type,
                        T* normal = nullptr) {
  using namespace ray_detail;
  switch (type) {
    case kGeomPlane:
      return ray_plane(pos, mat, size, pnt, vec, normal);
    case kGeomSphere:
      return ray_sphere(pos, size[0] * size[0], pnt, vec, normal);
    case kGeomCapsule:
      return ray_capsule(pos, mat, size, pnt, vec, normal);
    case kGeomEllipsoid:
      return ray_ellipsoid(pos, mat, size, pnt, vec, normal);
    case kGeomCylinder:
      return ray_cylinder(pos, mat, size, pnt, vec, normal);
    case kGeomBox:
      return ray_box(pos, mat, size, pnt, vec, static_cast<T*>(nullptr), normal);
    default:
      if (normal) zero3(normal);
      return T(-1);
  }
}

// Mesh geom g: its triangles (MuJoCo's mj_rayMesh; see the header).
template <class T>
RLT_HD T ray_mesh(const ModelView<T>& m, const DataView<T>& d, int g, const T* pnt, const T* vec, T* normal = nullptr) {
  using namespace ray_detail;
  if (normal) zero3(normal);
  const T* xpos = d.geom_xpos + 3 * g;
  const T* xmat = d.geom_xmat + 9 * g;
  if (ray_box(xpos, xmat, m.geom_size + 3 * g, pnt, vec, static_cast<T*>(nullptr)) < T(0)) return T(-1);
  const int mesh = m.geom_dataid[g];
  if (mesh < 0 || m.mesh_facenum == nullptr) return T(-1);
  T lpnt[3], lvec[3], b0[3], b1[3];
  ray_map(xpos, xmat, pnt, vec, lpnt, lvec);
  normal_plane_basis(lvec, b0, b1);
  const T* vert = m.mesh_vert + 3 * m.mesh_vertadr[mesh];
  const int* face = m.mesh_face + 3 * m.mesh_faceadr[mesh];
  T x = T(-1);
  for (int f = 0; f < m.mesh_facenum[mesh]; ++f) {
    T v[3][3];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) v[i][j] = vert[3 * face[3 * f + i] + j];
    T tri_normal[3];
    const T sol = ray_triangle(v, lpnt, lvec, b0, b1, normal ? tri_normal : static_cast<T*>(nullptr));
    if (sol >= T(0) && (x < T(0) || sol < x)) {
      x = sol;
      if (normal) normal[0] = tri_normal[0], normal[1] = tri_normal[1], normal[2] = tri_normal[2];
    }
  }
  if (normal && x >= T(0)) mat_vec3(normal, xmat, normal);
  return x;
}

// Height-field geom g (MuJoCo's mj_rayHfield; see the header).
template <class T>
RLT_HD T ray_hfield(const ModelView<T>& m, const DataView<T>& d, int g, const T* pnt, const T* vec,
                    T* normal = nullptr) {
  using namespace ray_detail;
  if (normal) zero3(normal);
  const int h = m.geom_dataid[g];
  const int nrow = m.hfield_nrow[h], ncol = m.hfield_ncol[h];
  const T* size = m.hfield_size + 4 * h;
  const T* data = m.hfield_data + m.hfield_adr[h];
  const T* xmat = d.geom_xmat + 9 * g;
  const T* xpos = d.geom_xpos + 3 * g;
  // the base box (below z = 0, base_z deep) and the top box (0 .. elevation_z)
  const T base_size[3] = {size[0], size[1], size[3] * T(0.5)};
  const T base_pos[3] = {xpos[0] - xmat[2] * size[3] * T(0.5), xpos[1] - xmat[5] * size[3] * T(0.5),
                         xpos[2] - xmat[8] * size[3] * T(0.5)};
  const T top_size[3] = {size[0], size[1], size[2] * T(0.5)};
  const T top_pos[3] = {xpos[0] + xmat[2] * size[2] * T(0.5), xpos[1] + xmat[5] * size[2] * T(0.5),
                        xpos[2] + xmat[8] * size[2] * T(0.5)};
  T normal_base[3];
  T x = ray_box(base_pos, xmat, base_size, pnt, vec, static_cast<T*>(nullptr), normal ? normal_base : nullptr);
  T all[6];
  const T top_intersect = ray_box(top_pos, xmat, top_size, pnt, vec, all);
  if (top_intersect < T(0)) {
    if (normal && x >= T(0)) normal[0] = normal_base[0], normal[1] = normal_base[1], normal[2] = normal_base[2];
    return x;
  }
  // the normal in the field's frame, from the base box's hit if any (MuJoCo's order of updates)
  T nl[3] = {T(0), T(0), T(0)}, tri_normal[3];
  T* tn = normal ? tri_normal : static_cast<T*>(nullptr);
  if (normal && x >= T(0))
    for (int k = 0; k < 3; ++k)
      nl[k] = xmat[k] * normal_base[0] + xmat[3 + k] * normal_base[1] + xmat[6 + k] * normal_base[2];
  T lpnt[3], lvec[3], b0[3], b1[3];
  ray_map(xpos, xmat, pnt, vec, lpnt, lvec);
  normal_plane_basis(lvec, b0, b1);
  // the ray's segment through the top box
  T seg[2] = {T(0), top_intersect};
  for (int i = 0; i < 6; ++i)
    if (all[i] > seg[1]) seg[0] = top_intersect, seg[1] = all[i];
  // its cells, padded by one
  const T dx = (T(2) * size[0]) / T(ncol - 1), dy = (T(2) * size[1]) / T(nrow - 1);
  T SX[2], SY[2];
  for (int i = 0; i < 2; ++i) {
    SX[i] = (lpnt[0] + seg[i] * lvec[0] + size[0]) / dx;
    SY[i] = (lpnt[1] + seg[i] * lvec[1] + size[1]) / dy;
  }
  const int cmin0 = static_cast<int>(m_floor(SX[0] < SX[1] ? SX[0] : SX[1])) - 1;
  const int cmax0 = static_cast<int>(m_ceil(SX[0] > SX[1] ? SX[0] : SX[1])) + 1;
  const int rmin0 = static_cast<int>(m_floor(SY[0] < SY[1] ? SY[0] : SY[1])) - 1;
  const int rmax0 = static_cast<int>(m_ceil(SY[0] > SY[1] ? SY[0] : SY[1])) + 1;
  const int cmin = cmin0 > 0 ? cmin0 : 0, cmax = cmax0 < ncol - 1 ? cmax0 : ncol - 1;
  const int rmin = rmin0 > 0 ? rmin0 : 0, rmax = rmax0 < nrow - 1 ? rmax0 : nrow - 1;
  for (int r = rmin; r < rmax; ++r) {
    for (int c = cmin; c < cmax; ++c) {
      const T x0 = dx * T(c) - size[0], x1 = dx * T(c + 1) - size[0];
      const T y0 = dy * T(r) - size[1], y1 = dy * T(r + 1) - size[1];
      const T z00 = data[r * ncol + c] * size[2], z01 = data[r * ncol + c + 1] * size[2];
      const T z11 = data[(r + 1) * ncol + c + 1] * size[2], z10 = data[(r + 1) * ncol + c] * size[2];
      const T va[3][3] = {{x0, y0, z00}, {x1, y0, z01}, {x1, y1, z11}};
      T sol = ray_triangle(va, lpnt, lvec, b0, b1, tn);
      if (sol >= T(0) && (x < T(0) || sol < x)) {
        x = sol;
        if (normal) nl[0] = tri_normal[0], nl[1] = tri_normal[1], nl[2] = tri_normal[2];
      }
      const T vb[3][3] = {{x0, y0, z00}, {x1, y1, z11}, {x0, y1, z10}};
      sol = ray_triangle(vb, lpnt, lvec, b0, b1, tn);
      if (sol >= T(0) && (x < T(0) || sol < x)) {
        x = sol;
        if (normal) nl[0] = tri_normal[0], nl[1] = tri_normal[1], nl[2] = tri_normal[2];
      }
    }
  }
  // the top box's four sides, below the field's edge
  for (int i = 0; i < 4; ++i) {
    if (!(all[i] >= T(0) && (all[i] < x || x < T(0)))) continue;
    const T z = (lpnt[2] + all[i] * lvec[2]) / size[2];
    T y, y0, z0, z1;
    if (i < 2) {  // a side normal to x
      y = (lpnt[1] + all[i] * lvec[1] + size[1]) / dy;
      const T fy = m_floor(y);
      y0 = fy < T(nrow - 2) ? fy : T(nrow - 2);
      y0 = y0 > T(0) ? y0 : T(0);
      const int col = i == 1 ? ncol - 1 : 0;
      z0 = data[static_cast<int>(y0) * ncol + col];
      z1 = data[(static_cast<int>(y0) + 1) * ncol + col];
    } else {  // a side normal to y
      y = (lpnt[0] + all[i] * lvec[0] + size[0]) / dx;
      const T fy = m_floor(y);
      y0 = fy < T(ncol - 2) ? fy : T(ncol - 2);
      y0 = y0 > T(0) ? y0 : T(0);
      const int row = i == 3 ? (nrow - 1) * ncol : 0;
      z0 = data[static_cast<int>(y0) + row];
      z1 = data[static_cast<int>(y0) + 1 + row];
    }
    if (z < z0 * (y0 + T(1) - y) + z1 * (y - y0)) {
      x = all[i];
      nl[0] = nl[1] = nl[2] = T(0);
      nl[i / 2] = i % 2 == 0 ? T(-1) : T(1);  // the side's outward normal
    }
  }
  if (normal && x >= T(0)) mat_vec3(normal, xmat, nl);
  return x;
}

// Geom g of any type against the ray (world frame); -1 when missed.
template <class T>
RLT_HD T ray_geom(const ModelView<T>& m, const DataView<T>& d, int g, const T* pnt, const T* vec, T* normal = nullptr) {
  const int type = m.geom_type[g];
  if (type == kGeomMesh) return ray_mesh(m, d, g, pnt, vec, normal);
  if (type == kGeomHField) return ray_hfield(m, d, g, pnt, vec, normal);
  return ray_geom_local(d.geom_xpos + 3 * g, d.geom_xmat + 9 * g, m.geom_size + 3 * g, pnt, vec, type, normal);
}

// MuJoCo's mj_ray(m, d, pnt, vec, NULL, 1, bodyexclude, geomid): the nearest visible geom not on
// body `bodyexclude` (-1: none excluded) along the ray; its distance (in units of |vec|), -1 if none,
// and its id in *geomid (-1 if none; geomid may be null); normal (optional): the hit surface's unit
// normal (world; 0 when nothing is hit), as MuJoCo 3's mj_ray.
template <class T>
RLT_HD T ray_cast(const ModelView<T>& m, const DataView<T>& d, const T* pnt, const T* vec, int bodyexclude, int* geomid,
                  T* normal = nullptr) {
  T dist = T(-1);
  if (geomid) *geomid = -1;
  if (normal) ray_detail::zero3(normal);
  T geom_normal[3];
  for (int g = 0; g < m.ngeom; ++g) {
    if (m.geom_bodyid[g] == bodyexclude) continue;
    if (m.geom_invisible && m.geom_invisible[g]) continue;
    const T x = ray_geom(m, d, g, pnt, vec, normal ? geom_normal : static_cast<T*>(nullptr));
    if (x >= T(0) && (x < dist || dist < T(0))) {
      dist = x;
      if (geomid) *geomid = g;
      if (normal) normal[0] = geom_normal[0], normal[1] = geom_normal[1], normal[2] = geom_normal[2];
    }
  }
  return dist;
}

}  // namespace rlt
