// Height-field collisions (MuJoCo 3's mjc_ConvexHField, engine_collision_convex.c), single source.
//
// A height field (geom type hfield, geom_dataid -> hfield id) is a grid of nrow x ncol elevations
// (hfield_data, in [0, 1], row-major, row 0 at y = -radius_y, column 0 at x = -radius_x) over
// [-radius_x, radius_x] x [-radius_y, radius_y] in the geom frame, at height data * elevation_z, with
// a flat bottom at z = -base_z (hfield_size = radius_x, radius_y, elevation_z, base_z).
// Against a sphere, capsule, box, cylinder, ellipsoid or mesh (its convex hull; never a plane or
// another height field), as MuJoCo:
//   1. the other geom's bounding sphere against the field's box (-base_z .. elevation_z), then its
//      axis-aligned box in the field's frame (from its support points along +-x, +-y, +-z), each
//      grown by the pair's active margin: nothing when apart;
//   2. the cells under that box (columns cmin..cmax, rows rmin..rmax, floor/ceil of the box's
//      extent in grid steps, clamped to the grid), each cut into two triangular prisms (rows r and
//      r + 1; the triangles (r+1, c-1), (r, c-1), (r+1, c) and (r, c-1), (r+1, c), (r, c)), from the
//      bottom up to the three elevations plus the active margin; a prism whose three top corners
//      are all below the geom's lowest point is skipped;
//   3. each remaining prism against the geom as MuJoCo's nativeccd (sim/mjccd.h, its GJK and EPA
//      step by step, ccd_iterations and ccd_tolerance from the model): the prism (object 1, no
//      margin) against the geom in the field's frame (object 2, its support points moved out by
//      half the active margin); a sphere or capsule first as its core (point, segment) apart from
//      the prism, exactly (segment_prism), and only when that is within ccd_tolerance as the full
//      shape. One contact per prism whose witness points' signed distance is negative: pos their
//      midpoint, normal x1 - x2 (from the field to the geom), depth minus the active margin
//      (MuJoCo's dist), in the order rows, columns, prisms, until MuJoCo's 50 per pair
//      (mjMAXCONPAIR; kHFieldMaxContacts).
// The contacts follow MuJoCo 3.17's to rounding (tests/data/mjcf/hfield_nativeccd.xml: 4e-15 in
// the normal, 1e-16 in point and depth); MuJoCo's libccd path (flag nativeccd disabled) is not
// modelled.
#pragma once

#include "sim/common.h"
#include "sim/ccd_geom.h"
#include "sim/mjccd.h"
#include "sim/model_view.h"
#include "sim/spatial.h"

namespace rlt {

namespace hfield_detail {

// One triangular prism of a height-field cell in the field's frame: vertices 0-2 at the bottom,
// 3-5 above them, c its centroid (segment_prism's inside point).
template <class T>
struct Prism {
  Vec3<T> v[6];
  Vec3<T> c;
};

// MuJoCo's mjCCDObj of one prism (mjc_prism_support, mjc_center) for sim/mjccd.h: no margin (the
// active margin is in its top), no vertex ids (MuJoCo's prism support leaves vertindex at -1).
template <class T>
struct CcdPrism {
  T v[6][3];
  T margin = T(0);
  int vertindex = -1;
  bool discrete = true;
  RLT_HD void support(T res[3], const T dir[3]) const {
    const int start = dir[2] < T(0) ? 0 : 3;
    int best = start;
    T bd = mjccd::v3::dot(v[start], dir);
    for (int i = 1; i < 3; ++i) {
      const T d = mjccd::v3::dot(v[start + i], dir);
      if (d > bd) best = start + i, bd = d;
    }
    mjccd::v3::copy(res, v[best]);
  }
  RLT_HD void center(T res[3]) const {
    res[0] = res[1] = res[2] = T(0);
    for (int i = 0; i < 6; ++i) res[0] += v[i][0], res[1] += v[i][1], res[2] += v[i][2];
    mjccd::v3::scl(res, res, T(1.0 / 6.0));
  }
};

// The geom as MuJoCo's mjCCDObj in the field's frame (sim/ccd_geom.h).
template <class T>
using CcdGeom = mjccd::GeomObj<T>;

// Closest points of segments p1-q1 and p2-q2 (Ericson 5.1.9; sim/contact.h has the same for the
// primitive pairs, defined after this header is included).
template <class T>
RLT_HD void closest_segments(const Vec3<T>& p1, const Vec3<T>& q1, const Vec3<T>& p2, const Vec3<T>& q2, Vec3<T>* c1,
                             Vec3<T>* c2) {
  const Vec3<T> d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2;
  const T a = dot(d1, d1), e = dot(d2, d2), f = dot(d2, r);
  const T eps = T(1e-30);
  T s = T(0), t = T(0);
  if (a <= eps && e <= eps) {
  } else if (a <= eps) {
    t = clamp(f / e, T(0), T(1));
  } else {
    const T c = dot(d1, r);
    if (e <= eps) {
      s = clamp(-c / a, T(0), T(1));
    } else {
      const T b = dot(d1, d2), denom = a * e - b * b;
      s = denom > T(0) ? clamp((b * f - c * e) / denom, T(0), T(1)) : T(0);
      t = (b * s + f) / e;
      if (t < T(0)) {
        t = T(0), s = clamp(-c / a, T(0), T(1));
      } else if (t > T(1)) {
        t = T(1), s = clamp((b - c) / a, T(0), T(1));
      }
    }
  }
  *c1 = p1 + s * d1, *c2 = p2 + t * d2;
}

// Closest point of triangle (a, b, c) to p (Ericson, Real-Time Collision Detection 5.1.5).
template <class T>
RLT_HD Vec3<T> closest_on_triangle(const Vec3<T>& p, const Vec3<T>& a, const Vec3<T>& b, const Vec3<T>& c) {
  const Vec3<T> ab = b - a, ac = c - a, ap = p - a;
  const T d1 = dot(ab, ap), d2 = dot(ac, ap);
  if (d1 <= T(0) && d2 <= T(0)) return a;
  const Vec3<T> bp = p - b;
  const T d3 = dot(ab, bp), d4 = dot(ac, bp);
  if (d3 >= T(0) && d4 <= d3) return b;
  const T vc = d1 * d4 - d3 * d2;
  if (vc <= T(0) && d1 >= T(0) && d3 <= T(0)) return a + (d1 / (d1 - d3)) * ab;
  const Vec3<T> cp = p - c;
  const T d5 = dot(ab, cp), d6 = dot(ac, cp);
  if (d6 >= T(0) && d5 <= d6) return c;
  const T vb = d5 * d2 - d1 * d6;
  if (vb <= T(0) && d2 >= T(0) && d6 <= T(0)) return a + (d2 / (d2 - d6)) * ac;
  const T va = d3 * d6 - d5 * d4;
  if (va <= T(0) && (d4 - d3) >= T(0) && (d5 - d6) >= T(0)) return b + ((d4 - d3) / ((d4 - d3) + (d5 - d6))) * (c - b);
  const T den = T(1) / (va + vb + vc);
  return a + (vb * den) * ab + (vc * den) * ac;
}

// The prism's 8 boundary triangles (top, bottom, two per side), as vertex indices.
RLT_HD RLT_INLINE int prism_tri(int t, int k) {
  const int tris[8][3] = {{3, 4, 5}, {0, 2, 1}, {0, 1, 4}, {0, 4, 3}, {1, 2, 5}, {1, 5, 4}, {2, 0, 3}, {2, 3, 5}};
  return tris[t][k];
}

// Closest points of a segment (a, b; a == b: a point) and a prism when they are apart: the point on
// the segment (*qs) and on the prism (*qp); false when the segment touches or enters the prism (the
// caller then takes the collider). Exact: the boundary triangles against the segment's ends and
// its edges against the triangles' edges; a segment crossing a triangle, or an end inside, touches.
template <class T>
RLT_HD bool segment_prism(const Prism<T>& p, const Vec3<T>& a, const Vec3<T>& b, Vec3<T>* qs, Vec3<T>* qp) {
  const bool seg = dot(b - a, b - a) > T(0);
  bool inside_a = true, inside_b = true;
  T best = T(-1);
  for (int t = 0; t < 8; ++t) {
    const Vec3<T> v0 = p.v[prism_tri(t, 0)], v1 = p.v[prism_tri(t, 1)], v2 = p.v[prism_tri(t, 2)];
    Vec3<T> nrm = cross(v1 - v0, v2 - v0);
    if (dot(nrm, v0 - p.c) < T(0)) nrm = -nrm;  // outward
    const T sa = dot(nrm, a - v0), sb = dot(nrm, b - v0);
    if (sa > T(0)) inside_a = false;
    if (sb > T(0)) inside_b = false;
    auto consider = [&](const Vec3<T>& ps, const Vec3<T>& pp) {
      const Vec3<T> dd = ps - pp;
      const T d2 = dot(dd, dd);
      if (best < T(0) || d2 < best) best = d2, *qs = ps, *qp = pp;
    };
    consider(a, closest_on_triangle(a, v0, v1, v2));
    if (!seg) continue;
    if ((sa > T(0)) != (sb > T(0)) && sa != sb) {  // the segment crosses the triangle's plane
      const Vec3<T> x = a + (sa / (sa - sb)) * (b - a);
      const Vec3<T> cx = closest_on_triangle(x, v0, v1, v2);
      if (dot(cx - x, cx - x) <= T(1e-30)) return false;
    }
    consider(b, closest_on_triangle(b, v0, v1, v2));
    const Vec3<T> tv[3] = {v0, v1, v2};
    for (int e = 0; e < 3; ++e) {
      Vec3<T> c1, c2;
      closest_segments(a, b, tv[e], tv[(e + 1) % 3], &c1, &c2);
      consider(c1, c2);
    }
  }
  if (inside_a || (seg && inside_b)) return false;
  return best > T(0);
}

}  // namespace hfield_detail

// Geom gh (a height field, geom 1) against geom g (center c2, axes r2; world frame), contacts from
// `emit` (sim/contact.h's Emitter: emit(pos, normal, overlap) in the world frame; emit.active is the
// pair's active margin). c1, r1: the field's pose.
template <class T, class Emit>
RLT_HD void hfield_collide(const Emit& emit, const ModelView<T>& m, int gh, const Vec3<T>& c1, const Mat3<T>& r1, int g,
                           const Vec3<T>& c2, const Mat3<T>& r2, T rbound) {
  const int h = m.geom_dataid[gh];
  const int nrow = m.hfield_nrow[h], ncol = m.hfield_ncol[h];
  const T* hs = m.hfield_size + 4 * h;
  const T* data = m.hfield_data + m.hfield_adr[h];
  const T margin = emit.active;
  // The geom in the field's frame.
  const Vec3<T> lp{dot(r1.col(0), c2 - c1), dot(r1.col(1), c2 - c1), dot(r1.col(2), c2 - c1)};
  const T rad = rbound + margin;
  if (hs[0] < lp.x - rad || -hs[0] > lp.x + rad || hs[1] < lp.y - rad || -hs[1] > lp.y + rad || hs[2] < lp.z - rad ||
      -hs[3] > lp.z + rad)
    return;
  Mat3<T> lr;  // r1^T r2
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) lr.m[3 * i + j] = dot(r1.col(i), r2.col(j));
  // The geom as MuJoCo's mjCCDObj in the field's frame; its support points along +-x, +-y, +-z
  // bound it (they also warm-start a mesh's search, as MuJoCo's).
  hfield_detail::CcdGeom<T> obj;
  obj.type = m.geom_type[g], obj.margin = margin;
  obj.discrete = obj.type == kGeomBox || obj.type == kGeomMesh;
  lp.store(obj.pos), lr.store(obj.mat);
  for (int k = 0; k < 3; ++k) obj.size[k] = m.geom_size[3 * g + k];
  if (obj.type == kGeomMesh) {
    const int id = m.geom_dataid[g];
    obj.vert = m.mesh_vert + 3 * m.mesh_vertadr[id];
    obj.nvert = m.mesh_vertnum[id];
    obj.hull = m.mesh_graphadr[id] >= 0 ? m.mesh_graph + m.mesh_graphadr[id] : nullptr;
    obj.extrema = m.mesh_extrema ? m.mesh_extrema + 27 * id : nullptr;
  }
  T ext[6];
  for (int k = 0; k < 6; ++k) {
    T dir[3] = {T(0), T(0), T(0)}, res[3];
    dir[k / 2] = k % 2 ? T(-1) : T(1);
    obj.support(res, dir);
    ext[k] = res[k / 2];
  }
  const T xmax = ext[0], xmin = ext[1], ymax = ext[2], ymin = ext[3], zmax = ext[4], zmin = ext[5];
  if (xmin - margin > hs[0] || xmax + margin < -hs[0] || ymin - margin > hs[1] || ymax + margin < -hs[1] ||
      zmin - margin > hs[2] || zmax + margin < -hs[3])
    return;
  // The cells under the geom, clamped to the grid in floating point before the conversion to int:
  // a non-finite pose (an env about to be reset as non-finite) must not reach the cast (UBSan's
  // float-cast-overflow found it), and is no contact.
  if (!(xmin <= xmax && ymin <= ymax)) return;
  auto cell = [](T v, int hi) { return v > T(0) ? (v < T(hi) ? static_cast<int>(v) : hi) : 0; };
  const int cmin = cell(m_floor((xmin + hs[0]) / (T(2) * hs[0]) * T(ncol - 1)), ncol - 1);
  const int cmax = cell(m_ceil((xmax + hs[0]) / (T(2) * hs[0]) * T(ncol - 1)), ncol - 1);
  const int rmin = cell(m_floor((ymin + hs[1]) / (T(2) * hs[1]) * T(nrow - 1)), nrow - 1);
  const int rmax = cell(m_ceil((ymax + hs[1]) / (T(2) * hs[1]) * T(nrow - 1)), nrow - 1);
  hfield_detail::CcdPrism<T> pv;
  const T dx = T(2) * hs[0] / T(ncol - 1), dy = T(2) * hs[1] / T(nrow - 1);
  hfield_detail::Prism<T> p;
  // MuJoCo's addPrismVert: shift the triangle by one vertex, the new one last.
  auto add = [&](int r, int c, int i) {
    p.v[0] = p.v[1], p.v[1] = p.v[2], p.v[3] = p.v[4], p.v[4] = p.v[5];
    const int rr = r + 1 - i;
    const T x = dx * T(c) - hs[0], y = dy * T(rr) - hs[1];
    p.v[2] = Vec3<T>{x, y, -hs[3]};
    p.v[5] = Vec3<T>{x, y, data[rr * ncol + c] * hs[2] + margin};
  };
  // Spheres and capsules as MuJoCo's nativeccd takes them: a point or a segment with a radius.
  const int gt = m.geom_type[g];
  const bool core = gt == kGeomSphere || gt == kGeomCapsule;
  const T radius = m.geom_size[3 * g];
  const T half = gt == kGeomCapsule ? m.geom_size[3 * g + 1] : T(0);
  const Vec3<T> ca = lp - half * lr.col(2), cb = lp + half * lr.col(2);
  int n = 0;
  for (int r = rmin; r < rmax; ++r) {
    add(r, cmin, 0);
    add(r, cmin, 1);
    for (int c = cmin + 1; c <= cmax; ++c) {
      for (int i = 0; i < 2; ++i) {
        add(r, c, i);
        if (p.v[3].z < zmin && p.v[4].z < zmin && p.v[5].z < zmin) continue;
        p.c = Vec3<T>::zero();
        for (int k = 0; k < 6; ++k) p.c += p.v[k];
        p.c = (T(1) / T(6)) * p.c;
        if (core) {  // MuJoCo's sphere / capsule: the core (point, segment) apart from the prism
          Vec3<T> qs, qp;
          if (hfield_detail::segment_prism(p, ca, cb, &qs, &qp)) {
            const T dist = norm(qs - qp);
            if (dist > m.ccd_tolerance) {  // MuJoCo's shallow case; else the full shape
              const T rr = radius + T(0.5) * margin;
              if (dist < rr) {
                const Vec3<T> nl = (T(1) / dist) * (qs - qp);
                emit(c1 + r1 * (T(0.5) * (qp + qs - rr * nl)), r1 * nl, rr - dist - margin);
                if (++n >= kHFieldMaxContacts) return;
              }
              continue;
            }
          }
        }
        // MuJoCo's nativeccd (sim/mjccd.h): the prism (object 1) against the geom (object 2, in
        // the field's frame, inflated by half the active margin), one contact where the witness
        // points' signed distance is negative.
        for (int k = 0; k < 6; ++k) pv.v[k][0] = p.v[k].x, pv.v[k][1] = p.v[k].y, pv.v[k][2] = p.v[k].z;
        mjccd::Status<T> st;
        if (!(mjccd::ccd(&st, pv, obj, m.ccd_iterations, m.ccd_tolerance) < T(0))) continue;
        T pos[3], nrm[3];
        mjccd::v3::add(pos, st.x1, st.x2);
        mjccd::v3::scl(pos, pos, T(0.5));
        mjccd::v3::sub(nrm, st.x1, st.x2);
        mjccd::v3::normalize(nrm);
        emit(c1 + r1 * Vec3<T>{pos[0], pos[1], pos[2]}, r1 * Vec3<T>{nrm[0], nrm[1], nrm[2]}, -st.dist - margin);
        if (++n >= kHFieldMaxContacts) return;
      }
    }
  }
}

}  // namespace rlt
