// Contacts (DESIGN.md D3): detection between plane, sphere, capsule, ellipsoid, cylinder and box geoms, and the
// contact wrench per body once the soft constraints (sim/constraints.h, MuJoCo's law, the only one)
// have solved for the forces. Single source (RLT_HD, no std::, no allocation). physics_step
// (sim/physics_step.h) drives it.
//
// Detection (detect_contacts, needs kinematics). Every geom pair allowed by geom_pair_allowed
// (sim/model_view.h: contype/conaffinity, not within one weld body, not body and parent), and every
// explicit pair (<contact><pair>, explicit_pair: whatever the filters, its own margin), whose
// distance is under the pair's reach gives contact candidates with a point (midway between the two
// surfaces), a normal from geom 1 to geom 2 (geom 1 is the one with the lower type number), and a
// depth. MuJoCo's geom margin (pair_active_margin: the sum of the two geoms', as MuJoCo 3) is its meaning
// here too: the contact acts from that distance on, so the stored depth is the overlap plus the
// active margin (> 0: the contact acts; a sphere with margin 0.01 rests 1 cm above the floor, as in
// MuJoCo). Candidates whose depth is in (-margin, 0], margin = pair_margin (kSpeculativeMargin plus
// the closing distance of one step), are kept in the list too (the soft constraints make no row for
// them); the geometric reach of the search is margin + the active margin:
//   plane-sphere     1 point; planes are infinite (as MuJoCo's)
//   plane-capsule    2: the end spheres
//   plane-box        up to 4: the corners below the box centre, in corner order (MuJoCo's)
//   sphere-sphere, sphere-capsule (closest point of the segment), sphere-box (closest point of the
//                    box, or the nearest face when the center is inside): 1
//   capsule-capsule  1: the closest points of the two segments; 2 when the segments are parallel
//                    (within ~3 degrees) and overlap: the ends of the overlap, so a capsule lying on
//                    a parallel one touches along a line and cannot pivot about one point
//   capsule-box      up to 2 (MuJoCo 3's mjc_CapsuleBox, capsule_box_points): the segment point
//                    closest to the box (an end over a face, or the segment against the nearest
//                    edge) and, where the segment can lie along the box (an end over a face, a
//                    corner or an edge crossed in a T), a second one further along it up to the
//                    box's far side or the segment's end; each a sphere of the capsule's radius
//                    against the box (sphere-box)
//   box-box          up to 8 (MuJoCo 3.17's mjc_BoxBox, box_box): the separating axis of largest
//                    separation over the 15 (3 + 3 face normals, 9 edge-edge cross products; none
//                    when one separates the boxes by more than the reach), an edge axis only when it
//                    beats every face (one within ~8 degrees of the best face's normal by 5%); for a face
//                    axis, the incident face of the other box clipped to the reference face
//                    (Sutherland-Hodgman: the corners of the overlap, vertices or edges crossing
//                    edges, so crossed bars rest edge across edge), each vertex within the margin a
//                    contact midway between the reference plane and the incident face; for an edge
//                    axis one point, midway between the closest points of the two edges
//   plane-cylinder   up to 4 (MuJoCo 3's mjc_PlaneCylinder): the deepest rim point of the near cap,
//                    the same on the far cap, two more at +-120 degrees on the near cap's rim
//   plane-ellipsoid  1 at the support point along -normal (mjc_PlaneConvex)
//   plane-mesh       up to 4 (MuJoCo 3.17's mjc_PlaneConvex): the deepest hull vertex (MuJoCo's
//                    search: exhaustive, or hill climbing on the hull), then the other corners of
//                    the hull polygon through it that faces the plane most (mesh_polyvert, by
//                    mesh_polynormal: Newell's normals; of a polygon of more than 4, a large-area
//                    quadrilateral of them, a corner it repeats emitted twice)
//   two of cylinder, box, mesh (not box-box) up to 4, a capsule with a cylinder or a mesh up to 2
//                    (MuJoCo 3.17's mjc_Convex, multi_convex): nativeccd's GJK/EPA (sim/mjccd.h),
//                    then its multicontact (sim/multiccd.h: the touching faces, or an edge and a
//                    face, clipped one to the other; a cylinder's cap a 16-gon, its side and a
//                    capsule's axis edges; with a margin too)
//   sphere, ellipsoid with a mesh: 1, its convex hull in the GJK/EPA collider (sim/convex.h)
//   hfield-sphere, -capsule, -box, -cylinder, -ellipsoid, -mesh: up to 50, one per triangular prism of
//                    the cells under the geom (sim/hfield.h, MuJoCo 3's mjc_ConvexHField); hfields
//                    never touch planes or other hfields
//   sphere-cylinder  1 (mjc_SphereCylinder): side, cap or rim
//   the other pairs with an ellipsoid (capsule, cylinder, box, ellipsoid): 1, from the GJK/EPA
//                    collider of sim/convex.h (MuJoCo 3.17's mjc_Convex gives them one too)
// Degenerate cases take the geometry's normal: coincident centers of a sphere and a capsule axis
// (across the capsule), crossing capsule axes (their common perpendicular), a sphere center on a box
// face (that face's normal). A non-finite depth or margin gives no contact.
// A pair's condim is the larger of its geoms' (geom_condim: 1 frictionless, 3 sliding, 4 torsional,
// 6 rolling friction), its friction coefficient the larger of their geom_friction[0] (MuJoCo's
// combination; sim/constraints.h contact_params for priority and the torsional and rolling ones).
//
// External wrench per body (contact_external_forces, physics_step's last substep): each contact's
// force as solved, accumulated on its two bodies, equal and opposite, as (torque about the tree's
// reference point, force) rows in DataView::cfrc_ext.
//
// Contact record (kContactStride scalars each, DataView::contact):
//   0-2 pos (world), 3-5 normal (geom 1 -> geom 2), 6 depth, 7 mu, 8 geom 1, 9 geom 2, then what
//   the soft constraints solved (sim/constraints.h): 11 normal force, 13 active (normal force > 0,
//   0/1), 14-16 friction force on geom 2's body (world); 10, for a contact of condim 4 or 6, its
//   first constraint row + 1 (0 otherwise), where contact_torque reads its torsional and rolling
//   friction torque. 12 is unused (zero): it held the removed spring-damper law's friction secant
//   (and 10 its normal velocity), and stays so that the physics rows saved in checkpoints keep their
//   layout.
#pragma once

#include "sim/common.h"
#include "sim/convex.h"
#include "sim/dynamics.h"
#include "sim/hfield.h"
#include "sim/multiccd.h"
#include "sim/spatial.h"

namespace rlt {

enum ContactField : int {
  kConPos = 0,
  kConNormal = 3,
  kConDepth = 6,
  kConMu = 7,
  kConGeom1 = 8,
  kConGeom2 = 9,
  kConTorqueRow = 10,
  kConForce = 11,
  kConUnused2 = 12,
  kConActive = 13,
  kConFriction = 14
};

// The fixed part of every pair's speculative margin (pair_margin), m: candidates up to this far
// apart (plus the step's closing distance) beyond the active margin are listed.
constexpr double kSpeculativeMargin = 0.02;

// Out of line on the CPU (collide_pair); nvcc's device code keeps its own inlining choice.
#if defined(__CUDACC__)
#define RLT_CONTACT_NOINLINE
#else
#define RLT_CONTACT_NOINLINE __attribute__((noinline))
#endif

namespace contact_detail {

template <class T>
RLT_HD RLT_INLINE T m_abs(T x) {
  return x < T(0) ? -x : x;
}

// Sliding friction coefficient of the pair: the larger of the two geoms' (MuJoCo's combination at
// equal priority), and 0 when the pair's condim (the larger of the two) is 1 (frictionless).
template <class T>
RLT_HD RLT_INLINE T pair_friction(const ModelView<T>& m, int g1, int g2) {
  const int c1 = m.geom_condim[g1], c2 = m.geom_condim[g2];
  const int condim = c1 > c2 ? c1 : c2;
  if (condim < 3) return T(0);
  const T mu1 = m.geom_friction[3 * g1], mu2 = m.geom_friction[3 * g2];
  return mu1 > mu2 ? mu1 : mu2;
}

template <class T>
struct Emitter {
  const ModelView<T>& m;
  const DataView<T>& d;
  int g1, g2;
  int* ncon;
  T margin;  // this pair's speculative margin (see pair_margin)
  T active;  // this pair's active margin (pair_active_margin): added to the geometric overlap
  // n points from geom 1 to geom 2; depth is the geometric overlap (< 0: a gap).
  RLT_HD void operator()(const Vec3<T>& pos, const Vec3<T>& n, T depth) const {
    const T eff = depth + active;
    // Also drops a NaN depth (a non-finite pose or margin): no contact rather than a NaN force.
    if (!(eff > -margin) || *ncon >= m.ncon_max) return;
    T* c = d.contact + kContactStride * (*ncon);
    pos.store(c + kConPos), n.store(c + kConNormal);
    c[kConDepth] = eff;
    c[kConMu] = pair_friction(m, g1, g2);
    c[kConGeom1] = T(g1), c[kConGeom2] = T(g2);
    c[kConTorqueRow] = c[kConForce] = c[kConUnused2] = c[kConActive] = T(0);
    c[kConFriction] = c[kConFriction + 1] = c[kConFriction + 2] = T(0);
    ++*ncon;
  }
};

template <class T>
RLT_HD RLT_INLINE Vec3<T> mat_t_mul(const Mat3<T>& r, const Vec3<T>& v) {  // R^T v
  return {dot(r.col(0), v), dot(r.col(1), v), dot(r.col(2), v)};
}

// Sphere A (ca, ra) against sphere B (cb, rb), normal from A to B; `up` is the fallback normal.
template <class T>
RLT_HD void sphere_sphere(const Emitter<T>& emit, const Vec3<T>& ca, T ra, const Vec3<T>& cb, T rb, const Vec3<T>& up) {
  const Vec3<T> delta = cb - ca;
  const T dist = norm(delta);
  const Vec3<T> n = dist > T(1e-9) ? (T(1) / dist) * delta : up;
  const T depth = ra + rb - dist;
  emit(ca + (ra - T(0.5) * depth) * n, n, depth);
}

// Plane (p0, normal np) against a sphere (c, r): normal np (plane -> sphere).
template <class T>
RLT_HD void plane_sphere(const Emitter<T>& emit, const Vec3<T>& p0, const Vec3<T>& np, const Vec3<T>& c, T r) {
  const T depth = r - dot(c - p0, np);
  emit(c - (r - T(0.5) * depth) * np, np, depth);
}

template <class T>
RLT_HD Vec3<T> closest_on_segment(const Vec3<T>& a, const Vec3<T>& b, const Vec3<T>& p) {
  const Vec3<T> ab = b - a;
  const T len2 = dot(ab, ab);
  const T t = len2 > T(0) ? clamp(dot(p - a, ab) / len2, T(0), T(1)) : T(0);
  return a + t * ab;
}

// Closest points of segments p1-q1 and p2-q2 (Ericson, Real-Time Collision Detection 5.1.9).
template <class T>
RLT_HD void closest_segments(const Vec3<T>& p1, const Vec3<T>& q1, const Vec3<T>& p2, const Vec3<T>& q2, Vec3<T>* c1,
                             Vec3<T>* c2) {
  const Vec3<T> d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2;
  const T a = dot(d1, d1), e = dot(d2, d2), f = dot(d2, r);
  const T eps = T(1e-12);
  T s, t;
  if (a <= eps && e <= eps) {
    s = t = T(0);
  } else if (a <= eps) {
    s = T(0), t = clamp(f / e, T(0), T(1));
  } else {
    const T c = dot(d1, r);
    if (e <= eps) {
      t = T(0), s = clamp(-c / a, T(0), T(1));
    } else {
      const T b = dot(d1, d2), denom = a * e - b * b;
      s = denom > eps * a * e ? clamp((b * f - c * e) / denom, T(0), T(1)) : T(0.5);  // parallel: the middle
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

// Box (center cb, axes rb, half sizes h) against a sphere (c, r): normal from the box to the sphere
// when box_first, else from the sphere to the box.
template <class T>
RLT_HD void box_sphere(const Emitter<T>& emit, const Vec3<T>& cb, const Mat3<T>& rb, const Vec3<T>& h, const Vec3<T>& c,
                       T r, bool box_first) {
  const Vec3<T> local = mat_t_mul(rb, c - cb);
  const Vec3<T> clamped{clamp(local.x, -h.x, h.x), clamp(local.y, -h.y, h.y), clamp(local.z, -h.z, h.z)};
  Vec3<T> n, surface;
  T depth;
  if (clamped.x == local.x && clamped.y == local.y && clamped.z == local.z) {
    // Center inside: leave through the nearest face.
    const T sx = h.x - m_abs(local.x), sy = h.y - m_abs(local.y), sz = h.z - m_abs(local.z);
    int axis = 0;
    T s = sx;
    if (sy < s) axis = 1, s = sy;
    if (sz < s) axis = 2, s = sz;
    const T comp = axis == 0 ? local.x : axis == 1 ? local.y : local.z;
    n = (comp <= T(0) ? T(-1) : T(1)) * rb.col(axis);  // a centre midway: the - face (MuJoCo's first)
    depth = r + s;
    surface = c + s * n;
  } else {
    surface = cb + rb * clamped;
    const Vec3<T> delta = c - surface;
    const T dist = norm(delta);
    if (dist > T(1e-9)) {
      n = (T(1) / dist) * delta;
    } else {
      // On the surface (outside by under 1e-9): the normal of the face it is outside of.
      const T ox = m_abs(local.x) - h.x, oy = m_abs(local.y) - h.y, oz = m_abs(local.z) - h.z;
      const int axis = ox >= oy && ox >= oz ? 0 : oy >= oz ? 1 : 2;
      const T comp = axis == 0 ? local.x : axis == 1 ? local.y : local.z;
      n = (comp < T(0) ? T(-1) : T(1)) * rb.col(axis);
    }
    depth = r - dist;
  }
  const Vec3<T> pos = T(0.5) * (surface + (c - r * n));
  emit(pos, box_first ? n : -n, depth);
}

// Vertex capacity of box_box's face clipping: a quadrilateral clipped by 4 half-planes has at most
// 8 vertices (MuJoCo's mjBOXBOX_MAXVERT keeps 12).
constexpr int kBoxBoxMaxVert = 12;

// One Sutherland-Hodgman step of box_box's face clipping (MuJoCo's clipHalfPlane): keeps the part
// of polygon *cur (n vertices (x, y, z), z carried along) where sign * v[coord] <= lim. A polygon
// wholly inside is left where it is; otherwise the result goes to *spare and the two swap. Each
// vertex inside is kept, then the crossing of the edge that leaves it, if the edge strictly crosses
// (MuJoCo's order, which is the contacts' order). Returns the new count.
template <class T>
RLT_HD int clip_half_plane(int n, T (**cur)[3], T (**spare)[3], int coord, T sign, T lim) {
  T (*in)[3] = *cur;
  T dist[kBoxBoxMaxVert];
  bool all_inside = true;
  for (int k = 0; k < n; ++k) {
    dist[k] = sign * in[k][coord] - lim;
    all_inside = all_inside && dist[k] <= T(0);
  }
  if (all_inside) return n;
  T (*out)[3] = *spare;
  int m = 0;
  for (int k = 0; k < n; ++k) {
    const int k1 = k + 1 == n ? 0 : k + 1;
    const T dp = dist[k], dq = dist[k1];
    const T* p = in[k];
    if (dp <= T(0) && m < kBoxBoxMaxVert) out[m][0] = p[0], out[m][1] = p[1], out[m][2] = p[2], ++m;
    if (((dp < T(0) && dq > T(0)) || (dp > T(0) && dq < T(0))) && m < kBoxBoxMaxVert) {
      const T* q = in[k1];
      const T t = dp / (dp - dq);
      out[m][0] = p[0] + t * (q[0] - p[0]), out[m][1] = p[1] + t * (q[1] - p[1]), out[m][2] = p[2] + t * (q[2] - p[2]);
      ++m;
    }
  }
  *cur = out, *spare = in;
  return m;
}

// The unit edge-cross axis of box_box's code (6 + 3i + j: box 1's axis i crossed with box 2's j),
// in box 1's frame, from rot (box 2's axes in box 1's frame, row-major); MuJoCo's mju_normalize3.
template <class T>
RLT_HD void box_edge_axis(const T* rot, int code, T* axis) {
  const int i = (code - 6) / 3, j = (code - 6) % 3, i1 = (i + 1) % 3, i2 = (i + 2) % 3;
  axis[i] = T(0), axis[i1] = -rot[3 * i2 + j], axis[i2] = rot[3 * i1 + j];
  const T len = m_sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
  if (len < T(1e-15)) {
    axis[0] = T(1), axis[1] = axis[2] = T(0);
  } else {
    const T inv = T(1) / len;
    axis[0] *= inv, axis[1] *= inv, axis[2] *= inv;
  }
}

// Box 1 (centre c1, rotation r1, half sizes h1) against box 2, normal from 1 to 2: MuJoCo
// 3.17's mjc_BoxBox (engine_collision_box.c), step by step, so that the contacts are its contacts
// (count, order, points, normals, depths; checked against the mujoco wheel,
// tools/box_box_cases.py). `margin` is the pair's reach (speculative plus active margin): MuJoCo's
// margin argument, so that the contacts MuJoCo makes within its margin are made here with the same
// values, and those further out, up to the reach, are listed too (they do not act).
//  1. Separating axes, in box 1's frame (rot = r1^T r2): the 3 face normals of box 1, then box 2's,
//     then the 9 edge-cross axes (i, j) (box 1's axis i crossed with box 2's j; skipped where
//     sin^2 of their angle is under rounding, 1e-16). Separation |c.l| - radius1 - radius2; one
//     above margin plus a rounding slack (1e-13 of the summed half sizes) and there is no contact.
//     The best axis is the plain argmax of the separation (the first on a tie: box 1 before box 2),
//     an edge axis counting only when it beats the best face and its separation less 1e-6 of
//     itself beats the best so far. A winning edge axis within ~8 degrees of the best face's
//     normal (|cos| > 0.99) gives way to that face unless it is better by 5% of the face's
//     separation (ODE's fudge: resting stacks would otherwise flip between the two by rounding).
//  2. An edge axis: one contact, at the midpoint of the closest points of the two supporting edges
//     (a near-zero axis component makes the supporting corner ambiguous: both are tried and the
//     closer pair kept), its depth the gap along the axis.
//     A face axis: the face's owner is the reference box; the face of the other (incident) box
//     most against the reference normal, its 4 corners in cyclic order, is clipped to the
//     reference face's 4 side planes (clip_half_plane). Each vertex within margin of the
//     reference plane, less those within 1e-7 (relative) of one kept before, is a contact (up to
//     8), at its place in the face's plane, midway between the reference plane and the incident
//     face, its depth below the reference plane, the normal the reference face's.
// A vertex that acts (within the active margin) is only dropped as a duplicate of another that
// acts, so the acting contacts are MuJoCo's whatever the reach.
template <class T>
RLT_HD void box_box(const Emitter<T>& emit, const Vec3<T>& c1, const Mat3<T>& r1, const Vec3<T>& h1, const Vec3<T>& c2,
                    const Mat3<T>& r2, const Vec3<T>& h2, T margin) {
  // Rounding scales (MuJoCo's per precision): separation slack per unit of summed half sizes, sin^2
  // under which an edge-cross axis is noise, axis component under which a supporting corner is
  // ambiguous, squared relative radius of clipped-vertex duplicates.
  const bool single = sizeof(T) == sizeof(float);
  const T sep_eps = single ? T(1e-6) : T(1e-13), par_eps = single ? T(1e-7) : T(1e-16);
  const T sgn_eps = single ? T(1e-5) : T(1e-9), dup_eps = single ? T(1e-10) : T(1e-14);
  const T edge_bias = T(1e-6), min_val = T(1e-15), max_val = T(1e10);
  const T pos1[3] = {c1.x, c1.y, c1.z}, pos2[3] = {c2.x, c2.y, c2.z};
  const T size1[3] = {h1.x, h1.y, h1.z}, size2[3] = {h2.x, h2.y, h2.z};
  const T* mat1 = r1.m;
  const T* mat2 = r2.m;
  // rot: box 2's axes in box 1's frame (columns); pos21: box 2's centre in box 1's frame; pos12: box
  // 1's centre in box 2's frame (row-major, as MuJoCo's)
  T rot[9], rotabs[9], pos21[3], pos12[3];
  {
    const T d21[3] = {pos2[0] - pos1[0], pos2[1] - pos1[1], pos2[2] - pos1[2]};
    const T d12[3] = {pos1[0] - pos2[0], pos1[1] - pos2[1], pos1[2] - pos2[2]};
    for (int i = 0; i < 3; ++i) {
      pos21[i] = mat1[i] * d21[0] + mat1[3 + i] * d21[1] + mat1[6 + i] * d21[2];
      pos12[i] = mat2[i] * d12[0] + mat2[3 + i] * d12[1] + mat2[6 + i] * d12[2];
    }
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        rot[3 * i + j] = mat1[i] * mat2[j] + mat1[3 + i] * mat2[3 + j] + mat1[6 + i] * mat2[6 + j];
    for (int k = 0; k < 9; ++k) rotabs[k] = m_abs(rot[k]);
  }

  // ---- 1. separating axes
  const T septol = margin + sep_eps * (size1[0] + size1[1] + size1[2] + size2[0] + size2[1] + size2[2]);
  // code 0..2: face of box 1, 3..5: face of box 2, 6 + 3i + j: edge pair (i, j)
  T sep_best = -max_val;
  int code = -1;
  for (int i = 0; i < 3; ++i) {
    const T radius2 = rotabs[3 * i] * size2[0] + rotabs[3 * i + 1] * size2[1] + rotabs[3 * i + 2] * size2[2];
    const T sep = m_abs(pos21[i]) - size1[i] - radius2;
    if (!(sep <= septol)) return;  // also a NaN pose: no contact
    if (sep > sep_best) sep_best = sep, code = i;
  }
  for (int j = 0; j < 3; ++j) {
    const T radius1 = rotabs[j] * size1[0] + rotabs[3 + j] * size1[1] + rotabs[6 + j] * size1[2];
    const T sep = m_abs(pos12[j]) - size2[j] - radius1;
    if (!(sep <= septol)) return;
    if (sep > sep_best) sep_best = sep, code = 3 + j;
  }
  const T sep_face = sep_best;
  const int code_face = code;
  for (int i = 0; i < 3; ++i) {
    const int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
    for (int j = 0; j < 3; ++j) {
      // e_i x (column j of rot) in box 1's frame: component i is zero
      T ax1 = -rot[3 * i2 + j], ax2 = rot[3 * i1 + j];
      const T norm2 = ax1 * ax1 + ax2 * ax2;
      if (norm2 < par_eps) continue;  // nearly parallel edges: the faces cover them
      const T inv = T(1) / m_sqrt(norm2);
      ax1 *= inv, ax2 *= inv;
      const T radius1 = size1[i1] * m_abs(ax1) + size1[i2] * m_abs(ax2);
      const int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
      const T a2_1 = ax1 * rot[3 * i1 + j1] + ax2 * rot[3 * i2 + j1];
      const T a2_2 = ax1 * rot[3 * i1 + j2] + ax2 * rot[3 * i2 + j2];
      const T radius2 = size2[j1] * m_abs(a2_1) + size2[j2] * m_abs(a2_2);
      const T sep = m_abs(ax1 * pos21[i1] + ax2 * pos21[i2]) - radius1 - radius2;
      if (!(sep <= septol)) return;
      if (sep - edge_bias * m_abs(sep) > sep_best && sep > sep_face) sep_best = sep, code = 6 + 3 * i + j;
    }
  }
  if (code >= 6) {  // an edge nearly along the best face's normal gives way to it
    T axis[3];
    box_edge_axis(rot, code, axis);
    T face_dot;
    if (code_face < 3) {
      face_dot = m_abs(axis[code_face]);
    } else {
      const int f = code_face - 3;
      face_dot = m_abs(axis[0] * rot[f] + axis[1] * rot[3 + f] + axis[2] * rot[6 + f]);
    }
    if (face_dot > T(0.99) && sep_best < sep_face + T(0.05) * m_abs(sep_face) + min_val)
      code = code_face, sep_best = sep_face;
  }

  // ---- 2a. edge against edge: one contact
  if (code >= 6) {
    const int i = (code - 6) / 3, j = (code - 6) % 3;
    const int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
    T axis[3];  // oriented from box 1 to box 2
    box_edge_axis(rot, code, axis);
    if (axis[0] * pos21[0] + axis[1] * pos21[1] + axis[2] * pos21[2] < T(0))
      axis[0] = -axis[0], axis[1] = -axis[1], axis[2] = -axis[2];
    // The supporting edges: box 1's along e_i at the corner the axis's signs pick, box 2's along its
    // axis j at the corner the signs of the axis in its frame pick; a near-zero component (at most
    // one per box) makes that sign ambiguous, and both corners are tried.
    T a2[3];
    for (int c = 0; c < 3; ++c) a2[c] = axis[0] * rot[c] + axis[1] * rot[3 + c] + axis[2] * rot[6 + c];
    int amb1 = -1, amb2 = -1;
    if (m_abs(axis[i1]) < sgn_eps) amb1 = i1;
    else if (m_abs(axis[i2]) < sgn_eps) amb1 = i2;
    if (m_abs(a2[j1]) < sgn_eps) amb2 = j1;
    else if (m_abs(a2[j2]) < sgn_eps) amb2 = j2;
    const T d2[3] = {rot[j], rot[3 + j], rot[6 + j]};
    const T b = d2[i];  // e_i . d2
    const T denom = T(1) - b * b;
    T w1[3] = {T(0), T(0), T(0)}, w2[3] = {T(0), T(0), T(0)};
    T best_d2 = max_val;
    for (int v1 = 0; v1 < (amb1 >= 0 ? 2 : 1); ++v1) {
      for (int v2 = 0; v2 < (amb2 >= 0 ? 2 : 1); ++v2) {
        T e1[3];  // box 1's edge centre: support along +axis
        e1[i] = T(0);
        e1[i1] = axis[i1] >= T(0) ? size1[i1] : -size1[i1];
        e1[i2] = axis[i2] >= T(0) ? size1[i2] : -size1[i2];
        if (amb1 >= 0 && v1) e1[amb1] = -e1[amb1];
        T cc[3];  // box 2's edge centre in its frame: support along -axis
        cc[j] = T(0);
        cc[j1] = a2[j1] >= T(0) ? -size2[j1] : size2[j1];
        cc[j2] = a2[j2] >= T(0) ? -size2[j2] : size2[j2];
        if (amb2 >= 0 && v2) cc[amb2] = -cc[amb2];
        T e2[3];
        for (int r = 0; r < 3; ++r)
          e2[r] = rot[3 * r] * cc[0] + rot[3 * r + 1] * cc[1] + rot[3 * r + 2] * cc[2] + pos21[r];
        // closest points of the two edges (unit directions e_i and d2), each clamp re-solving the other
        const T e[3] = {e2[0] - e1[0], e2[1] - e1[1], e2[2] - e1[2]};
        const T d1e = e[i];
        const T d2e = d2[0] * e[0] + d2[1] * e[1] + d2[2] * e[2];
        T s = denom < min_val ? T(0) : (d1e - b * d2e) / denom;
        s = clamp(s, -size1[i], size1[i]);
        const T t = clamp(b * s - d2e, -size2[j], size2[j]);
        s = clamp(d1e + b * t, -size1[i], size1[i]);
        T p1[3] = {e1[0], e1[1], e1[2]};
        p1[i] += s;
        const T p2[3] = {e2[0] + t * d2[0], e2[1] + t * d2[1], e2[2] + t * d2[2]};
        const T g[3] = {p2[0] - p1[0], p2[1] - p1[1], p2[2] - p1[2]};
        const T gap2 = g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
        if (gap2 < best_d2) {
          best_d2 = gap2;
          for (int r = 0; r < 3; ++r) w1[r] = p1[r], w2[r] = p2[r];
        }
      }
    }
    const T dist = (w2[0] - w1[0]) * axis[0] + (w2[1] - w1[1]) * axis[1] + (w2[2] - w1[2]) * axis[2];
    if (!(dist <= septol)) return;
    const Vec3<T> mid{T(0.5) * (w1[0] + w2[0]), T(0.5) * (w1[1] + w2[1]), T(0.5) * (w1[2] + w2[2])};
    emit(r1 * mid + c1, r1 * Vec3<T>{axis[0], axis[1], axis[2]}, -dist);
    return;
  }

  // ---- 2b. face against face: the incident face clipped to the reference face
  const bool ref1 = code < 3;            // box 1 is the reference
  const int a = ref1 ? code : code - 3;  // the reference face's axis
  const T* sizeref = ref1 ? size1 : size2;
  const T* sizeinc = ref1 ? size2 : size1;
  const T* posoi = ref1 ? pos21 : pos12;  // the incident centre in the reference frame
  const Mat3<T>& matref = ref1 ? r1 : r2;
  const Vec3<T>& posref = ref1 ? c1 : c2;
  T rinc[9];  // rinc[3r + c]: component r of the incident box's axis c, in the reference frame
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) rinc[3 * r + c] = ref1 ? rot[3 * r + c] : rot[3 * c + r];
  const T sgn = posoi[a] >= T(0) ? T(1) : T(-1);  // the incident box lies along sgn * a
  // the incident face: its axis most along a, its side against sgn * a
  int binc = 0;
  for (int k = 1; k < 3; ++k)
    if (m_abs(rinc[3 * a + k]) > m_abs(rinc[3 * a + binc])) binc = k;
  const T tinc = sgn * rinc[3 * a + binc] > T(0) ? T(-1) : T(1);
  // Its corners, cyclic, in (x, y) = the reference axes a+1, a+2 and z = the height above the
  // reference face's plane (< 0: inside the reference box).
  const int ax = (a + 1) % 3, ay = (a + 2) % 3, bu = (binc + 1) % 3, bv = (binc + 2) % 3;
  T cx[3], du[3], dv[3];
  for (int r = 0; r < 3; ++r) {
    const int c = r == 0 ? ax : (r == 1 ? ay : a);
    cx[r] = posoi[c] + tinc * sizeinc[binc] * rinc[3 * c + binc];
    du[r] = sizeinc[bu] * rinc[3 * c + bu];
    dv[r] = sizeinc[bv] * rinc[3 * c + bv];
  }
  cx[2] = sgn * cx[2] - sizeref[a];
  du[2] *= sgn, dv[2] *= sgn;
  T poly[2][kBoxBoxMaxVert][3];
  for (int k = 0; k < 4; ++k) {
    const T su = (k == 0 || k == 3) ? T(1) : T(-1), sv = k < 2 ? T(1) : T(-1);
    for (int r = 0; r < 3; ++r) poly[0][k][r] = cx[r] + su * du[r] + sv * dv[r];
  }
  T (*cur)[3] = poly[0];
  T (*spare)[3] = poly[1];
  int nvert = 4;
  nvert = clip_half_plane(nvert, &cur, &spare, 0, T(1), sizeref[ax]);
  nvert = clip_half_plane(nvert, &cur, &spare, 0, T(-1), sizeref[ax]);
  nvert = clip_half_plane(nvert, &cur, &spare, 1, T(1), sizeref[ay]);
  nvert = clip_half_plane(nvert, &cur, &spare, 1, T(-1), sizeref[ay]);

  const Vec3<T> normal = (ref1 ? sgn : -sgn) * matref.col(a);  // from box 1 to box 2
  const T dupe2 = dup_eps * (sizeref[ax] * sizeref[ax] + sizeref[ay] * sizeref[ay]);
  const T active = emit.active;
  int kept[kBoxBoxMaxVert];
  int nkept = 0;
  for (int k = 0; k < nvert; ++k) {
    const T* v = cur[k];
    if (!(v[2] <= margin)) continue;
    const bool acts = v[2] <= active;
    bool dupe = false;
    for (int q = 0; q < nkept && !dupe; ++q) {
      const T* w = cur[kept[q]];
      if (acts && !(w[2] <= active)) continue;  // an acting vertex: MuJoCo's list holds only those
      const T dx = w[0] - v[0], dy = w[1] - v[1];
      dupe = dx * dx + dy * dy < dupe2;
    }
    if (dupe) continue;
    kept[nkept++] = k;
    T pc[3];  // midway between the reference plane and the incident face
    pc[ax] = v[0], pc[ay] = v[1], pc[a] = sgn * (sizeref[a] + T(0.5) * v[2]);
    emit(matref * Vec3<T>::load(pc) + posref, normal, -v[2]);
  }
}

// Capsule (segment a1-b1, radius ra) against capsule (a2-b2, rb), normal from the first to the
// second; `up` is the fallback normal. One point, the closest points of the two segments, unless
// the segments are parallel (within ~3 degrees) and overlap along their length: then the two ends
// of the overlap, each against its closest point on the other segment (a line contact: a capsule
// lying on a parallel one rests on two points instead of pivoting about one).
template <class T>
RLT_HD void capsule_capsule(const Emitter<T>& emit, const Vec3<T>& a1, const Vec3<T>& b1, T ra, const Vec3<T>& a2,
                            const Vec3<T>& b2, T rb, const Vec3<T>& up) {
  const Vec3<T> d1 = b1 - a1, d2 = b2 - a2;
  const T l1 = dot(d1, d1), l2 = dot(d2, d2);
  const Vec3<T> cr = cross(d1, d2);
  if (l1 > T(1e-12) && l2 > T(1e-12) && dot(cr, cr) < T(2.5e-3) * l1 * l2) {
    const T ta = dot(a2 - a1, d1) / l1, tb = dot(b2 - a1, d1) / l1;
    const T lo = clamp(ta < tb ? ta : tb, T(0), T(1)), hi = clamp(ta < tb ? tb : ta, T(0), T(1));
    if ((hi - lo) * (hi - lo) * l1 > T(1e-12)) {
      for (int e = 0; e < 2; ++e) {
        const Vec3<T> p = a1 + (e == 0 ? lo : hi) * d1;
        sphere_sphere(emit, p, ra, closest_on_segment(a2, b2, p), rb, up);
      }
      return;
    }
  }
  Vec3<T> p1, p2;
  closest_segments(a1, b1, a2, b2, &p1, &p2);
  // Segments that cross (closest points coincide) separate along their common perpendicular.
  const T lc = norm(cr);
  const Vec3<T> perp = lc > T(1e-9) * (T(1) + l1 + l2) ? (T(1) / lc) * cr : up;
  sphere_sphere(emit, p1, ra, p2, rb, perp);
}

// Where a capsule's spheres meet a box: MuJoCo 3's mjc_CapsuleBox (engine_collision_box.c), in the
// box frame: capsule centre p, unit axis ax, radius r, half-length hl (ha = hl ax), box half sizes s,
// `margin` the pair's active margin (MuJoCo's). Writes the positions of up to 2 sphere centres along
// the axis, in units of ha (centre p + t ha), to t[] and returns how many (0: none); the caller
// collides each sphere with the box (box_sphere, MuJoCo's mjraw_SphereBox). MuJoCo's law, step by
// step, so that the points are its points (checked against the mujoco 3.17 wheel,
// tools/capsule_box_cases.py):
//  1. the first point, the segment point closest to the box, is the closest of: each end of the
//     segment against its clamp into the box (only an end outside at most one face's slab), then
//     the segment against each of the 12 edges (closest points of the two segments, clamped to
//     both; an edge strictly closer by 1e-15 replaces; an edge parallel to the axis is skipped).
//     Squared distances are compared with MuJoCo's start value margin + 2 (r + hl + s0 + s1 + s2):
//     nothing below it, no contact.
//  2. the second point, where the segment can lie along the box (octant codes: bit k set where
//     ha_k > 0, or the corner's coordinate k is +s_k):
//     - an end closest, outside one face: from that end towards the other, stopped where the
//       segment leaves the slabs of the other two axes (at most the other end); none when the end
//       is inside the box;
//     - a corner closest (an edge clamped to its end): none when the axis points into the corner's
//       octant or out of it; else along the box axis the capsule runs closest to (its squared
//       component > 1/2), stopped at the segment's end or the box's far side (2 s_k / |ha_k|), or
//       otherwise the other way across the face, stopped by the two other axes' far sides;
//     - an edge's interior closest: only when the capsule crosses the edge in a T (the axis leans
//       off exactly one of the edge's two faces), along the face it runs flatter to, stopped at the
//       segment's end, that face's far side or the edge's end.
//  An end inside the box, or a segment pointing at a corner or along an edge's diagonal, gives one.
template <class T>
RLT_HD int capsule_box_points(const Vec3<T>& p_in, const Vec3<T>& ax_in, T r, T hl, const Vec3<T>& s_in, T margin,
                              T* t) {
  const T kMinVal = T(1e-15);  // MuJoCo's mjMINVAL
  const T p[3] = {p_in.x, p_in.y, p_in.z}, ax[3] = {ax_in.x, ax_in.y, ax_in.z}, s[3] = {s_in.x, s_in.y, s_in.z};
  const T ha[3] = {ax[0] * hl, ax[1] * hl, ax[2] * hl};
  const int axis_code = (ha[0] > T(0) ? 1 : 0) + (ha[1] > T(0) ? 2 : 0) + (ha[2] > T(0) ? 4 : 0);
  // The squared distance of the closest pair so far, from MuJoCo's start value.
  T best = margin + T(2) * (r + hl + s[0] + s[1] + s[2]);
  T seg = T(0);     // the first point on the segment, in units of ha
  T boxpos = T(0);  // where on its edge (-1..1) the box's closest point lies (edge cases)
  int kind = -4;    // -3 / -1: end -1 / +1 closest; 0..8: an edge, 3 * (its clamp) + (the segment's clamp)
  int face = -1, corner = 0, edge = 0;  // the face an end is outside of; the edge's corner code and axis
  for (int e = -1; e <= 1; e += 2) {
    int out = 0, f = -1;
    T d2 = T(0);
    for (int k = 0; k < 3; ++k) {
      const T v = p[k] + ha[k] * T(e);
      const T c = v < -s[k] ? -s[k] : (v > s[k] ? s[k] : v);
      if (c != v) ++out, f = k;
      d2 += (c - v) * (c - v);
    }
    if (out > 1) continue;
    if (d2 < best) best = d2, seg = T(e), kind = e - 2, face = f;
  }
  for (int j = 0; j < 3; ++j) {
    for (int i = 0; i < 8; ++i) {
      if (i & (1 << j)) continue;
      // The edge along axis j through corner i: its centre c3, points c3 + x1 s_j e_j, x1 in [-1, 1];
      // the segment's points p + x2 ha, x2 in [-1, 1]. The 2x2 normal equations of their distance.
      T c3[3] = {(i & 1) ? s[0] : -s[0], (i & 2) ? s[1] : -s[1], (i & 4) ? s[2] : -s[2]};
      c3[j] = T(0);
      const T dif[3] = {c3[0] - p[0], c3[1] - p[1], c3[2] - p[2]};
      const T ma = s[j] * s[j], mb = -s[j] * ha[j], mc = hl * hl;
      const T u = -s[j] * dif[j], v = ha[0] * dif[0] + ha[1] * dif[1] + ha[2] * dif[2];
      const T det = ma * mc - mb * mb;
      if (m_abs(det) < kMinVal) continue;
      const T idet = T(1) / det;
      T x1 = (mc * u - mb * v) * idet, x2 = (ma * v - mb * u) * idet;
      int s1 = 1, s2 = 1;  // 0 / 2: clamped to -1 / +1 (s1 is kept when x1 is recomputed in range: MuJoCo's)
      if (x1 > T(1)) {
        x1 = T(1), s1 = 2, x2 = (v - mb) * (T(1) / mc);
      } else if (x1 < T(-1)) {
        x1 = T(-1), s1 = 0, x2 = (v + mb) * (T(1) / mc);
      }
      if (x2 > T(1) || x2 < T(-1)) {
        const bool hi = x2 > T(1);
        x2 = hi ? T(1) : T(-1), s2 = hi ? 2 : 0;
        x1 = (hi ? u - mb : u + mb) * (T(1) / ma);
        if (x1 > T(1)) {
          x1 = T(1), s1 = 2;
        } else if (x1 < T(-1)) {
          x1 = T(-1), s1 = 0;
        }
      }
      T dv[3] = {dif[0] - ha[0] * x2, dif[1] - ha[1] * x2, dif[2] - ha[2] * x2};
      dv[j] += s[j] * x1;
      const T d2 = dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2];
      if (d2 < best - kMinVal) {
        const int code = 3 * s1 + s2;
        best = d2, seg = x2, boxpos = x1, kind = code;
        corner = i + (1 << j) * (code / 6), edge = j;  // the edge's end at +s_j when clamped there
      }
    }
  }
  if (kind == -4) return 0;
  // The second point, as an offset from the first in units of ha (none: < -3).
  T second = T(-4);
  // second = min(second, num / |den|), skipped for den 0 (MuJoCo's division gives inf, never smaller)
  auto limit = [](T& x, T num, T den) {
    const T a = m_abs(den);
    if (a > T(0) && num / a < x) x = num / a;
  };
  if (kind >= 0 && kind / 3 != 1) {  // a corner of the box
    int c = axis_code ^ corner;
    if (c != 0 && c != 7) {
      T mul, de, dp;  // the direction along the axis; the distances to the segment's two ends
      if (c == 1 || c == 2 || c == 4) {
        mul = T(1), de = T(1) - seg, dp = T(1) + seg;
      } else {
        mul = T(-1), c = 7 - c, dp = T(1) - seg, de = T(1) + seg;
      }
      const int k = c == 1 ? 0 : (c == 2 ? 1 : 2), k1 = (k + 1) % 3, k2 = (k + 2) % 3;
      if (ax[k] * ax[k] > T(0.5)) {  // along the box's edge
        second = de;
        limit(second, T(2) * s[k], ha[k]);
        second *= mul;
      } else {  // across a face
        second = dp;
        limit(second, T(2) * s[k1], ha[k1]);
        limit(second, T(2) * s[k2], ha[k2]);
        second *= -mul;
      }
    }
  } else if (kind >= 0) {  // an edge's interior
    const int c = (axis_code ^ corner) & (7 - (1 << edge));
    if (c == 1 || c == 2 || c == 4) {
      const int k = edge;
      int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
      if (m_abs(ax[k1]) > m_abs(ax[k2])) k1 = k2;
      k2 = 3 - k - k1;
      const bool up = (c & (1 << k2)) != 0;
      const T mul = up ? T(1) : T(-1);
      second = up ? T(1) - seg : T(1) + seg;
      limit(second, T(2) * s[k2], ha[k2]);
      const T e2 = (((axis_code >> k) & 1) != 0) == up ? T(1) - boxpos : T(1) + boxpos;
      limit(second, s[k] * e2, ha[k]);
      second *= mul;
    }
  } else if (face >= 0) {  // an end over a face (an end inside the box: one point)
    const T mul = kind == -3 ? T(1) : T(-1);
    second = T(2);
    for (int k = 0; k < 3; ++k) {
      if (k == face || ha[k] == T(0)) continue;
      const T q = p[k] + ha[k] * (-mul);
      const T e1 = (s[k] - q) / ha[k] * mul, e2 = (-s[k] - q) / ha[k] * mul;
      if (e1 > T(0) && e1 < second) second = e1;
      if (e2 > T(0) && e2 < second) second = e2;
    }
    second *= mul;
  }
  t[0] = seg;
  if (second > T(-3)) {
    t[1] = second + seg;
    return 2;
  }
  return 1;
}

// Capsule (centre c, unit axis ax, radius r, half-length hl) against box (cb, rb, h), normal from
// the capsule to the box: MuJoCo 3's mjc_CapsuleBox, up to 2 points (capsule_box_points), each a
// sphere of the capsule's radius against the box, in that order.
template <class T>
RLT_HD void capsule_box(const Emitter<T>& emit, const Vec3<T>& c, const Vec3<T>& ax, T r, T hl, const Vec3<T>& cb,
                        const Mat3<T>& rb, const Vec3<T>& h) {
  const Vec3<T> p = mat_t_mul(rb, c - cb), a = mat_t_mul(rb, ax);
  T t[2];
  const int n = capsule_box_points(p, a, r, hl, h, emit.active, t);
  const Vec3<T> ha = hl * a;
  for (int k = 0; k < n; ++k) box_sphere(emit, cb, rb, h, cb + rb * (p + t[k] * ha), r, false);
}

// Plane (p0, normal np) against a cylinder (center c, unit axis ax, local x axis ex, radius r,
// half-height hl): MuJoCo 3's mjc_PlaneCylinder, up to 4 points: the rim point deepest below the
// plane on the cap nearer to it, the same rim point on the other cap, and two more on the near cap's
// rim at +-120 degrees (a triangle on the near cap, so a cylinder standing on its face rests on
// three points), each where it is within `reach` of the plane.
template <class T>
RLT_HD void plane_cylinder(const Emitter<T>& emit, const Vec3<T>& p0, const Vec3<T>& np, const Vec3<T>& c, Vec3<T> ax,
                           const Vec3<T>& ex, T r, T hl, T reach) {
  T prjaxis = dot(np, ax);
  if (prjaxis > T(0)) ax = -ax, prjaxis = -prjaxis;  // the axis points towards the plane
  const T dist0 = dot(c - p0, np);
  Vec3<T> vec = prjaxis * ax - np;  // -normal without its component along the axis
  const T len2 = dot(vec, vec);
  if (len2 >= T(1e-15) * T(1e-15)) {
    vec = (r / m_sqrt(len2)) * vec;
  } else {  // the disk parallel to the plane: the cylinder's x axis
    vec = r * ex;
  }
  const T prjvec = dot(vec, np);
  const Vec3<T> axs = hl * ax;
  prjaxis *= hl;
  const T d1 = dist0 + prjaxis + prjvec;
  if (!(d1 <= reach)) return;
  emit(c + vec + axs - (T(0.5) * d1) * np, np, -d1);
  const T d2 = dist0 - prjaxis + prjvec;
  if (d2 <= reach) emit(c + vec - axs - (T(0.5) * d2) * np, np, -d2);
  const T d3 = dist0 + prjaxis - T(0.5) * prjvec;
  if (d3 <= reach) {
    Vec3<T> side = cross(vec, axs);
    const T ls = norm(side);
    side = ls > T(1e-15) ? (r * T(0.86602540378443864676) / ls) * side : Vec3<T>::zero();
    emit(c + side + axs - T(0.5) * vec - (T(0.5) * d3) * np, np, -d3);
    emit(c - side + axs - T(0.5) * vec - (T(0.5) * d3) * np, np, -d3);
  }
}

// The support point of an ellipsoid (center c, axes rot, semi-axes s) along direction dir (MuJoCo
// 3's mjc_ellipsoidSupport).
template <class T>
RLT_HD Vec3<T> ellipsoid_support(const Vec3<T>& c, const Mat3<T>& rot, const Vec3<T>& s, const Vec3<T>& dir) {
  const Vec3<T> l = mat_t_mul(rot, dir);
  Vec3<T> p{l.x * s.x, l.y * s.y, l.z * s.z};
  const T n2 = dot(p, p);
  if (n2 < T(1e-15) * T(1e-15)) return c + s.x * rot.col(0);
  const T inv = T(1) / m_sqrt(n2);
  p = Vec3<T>{p.x * inv * s.x, p.y * inv * s.y, p.z * inv * s.z};
  return c + rot * p;
}

// Plane (p0, normal np) against an ellipsoid: MuJoCo 3's mjc_PlaneConvex, one point at the
// ellipsoid's support point along -np.
template <class T>
RLT_HD void plane_ellipsoid(const Emitter<T>& emit, const Vec3<T>& p0, const Vec3<T>& np, const Vec3<T>& c,
                            const Mat3<T>& rot, const Vec3<T>& s) {
  const Vec3<T> sp = ellipsoid_support(c, rot, s, -np);
  const T dist = dot(np, sp - p0);
  emit(sp - (T(0.5) * dist) * np, np, -dist);
}

// Sphere (cs, rs) against a cylinder (center c, unit axis ax, radius r, half-height hl), normal from
// the sphere to the cylinder: MuJoCo 3's mjc_SphereCylinder. The side (sphere-sphere against the
// center's projection on the axis), a cap (plane-sphere), or the rim (sphere against the nearest rim
// point); a center inside takes the nearer of side and cap.
template <class T>
RLT_HD void sphere_cylinder(const Emitter<T>& emit, const Vec3<T>& cs, T rs, const Vec3<T>& up, const Vec3<T>& c,
                            const Vec3<T>& ax, T r, T hl) {
  const Vec3<T> v = cs - c;
  const T x = dot(ax, v);
  const Vec3<T> a_proj = x * ax;
  Vec3<T> p_proj = v - a_proj;
  const T p2 = dot(p_proj, p_proj);
  bool side = m_abs(x) < hl, cap = p2 < r * r;
  if (side && cap) {
    if (hl - m_abs(x) < r - m_sqrt(p2)) side = false;
    else cap = false;
  }
  if (side) {
    sphere_sphere(emit, cs, rs, c + a_proj, r, up);
  } else if (cap) {
    const Vec3<T> n = x > T(0) ? ax : -ax;  // the cap's outward normal
    const Vec3<T> pc = c + hl * n;
    const T depth = rs - dot(cs - pc, n);
    emit(cs - (rs - T(0.5) * depth) * n, -n, depth);
  } else {
    p_proj = (r / m_sqrt(p2)) * p_proj;
    sphere_sphere(emit, cs, rs, c + (x > T(0) ? hl : -hl) * ax + p_proj, T(0), up);
  }
}

// Any other pair of convex primitives (MuJoCo 3's mjc_Convex: ellipsoids with anything, cylinders
// with capsules, boxes and cylinders): one point from the GJK/EPA collider of sim/convex.h, the
// two shapes each inflated by half the pair's active margin (as MuJoCo's mjCCDObj margin). Geom 1
// is A; the normal points from it to geom 2.
// Geom g as a shape for the convex collider (sim/convex.h), inflated by `inflate`.
template <class T>
RLT_HD convex::Shape<T> geom_shape(const ModelView<T>& m, int g, const Vec3<T>& c, const Mat3<T>& r, T inflate) {
  convex::Shape<T> s{m.geom_type[g], c, r, Vec3<T>::load(m.geom_size + 3 * g), inflate};
  if (s.type == kGeomMesh) {
    const int id = m.geom_dataid[g];
    s.vert = m.mesh_vert + 3 * m.mesh_vertadr[id];
    s.hull = m.mesh_graph + m.mesh_graphadr[id];
  }
  return s;
}

// The support vertex of mesh `mesh` along the local direction l, as MuJoCo 3 finds it (its id within
// the mesh; *local: its hull id, -1 when found by the exhaustive search): below 10 vertices
// (mjMESH_HILLCLIMB_MIN) or without a hull, every vertex, the first of equals; else hill climbing
// on the hull graph from the extremum of l's cell in the (-1, 0, 1)^3 grid (mesh_extrema), moving to
// a strictly better neighbour until none is.
template <class T>
RLT_HD int mesh_support_vertex(const ModelView<T>& m, int mesh, const Vec3<T>& l, int* local) {
  const T* vert = m.mesh_vert + 3 * m.mesh_vertadr[mesh];
  const int nvert = m.mesh_vertnum[mesh];
  auto dotv = [&](int v) { return l.x * vert[3 * v] + l.y * vert[3 * v + 1] + l.z * vert[3 * v + 2]; };
  *local = -1;
  if (m.mesh_graphadr[mesh] < 0 || nvert < 10 || m.mesh_extrema == nullptr) {
    int best = 0;
    T bd = dotv(0);
    for (int v = 1; v < nvert; ++v) {
      const T dd = dotv(v);
      if (dd > bd) bd = dd, best = v;
    }
    return best;
  }
  const int* hull = m.mesh_graph + m.mesh_graphadr[mesh];
  const int nh = hull[0];
  const int* edgeadr = hull + 2;
  const int* ids = hull + 2 + nh;
  const int* edges = hull + 2 + 2 * nh;
  const int cx = (l.x > T(0.4)) - (l.x < T(-0.4)) + 1, cy = (l.y > T(0.4)) - (l.y < T(-0.4)) + 1,
            cz = (l.z > T(0.4)) - (l.z < T(-0.4)) + 1;
  int imax = m.mesh_extrema[27 * mesh + 9 * cx + 3 * cy + cz], prev = -1;
  T best = dotv(ids[imax]);
  for (int guard = 0; imax != prev && guard <= nh; ++guard) {  // each move is strictly better: <= nh moves
    prev = imax;
    for (int i = edgeadr[prev]; edges[i] >= 0; ++i) {
      const T dd = dotv(ids[edges[i]]);
      if (dd > best) best = dd, imax = edges[i];
    }
  }
  *local = imax;
  return ids[imax];
}

// The area of the convex quadrilateral (a, b, c, d), vertices in order: half the norm of the
// cross product of its diagonals.
template <class T>
RLT_HD RLT_INLINE T quad_area(const Vec3<T>& a, const Vec3<T>& b, const Vec3<T>& c, const Vec3<T>& d) {
  return T(0.5) * norm(cross(c - a, d - b));
}

// Four of the n (> 4) vertices of a convex polygon (pt(i): vertex i) spanning a large area, the
// first vertex among them: from (0, 1, 2, 3), the last corner moves forward while the area grows,
// after each move the third and then the second (MuJoCo's polygonQuad with its first corner held;
// measured against MuJoCo 3.17, whose choice it reproduces). res: the indices, in polygon order; on a
// slightly non-convex polygon (merged near-coplanar faces) the second and third can coincide.
template <class T, class Pt>
RLT_HD void polygon_quad(int res[4], const Pt& pt, int n) {
  auto nx = [n](int i) { return i + 1 < n ? i + 1 : 0; };
  int b = 1, c = 2, d = 3;
  T best = quad_area(pt(0), pt(b), pt(c), pt(d));
  for (;;) {  // each move grows the area (a NaN area stops)
    T next = quad_area(pt(0), pt(b), pt(c), pt(nx(d)));
    if (!(next > best)) break;
    best = next, d = nx(d);
    for (;;) {
      next = quad_area(pt(0), pt(b), pt(nx(c)), pt(d));
      if (!(next > best)) break;
      best = next, c = nx(c);
    }
    for (;;) {
      next = quad_area(pt(0), pt(nx(b)), pt(c), pt(d));
      if (!(next > best)) break;
      best = next, b = nx(b);
    }
  }
  res[0] = 0, res[1] = b, res[2] = c, res[3] = d;
}

// Plane (p0, normal np) against mesh geom g's convex hull (center c, axes rot): MuJoCo 3's
// mjc_PlaneConvex (3.17, measured against it: the support vertex, then its polygon's corners). The
// hull vertex deepest below the plane (mesh_support_vertex), each point at its vertex moved halfway
// to the plane; nothing more when that vertex is beyond the active margin. Then, of the hull's
// polygons through that vertex (mesh_polymap), the one whose outward normal points most along -np
// (the first of equals): its other vertices, from the support vertex on around the polygon, when it
// has at most 4; of a larger polygon, the other corners of polygon_quad's quadrilateral (started at
// the support vertex), in the same order; each only when on the plane's side of the geom's center,
// and kept by the emitter when within the pair's reach (MuJoCo: within the active margin); at most
// 4 points in all.
template <class T>
RLT_HD void plane_mesh(const Emitter<T>& emit, const ModelView<T>& m, int g, const Vec3<T>& p0, const Vec3<T>& np,
                       const Vec3<T>& c, const Mat3<T>& rot) {
  const int mesh = m.geom_dataid[g];
  const T* vert = m.mesh_vert + 3 * m.mesh_vertadr[mesh];
  const Vec3<T> ldir = mat_t_mul(rot, -np);
  int local = -1;
  const int s = mesh_support_vertex(m, mesh, ldir, &local);
  auto world = [&](int v) { return c + rot * Vec3<T>{vert[3 * v], vert[3 * v + 1], vert[3 * v + 2]}; };
  auto add = [&](int v) {
    const Vec3<T> pnt = world(v);
    const T d = dot(np, pnt - p0);
    emit(pnt - (T(0.5) * d) * np, np, -d);
    return d;
  };
  if (add(s) > emit.active) return;  // MuJoCo stops here beyond the margin
  if (m.mesh_polynum == nullptr || m.mesh_polynum[mesh] <= 0) return;
  const int va = m.mesh_vertadr[mesh], pa = m.mesh_polyadr[mesh];
  const int madr = m.mesh_polymapadr[va + s], mnum = m.mesh_polymapnum[va + s];
  int best = -1;
  T best_dot = T(0);
  for (int k = 0; k < mnum; ++k) {
    const int p = pa + m.mesh_polymap[madr + k];
    const Vec3<T> nrm = rot * Vec3<T>::load(m.mesh_polynormal + 3 * p);
    const T a = -dot(nrm, np);
    if (best < 0 || a > best_dot) best = p, best_dot = a;
  }
  if (best < 0) return;
  const int* pv = m.mesh_polyvert + m.mesh_polyvertadr[best];
  const int n = m.mesh_polyvertnum[best];
  int i0 = 0;
  while (i0 < n && pv[i0] != s) ++i0;
  if (i0 == n) return;
  auto at = [&](int j) { return pv[(i0 + j) % n]; };  // the polygon from the support vertex on
  // MuJoCo keeps a corner on the plane's side of the geom's center (and within the margin)
  auto corner = [&](int v) {
    if (ldir.x * vert[3 * v] + ldir.y * vert[3 * v + 1] + ldir.z * vert[3 * v + 2] > T(0)) add(v);
  };
  if (n <= 4) {
    for (int j = 1; j < n; ++j) corner(at(j));
    return;
  }
  int res[4];
  polygon_quad<T>(  // in the mesh frame, as MuJoCo (its choice among equal areas does not turn with the mesh)
      res, [&](int j) { return Vec3<T>{vert[3 * at(j)], vert[3 * at(j) + 1], vert[3 * at(j) + 2]}; }, n);
  // each corner as found, a repeated one again (MuJoCo's: a quadrilateral whose second and third
  // corners coincide, a triangle, emits that vertex twice; measured, 3.17)
  for (int k = 1; k < 4; ++k) corner(at(res[k]));
}

template <class T>
RLT_HD void convex_convex(const Emitter<T>& emit, const ModelView<T>& m, int g1, const Vec3<T>& c1, const Mat3<T>& r1,
                          int g2, const Vec3<T>& c2, const Mat3<T>& r2) {
  const T half = T(0.5) * emit.active;
  const convex::Shape<T> a = geom_shape(m, g1, c1, r1, half);
  const convex::Shape<T> b = geom_shape(m, g2, c2, r2, half);
  convex::Penetration<T> p;
  if (!convex::penetration(a, b, &p)) return;
  emit(T(0.5) * (p.pa + p.pb), p.normal, p.depth - emit.active);
}

// The pairs MuJoCo 3.17's mjc_Convex gives more than one contact (geom 1 of the lower type): two of
// cylinder, box and mesh (not box-box: box_box), up to 4; a capsule with a cylinder or a mesh, up
// to 2. MuJoCo's nativeccd (sim/mjccd.h's GJK and EPA, ccd_iterations and ccd_tolerance from the
// model) and its multicontact (sim/multiccd.h convex_multi: the touching faces, or an edge and a
// face, clipped one to the other; a capsule and a margin first by GJK's distances). Each witness
// pair whose signed distance (of the shapes inflated by half the active margin each) is negative is
// a contact: pos their midpoint, normal x1 - x2 (from geom 1 to geom 2), depth minus the active
// margin.
// Out of line on the CPU (as collide_pair), so that the other pairs' narrow phase does not carry its
// polytope and clipping buffers.
template <class T>
RLT_CONTACT_NOINLINE RLT_HD void multi_convex(const Emitter<T>& emit, const ModelView<T>& m, int g1, const Vec3<T>& c1,
                                              const Mat3<T>& r1, int g2, const Vec3<T>& c2, const Mat3<T>& r2) {
  mjccd::GeomObj<T> a, b;
  mjccd::init_geom_obj(&a, m, g1, c1, r1, emit.active);
  mjccd::init_geom_obj(&b, m, g2, c2, r2, emit.active);
  const int max_contacts = a.type == kGeomCapsule ? 2 : 4;
  mjccd::Witnesses<T> w;
  const int n = mjccd::convex_multi(&w, a, b, m.ccd_iterations, m.ccd_tolerance, max_contacts);
  for (int i = 0; i < n; ++i) {
    T pos[3], nrm[3];
    mjccd::v3::add(pos, w.x1 + 3 * i, w.x2 + 3 * i);
    mjccd::v3::scl(pos, pos, T(0.5));
    mjccd::v3::sub(nrm, w.x1 + 3 * i, w.x2 + 3 * i);
    mjccd::v3::normalize(nrm);
    emit(Vec3<T>{pos[0], pos[1], pos[2]}, Vec3<T>{nrm[0], nrm[1], nrm[2]}, -w.dist[i] - emit.active);
  }
}

template <class T>
RLT_HD T bounding_radius(const ModelView<T>& m, int g) {
  const T* s = m.geom_size + 3 * g;
  switch (m.geom_type[g]) {
    case kGeomSphere:
      return s[0];
    case kGeomCapsule:
      return s[0] + s[1];
    case kGeomBox:
    case kGeomMesh:  // the half sizes of its bounding box about the geom's origin (MuJoCo's rbound)
      return m_sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
    case kGeomCylinder:
      return m_sqrt(s[0] * s[0] + s[1] * s[1]);
    case kGeomEllipsoid:
      return s[0] > s[1] ? (s[0] > s[2] ? s[0] : s[2]) : (s[1] > s[2] ? s[1] : s[2]);
    case kGeomHField: {  // MuJoCo's rbound: radius_x, radius_y and the larger of elevation_z, base_z
      const T* hs = m.hfield_size + 4 * m.geom_dataid[g];
      const T z = hs[2] > hs[3] ? hs[2] : hs[3];
      return m_sqrt(hs[0] * hs[0] + hs[1] * hs[1] + z * z);
    }
    default:
      return T(0);
  }
}

}  // namespace contact_detail

// An upper bound on the speed of any point of geom g (needs kinematics and com_velocity): the
// body's spatial velocity cvel (angular, linear at the tree's reference point) gives the speed of
// the geom's center, plus |omega| times the geom's bounding radius `rbound` (bounding_radius).
template <class T>
RLT_HD T geom_speed_bound(const ModelView<T>& m, const DataView<T>& d, int g, T rbound) {
  const int b = m.geom_bodyid[g];
  if (b <= 0) return T(0);
  const T* v = d.cvel + 6 * b;
  const Vec3<T> w{v[0], v[1], v[2]}, lin{v[3], v[4], v[5]};
  const Vec3<T> r = Vec3<T>::load(d.geom_xpos + 3 * g) - Vec3<T>::load(d.xpos + 3 * m.body_rootid[b]);
  return norm(lin + cross(w, r)) + norm(w) * rbound;
}
template <class T>
RLT_HD T geom_speed_bound(const ModelView<T>& m, const DataView<T>& d, int g) {
  return geom_speed_bound(m, d, g, contact_detail::bounding_radius(m, g));
}

// The speculative margin of a pair: kSpeculativeMargin plus the distance the two geoms can close in
// one step (their speed bounds speed1 and speed2 times the timestep), measured from where the
// contact starts to act, i.e. beyond the active margin. It served the removed spring-damper law
// (speculative contacts, caught the step before the surfaces meet); the soft constraints make no
// row for a candidate that does not touch yet (depth <= 0), so it only adds such candidates to the
// list. It is kept so that detection, the list and its order stay exactly as they were; whether the
// search reach (box_box above all) could drop it without changing any acting contact has not been
// measured.
template <class T>
RLT_HD RLT_INLINE T speculative_margin(const ModelView<T>& m, T speed1, T speed2) {
  return T(kSpeculativeMargin) + m.timestep * (speed1 + speed2);
}
// The speculative margin of geoms g1 and g2, their speed bounds computed here (detect_contacts
// reads them from geom_bounds' cache instead: the same floats).
template <class T>
RLT_HD T pair_margin(const ModelView<T>& m, const DataView<T>& d, int g1, int g2) {
  return speculative_margin(m, geom_speed_bound(m, d, g1), geom_speed_bound(m, d, g2));
}

// Each geom's bounding radius and speed bound into d.geom_bound (ngeom of each, indexed by geom),
// once per substep: they are facts of one geom, read by each of its candidate pairs (needs
// kinematics and com_velocity). Only the geoms of some pair (geom_collider) are written: the
// others' entries are never read (and the field is empty when no pair may collide).
template <class T>
RLT_HD void geom_bounds(const ModelView<T>& m, const DataView<T>& d) {
  T* const rbound = d.geom_bound;
  T* const speed = d.geom_bound + m.ngeom;
  for (int k = 0; k < m.ncollider; ++k) {
    const int g = m.geom_collider[k];
    rbound[g] = contact_detail::bounding_radius(m, g);
    speed[g] = geom_speed_bound(m, d, g, rbound[g]);
  }
}

// The active margin of a pair: MuJoCo's geom margin, the larger of the two geoms' (MuJoCo's
// combination; geom gap, which would subtract from it, is accepted at 0 only). The contact acts
// while the surfaces are closer than this.
template <class T>
RLT_HD RLT_INLINE T pair_active_margin(const ModelView<T>& m, int g1, int g2) {
  if (m.npair > 0) {  // an explicit pair's own margin
    const int p = explicit_pair(m, g1, g2);
    if (p >= 0) return m.pair_margin[p];
  }
  return m.geom_margin[g1] + m.geom_margin[g2];  // MuJoCo 3 adds them (2.x took the larger)
}

// The narrow phase of one candidate pair (g1 of the lower type number), past the broadphase's
// bounding-sphere reject: its contact points into d.contact from *ncon on. Kept out of line on the
// CPU, so that the candidate loop, where most pairs end, stays small (measured: its registers
// otherwise spill around the narrow phase's).
template <class T>
RLT_CONTACT_NOINLINE RLT_HD void collide_pair(const ModelView<T>& m, const DataView<T>& d, int g1, int g2, T margin, T active,
                                              int* ncon) {
  using namespace contact_detail;
  const int t1 = m.geom_type[g1], t2 = m.geom_type[g2];
  const T* const rbound = d.geom_bound;
  const T reach = margin + active;
  const Vec3<T> c1 = Vec3<T>::load(d.geom_xpos + 3 * g1), c2 = Vec3<T>::load(d.geom_xpos + 3 * g2);
  const Mat3<T> r1 = Mat3<T>::load(d.geom_xmat + 9 * g1), r2 = Mat3<T>::load(d.geom_xmat + 9 * g2);
  const T* s1 = m.geom_size + 3 * g1;
  const T* s2 = m.geom_size + 3 * g2;
  if (t1 == kGeomHField || t2 == kGeomHField) {  // sim/hfield.h: never with a plane or a height field
    if (t1 == kGeomHField && t2 >= kGeomSphere && t2 <= kGeomMesh) {
      const Emitter<T> emit{m, d, g1, g2, ncon, margin, active};
      hfield_collide(emit, m, g1, c1, r1, g2, c2, r2, rbound[g2]);
    }
    return;
  }
  const Emitter<T> emit{m, d, g1, g2, ncon, margin, active};
  // MuJoCo 3.17's multicontact pairs: two of cylinder, box and mesh but box-box, a capsule with a
  // cylinder or a mesh (dispatched once, out of line: the other pairs' code stays as it was)
  if ((t1 >= kGeomCylinder && !(t1 == kGeomBox && t2 == kGeomBox)) ||
      (t1 == kGeomCapsule && (t2 == kGeomCylinder || t2 == kGeomMesh))) {
    multi_convex(emit, m, g1, c1, r1, g2, c2, r2);
    return;
  }
  if (t1 == kGeomPlane) {
    const Vec3<T> np = r1.col(2);
    if (dot(c2 - c1, np) > rbound[g2] + reach) return;
    if (t2 == kGeomSphere) {
      plane_sphere(emit, c1, np, c2, s2[0]);
    } else if (t2 == kGeomCapsule) {
      const Vec3<T> half = s2[1] * r2.col(2);
      plane_sphere(emit, c1, np, c2 + half, s2[0]);
      plane_sphere(emit, c1, np, c2 - half, s2[0]);
    } else if (t2 == kGeomBox) {
      // MuJoCo's mjc_PlaneBox: the corners on the plane's side of the box centre, in corner order,
      // at most 4 (a box sunk deeper than its thickness keeps its bottom face's four)
      int cnt = 0;
      for (int v = 0; v < 8 && cnt < 4; ++v) {
        const Vec3<T> off = r2 * Vec3<T>{(v & 1) ? s2[0] : -s2[0], (v & 2) ? s2[1] : -s2[1], (v & 4) ? s2[2] : -s2[2]};
        const T ldist = dot(off, np);
        const T depth = -(dot(c2 - c1, np) + ldist);
        if (ldist > T(0) || !(depth + emit.active > -emit.margin)) continue;
        emit(c2 + off + (T(0.5) * depth) * np, np, depth);
        ++cnt;
      }
    } else if (t2 == kGeomCylinder) {
      plane_cylinder(emit, c1, np, c2, r2.col(2), r2.col(0), s2[0], s2[1], reach);
    } else if (t2 == kGeomEllipsoid) {
      plane_ellipsoid(emit, c1, np, c2, r2, Vec3<T>::load(s2));
    } else if (t2 == kGeomMesh) {
      plane_mesh(emit, m, g2, c1, np, c2, r2);
    }
  } else if (t1 == kGeomSphere) {
    if (t2 == kGeomSphere) {
      sphere_sphere(emit, c1, s1[0], c2, s2[0], r1.col(2));
    } else if (t2 == kGeomCapsule) {
      const Vec3<T> half = s2[1] * r2.col(2);
      // fallback normal (center on the axis): across the capsule, not along it
      sphere_sphere(emit, c1, s1[0], closest_on_segment(c2 - half, c2 + half, c1), s2[0], r2.col(0));
    } else if (t2 == kGeomBox) {
      box_sphere(emit, c2, r2, Vec3<T>::load(s2), c1, s1[0], false);
    } else if (t2 == kGeomCylinder) {
      // fallback normal (coincident centers): MuJoCo's cross product of the two z axes
      Vec3<T> up = cross(r1.col(2), r2.col(2));
      const T lu = norm(up);
      up = lu > T(1e-15) ? (T(1) / lu) * up : Vec3<T>{T(1), T(0), T(0)};
      sphere_cylinder(emit, c1, s1[0], up, c2, r2.col(2), s2[0], s2[1]);
    } else {
      convex_convex(emit, m, g1, c1, r1, g2, c2, r2);
    }
  } else if (t1 == kGeomCapsule) {
    const Vec3<T> half1 = s1[1] * r1.col(2);
    if (t2 == kGeomCapsule) {
      const Vec3<T> half2 = s2[1] * r2.col(2);
      capsule_capsule(emit, c1 - half1, c1 + half1, s1[0], c2 - half2, c2 + half2, s2[0], r1.col(0));
    } else if (t2 == kGeomBox) {
      capsule_box(emit, c1, r1.col(2), s1[0], s1[1], c2, r2, Vec3<T>::load(s2));
    } else {
      convex_convex(emit, m, g1, c1, r1, g2, c2, r2);
    }
  } else if (t1 == kGeomBox && t2 == kGeomBox) {
    box_box(emit, c1, r1, Vec3<T>::load(s1), c2, r2, Vec3<T>::load(s2), reach);
  } else {  // an ellipsoid against an ellipsoid, cylinder, box or mesh
    convex_convex(emit, m, g1, c1, r1, g2, c2, r2);
  }
}

// Contact candidates of every allowed geom pair into d.contact, their count into d.ncon[0] (needs
// kinematics and com_velocity). The per-geom bounds first (geom_bounds), then per pair only what
// the pair adds: a bounding-sphere reject, then the narrow phase.
template <class T>
RLT_HD void detect_contacts(const ModelView<T>& m, const DataView<T>& d) {
  using namespace contact_detail;
  geom_bounds(m, d);
  const T* const rbound = d.geom_bound;
  const T* const speed = d.geom_bound + m.ngeom;
  int ncon = 0;
  // the pairs geom_pair_allowed lets through and the explicit pairs (<contact><pair>, whatever the
  // filters say), listed once by HostModel in the order of the loop over i < j
  for (int k = 0; k < m.ncollide; ++k) {
    // Geom 1 has the lower type number (plane < sphere < capsule < box): HostModel stored it first.
    const int g1 = m.geom_collide[k] >> kGeomCollideShift, g2 = m.geom_collide[k] & kGeomCollideMask;
    const int t1 = m.geom_type[g1], t2 = m.geom_type[g2];
    const Vec3<T> c1 = Vec3<T>::load(d.geom_xpos + 3 * g1), c2 = Vec3<T>::load(d.geom_xpos + 3 * g2);
    const T margin = speculative_margin(m, speed[g1], speed[g2]), active = pair_active_margin(m, g1, g2);
    const T reach = margin + active;  // geometric distance under which a pair gives candidates
    if (t1 != kGeomPlane && t1 != kGeomHField && t2 != kGeomHField && norm(c2 - c1) > rbound[g1] + rbound[g2] + reach)
      continue;
    collide_pair(m, d, g1, g2, margin, active, &ncon);
  }
  d.ncon[0] = T(ncon);
}

// ---- Jacobians of points on bodies ---------------------------------------------------------------

// The last dof of body b or of its nearest ancestor with dofs (-1: the body is fixed to the world).
template <class T>
RLT_HD int last_dof(const ModelView<T>& m, int b) {
  while (b > 0 && m.body_dofnum[b] == 0) b = m.body_parentid[b];
  return b > 0 ? m.body_dofadr[b] + m.body_dofnum[b] - 1 : -1;
}

// Column i of the translational Jacobian of world point p fixed to body b: the point's velocity per
// unit qvel_i, from cdof (needs com_position).
template <class T>
RLT_HD RLT_INLINE Vec3<T> point_jacobian_col(const ModelView<T>& m, const DataView<T>& d, int b, const Vec3<T>& p,
                                             int i) {
  const SVec<T> s = SVec<T>::load(d.cdof + 6 * i);
  const Vec3<T> r = p - Vec3<T>::load(d.xpos + 3 * m.body_rootid[b]);
  return s.lin + cross(s.ang, r);
}

// ---- external wrench per body (MuJoCo's cfrc_ext) -------------------------------------------------

// d.cfrc_ext <- the contact wrench on each body in the substep just taken (MuJoCo's cfrc_ext after
// mj_step). Call it right after the substep's integration: it reads that substep's contact list
// with the forces the soft constraints solved for (sim/constraints.h: kConForce, kConFriction,
// kConActive), kinematics and cdof (from the start of the substep, which the integration does not
// refresh) and the integrated qvel. Per active contact, f = fn n + friction on geom 2's body and
// -f on geom 1's, and the torsional and rolling friction torque of condim 4 and 6 (contact_torque).
// Row b = (torque, force): world frame, torque about body b's tree reference point (the tree root
// body's origin, as cinert and cvel; MuJoCo takes the tree's subtree centre of mass) at the END of
// the substep, x_root + h v_root(qvel'), which is the origin kinematics() gives for the new qpos
// exactly for a free root (first order for a root on hinges or slides), so cfrc_ext pairs with the
// cinert and cvel computed for the post-step state. Row 0 (the world) stays zero, as in MuJoCo.
// Cost: the 6 nbody zeros plus a few products per active contact.
template <class T>
RLT_HD Vec3<T> contact_torque(const ModelView<T>& m, const DataView<T>& d, const T* con);  // sim/constraints.h

template <class T>
RLT_HD void contact_external_forces(const ModelView<T>& m, const DataView<T>& d, T h) {
  for (int k = 0; k < 6 * m.nbody; ++k) d.cfrc_ext[k] = T(0);
  const int ncon = static_cast<int>(d.ncon[0]);
  for (int c = 0; c < ncon; ++c) {
    const T* con = d.contact + kContactStride * c;
    if (con[kConActive] == T(0)) continue;
    const Vec3<T> p = Vec3<T>::load(con + kConPos), n = Vec3<T>::load(con + kConNormal);
    const int b1 = m.geom_bodyid[static_cast<int>(con[kConGeom1])],
              b2 = m.geom_bodyid[static_cast<int>(con[kConGeom2])];
    const Vec3<T> f = con[kConForce] * n + Vec3<T>::load(con + kConFriction);  // on body 2
    for (int side = 0; side < 2; ++side) {
      const int b = side == 0 ? b1 : b2;
      if (b == 0) continue;
      const T sign = side == 0 ? T(-1) : T(1);
      // The tree's reference point at the end of the substep: its root's origin moved by h times
      // the origin's new velocity (the root's own dofs; cdof's linear part is that velocity).
      const int root = m.body_rootid[b];
      Vec3<T> ref = Vec3<T>::load(d.xpos + 3 * root);
      for (int i = m.body_dofadr[root]; i < m.body_dofadr[root] + m.body_dofnum[root]; ++i)
        ref += (h * d.qvel[i]) * Vec3<T>::load(d.cdof + 6 * i + 3);
      T* w = d.cfrc_ext + 6 * b;
      Vec3<T> torque = cross(p - ref, f);
      if (con[kConTorqueRow] != T(0)) torque += contact_torque(m, d, con);  // condim 4 and 6
      (Vec3<T>::load(w) + sign * torque).store(w);
      (Vec3<T>::load(w + 3) + sign * f).store(w + 3);
    }
  }
}

// Active contacts (normal force > 0) in the current list.
template <class T>
RLT_HD int active_contacts(const DataView<T>& d) {
  const int ncon = static_cast<int>(d.ncon[0]);
  int n = 0;
  for (int c = 0; c < ncon; ++c) n += d.contact[kContactStride * c + kConActive] != T(0) ? 1 : 0;
  return n;
}

#ifndef __CUDACC__
// Compiled once for the host, in sim/physics_instances.cpp (nvcc's translation units make their own).
extern template void detect_contacts<float>(const ModelView<float>&, const DataView<float>&);
extern template void detect_contacts<double>(const ModelView<double>&, const DataView<double>&);
#endif

}  // namespace rlt
