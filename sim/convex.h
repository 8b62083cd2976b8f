// A convex collider for any two convex geoms (sphere, capsule, ellipsoid, cylinder, box, and a mesh
// as its convex hull),
// driven only by their support functions: GJK decides whether the two shapes (each inflated by half
// the pair's active margin, as MuJoCo's mjCCDObj margin) overlap, and EPA expands GJK's final
// tetrahedron to the face of the Minkowski difference nearest the origin, which gives the normal
// (from shape 1 to shape 2), the penetration depth and the two witness points; the contact point is
// their midpoint. This is the scheme of MuJoCo 3's nativeccd (engine_collision_gjk.c) for one
// contact; it is not a port: its iterations and tolerances differ, so contacts between two curved
// surfaces agree with MuJoCo's to about the tolerance (1e-10 relative here, MuJoCo's ccd_tolerance
// is 1e-6). It serves the pairs MuJoCo gives one contact (an ellipsoid, a sphere with a mesh); the
// others follow MuJoCo's nativeccd and multicontact (sim/mjccd.h, sim/multiccd.h).
// Single source (RLT_HD): fixed-size arrays on the stack, bounded iterations, no allocation.
#pragma once

#include "sim/common.h"
#include "sim/model.h"
#include "sim/spatial.h"

namespace rlt::convex {

template <class T>
RLT_HD RLT_INLINE T cabs(T x) {
  return x < T(0) ? -x : x;
}

// The hull vertex of a mesh furthest along the local direction l: its index among the hull's
// vertices (MuJoCo's graph layout, sim/model_fields.h mesh_graph: hull[0] vertices, their mesh
// vertex ids at hull + 2 + hull[0]); the first of equals.
template <class T>
RLT_HD int mesh_support_index(const T* vert, const int* hull, const Vec3<T>& l) {
  const int nv = hull[0];
  const int* ids = hull + 2 + nv;
  int best = 0;
  T best_dot = T(0);
  for (int i = 0; i < nv; ++i) {
    const T* v = vert + 3 * ids[i];
    const T d = l.x * v[0] + l.y * v[1] + l.z * v[2];
    if (i == 0 || d > best_dot) best = i, best_dot = d;
  }
  return best;
}

// One convex shape in the world: type (GeomType), center, axes (columns), MuJoCo's sizes, and
// the radius it is inflated by; a mesh also its vertices (mesh frame) and convex hull (graph).
template <class T>
struct Shape {
  int type;
  Vec3<T> c;
  Mat3<T> r;
  Vec3<T> s;
  T inflate;
  const T* vert = nullptr;    // mesh: mesh_vert + 3 mesh_vertadr
  const int* hull = nullptr;  // mesh: mesh_graph + mesh_graphadr
  // The point of the shape furthest along dir (dir need not be unit).
  RLT_HD Vec3<T> support(const Vec3<T>& dir) const {
    const T len = norm(dir);
    const Vec3<T> u = len > T(0) ? (T(1) / len) * dir : Vec3<T>{T(1), T(0), T(0)};
    const Vec3<T> l{dot(r.col(0), u), dot(r.col(1), u), dot(r.col(2), u)};  // local direction
    Vec3<T> p;
    switch (type) {
      case kGeomSphere:
        p = s.x * l;
        break;
      case kGeomCapsule:
        p = s.x * l, p.z += l.z >= T(0) ? s.y : -s.y;
        break;
      case kGeomEllipsoid: {
        Vec3<T> q{l.x * s.x, l.y * s.y, l.z * s.z};
        const T n = norm(q);
        p = n > T(1e-30) ? Vec3<T>{q.x * s.x / n, q.y * s.y / n, q.z * s.z / n} : Vec3<T>{s.x, T(0), T(0)};
        break;
      }
      case kGeomCylinder: {
        const T n = m_sqrt(l.x * l.x + l.y * l.y);
        const T k = n > T(1e-15) ? s.x / n : T(0);
        p = {k * l.x, k * l.y, l.z >= T(0) ? s.y : -s.y};
        break;
      }
      case kGeomMesh: {  // the furthest hull vertex
        const T* v = vert + 3 * hull[2 + hull[0] + mesh_support_index(vert, hull, l)];
        p = {v[0], v[1], v[2]};
        break;
      }
      default:  // box
        p = {l.x >= T(0) ? s.x : -s.x, l.y >= T(0) ? s.y : -s.y, l.z >= T(0) ? s.z : -s.z};
        break;
    }
    return c + r * p + inflate * u;
  }
};

// A vertex of the Minkowski difference A - B: w = a - b.
template <class T>
struct MVert {
  Vec3<T> w, a, b;
};

// A and B: any shapes with support(dir) and a center c (Shape; sim/hfield.h's prisms).
template <class T, class SA, class SB>
RLT_HD RLT_INLINE MVert<T> msupport(const SA& A, const SB& B, const Vec3<T>& dir) {
  MVert<T> v;
  v.a = A.support(dir), v.b = B.support(-dir);
  v.w = v.a - v.b;
  return v;
}

// The result of penetration(): normal from A to B, depth (> 0: overlap of the inflated shapes),
// witness points on A and B.
template <class T>
struct Penetration {
  Vec3<T> normal, pa, pb;
  T depth;
};

// GJK's simplex update (the origin-containment form): reduces simplex s (n vertices, the newest
// last) to the sub-simplex nearest the origin and sets the next search direction; true when the
// tetrahedron contains the origin.
template <class T>
RLT_HD bool do_simplex(MVert<T>* s, int* n, Vec3<T>* dir) {
  if (*n == 2) {
    const Vec3<T> a = s[1].w, b = s[0].w, ab = b - a, ao = -a;
    if (dot(ab, ao) > T(0)) {
      *dir = cross(cross(ab, ao), ab);
      if (dot(*dir, *dir) < T(1e-30))
        *dir = cross(ab, Vec3<T>{T(1), T(0), T(0)}),
        *dir = dot(*dir, *dir) < T(1e-30) ? cross(ab, Vec3<T>{T(0), T(1), T(0)}) : *dir;
    } else {
      s[0] = s[1], *n = 1, *dir = ao;
    }
    return false;
  }
  if (*n == 3) {
    const MVert<T> A = s[2], B = s[1], C = s[0];
    const Vec3<T> a = A.w, ab = B.w - a, ac = C.w - a, ao = -a, abc = cross(ab, ac);
    if (dot(cross(abc, ac), ao) > T(0)) {
      if (dot(ac, ao) > T(0)) {
        s[0] = C, s[1] = A, *n = 2, *dir = cross(cross(ac, ao), ac);
      } else if (dot(ab, ao) > T(0)) {
        s[0] = B, s[1] = A, *n = 2, *dir = cross(cross(ab, ao), ab);
      } else {
        s[0] = A, *n = 1, *dir = ao;
      }
    } else if (dot(cross(ab, abc), ao) > T(0)) {
      if (dot(ab, ao) > T(0)) {
        s[0] = B, s[1] = A, *n = 2, *dir = cross(cross(ab, ao), ab);
      } else {
        s[0] = A, *n = 1, *dir = ao;
      }
    } else if (dot(abc, ao) > T(0)) {
      *dir = abc;
    } else {
      s[0] = B, s[1] = C, s[2] = A, *dir = -abc;  // wind so that the next point is on the right side
    }
    return false;
  }
  // tetrahedron: A newest; each face through A with its normal turned away from the fourth vertex
  const MVert<T> A = s[3], B = s[2], C = s[1], D = s[0];
  const Vec3<T> a = A.w, ao = -a;
  const MVert<T> f1[3] = {B, C, D}, f2[3] = {C, D, B};  // faces A f1 f2, opposite vertex the third
  const MVert<T> opp[3] = {D, B, C};
  for (int f = 0; f < 3; ++f) {
    Vec3<T> nrm = cross(f1[f].w - a, f2[f].w - a);
    if (dot(nrm, opp[f].w - a) > T(0)) nrm = -nrm;
    if (dot(nrm, ao) > T(0)) {
      s[0] = f2[f], s[1] = f1[f], s[2] = A, *n = 3;
      return do_simplex(s, n, dir);
    }
  }
  return true;
}

constexpr int kMaxVerts = 128, kMaxFaces = 256, kMaxEdges = 128, kGjkIters = 64, kEpaIters = 120;

// Whether A and B (inflated) overlap, and if so the penetration (EPA). `guess`: the first search
// direction (the centers' difference).
template <class T, class SA, class SB>
RLT_HD bool penetration(const SA& A, const SB& B, Penetration<T>* out) {
  MVert<T> s[4];
  Vec3<T> dir = B.c - A.c;
  if (dot(dir, dir) < T(1e-30)) dir = {T(1), T(0), T(0)};
  s[0] = msupport(A, B, dir);
  int n = 1;
  dir = -s[0].w;
  bool hit = false;
  for (int it = 0; it < kGjkIters; ++it) {
    if (dot(dir, dir) < T(1e-30)) return false;  // the origin on the simplex: touching
    const MVert<T> v = msupport(A, B, dir);
    if (!(dot(v.w, dir) > T(0))) return false;  // a separating direction
    s[n++] = v;
    if (do_simplex(s, &n, &dir)) {
      hit = true;
      break;
    }
  }
  if (!hit) return false;
  // EPA from the tetrahedron s[0..3] (contains the origin).
  MVert<T> vert[kMaxVerts];
  int fv[kMaxFaces][3];
  Vec3<T> fn[kMaxFaces];
  T fd[kMaxFaces];
  bool alive[kMaxFaces];
  int nv = 4, nf = 0;
  for (int k = 0; k < 4; ++k) vert[k] = s[k];
  // A point inside the polytope (it only grows): faces are turned away from it (the origin may lie
  // on a face of the first tetrahedron, so it cannot orient them).
  const Vec3<T> inner = T(0.25) * (s[0].w + s[1].w + s[2].w + s[3].w);
  const int tets[4][3] = {{0, 1, 2}, {0, 3, 1}, {0, 2, 3}, {1, 3, 2}};
  auto add_face = [&](int i, int j, int k) -> bool {
    if (nf >= kMaxFaces) return false;
    Vec3<T> nn = cross(vert[j].w - vert[i].w, vert[k].w - vert[i].w);
    const T l = norm(nn);
    if (!(l > T(1e-30))) return false;
    nn = (T(1) / l) * nn;
    T dd = dot(nn, vert[i].w);
    if (dot(nn, vert[i].w - inner) < T(0)) {  // wind outward
      const int t = j;
      j = k;
      k = t;
      nn = -nn, dd = -dd;
    }
    fv[nf][0] = i, fv[nf][1] = j, fv[nf][2] = k, fn[nf] = nn, fd[nf] = dd, alive[nf] = true;
    ++nf;
    return true;
  };
  for (int f = 0; f < 4; ++f)
    if (!add_face(tets[f][0], tets[f][1], tets[f][2])) return false;  // a flat tetrahedron
  int best = 0;
  for (int it = 0; it < kEpaIters; ++it) {
    best = -1;
    for (int f = 0; f < nf; ++f)
      if (alive[f] && (best < 0 || fd[f] < fd[best])) best = f;
    if (best < 0) return false;
    const MVert<T> v = msupport(A, B, fn[best]);
    const T gain = dot(v.w, fn[best]) - fd[best];
    if (gain <= T(1e-10) * (T(1) + fd[best]) || nv >= kMaxVerts) break;
    // Remove the faces the new vertex sees; their boundary (edges seen once) is the horizon.
    int edges[kMaxEdges][2];
    int ne = 0;
    bool overflow = false;
    for (int f = 0; f < nf; ++f) {
      if (!alive[f] || dot(fn[f], v.w - vert[fv[f][0]].w) <= T(0)) continue;
      alive[f] = false;
      for (int e = 0; e < 3; ++e) {
        const int a = fv[f][e], b = fv[f][(e + 1) % 3];
        int found = -1;
        for (int q = 0; q < ne; ++q)
          if (edges[q][0] == b && edges[q][1] == a) found = q;
        if (found >= 0) {
          edges[found][0] = edges[ne - 1][0], edges[found][1] = edges[ne - 1][1], --ne;
        } else if (ne < kMaxEdges) {
          edges[ne][0] = a, edges[ne][1] = b, ++ne;
        } else {
          overflow = true;
        }
      }
    }
    if (overflow) break;
    vert[nv] = v;
    const int iv = nv++;
    // Compact dead faces first, so new faces fit.
    int w = 0;
    for (int f = 0; f < nf; ++f) {
      if (!alive[f]) continue;
      if (w != f) fv[w][0] = fv[f][0], fv[w][1] = fv[f][1], fv[w][2] = fv[f][2], fn[w] = fn[f], fd[w] = fd[f];
      alive[w++] = true;
    }
    nf = w;
    bool ok = true;
    for (int q = 0; q < ne && ok; ++q) ok = add_face(edges[q][0], edges[q][1], iv);
    if (!ok) return false;
  }
  if (best < 0) return false;
  // Witness points: barycentric coordinates of the origin's projection on the nearest face.
  const Vec3<T> p = fd[best] * fn[best];
  const MVert<T>& v0 = vert[fv[best][0]];
  const MVert<T>& v1 = vert[fv[best][1]];
  const MVert<T>& v2 = vert[fv[best][2]];
  const Vec3<T> e0 = v1.w - v0.w, e1 = v2.w - v0.w, e2 = p - v0.w;
  const T d00 = dot(e0, e0), d01 = dot(e0, e1), d11 = dot(e1, e1), d20 = dot(e2, e0), d21 = dot(e2, e1);
  const T den = d00 * d11 - d01 * d01;
  T l1 = T(0), l2 = T(0);
  if (cabs(den) > T(1e-30)) l1 = (d11 * d20 - d01 * d21) / den, l2 = (d00 * d21 - d01 * d20) / den;
  const T l0 = T(1) - l1 - l2;
  out->normal = fn[best];
  out->depth = fd[best];
  out->pa = l0 * v0.a + l1 * v1.a + l2 * v2.a;
  out->pb = l0 * v0.b + l1 * v1.b + l2 * v2.b;
  return out->depth > T(0);
}

}  // namespace rlt::convex
