// Height-field collisions (MuJoCo 3's mjc_ConvexHField, engine_collision_convex.c), single source.
//
// A height field (geom type hfield, geom_dataid -> hfield id) is a grid of nrow x ncol elevations
// (hfield_data, in [0, 1], row-major, row 0 at y = -radius_y, column 0 at x = -radius_x) over
// [-radius_x, radius_x] x [-radius_y, radius_y] in the geom frame, at height data * elevation_z, with
// a flat bottom at z = -base_z (hfield_size = radius_x, radius_y, elevation_z, base_z).
// Against a sphere, capsule, box, cylinder or ellipsoid (never a plane or another height field), as
// MuJoCo:
//   1. the other geom's bounding sphere against the field's box (-base_z .. elevation_z), then its
//      axis-aligned box in the field's frame (from its support points along +-x, +-y, +-z), each
//      grown by the pair's active margin: nothing when apart;
//   2. the cells under that box (columns cmin..cmax, rows rmin..rmax, floor/ceil of the box's
//      extent in grid steps, clamped to the grid), each cut into two triangular prisms (rows r and
//      r + 1; the triangles (r+1, c-1), (r, c-1), (r+1, c) and (r, c-1), (r+1, c), (r, c)), from the
//      bottom up to the three elevations plus the active margin; a prism whose three top corners
//      are all below the geom's lowest point is skipped;
//   3. each remaining prism against the geom (inflated by half the active margin) with the GJK/EPA
//      collider of sim/convex.h: one contact per prism that overlaps, its depth less the active
//      margin (MuJoCo's dist = margin + ccd distance), in the order rows, columns, prisms, until
//      MuJoCo's 50 per pair (mjMAXCONPAIR; kHFieldMaxContacts).
// The points are the midpoints of EPA's witness points; where the nearest face is not unique (a
// flat box face on a flat cell) the point may differ from MuJoCo's nativeccd, whose EPA walks its
// own polytope; curved geoms (sphere, capsule ends, ellipsoid) on a cell give the same point to the
// tolerance. The normal points from the field to the geom.
#pragma once

#include "sim/common.h"
#include "sim/convex.h"
#include "sim/model_view.h"
#include "sim/spatial.h"

namespace rlt {

namespace hfield_detail {

RLT_HD RLT_INLINE float m_floor(float x) { return floorf(x); }
RLT_HD RLT_INLINE double m_floor(double x) { return ::floor(x); }
RLT_HD RLT_INLINE float m_ceil(float x) { return ceilf(x); }
RLT_HD RLT_INLINE double m_ceil(double x) { return ::ceil(x); }

// One triangular prism of a height-field cell in the field's frame: vertices 0-2 at the bottom,
// 3-5 above them (MuJoCo's mjc_prism_support), c its centroid (the collider's first direction).
template <class T>
struct Prism {
  Vec3<T> v[6];
  Vec3<T> c;
  RLT_HD Vec3<T> support(const Vec3<T>& dir) const {
    const int start = dir.z < T(0) ? 0 : 3;
    int best = start;
    T bd = dot(v[start], dir);
    for (int i = 1; i < 3; ++i) {
      const T d = dot(v[start + i], dir);
      if (d > bd) bd = d, best = start + i;
    }
    return v[best];
  }
};

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
  const convex::Shape<T> shape{m.geom_type[g], lp, lr, Vec3<T>::load(m.geom_size + 3 * g), T(0)};
  const T xmax = shape.support(Vec3<T>{T(1), T(0), T(0)}).x, xmin = shape.support(Vec3<T>{T(-1), T(0), T(0)}).x;
  const T ymax = shape.support(Vec3<T>{T(0), T(1), T(0)}).y, ymin = shape.support(Vec3<T>{T(0), T(-1), T(0)}).y;
  const T zmax = shape.support(Vec3<T>{T(0), T(0), T(1)}).z, zmin = shape.support(Vec3<T>{T(0), T(0), T(-1)}).z;
  if (xmin - margin > hs[0] || xmax + margin < -hs[0] || ymin - margin > hs[1] || ymax + margin < -hs[1] ||
      zmin - margin > hs[2] || zmax + margin < -hs[3])
    return;
  int cmin = static_cast<int>(hfield_detail::m_floor((xmin + hs[0]) / (T(2) * hs[0]) * T(ncol - 1)));
  int cmax = static_cast<int>(hfield_detail::m_ceil((xmax + hs[0]) / (T(2) * hs[0]) * T(ncol - 1)));
  int rmin = static_cast<int>(hfield_detail::m_floor((ymin + hs[1]) / (T(2) * hs[1]) * T(nrow - 1)));
  int rmax = static_cast<int>(hfield_detail::m_ceil((ymax + hs[1]) / (T(2) * hs[1]) * T(nrow - 1)));
  cmin = cmin > 0 ? cmin : 0, cmax = cmax < ncol - 1 ? cmax : ncol - 1;
  rmin = rmin > 0 ? rmin : 0, rmax = rmax < nrow - 1 ? rmax : nrow - 1;
  convex::Shape<T> b = shape;
  b.inflate = T(0.5) * margin;
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
  int n = 0;
#ifdef HFDEBUG
  printf("grid c %d..%d r %d..%d zmin %g\n", cmin, cmax, rmin, rmax, zmin);
#endif
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
        convex::Penetration<T> pen;
        const bool hit = convex::penetration(p, b, &pen);
#ifdef HFDEBUG
        printf("prism r%d c%d i%d top %g %g %g hit %d depth %g\n", r, c, i, p.v[3].z, p.v[4].z, p.v[5].z, hit,
               pen.depth);
#endif
        if (!hit) continue;
        // MuJoCo's normal: the witness points' difference (more accurate than EPA's face normal
        // where the geom's curved surface meets a prism's vertex or edge).
        const Vec3<T> w = pen.pa - pen.pb;
        const T lw = norm(w);
        const Vec3<T> nl = lw > T(1e-12) ? (T(1) / lw) * w : pen.normal;
        emit(c1 + r1 * (T(0.5) * (pen.pa + pen.pb)), r1 * nl, pen.depth - margin);
        if (++n >= kHFieldMaxContacts) return;
      }
    }
  }
}

}  // namespace rlt
