// Contacts (DESIGN.md D3): detection between plane, sphere, capsule and box geoms, and a soft
// spring-damper contact force with regularized Coulomb friction, mapped to generalized forces by
// J^T f through the com-based motion subspaces (cdof). Single source (RLT_HD, no std::, no
// allocation). physics_step (sim/physics_step.h) drives it.
//
// Detection (detect_contacts, needs kinematics). Every geom pair allowed by geom_pair_allowed
// (sim/model_view.h: contype/conaffinity, not within one weld body, not body and parent) whose
// distance is under contact_margin gives contact candidates with a point (midway between the two
// surfaces), a normal from geom 1 to geom 2 (geom 1 is the one with the lower type number), and a
// depth (> 0: overlap; in (-margin, 0]: a gap, kept as a speculative contact):
//   plane-sphere     1 point; planes are infinite (as MuJoCo's)
//   plane-capsule    2: the end spheres
//   plane-box        up to 8: the corners
//   sphere-sphere, sphere-capsule (closest point of the segment), sphere-box (closest point of the
//                    box, or the nearest face when the center is inside): 1
//   capsule-capsule  1: the closest points of the two segments (two parallel capsules touch at one
//                    point, so they can roll about their common line)
//   capsule-box      up to 3: the end spheres and the segment point closest to the box center, each
//                    as sphere-box
//   box-box          up to 16: each box's vertices against the other box, a vertex counting when it
//                    lies inside the other box (or within the margin of one face); the normal is that
//                    face's. Edge-edge crossings without a vertex inside are missed: an
//                    approximation that holds for boxes resting face or vertex down, not for two
//                    boxes meeting edge to edge.
//
// Force (contact_forces). Per point, with n the normal, v the velocity of geom 2's point relative to
// geom 1's, vn = n.v, vt = v - vn n, k = contact_stiffness, c = contact_damping:
//   normal    fn = k depth - c vn, only while > 0 (never pulls)
//   friction  ft = -mu fn vt / sqrt(|vt|^2 + v_eps^2), mu = max(geom_friction[0]) of the two geoms
//             (MuJoCo's combination), v_eps = friction_velocity
// The force fn n + ft acts on geom 2's body and its opposite on geom 1's. Both parts are treated
// implicitly in the velocity of the step (backward Euler, linearized): the spring is taken at the end
// of the step (depth' = depth - h vn'), so the normal force is k depth - (c + h k) vn' and
// h (c + h k) J^T n n^T J joins the factored matrix; friction uses the secant coefficient
// beta = mu fn / sqrt(|vt|^2 + v_eps^2), ft = -beta vt', adding h beta J^T (I - n n^T) J. The step is
// then unconditionally stable in k, c and beta (the matrix stays positive definite), and friction
// can slow a slide to rest but never reverse it. Which candidates act in a step is decided from the
// smooth solve (qacc_smooth, without limits and contacts): a point acts when it would overlap at the
// end of the step, depth - h (vn + h an_smooth) > 0. So a gap that closes within the step is caught
// in that step (speculative contact: no spring energy appears from nothing at impact), and a gap
// that does not close exerts nothing (no damping at a distance). A contact whose normal force at
// the end of the step comes out negative is dropped and the step solved again (physics_step does
// this once). Torsional and rolling friction (geom_friction[1], [2]) are not modelled: a ball rolls
// on a flat face without resistance. For a contact between two moving bodies the coupling terms
// J1^T D J2 do not fit the tree-sparse factorization; 2 (J1^T D J1 + J2^T D J2), which bounds
// (J1 - J2)^T D (J1 - J2) from above, is used instead (more damping, still stable).
//
// Defaults (sim/model.h, MJCF models get them): k = 1e5 N/m, c = 5e2 N s/m per contact point,
// v_eps = 1e-3 m/s, margin 0.02 m. An 8 kg box on 4 corners sinks mg/(4k) = 0.2 mm. The implicit
// treatment makes the step stable for any k, c at any h (tests/sim/test_contacts.cpp drops a 0.05 kg
// ball, a 10 kg box and a capsule at h = 0.002, 0.005 and 0.01 s: they settle, and the total energy
// never rises by more than 4e-15 J from one step to the next); h only limits accuracy. Speculative contacts catch an impact
// when the gap is under the pair's margin: contact_margin plus h times a bound on the two geoms'
// speeds (pair_margin), so impacts are caught at any speed.
//
// Contact record (kContactStride scalars each, DataView::contact):
//   0-2 pos (world), 3-5 normal (geom 1 -> geom 2), 6 depth, 7 mu, 8 geom 1, 9 geom 2,
//   10 vn, 11 normal force (explicit part), 12 friction secant beta, 13 active (0/1)
#pragma once

#include "sim/common.h"
#include "sim/dynamics.h"
#include "sim/spatial.h"

namespace rlt {

enum ContactField : int {
  kConPos = 0, kConNormal = 3, kConDepth = 6, kConMu = 7, kConGeom1 = 8, kConGeom2 = 9,
  kConVn = 10, kConForce = 11, kConBeta = 12, kConActive = 13
};

namespace contact_detail {

template <class T>
RLT_HD RLT_INLINE T m_abs(T x) { return x < T(0) ? -x : x; }

template <class T>
struct Emitter {
  const ModelView<T>& m;
  const DataView<T>& d;
  int g1, g2;
  int* ncon;
  T margin;  // this pair's speculative margin (see pair_margin)
  // n points from geom 1 to geom 2.
  RLT_HD void operator()(const Vec3<T>& pos, const Vec3<T>& n, T depth) const {
    if (depth <= -margin || *ncon >= m.ncon_max) return;
    T* c = d.contact + kContactStride * (*ncon);
    pos.store(c + kConPos), n.store(c + kConNormal);
    c[kConDepth] = depth;
    const T mu1 = m.geom_friction[3 * g1], mu2 = m.geom_friction[3 * g2];
    c[kConMu] = mu1 > mu2 ? mu1 : mu2;
    c[kConGeom1] = T(g1), c[kConGeom2] = T(g2);
    c[kConVn] = c[kConForce] = c[kConBeta] = c[kConActive] = T(0);
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
    n = (comp < T(0) ? T(-1) : T(1)) * rb.col(axis);
    depth = r + s;
    surface = c + s * n;
  } else {
    surface = cb + rb * clamped;
    const Vec3<T> delta = c - surface;
    const T dist = norm(delta);
    n = dist > T(1e-9) ? (T(1) / dist) * delta : rb.col(2);
    depth = r - dist;
  }
  const Vec3<T> pos = T(0.5) * (surface + (c - r * n));
  emit(pos, box_first ? n : -n, depth);
}

// The vertices of box A (ca, ra, ha) that lie inside box B (or within the margin of one of its
// faces); normal from A to B when a_first.
template <class T>
RLT_HD void box_vertices_in_box(const Emitter<T>& emit, const Vec3<T>& ca, const Mat3<T>& ra, const Vec3<T>& ha,
                                const Vec3<T>& cb, const Mat3<T>& rb, const Vec3<T>& hb, bool a_first, T margin) {
  for (int v = 0; v < 8; ++v) {
    const Vec3<T> corner_local{(v & 1) ? ha.x : -ha.x, (v & 2) ? ha.y : -ha.y, (v & 4) ? ha.z : -ha.z};
    const Vec3<T> p = ca + ra * corner_local;
    const Vec3<T> l = mat_t_mul(rb, p - cb);
    const T s[3] = {hb.x - m_abs(l.x), hb.y - m_abs(l.y), hb.z - m_abs(l.z)};
    int outside = 0, axis = 0;
    for (int k = 0; k < 3; ++k) {
      if (s[k] < T(0)) ++outside;
      if (s[k] < s[axis]) axis = k;
    }
    if (outside > 1 || s[axis] <= -margin) continue;
    const T comp = axis == 0 ? l.x : axis == 1 ? l.y : l.z;
    const Vec3<T> out_b = (comp < T(0) ? T(-1) : T(1)) * rb.col(axis);  // B's outward face normal
    const T depth = s[axis];
    emit(p + (T(0.5) * depth) * out_b, a_first ? -out_b : out_b, depth);
  }
}

template <class T>
RLT_HD T bounding_radius(const ModelView<T>& m, int g) {
  const T* s = m.geom_size + 3 * g;
  switch (m.geom_type[g]) {
    case kGeomSphere: return s[0];
    case kGeomCapsule: return s[0] + s[1];
    case kGeomBox: return m_sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
    default: return T(0);
  }
}

}  // namespace contact_detail

// Contact candidates of every allowed geom pair into d.contact, their count into d.ncon[0]
// (needs kinematics).
// An upper bound on the speed of any point of geom g (needs kinematics and com_velocity): the
// body's spatial velocity cvel (angular, linear at the tree's reference point) gives the speed of
// the geom's center, plus |omega| times the geom's bounding radius.
template <class T>
RLT_HD T geom_speed_bound(const ModelView<T>& m, const DataView<T>& d, int g) {
  using namespace contact_detail;
  const int b = m.geom_bodyid[g];
  if (b <= 0) return T(0);
  const T* v = d.cvel + 6 * b;
  const Vec3<T> w{v[0], v[1], v[2]}, lin{v[3], v[4], v[5]};
  const Vec3<T> r = Vec3<T>::load(d.geom_xpos + 3 * g) - Vec3<T>::load(d.xpos + 3 * m.body_rootid[b]);
  return norm(lin + cross(w, r)) + norm(w) * bounding_radius(m, g);
}

// The speculative margin of a pair: contact_margin plus the distance the two geoms can close in
// one step, so a contact is caught in the step before the surfaces meet at any speed (a fixed
// margin of 0.02 m covers only 2 m/s at h = 0.01 s).
template <class T>
RLT_HD T pair_margin(const ModelView<T>& m, const DataView<T>& d, int g1, int g2) {
  return m.contact_margin + m.timestep * (geom_speed_bound(m, d, g1) + geom_speed_bound(m, d, g2));
}

template <class T>
RLT_HD void detect_contacts(const ModelView<T>& m, const DataView<T>& d) {
  using namespace contact_detail;
  int ncon = 0;
  for (int i = 0; i < m.ngeom; ++i) {
    for (int j = i + 1; j < m.ngeom; ++j) {
      if (!geom_pair_allowed(m, i, j)) continue;
      // Geom 1 has the lower type number (plane < sphere < capsule < box).
      const int g1 = m.geom_type[i] <= m.geom_type[j] ? i : j, g2 = g1 == i ? j : i;
      const int t1 = m.geom_type[g1], t2 = m.geom_type[g2];
      const Vec3<T> c1 = Vec3<T>::load(d.geom_xpos + 3 * g1), c2 = Vec3<T>::load(d.geom_xpos + 3 * g2);
      const Mat3<T> r1 = Mat3<T>::load(d.geom_xmat + 9 * g1), r2 = Mat3<T>::load(d.geom_xmat + 9 * g2);
      const T* s1 = m.geom_size + 3 * g1;
      const T* s2 = m.geom_size + 3 * g2;
      const T margin = pair_margin(m, d, g1, g2);
      if (t1 != kGeomPlane && norm(c2 - c1) > bounding_radius(m, g1) + bounding_radius(m, g2) + margin) continue;
      const Emitter<T> emit{m, d, g1, g2, &ncon, margin};
      if (t1 == kGeomPlane) {
        const Vec3<T> np = r1.col(2);
        if (dot(c2 - c1, np) > bounding_radius(m, g2) + margin) continue;
        if (t2 == kGeomSphere) {
          plane_sphere(emit, c1, np, c2, s2[0]);
        } else if (t2 == kGeomCapsule) {
          const Vec3<T> half = s2[1] * r2.col(2);
          plane_sphere(emit, c1, np, c2 + half, s2[0]);
          plane_sphere(emit, c1, np, c2 - half, s2[0]);
        } else if (t2 == kGeomBox) {
          for (int v = 0; v < 8; ++v) {
            const Vec3<T> corner = c2 + r2 * Vec3<T>{(v & 1) ? s2[0] : -s2[0], (v & 2) ? s2[1] : -s2[1], (v & 4) ? s2[2] : -s2[2]};
            const T depth = -dot(corner - c1, np);
            emit(corner + (T(0.5) * depth) * np, np, depth);
          }
        }
      } else if (t1 == kGeomSphere) {
        if (t2 == kGeomSphere) {
          sphere_sphere(emit, c1, s1[0], c2, s2[0], r1.col(2));
        } else if (t2 == kGeomCapsule) {
          const Vec3<T> half = s2[1] * r2.col(2);
          sphere_sphere(emit, c1, s1[0], closest_on_segment(c2 - half, c2 + half, c1), s2[0], r1.col(2));
        } else {  // box
          box_sphere(emit, c2, r2, Vec3<T>::load(s2), c1, s1[0], false);
        }
      } else if (t1 == kGeomCapsule) {
        const Vec3<T> half1 = s1[1] * r1.col(2);
        if (t2 == kGeomCapsule) {
          const Vec3<T> half2 = s2[1] * r2.col(2);
          Vec3<T> p1, p2;
          closest_segments(c1 - half1, c1 + half1, c2 - half2, c2 + half2, &p1, &p2);
          sphere_sphere(emit, p1, s1[0], p2, s2[0], r1.col(0));
        } else {  // box
          const Vec3<T> h = Vec3<T>::load(s2);
          box_sphere(emit, c2, r2, h, c1 + half1, s1[0], false);
          box_sphere(emit, c2, r2, h, c1 - half1, s1[0], false);
          const Vec3<T> mid = closest_on_segment(c1 - half1, c1 + half1, c2);
          if (norm(mid - (c1 + half1)) > T(1e-6) && norm(mid - (c1 - half1)) > T(1e-6))
            box_sphere(emit, c2, r2, h, mid, s1[0], false);
        }
      } else {  // box-box
        const Vec3<T> h1 = Vec3<T>::load(s1), h2 = Vec3<T>::load(s2);
        box_vertices_in_box(emit, c1, r1, h1, c2, r2, h2, true, margin);
        box_vertices_in_box(emit, c2, r2, h2, c1, r1, h1, false, margin);
      }
    }
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
RLT_HD RLT_INLINE Vec3<T> point_jacobian_col(const ModelView<T>& m, const DataView<T>& d, int b, const Vec3<T>& p, int i) {
  const SVec<T> s = SVec<T>::load(d.cdof + 6 * i);
  const Vec3<T> r = p - Vec3<T>::load(d.xpos + 3 * m.body_rootid[b]);
  return s.lin + cross(s.ang, r);
}

// Velocity of world point p fixed to body b from the com-based body velocity (needs com_velocity).
template <class T>
RLT_HD Vec3<T> point_velocity(const ModelView<T>& m, const DataView<T>& d, int b, const Vec3<T>& p) {
  if (b == 0) return Vec3<T>::zero();
  const SVec<T> v = SVec<T>::load(d.cvel + 6 * b);
  return v.lin + cross(v.ang, p - Vec3<T>::load(d.xpos + 3 * m.body_rootid[b]));
}

// J(b, p) x for a generalized vector x (a velocity change, say).
template <class T>
RLT_HD Vec3<T> point_jacobian_mul(const ModelView<T>& m, const DataView<T>& d, int b, const Vec3<T>& p, const T* x) {
  Vec3<T> v = Vec3<T>::zero();
  for (int i = last_dof(m, b); i >= 0; i = m.dof_parentid[i]) v += x[i] * point_jacobian_col(m, d, b, p, i);
  return v;
}

// qfrc += J(b, p)^T f: a world force f at point p of body b as generalized forces.
template <class T>
RLT_HD void apply_point_force(const ModelView<T>& m, const DataView<T>& d, int b, const Vec3<T>& p, const Vec3<T>& f,
                              T* qfrc) {
  for (int i = last_dof(m, b); i >= 0; i = m.dof_parentid[i]) qfrc[i] += dot(point_jacobian_col(m, d, b, p, i), f);
}

// ld += scale J(b, p)^T (a n n^T + beta (I - n n^T)) J(b, p) on the ancestor entries (j ancestor-or-
// self of i, where the whole product lives: all dofs of one chain are each other's ancestors).
template <class T>
RLT_HD void add_point_stiffness(const ModelView<T>& m, const DataView<T>& d, int b, const Vec3<T>& p, const Vec3<T>& n,
                                T a, T beta, T scale, T* ld) {
  const int nv = m.nv;
  for (int i = last_dof(m, b); i >= 0; i = m.dof_parentid[i]) {
    const Vec3<T> ji = point_jacobian_col(m, d, b, p, i);
    const T ni = dot(n, ji);
    for (int j = i; j >= 0; j = m.dof_parentid[j]) {
      const Vec3<T> jj = point_jacobian_col(m, d, b, p, j);
      const T nj = dot(n, jj);
      ld[i * nv + j] += scale * (a * ni * nj + beta * (dot(ji, jj) - ni * nj));
    }
  }
}

// ---- forces ----------------------------------------------------------------------------------------

// Per contact: the normal velocity, the explicit part of the normal force k depth - (c + h k) vn,
// the friction secant beta (from that force, 0 when it is not positive), and active: the point
// overlaps at the end of the step at the velocity it would have without limits and contacts,
// depth - h (vn + h an_smooth) > 0 (a gap that will not close in this step exerts nothing, and one
// that will is caught now: the speculative contact). Needs com_velocity and d.qacc_smooth.
template <class T>
RLT_HD void contact_prepare(const ModelView<T>& m, const DataView<T>& d, T h) {
  const int ncon = static_cast<int>(d.ncon[0]);
  const T k = m.contact_stiffness, ceff = m.contact_damping + h * m.contact_stiffness;
  const T eps2 = m.friction_velocity * m.friction_velocity;
  for (int c = 0; c < ncon; ++c) {
    T* con = d.contact + kContactStride * c;
    const Vec3<T> p = Vec3<T>::load(con + kConPos), n = Vec3<T>::load(con + kConNormal);
    const int b1 = m.geom_bodyid[static_cast<int>(con[kConGeom1])], b2 = m.geom_bodyid[static_cast<int>(con[kConGeom2])];
    const Vec3<T> v = point_velocity(m, d, b2, p) - point_velocity(m, d, b1, p);
    const T vn = dot(n, v);
    const Vec3<T> vt = v - vn * n;
    const T an = dot(n, point_jacobian_mul(m, d, b2, p, d.qacc_smooth) - point_jacobian_mul(m, d, b1, p, d.qacc_smooth));
    const T fn = k * con[kConDepth] - ceff * vn;
    const bool active = con[kConDepth] - h * (vn + h * an) > T(0);
    con[kConVn] = vn;
    con[kConForce] = fn;
    con[kConActive] = active ? T(1) : T(0);
    con[kConBeta] = active && fn > T(0) ? con[kConMu] * fn / m_sqrt(dot(vt, vt) + eps2) : T(0);
  }
}

// For the active contacts: qfrc += J^T (fn n - beta vt) (the explicit parts) and, when ld is not
// null, the implicit terms h J^T (ceff n n^T + beta (I - n n^T)) J into the loaded matrix ld.
template <class T>
RLT_HD void contact_forces(const ModelView<T>& m, const DataView<T>& d, T h, T* qfrc, T* ld) {
  const int ncon = static_cast<int>(d.ncon[0]);
  const T ceff = m.contact_damping + h * m.contact_stiffness;
  for (int c = 0; c < ncon; ++c) {
    const T* con = d.contact + kContactStride * c;
    if (con[kConActive] == T(0)) continue;
    const Vec3<T> p = Vec3<T>::load(con + kConPos), n = Vec3<T>::load(con + kConNormal);
    const int b1 = m.geom_bodyid[static_cast<int>(con[kConGeom1])], b2 = m.geom_bodyid[static_cast<int>(con[kConGeom2])];
    const Vec3<T> v = point_velocity(m, d, b2, p) - point_velocity(m, d, b1, p);
    const Vec3<T> vt = v - dot(n, v) * n;
    const T beta = con[kConBeta];
    const Vec3<T> f = con[kConForce] * n - beta * vt;  // on body 2
    apply_point_force(m, d, b2, p, f, qfrc);
    apply_point_force(m, d, b1, p, -f, qfrc);
    if (ld) {
      // One moving body: exact; two: the bound 2 (J1^T D J1 + J2^T D J2) (see the header).
      const bool both = last_dof(m, b1) >= 0 && last_dof(m, b2) >= 0;
      const T scale = both ? T(2) * h : h;
      add_point_stiffness(m, d, b2, p, n, ceff, beta, scale, ld);
      add_point_stiffness(m, d, b1, p, n, ceff, beta, scale, ld);
    }
  }
}

// After a solve giving qacc (velocity change h qacc): drops the active contacts whose normal force
// k depth - ceff vn' came out negative; returns how many it dropped.
template <class T>
RLT_HD int contact_drop_pulling(const ModelView<T>& m, const DataView<T>& d, T h, const T* qacc) {
  const int ncon = static_cast<int>(d.ncon[0]);
  const T ceff = m.contact_damping + h * m.contact_stiffness;
  int dropped = 0;
  for (int c = 0; c < ncon; ++c) {
    T* con = d.contact + kContactStride * c;
    if (con[kConActive] == T(0)) continue;
    const Vec3<T> p = Vec3<T>::load(con + kConPos), n = Vec3<T>::load(con + kConNormal);
    const int b1 = m.geom_bodyid[static_cast<int>(con[kConGeom1])], b2 = m.geom_bodyid[static_cast<int>(con[kConGeom2])];
    const T dvn = h * dot(n, point_jacobian_mul(m, d, b2, p, qacc) - point_jacobian_mul(m, d, b1, p, qacc));
    if (con[kConForce] - ceff * dvn < T(0)) {
      con[kConActive] = T(0);
      ++dropped;
    }
  }
  return dropped;
}

// Active contacts (normal force > 0) in the current list.
template <class T>
RLT_HD int active_contacts(const DataView<T>& d) {
  const int ncon = static_cast<int>(d.ncon[0]);
  int n = 0;
  for (int c = 0; c < ncon; ++c) n += d.contact[kContactStride * c + kConActive] != T(0) ? 1 : 0;
  return n;
}

// Elastic energy 1/2 k depth^2 stored in the overlapping contacts (needs detect_contacts), to add to
// kinetic_energy and potential_energy when checking that contacts never create energy.
template <class T>
RLT_HD T contact_potential_energy(const ModelView<T>& m, const DataView<T>& d) {
  const int ncon = static_cast<int>(d.ncon[0]);
  T e = T(0);
  for (int c = 0; c < ncon; ++c) {
    const T depth = d.contact[kContactStride * c + kConDepth];
    if (depth > T(0)) e += T(0.5) * m.contact_stiffness * depth * depth;
  }
  return e;
}

}  // namespace rlt
