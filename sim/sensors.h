// Sensors (MJCF <sensor>, compiled by sim/mjcf_sensors.cpp), computed as MuJoCo 3's mj_sensorPos,
// mj_sensorVel and mj_sensorAcc: compute_sensors(m, d) fills d.sensordata (sensor i's output is
// sensordata[sensor_adr[i] .. + sensor_dim[i]]). Single source: RLT_HD, no std::, no allocation.
//
// When: physics_step (sim/physics_step.h) calls it in the last substep of a control step, after the
// constraint solve and before the integration, only when the model has sensors (nsensor > 0), so
// models without sensors run exactly as before. That is where MuJoCo's mj_step computes them (in
// its mj_forward, before mj_Euler), so after a control step sensordata describes the state at the
// start of the last substep with that substep's accelerations and forces, as d->sensordata after
// mj_step does. noise is not added (MuJoCo's mj_step does not add it either); cutoff clamps as
// MuJoCo's: real-valued outputs to [-cutoff, cutoff], touch to at most cutoff, quaternions and axes
// never.
//
// The rangefinder casts a ray from its site along the site's z axis to the nearest geom not on the
// site's body (sim/ray.h, MuJoCo's mj_ray), -1 when none; MuJoCo 3 counts it real-valued, so cutoff
// clamps it to [-cutoff, cutoff] (a miss reads -cutoff when cutoff < 1), and so every data field
// (dist, dir, origin, point, depth) when it has several.
//
// Spatial quantities are com-based (sim/dynamics.h) about xpos[body_rootid[b]] where MuJoCo takes
// subtree_com[body_rootid[b]]; every sensor transforms them to its own point, so the choice cancels.
// Stages (each only when a sensor of the model needs it):
//   subtree    subtree_mass, subtree_com, subtree_linvel, subtree_angmom (mj_comPos, mj_subtreeVel)
//   acc/force  MuJoCo's mj_rnePostConstraint: from sensor_qacc (the solver's qacc, kept before Euler's
//              implicit damping replaces d.qacc: MuJoCo's d->qacc), sensor_cacc = cacc(parent) + cdof_dot qvel + cdof qacc
//              (the world at -gravity), sensor_cfrc_ext (the contact wrenches) and cfrc_int =
//              cinert cacc + cvel x* cinert cvel - cfrc_ext summed over the subtree.
//   contact    MuJoCo 3's contact sensor (contact_sensor): the contacts matching its two objects, their
//              data fields in num slots, reduced (none, mindist, maxforce, netforce)
//   limits     jointlimit*/tendonlimit*: the object's first active limit row (MuJoCo's efc_type
//              LIMIT_JOINT / LIMIT_TENDON with its efc_id), found by replaying constraint_rows'
//              order (sim/constraints.h: the rows of owner -1 are the joints' active limits, lower
//              then upper, then the tendons'): distance - margin, J qvel, the row's force; 0 when
//              the object has no active limit row.
//   touch      per active contact on the site's body, its normal force when the ray from the contact
//              point along the normal (away from that body) meets the site's zone (mju_rayGeom).
//   cameras    a camera's pose as MuJoCo's mj_camlight (camera_frame: fixed, track, trackcom,
//              targetbody, targetbodycom), computed where a sensor reads it; the com modes read
//              subtree_com (HostModel sizes it for such a model)
//   geometry   insidesite (mju_insideGeom), distance / normal / fromto (MuJoCo's mj_geomDistance:
//              geom_distance, the narrow phase with the cutoff as margin or nativeccd's GJK distance),
//              camprojection (cam_project: a site in a camera's pixels)
#pragma once

#include "sim/common.h"
#include "sim/constraints.h"
#include "sim/contact.h"
#include "sim/dynamics.h"
#include "sim/ray.h"
#include "sim/transmission.h"

namespace rlt {

namespace sensor_detail {

constexpr int kZoneSphere = 2, kZoneCapsule = 3, kZoneEllipsoid = 4, kZoneCylinder = 5, kZoneBox = 6;  // MuJoCo's
constexpr double kMinVal = 1e-15;                                                                      // mjMINVAL

template <class T>
RLT_HD RLT_INLINE Vec3<T> mat_t_vec(const T* mat, const Vec3<T>& v) {  // mat^T v, mat row-major
  return {mat[0] * v.x + mat[3] * v.y + mat[6] * v.z, mat[1] * v.x + mat[4] * v.y + mat[7] * v.z,
          mat[2] * v.x + mat[5] * v.y + mat[8] * v.z};
}

template <class T>
RLT_HD RLT_INLINE int object_body(const ModelView<T>& m, int type, int id) {
  return type == kSensObjGeom     ? m.geom_bodyid[id]
         : type == kSensObjSite   ? m.site_bodyid[id]
         : type == kSensObjCamera ? m.cam_bodyid[id]
                                  : id;
}

// A camera's pose as mode fixed (MuJoCo's mj_local2Global): its body's frame times its own.
template <class T>
RLT_HD void camera_fixed_pose(const ModelView<T>& m, const DataView<T>& d, int cam, Vec3<T>* pos, Mat3<T>* mat) {
  const int b = m.cam_bodyid[cam];
  *pos = Mat3<T>::load(d.xmat + 9 * b) * Vec3<T>::load(m.cam_pos + 3 * cam) + Vec3<T>::load(d.xpos + 3 * b);
  *mat = quat_to_mat(quat_mul(Quat<T>::load(d.xquat + 4 * b), Quat<T>::load(m.cam_quat + 4 * cam)));
}

RLT_HD RLT_INLINE float tan_of(float x) { return tanf(x); }
RLT_HD RLT_INLINE double tan_of(double x) { return ::tan(x); }

// MuJoCo's mju_normalize3: (1, 0, 0) below mjMINVAL.
template <class T>
RLT_HD RLT_INLINE Vec3<T> normalize3(const Vec3<T>& v) {
  const T n = m_sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
  if (n < T(kMinVal)) return {T(1), T(0), T(0)};
  const T inv = T(1) / n;
  return {v.x * inv, v.y * inv, v.z * inv};
}

// A camera's world pose, MuJoCo's mj_camlight (cam_xpos, cam_xmat): mode fixed follows its body;
// track keeps its qpos0 orientation (cam_mat0) and its qpos0 offset from the body (cam_pos0);
// trackcom the same from the body's subtree com (cam_poscom0); targetbody and targetbodycom, with a
// target, stay where mode fixed puts them and look at the target's frame origin or subtree com,
// their x axis level (orthogonal to the world z). The com modes read d.subtree_com (HostModel keeps
// it, nsubtree > 0, for a model whose sensors read such a camera).
template <class T>
RLT_HD void camera_frame(const ModelView<T>& m, const DataView<T>& d, int cam, Vec3<T>* pos, Mat3<T>* mat) {
  camera_fixed_pose(m, d, cam, pos, mat);
  const int mode = m.cam_mode ? m.cam_mode[cam] : kCamFixed, b = m.cam_bodyid[cam];
  if (mode == kCamTrack || mode == kCamTrackCom) {
    *mat = Mat3<T>::load(m.cam_mat0 + 9 * cam);
    *pos = mode == kCamTrack ? Vec3<T>::load(d.xpos + 3 * b) + Vec3<T>::load(m.cam_pos0 + 3 * cam)
                             : Vec3<T>::load(d.subtree_com + 3 * b) + Vec3<T>::load(m.cam_poscom0 + 3 * cam);
  } else if ((mode == kCamTargetBody || mode == kCamTargetBodyCom) && m.cam_targetbodyid[cam] >= 0) {
    const int t = m.cam_targetbodyid[cam];
    const Vec3<T> look = Vec3<T>::load((mode == kCamTargetBody ? d.xpos : d.subtree_com) + 3 * t);
    const Vec3<T> z = normalize3(*pos - look);
    const Vec3<T> x = normalize3(cross(Vec3<T>{T(0), T(0), T(1)}, z));
    const Vec3<T> y = normalize3(cross(z, x));
    const T r[9] = {x.x, y.x, z.x, x.y, y.y, z.y, x.z, y.z, z.z};  // columns x, y, z
    *mat = Mat3<T>::load(r);
  }
}

// World position and orientation (row-major matrix) of a body (inertial frame), xbody, geom, site
// or camera (MuJoCo's cam_xpos, cam_xmat: camera_frame).
template <class T>
RLT_HD void object_frame(const ModelView<T>& m, const DataView<T>& d, int type, int id, Vec3<T>* pos, Mat3<T>* mat) {
  switch (type) {
    case kSensObjBody:
      *pos = Vec3<T>::load(d.xipos + 3 * id), *mat = Mat3<T>::load(d.ximat + 9 * id);
      break;
    case kSensObjGeom:
      *pos = Vec3<T>::load(d.geom_xpos + 3 * id), *mat = Mat3<T>::load(d.geom_xmat + 9 * id);
      break;
    case kSensObjSite:
      *pos = Vec3<T>::load(d.site_xpos + 3 * id), *mat = Mat3<T>::load(d.site_xmat + 9 * id);
      break;
    case kSensObjCamera:
      camera_frame(m, d, id, pos, mat);
      break;
    default:
      *pos = Vec3<T>::load(d.xpos + 3 * id), *mat = Mat3<T>::load(d.xmat + 9 * id);
      break;  // xbody
  }
}

// Orientation quaternion as MuJoCo's framequat takes it: the body's xquat times the local quat (a
// camera's too, whatever its mode: MuJoCo's get_xquat).
template <class T>
RLT_HD Quat<T> object_quat(const ModelView<T>& m, const DataView<T>& d, int type, int id) {
  const Quat<T> xquat = Quat<T>::load(d.xquat + 4 * object_body(m, type, id));
  switch (type) {
    case kSensObjBody:
      return quat_mul(xquat, Quat<T>::load(m.body_iquat + 4 * id));
    case kSensObjGeom:
      return quat_mul(xquat, Quat<T>::load(m.geom_quat + 4 * id));
    case kSensObjSite:
      return quat_mul(xquat, Quat<T>::load(m.site_quat + 4 * id));
    case kSensObjCamera:
      return quat_mul(xquat, Quat<T>::load(m.cam_quat + 4 * id));
    default:
      return xquat;
  }
}

// The com-based spatial vector v of body b (angular, linear at the tree's reference point) moved to
// the point p (MuJoCo's mju_transformSpatial): a motion's linear part gains w x (p - ref), a force's
// angular part (the torque) loses (p - ref) x f. With mat, both parts in that frame (mat^T).
template <class T>
RLT_HD SVec<T> spatial_at(const ModelView<T>& m, const DataView<T>& d, const T* v, int b, const Vec3<T>& p,
                          const T* mat, bool force) {
  SVec<T> s = SVec<T>::load(v);
  const Vec3<T> dif = p - Vec3<T>::load(d.xpos + 3 * m.body_rootid[b]);
  if (force) {
    s.ang = s.ang - cross(dif, s.lin);
  } else {
    s.lin = s.lin - cross(dif, s.ang);
  }
  if (mat) s.ang = mat_t_vec(mat, s.ang), s.lin = mat_t_vec(mat, s.lin);
  return s;
}

// MuJoCo's mj_objectVelocity: (angular, linear) velocity of the object's frame, world or local.
template <class T>
RLT_HD SVec<T> object_velocity(const ModelView<T>& m, const DataView<T>& d, int type, int id, bool local) {
  Vec3<T> pos;
  Mat3<T> mat;
  object_frame(m, d, type, id, &pos, &mat);
  const int b = object_body(m, type, id);
  return spatial_at(m, d, d.cvel + 6 * b, b, pos, local ? mat.m : static_cast<const T*>(nullptr), false);
}

// Whether body b moves with no dof (the world, or a body welded to it): MuJoCo's
// body_dofnum[body_weldid[b]] == 0.
template <class T>
RLT_HD bool body_static(const ModelView<T>& m, int b) {
  for (; b > 0; b = m.body_parentid[b])
    if (m.body_dofnum[b] > 0) return false;
  return true;
}

// MuJoCo's mj_objectAcceleration in the world frame: the body's cacc (sensor_cacc, gravity included)
// moved to the object's point, plus the rotating frame's w x v; zero on a static body.
template <class T>
RLT_HD SVec<T> object_acceleration(const ModelView<T>& m, const DataView<T>& d, int type, int id) {
  const int b = object_body(m, type, id);
  if (body_static(m, b)) return SVec<T>::zero();
  Vec3<T> pos;
  Mat3<T> mat;
  object_frame(m, d, type, id, &pos, &mat);
  SVec<T> acc = spatial_at(m, d, d.sensor_cacc + 6 * b, b, pos, static_cast<const T*>(nullptr), false);
  const SVec<T> vel = spatial_at(m, d, d.cvel + 6 * b, b, pos, static_cast<const T*>(nullptr), false);
  acc.lin += cross(vel.ang, vel.lin);
  return acc;
}

// Smallest t >= 0 with a t^2 + 2 b t + c = 0 (MuJoCo's ray_quad), -1 if none.
template <class T>
RLT_HD T ray_quad(T a, T b, T c) {
  const T det = b * b - a * c;
  if (det < T(kMinVal)) return T(-1);
  const T sq = m_sqrt(det);
  const T x1 = (-b - sq) / a, x2 = (-b + sq) / a;
  return x1 >= T(0) ? x1 : x2 >= T(0) ? x2 : T(-1);
}

// Whether the ray p + t v, t >= 0 (local frame of the zone) meets a cylinder of radius r along z,
// |z| <= h (open ends: the caps are tested by the callers).
template <class T>
RLT_HD bool ray_cylinder_side(const Vec3<T>& p, const Vec3<T>& v, T r, T h) {
  const T a = v.x * v.x + v.y * v.y;
  if (a < T(kMinVal)) return false;
  const T b = v.x * p.x + v.y * p.y, c = p.x * p.x + p.y * p.y - r * r;
  const T det = b * b - a * c;
  if (det < T(kMinVal)) return false;
  const T sq = m_sqrt(det);
  for (int k = 0; k < 2; ++k) {
    const T t = (-b + (k == 0 ? -sq : sq)) / a;
    if (t >= T(0)) {
      const T z = p.z + t * v.z;
      if (z >= -h && z <= h) return true;
    }
  }
  return false;
}

// Whether the ray from pnt along vec (world) meets the site's zone, MuJoCo's mju_rayGeom >= 0.
template <class T>
RLT_HD bool ray_meets_zone(const ModelView<T>& m, const DataView<T>& d, int site, const Vec3<T>& pnt,
                           const Vec3<T>& vec) {
  const T* mat = d.site_xmat + 9 * site;
  const Vec3<T> p = mat_t_vec(mat, pnt - Vec3<T>::load(d.site_xpos + 3 * site)), v = mat_t_vec(mat, vec);
  const int type = m.site_type ? m.site_type[site] : kZoneSphere;
  const T* s = m.site_size + 3 * site;
  switch (type) {
    case kZoneEllipsoid: {
      const Vec3<T> ps{p.x / s[0], p.y / s[1], p.z / s[2]}, vs{v.x / s[0], v.y / s[1], v.z / s[2]};
      return ray_quad(dot(vs, vs), dot(vs, ps), dot(ps, ps) - T(1)) >= T(0);
    }
    case kZoneBox: {
      T t0 = T(0), t1 = T(1e30);
      const T pp[3] = {p.x, p.y, p.z}, vv[3] = {v.x, v.y, v.z};
      for (int k = 0; k < 3; ++k) {
        if (vv[k] > -T(kMinVal) && vv[k] < T(kMinVal)) {
          if (pp[k] < -s[k] || pp[k] > s[k]) return false;
          continue;
        }
        T a = (-s[k] - pp[k]) / vv[k], b = (s[k] - pp[k]) / vv[k];
        if (a > b) {
          const T x = a;
          a = b;
          b = x;
        }
        t0 = a > t0 ? a : t0, t1 = b < t1 ? b : t1;
      }
      return t0 <= t1;
    }
    case kZoneCapsule:
    case kZoneCylinder: {
      const T r = s[0], h = s[1];
      if (p.x * p.x + p.y * p.y <= r * r && p.z >= -h && p.z <= h) return true;  // inside
      if (ray_cylinder_side(p, v, r, h)) return true;
      if (type == kZoneCapsule) {
        for (int e = -1; e <= 1; e += 2) {
          const Vec3<T> q{p.x, p.y, p.z - T(e) * h};
          if (ray_quad(dot(v, v), dot(v, q), dot(q, q) - r * r) >= T(0)) return true;
        }
        return false;
      }
      // the flat caps
      if (v.z > -T(kMinVal) && v.z < T(kMinVal)) return false;
      for (int e = -1; e <= 1; e += 2) {
        const T t = (T(e) * h - p.z) / v.z;
        if (t >= T(0)) {
          const T x = p.x + t * v.x, y = p.y + t * v.y;
          if (x * x + y * y <= r * r) return true;
        }
      }
      return false;
    }
    default:  // sphere
      return ray_quad(dot(v, v), dot(v, p), dot(p, p) - s[0] * s[0]) >= T(0);
  }
}

// The row (sim/constraints.h) of the first active limit of joint (tendon false) or tendon `id`, and
// its side (0 lower: J = +e, 1 upper: J = -e), or -1. constraint_rows builds the limit rows (owner -1)
// joints first, then tendons, each lower then upper where distance < margin; the same state gives
// the same rows, so the k-th such candidate is the k-th row of owner -1.
template <class T>
RLT_HD int limit_row(const ModelView<T>& m, const DataView<T>& d, bool tendon, int id, int* side_out) {
  const int nefc = static_cast<int>(d.nefc[0]);
  int r = 0;
  for (int pass = 0; pass < 2; ++pass) {
    const int n = pass == 0 ? m.njnt : m.ntendon;
    for (int o = 0; o < n; ++o) {
      T x, lo, hi, margin;
      if (pass == 0) {
        if (!m.jnt_limited[o] || (m.jnt_type[o] != kJointHinge && m.jnt_type[o] != kJointSlide)) continue;
        x = d.qpos[m.jnt_qposadr[o]], lo = m.jnt_range[2 * o], hi = m.jnt_range[2 * o + 1], margin = m.jnt_margin[o];
      } else {
        if (!m.tendon_limited[o]) continue;
        x = d.ten_length[o], lo = m.tendon_range[2 * o], hi = m.tendon_range[2 * o + 1], margin = m.tendon_margin[o];
      }
      for (int side = 0; side < 2; ++side) {
        const T dist = side == 0 ? x - lo : hi - x;
        if (!(dist < margin)) continue;
        while (r < nefc && d.efc[r * kEfcStride + kEfcOwner] != T(-1)) ++r;  // the next limit row
        if (r >= nefc) return -1;
        if ((pass == 1) == tendon && o == id) {
          *side_out = side;
          return r;
        }
        ++r;
      }
    }
  }
  return -1;
}

// subtree_mass, subtree_com (mj_comPos), subtree_linvel and subtree_angmom (mj_subtreeVel).
template <class T>
RLT_HD void subtree_quantities(const ModelView<T>& m, const DataView<T>& d) {
  const int nb = m.nbody;
  for (int b = 0; b < nb; ++b) {
    d.subtree_mass[b] = m.body_mass[b];
    (m.body_mass[b] * Vec3<T>::load(d.xipos + 3 * b)).store(d.subtree_com + 3 * b);
  }
  for (int b = nb - 1; b > 0; --b) {
    const int p = m.body_parentid[b];
    d.subtree_mass[p] += d.subtree_mass[b];
    (Vec3<T>::load(d.subtree_com + 3 * p) + Vec3<T>::load(d.subtree_com + 3 * b)).store(d.subtree_com + 3 * p);
  }
  for (int b = 0; b < nb; ++b) {
    if (d.subtree_mass[b] < T(kMinVal)) Vec3<T>::load(d.xipos + 3 * b).store(d.subtree_com + 3 * b);
    else ((T(1) / d.subtree_mass[b]) * Vec3<T>::load(d.subtree_com + 3 * b)).store(d.subtree_com + 3 * b);
  }
  // Each body's momentum (linear; angular about its com).
  for (int b = 0; b < nb; ++b) {
    const SVec<T> vel = object_velocity(m, d, kSensObjBody, b, false);
    (m.body_mass[b] * vel.lin).store(d.subtree_linvel + 3 * b);
    const T* xi = d.ximat + 9 * b;
    Vec3<T> w = mat_t_vec(xi, vel.ang);
    w = Vec3<T>{w.x * m.body_inertia[3 * b], w.y * m.body_inertia[3 * b + 1], w.z * m.body_inertia[3 * b + 2]};
    (Mat3<T>::load(xi) * w).store(d.subtree_angmom + 3 * b);
  }
  for (int b = nb - 1; b >= 0; --b) {
    if (b > 0) {
      const int p = m.body_parentid[b];
      (Vec3<T>::load(d.subtree_linvel + 3 * p) + Vec3<T>::load(d.subtree_linvel + 3 * b))
          .store(d.subtree_linvel + 3 * p);
    }
    const T mass = d.subtree_mass[b] > T(kMinVal) ? d.subtree_mass[b] : T(kMinVal);
    ((T(1) / mass) * Vec3<T>::load(d.subtree_linvel + 3 * b)).store(d.subtree_linvel + 3 * b);
  }
  for (int b = nb - 1; b > 0; --b) {
    const int p = m.body_parentid[b];
    const SVec<T> vel = object_velocity(m, d, kSensObjBody, b, false);
    Vec3<T> dx = Vec3<T>::load(d.xipos + 3 * b) - Vec3<T>::load(d.subtree_com + 3 * b);
    Vec3<T> dv = vel.lin - Vec3<T>::load(d.subtree_linvel + 3 * b);
    const Vec3<T> own = Vec3<T>::load(d.subtree_angmom + 3 * b) + cross(dx, m.body_mass[b] * dv);
    own.store(d.subtree_angmom + 3 * b);
    dx = Vec3<T>::load(d.subtree_com + 3 * b) - Vec3<T>::load(d.subtree_com + 3 * p);
    dv = Vec3<T>::load(d.subtree_linvel + 3 * b) - Vec3<T>::load(d.subtree_linvel + 3 * p);
    (Vec3<T>::load(d.subtree_angmom + 3 * p) + own + cross(dx, d.subtree_mass[b] * dv)).store(d.subtree_angmom + 3 * p);
  }
}

// MuJoCo's mj_rnePostConstraint (see the header): sensor_cacc, sensor_cfrc_ext, cfrc_int. Needs the
// substep's smooth quantities, constraint forces, contact forces and sensor_qacc (the solver's qacc,
// which soft_constraint_acceleration keeps there before Euler's implicit damping replaces d.qacc:
// MuJoCo's d->qacc, read here as mj_rnePostConstraint reads it, with no second factorization of M).
template <class T>
RLT_HD void rne_post_constraint(const ModelView<T>& m, const DataView<T>& d) {
  const int nb = m.nbody;
  // external wrenches, about each tree's reference point: the body wrenches first, as MuJoCo's
  // cfrc_ext (m.nbody_xfrc > 0: sim/physics_step.h xfrc_forces), then the contacts'
  for (int k = 0; k < 6 * nb; ++k) d.sensor_cfrc_ext[k] = T(0);
  for (int b = 1; b < m.nbody_xfrc; ++b) {
    const Vec3<T> f = Vec3<T>::load(d.xfrc_applied + 6 * b);
    const Vec3<T> arm = Vec3<T>::load(d.xipos + 3 * b) - Vec3<T>::load(d.xpos + 3 * m.body_rootid[b]);
    (cross(arm, f) + Vec3<T>::load(d.xfrc_applied + 6 * b + 3)).store(d.sensor_cfrc_ext + 6 * b);
    f.store(d.sensor_cfrc_ext + 6 * b + 3);
  }
  const int ncon = static_cast<int>(d.ncon[0]);
  for (int c = 0; c < ncon; ++c) {
    const T* con = d.contact + kContactStride * c;
    if (con[kConActive] == T(0)) continue;
    const Vec3<T> p = Vec3<T>::load(con + kConPos);
    const Vec3<T> f =
        con[kConForce] * Vec3<T>::load(con + kConNormal) + Vec3<T>::load(con + kConFriction);  // on body 2
    for (int side = 0; side < 2; ++side) {
      const int b = m.geom_bodyid[static_cast<int>(con[side == 0 ? kConGeom1 : kConGeom2])];
      if (b == 0) continue;
      const T sign = side == 0 ? T(-1) : T(1);
      const Vec3<T> ref = Vec3<T>::load(d.xpos + 3 * m.body_rootid[b]);
      T* w = d.sensor_cfrc_ext + 6 * b;
      Vec3<T> torque = cross(p - ref, f);
      if (con[kConTorqueRow] != T(0)) torque += contact_torque(m, d, con);  // condim 4 and 6
      (Vec3<T>::load(w) + sign * torque).store(w);
      (Vec3<T>::load(w + 3) + sign * f).store(w + 3);
    }
  }
  const SVec<T> world_acc{Vec3<T>::zero(), -Vec3<T>::load(m.gravity)};
  world_acc.store(d.sensor_cacc);
  SVec<T>::zero().store(d.cfrc_int);
  for (int b = 1; b < nb; ++b) {
    SVec<T> acc = SVec<T>::load(d.sensor_cacc + 6 * m.body_parentid[b]);
    for (int k = m.body_dofadr[b]; k < m.body_dofadr[b] + m.body_dofnum[b]; ++k)
      acc += d.qvel[k] * SVec<T>::load(d.cdof_dot + 6 * k) + d.sensor_qacc[k] * SVec<T>::load(d.cdof + 6 * k);
    acc.store(d.sensor_cacc + 6 * b);
    const Inertia<T> inertia = Inertia<T>::load(d.cinert + 10 * b);
    const SVec<T> vel = SVec<T>::load(d.cvel + 6 * b);
    const SVec<T> f = inertia * acc + cross_force(vel, inertia * vel);
    const SVec<T> ext = SVec<T>::load(d.sensor_cfrc_ext + 6 * b);
    SVec<T>{f.ang - ext.ang, f.lin - ext.lin}.store(d.cfrc_int + 6 * b);
  }
  for (int b = nb - 1; b > 0; --b) {
    const int p = m.body_parentid[b];
    if (p > 0) (SVec<T>::load(d.cfrc_int + 6 * p) + SVec<T>::load(d.cfrc_int + 6 * b)).store(d.cfrc_int + 6 * p);
  }
}

// ---- the contact sensor (MuJoCo 3's mjSENS_CONTACT) -----------------------------------------------

template <class T>
RLT_HD RLT_INLINE T abs_val(T x) {
  return x < T(0) ? -x : x;
}

// Whether point p is inside the site's zone (MuJoCo's mju_insideGeom; strict inequalities).
template <class T>
RLT_HD bool inside_site(const ModelView<T>& m, const DataView<T>& d, int site, const Vec3<T>& p) {
  const Vec3<T> vec = p - Vec3<T>::load(d.site_xpos + 3 * site);
  const T* s = m.site_size + 3 * site;
  const int type = m.site_type ? m.site_type[site] : kZoneSphere;
  if (type == kZoneSphere) return dot(vec, vec) < s[0] * s[0];
  const Vec3<T> l = mat_t_vec(d.site_xmat + 9 * site, vec);
  switch (type) {
    case kZoneCapsule: {
      const T zc = l.z < -s[1] ? -s[1] : l.z > s[1] ? s[1] : l.z;
      return l.x * l.x + l.y * l.y + (l.z - zc) * (l.z - zc) < s[0] * s[0];
    }
    case kZoneEllipsoid:
      return l.x * l.x / (s[0] * s[0]) + l.y * l.y / (s[1] * s[1]) + l.z * l.z / (s[2] * s[2]) < T(1);
    case kZoneCylinder:
      return abs_val(l.z) < s[1] && l.x * l.x + l.y * l.y < s[0] * s[0];
    case kZoneBox:
      return abs_val(l.x) < s[0] && abs_val(l.y) < s[1] && abs_val(l.z) < s[2];
    default:
      return false;
  }
}

// Whether a contact side (its body and geom) is the sensor's object (type, id): MuJoCo's checkMatch
// (none and site: any; subtree, kSensObjXBody: the body or a descendant).
template <class T>
RLT_HD bool contact_object_is(const ModelView<T>& m, int body, int geom, int type, int id) {
  if (type == kSensObjNone || type == kSensObjSite) return true;
  if (type == kSensObjGeom) return id == geom;
  if (type == kSensObjBody) return id == body;
  if (type == kSensObjXBody) {
    while (body > id) body = m.body_parentid[body];
    return body == id;
  }
  return false;
}

// MuJoCo's matchContact for one of its contacts (a candidate with depth > 0): 0 no match, 1 match,
// -1 match with the normal flipped (object 1 on the contact's second side).
template <class T>
RLT_HD int contact_match(const ModelView<T>& m, const DataView<T>& d, const T* con, int type1, int id1, int type2,
                         int id2) {
  if (type1 == kSensObjNone && type2 == kSensObjNone) return 1;
  if (type1 == kSensObjSite && !inside_site(m, d, id1, Vec3<T>::load(con + kConPos))) return 0;
  const int geom1 = static_cast<int>(con[kConGeom1]), geom2 = static_cast<int>(con[kConGeom2]);
  const int body1 = m.geom_bodyid[geom1], body2 = m.geom_bodyid[geom2];
  const bool m11 = contact_object_is(m, body1, geom1, type1, id1), m12 = contact_object_is(m, body2, geom2, type1, id1);
  const bool m21 = contact_object_is(m, body1, geom1, type2, id2), m22 = contact_object_is(m, body2, geom2, type2, id2);
  if ((!m11 && !m12) || (!m21 && !m22)) return 0;
  if (type1 != kSensObjNone && type2 != kSensObjNone) {
    const bool regular = m11 && m22, reverse = m12 && m21;
    return regular ? 1 : reverse ? -1 : 0;
  }
  if (type1 != kSensObjNone) return m11 ? 1 : -1;
  return m22 ? 1 : -1;
}

// MuJoCo's mj_contactForce: the contact's force (normal, along t1, along t2) and torque (about n, t1,
// t2) in its frame (contact_frame), from the normal force, the friction force and contact_torque.
template <class T>
RLT_HD void contact_wrench(const ModelView<T>& m, const DataView<T>& d, const T* con, T f[6]) {
  Vec3<T> t1, t2;
  constraint_detail::contact_frame(m, d, con, &t1, &t2);
  const Vec3<T> n = Vec3<T>::load(con + kConNormal), fr = Vec3<T>::load(con + kConFriction);
  const Vec3<T> tq = con[kConTorqueRow] != T(0) ? contact_torque(m, d, con) : Vec3<T>::zero();
  f[0] = con[kConForce], f[1] = dot(fr, t1), f[2] = dot(fr, t2);
  f[3] = dot(tq, n), f[4] = dot(tq, t1), f[5] = dot(tq, t2);
}

// The scalars of one slot of a contact sensor with data bits `spec` (MuJoCo's mju_condataSize).
RLT_HD RLT_INLINE int contact_slot_size(int spec) {
  const int sizes[kNumConData] = {1, 3, 3, 1, 3, 3, 3, 3, 3};
  int n = 0;
  for (int k = 0; k < kNumConData; ++k) n += (spec >> k & 1) ? sizes[k] : 0;
  return n;
}

// One slot of a contact sensor from contact `con` (MuJoCo's copySensorData): flip turns the frame
// 180 degrees about its second tangent (normal, tangent and the third force and torque components
// change sign).
template <class T>
RLT_HD void contact_slot(const ModelView<T>& m, const DataView<T>& d, const T* con, int spec, bool flip, int nfound,
                         T* out) {
  T w[6];
  if (spec & (1 << kConDataForce | 1 << kConDataTorque)) contact_wrench(m, d, con, w);
  const T sign = flip ? T(-1) : T(1);
  if (spec & 1 << kConDataFound) *out++ = T(nfound);
  if (spec & 1 << kConDataForce) out[0] = w[0], out[1] = w[1], out[2] = sign * w[2], out += 3;
  if (spec & 1 << kConDataTorque) out[0] = w[3], out[1] = w[4], out[2] = sign * w[5], out += 3;
  if (spec & 1 << kConDataDist)
    *out++ = pair_active_margin(m, static_cast<int>(con[kConGeom1]), static_cast<int>(con[kConGeom2])) - con[kConDepth];
  if (spec & 1 << kConDataPos)
    for (int k = 0; k < 3; ++k) *out++ = con[kConPos + k];
  if (spec & 1 << kConDataNormal)
    for (int k = 0; k < 3; ++k) *out++ = sign * con[kConNormal + k];
  if (spec & 1 << kConDataTangent) {
    Vec3<T> t1, t2;
    constraint_detail::contact_frame(m, d, con, &t1, &t2);
    (sign * t1).store(out), out += 3;
  }
  if (spec & (1 << kConDataLinVel | 1 << kConDataAngVel)) {
    // the two bodies' velocities at the contact point (world), geom 2's minus geom 1's, in the
    // contact frame; the flipped frame turns the second tangent's component (as the force's)
    const Vec3<T> p = Vec3<T>::load(con + kConPos);
    const int b1 = m.geom_bodyid[static_cast<int>(con[kConGeom1])],
              b2 = m.geom_bodyid[static_cast<int>(con[kConGeom2])];
    const SVec<T> v1 = spatial_at(m, d, d.cvel + 6 * b1, b1, p, static_cast<const T*>(nullptr), false);
    const SVec<T> v2 = spatial_at(m, d, d.cvel + 6 * b2, b2, p, static_cast<const T*>(nullptr), false);
    Vec3<T> t1, t2;
    constraint_detail::contact_frame(m, d, con, &t1, &t2);
    const Vec3<T> n = Vec3<T>::load(con + kConNormal);
    const Vec3<T> lin = v2.lin - v1.lin, ang = v2.ang - v1.ang;
    if (spec & 1 << kConDataLinVel) out[0] = dot(n, lin), out[1] = dot(t1, lin), out[2] = sign * dot(t2, lin), out += 3;
    if (spec & 1 << kConDataAngVel) out[0] = dot(n, ang), out[1] = dot(t1, ang), out[2] = sign * dot(t2, ang);
  }
}

// MuJoCo 3's contact sensor i into out (sensor_dim[i] scalars): the matching contacts (contact_match)
// in num = dim / slot-size slots, all zero first. reduce none: the first min(num, found) in contact
// order; mindist, maxforce: the min(num, found) of smallest distance, largest |force| (ties by
// contact order), in that order (MuJoCo's partial sort); netforce: slot 0 only, the net wrench of
// all about their force-weighted centroid, normal (1, 0, 0), tangent (0, 1, 0), dist 0.
template <class T>
RLT_HD void contact_sensor(const ModelView<T>& m, const DataView<T>& d, int i, T* out) {
  const int spec = m.sensor_intprm[2 * i], reduce = m.sensor_intprm[2 * i + 1];
  const int size = contact_slot_size(spec), dim = m.sensor_dim[i], num = dim / size;
  const int type1 = m.sensor_objtype[i], id1 = m.sensor_objid[i], type2 = m.sensor_reftype[i], id2 = m.sensor_refid[i];
  for (int k = 0; k < dim; ++k) out[k] = T(0);
  const int ncon = static_cast<int>(d.ncon[0]);
  int nmatch = 0;
  for (int c = 0; c < ncon; ++c) {
    const T* con = d.contact + kContactStride * c;
    if (con[kConDepth] > T(0) && contact_match(m, d, con, type1, id1, type2, id2) != 0) ++nmatch;
  }
  if (reduce == kReduceNetForce && nmatch > 0) {
    Vec3<T> point = Vec3<T>::zero(), force = Vec3<T>::zero(), torque = Vec3<T>::zero();
    T total = T(0);
    for (int c = 0; c < ncon; ++c) {
      const T* con = d.contact + kContactStride * c;
      if (!(con[kConDepth] > T(0)) || contact_match(m, d, con, type1, id1, type2, id2) == 0) continue;
      T w[6];
      contact_wrench(m, d, con, w);
      const T weight = m_sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
      point += weight * Vec3<T>::load(con + kConPos);
      total += weight;
    }
    point = (T(1) / (total > T(kMinVal) ? total : T(kMinVal))) * point;
    for (int c = 0; c < ncon; ++c) {
      const T* con = d.contact + kContactStride * c;
      if (!(con[kConDepth] > T(0))) continue;
      const int match = contact_match(m, d, con, type1, id1, type2, id2);
      if (match == 0) continue;
      T w[6];
      contact_wrench(m, d, con, w);
      const T sign = match < 0 ? T(-1) : T(1);
      Vec3<T> t1, t2;
      constraint_detail::contact_frame(m, d, con, &t1, &t2);
      const Vec3<T> n = Vec3<T>::load(con + kConNormal);
      const Vec3<T> fj = sign * (w[0] * n + w[1] * t1 + w[2] * t2), tj = sign * (w[3] * n + w[4] * t1 + w[5] * t2);
      force += fj;
      torque += tj + cross(Vec3<T>::load(con + kConPos) - point, fj);
    }
    if (spec & 1 << kConDataFound) *out++ = T(nmatch);
    if (spec & 1 << kConDataForce) force.store(out), out += 3;
    if (spec & 1 << kConDataTorque) torque.store(out), out += 3;
    if (spec & 1 << kConDataDist) *out++ = T(0);
    if (spec & 1 << kConDataPos) point.store(out), out += 3;
    if (spec & 1 << kConDataNormal) out[0] = T(1), out += 3;
    if (spec & 1 << kConDataTangent) out[1] = T(1);
    return;
  }
  if (reduce == kReduceNetForce) return;  // no match: all zero (MuJoCo 3.17, measured)
  const int nslot = num < nmatch ? num : nmatch;
  int prev = -1, scan = 0;  // the previous slot's contact (sorted) or the scan position (none)
  T prev_crit = T(0);
  for (int j = 0; j < nslot; ++j) {
    int pick = -1, flip = 0;
    T best = T(0);
    if (reduce == kReduceNone) {
      for (; scan < ncon && pick < 0; ++scan) {
        const T* con = d.contact + kContactStride * scan;
        if (!(con[kConDepth] > T(0))) continue;
        const int match = contact_match(m, d, con, type1, id1, type2, id2);
        if (match != 0) pick = scan, flip = match < 0;
      }
    } else {
      for (int c = 0; c < ncon; ++c) {
        const T* con = d.contact + kContactStride * c;
        if (!(con[kConDepth] > T(0))) continue;
        const int match = contact_match(m, d, con, type1, id1, type2, id2);
        if (match == 0) continue;
        T crit;
        if (reduce == kReduceMinDist) {
          crit = pair_active_margin(m, static_cast<int>(con[kConGeom1]), static_cast<int>(con[kConGeom2])) -
                 con[kConDepth];
        } else {
          T w[6];
          contact_wrench(m, d, con, w);
          crit = -(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
        }
        const bool after = prev < 0 || crit > prev_crit || (crit == prev_crit && c > prev);
        if (after && (pick < 0 || crit < best)) pick = c, best = crit, flip = match < 0;
      }
      prev = pick, prev_crit = best;
    }
    if (pick < 0) break;
    contact_slot(m, d, d.contact + kContactStride * pick, spec, flip != 0, nmatch, out + j * size);
  }
}

// ---- geom distances (MuJoCo 3's mj_geomDistance; distance, normal and fromto sensors) ---------------

// Room for the contacts of one narrow-phase call of geom_distance: the pairs it takes there give at
// most 4 (plane-box, plane-cylinder, plane-mesh; the emitter stops at the room in any case).
constexpr int kMaxPairContacts = 8;

// A sphere or capsule as its core for mjc_ccd's first pass (a sphere's center: radius 0; a
// capsule's segment), its radius returned; on = false restores it. A height-field prism has none.
template <class T>
RLT_HD RLT_INLINE T ccd_core(mjccd::GeomObj<T>& o, bool on, T radius) {
  if (o.type != kGeomSphere && o.type != kGeomCapsule) return T(0);
  if (!on) {
    o.size[0] = radius, o.core = false;
    return radius;
  }
  const T r = o.size[0];
  if (o.type == kGeomSphere) o.size[0] = T(0);
  else o.core = true;
  return r;
}
template <class T>
RLT_HD RLT_INLINE T ccd_core(hfield_detail::CcdPrism<T>&, bool, T) {
  return T(0);
}

// Whether an object is a sphere or capsule (mjc_ccd's special handling).
template <class T>
RLT_HD RLT_INLINE bool ccd_round(const mjccd::GeomObj<T>& o) {
  return o.type == kGeomSphere || o.type == kGeomCapsule;
}
template <class T>
RLT_HD RLT_INLINE bool ccd_round(const hfield_detail::CcdPrism<T>&) {
  return false;
}

// MuJoCo's mjc_ccd asked for a distance (mj_geomDistanceCCD: one contact, dist_cutoff distmax, no
// margin) on objects a, b in that order: GJK with distances (sim/mjccd.h); a sphere or capsule first
// as its core (a point, a segment) with the cutoff widened by its radius, the result inflated back
// when apart by more than the tolerance, else the full shapes again and EPA. The witness points go
// to x1, x2 (*nx = 1) when there are some; returns the distance, or mjccd's max_limit when none
// within distmax.
template <class T, class A, class B>
RLT_HD T ccd_objects(const ModelView<T>& m, A& a, B& b, T distmax, T x1[3], T x2[3], int* nx) {
  using namespace mjccd;
  Status<T> st;
  a.center(st.x1);
  b.center(st.x2);
  st.gjk_iterations = st.epa_iterations = 0;
  st.epa_status = -1;
  st.tolerance = m.ccd_tolerance;
  st.max_iterations = m.ccd_iterations < kMaxIterations ? m.ccd_iterations : kMaxIterations;
  st.dist_cutoff = distmax;
  st.nx = 0;
  st.nsimplex = 0;
  st.separated = 0;
  bool done = false;
  if (ccd_round(a) || ccd_round(b)) {
    const T r1 = ccd_core(a, true, T(0)), r2 = ccd_core(b, true, T(0));
    st.dist_cutoff += r1 + r2;
    gjk(&st, a, b);
    st.dist_cutoff = distmax;
    ccd_core(a, false, r1), ccd_core(b, false, r2);
    if (st.dist > st.tolerance) {  // apart: inflate (MuJoCo's inflate)
      const Vec3<T> u = normalize3(Vec3<T>{st.x2[0] - st.x1[0], st.x2[1] - st.x1[1], st.x2[2] - st.x1[2]});
      const T n[3] = {u.x, u.y, u.z};
      if (r1 != T(0))
        for (int k = 0; k < 3; ++k) st.x1[k] += r1 * n[k];
      if (r2 != T(0))
        for (int k = 0; k < 3; ++k) st.x2[k] -= r2 * n[k];
      st.dist -= r1 + r2;
      if (st.dist > st.dist_cutoff) st.dist = Limits<T>::max_limit;
      done = true;
    } else {  // deep: the full shapes from their centers
      st.gjk_iterations = 0;
      a.center(st.x1);
      b.center(st.x2);
    }
  }
  if (!done) {
    gjk(&st, a, b);
    if (st.dist <= st.tolerance && st.nsimplex > 1 && !st.separated) {
      st.dist = T(0);  // touching, unless EPA finds a depth
      Polytope<T> pt;
      pt.nfaces = pt.nmap = pt.nverts = pt.hz_nedges = 0;
      pt.hz_overflow = false;
      pt.maxfaces = 6 * st.max_iterations;
      const int ret = st.nsimplex == 2   ? polytope2(&pt, &st, a, b)
                      : st.nsimplex == 3 ? polytope3(&pt, &st, a, b)
                                         : polytope4(&pt, &st, a, b);
      st.epa_status = ret;
      if (ret == kEpaSuccess) epa(&st, &pt, a, b);
    }
  }
  *nx = st.nx;
  if (st.nx > 0)
    for (int k = 0; k < 3; ++k) x1[k] = st.x1[k], x2[k] = st.x2[k];
  return st.dist;
}

// mj_geomDistanceCCD on geoms g1, g2 (in that order): min(distance, distmax), the witness points
// to fromto when there are some.
template <class T>
RLT_HD T ccd_distance(const ModelView<T>& m, const DataView<T>& d, int g1, int g2, T distmax, T fromto[6]) {
  mjccd::GeomObj<T> a, b;
  mjccd::init_geom_obj(&a, m, g1, Vec3<T>::load(d.geom_xpos + 3 * g1), Mat3<T>::load(d.geom_xmat + 9 * g1), T(0));
  mjccd::init_geom_obj(&b, m, g2, Vec3<T>::load(d.geom_xpos + 3 * g2), Mat3<T>::load(d.geom_xmat + 9 * g2), T(0));
  int nx = 0;
  const T dist = ccd_objects(m, a, b, distmax, fromto, fromto + 3, &nx);
  return dist < distmax ? dist : distmax;
}

// mj_geomDistance of height field gh and geom g, as measured on MuJoCo 3.17 (a body's height field:
// MuJoCo refuses one named as a geom): the exact distance to the field's surface, whatever distmax:
// the prisms of the cells under the geom's box widened by distmax (the tops raised by distmax for
// the height test only), each against the geom by ccd_objects with distmax as the cutoff; the
// smallest, its points (the field's, then the geom's, world) into xf, xg; distmax when none is below
// it. Agrees with MuJoCo 3.17 to rounding while the geom is apart from the field (and for a sphere or
// capsule sunk into it); for a box, cylinder or ellipsoid sunk into it MuJoCo's value differs (and
// changes with the cutoff there: an open item).
template <class T>
RLT_HD T hfield_distance(const ModelView<T>& m, const DataView<T>& d, int gh, int g, T distmax, T xf[3], T xg[3]) {
  const Vec3<T> c1 = Vec3<T>::load(d.geom_xpos + 3 * gh), c2 = Vec3<T>::load(d.geom_xpos + 3 * g);
  const Mat3<T> r1 = Mat3<T>::load(d.geom_xmat + 9 * gh), r2 = Mat3<T>::load(d.geom_xmat + 9 * g);
  const int h = m.geom_dataid[gh];
  const int nrow = m.hfield_nrow[h], ncol = m.hfield_ncol[h];
  const T* hs = m.hfield_size + 4 * h;
  const T* data = m.hfield_data + m.hfield_adr[h];
  const T margin = distmax;
  const Vec3<T> lp{dot(r1.col(0), c2 - c1), dot(r1.col(1), c2 - c1), dot(r1.col(2), c2 - c1)};
  Mat3<T> lr;  // r1^T r2
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) lr.m[3 * i + j] = dot(r1.col(i), r2.col(j));
  mjccd::GeomObj<T> obj;
  mjccd::init_geom_obj(&obj, m, g, lp, lr, T(0));
  T ext[6];
  for (int k = 0; k < 6; ++k) {
    T dir[3] = {T(0), T(0), T(0)}, res[3];
    dir[k / 2] = k % 2 ? T(-1) : T(1);
    obj.support(res, dir);
    ext[k] = res[k / 2];
  }
  obj.vertindex = obj.meshindex = -1;
  const T xmax = ext[0], xmin = ext[1], ymax = ext[2], ymin = ext[3], zmax = ext[4], zmin = ext[5];
  T best = distmax;
  if (xmin - margin > hs[0] || xmax + margin < -hs[0] || ymin - margin > hs[1] || ymax + margin < -hs[1] ||
      zmin - margin > hs[2] || zmax + margin < -hs[3] || !(xmin <= xmax && ymin <= ymax))
    return best;
  auto cell = [](T v, int hi) { return v > T(0) ? (v < T(hi) ? static_cast<int>(v) : hi) : 0; };
  const int cmin = cell(m_floor((xmin - margin + hs[0]) / (T(2) * hs[0]) * T(ncol - 1)), ncol - 1);
  const int cmax = cell(m_ceil((xmax + margin + hs[0]) / (T(2) * hs[0]) * T(ncol - 1)), ncol - 1);
  const int rmin = cell(m_floor((ymin - margin + hs[1]) / (T(2) * hs[1]) * T(nrow - 1)), nrow - 1);
  const int rmax = cell(m_ceil((ymax + margin + hs[1]) / (T(2) * hs[1]) * T(nrow - 1)), nrow - 1);
  const T dx = T(2) * hs[0] / T(ncol - 1), dy = T(2) * hs[1] / T(nrow - 1);
  hfield_detail::CcdPrism<T> pv;
  auto add = [&](int r, int c, int i) {  // MuJoCo's addPrismVert, the top not raised
    for (int k = 0; k < 3; ++k) {
      pv.v[0][k] = pv.v[1][k], pv.v[1][k] = pv.v[2][k], pv.v[3][k] = pv.v[4][k], pv.v[4][k] = pv.v[5][k];
    }
    const int rr = r + 1 - i;
    const T x = dx * T(c) - hs[0], y = dy * T(rr) - hs[1];
    pv.v[2][0] = x, pv.v[2][1] = y, pv.v[2][2] = -hs[3];
    pv.v[5][0] = x, pv.v[5][1] = y, pv.v[5][2] = data[rr * ncol + c] * hs[2];
  };
  for (int r = rmin; r < rmax; ++r) {
    add(r, cmin, 0);
    add(r, cmin, 1);
    for (int c = cmin + 1; c <= cmax; ++c) {
      for (int i = 0; i < 2; ++i) {
        add(r, c, i);
        if (pv.v[3][2] + margin < zmin && pv.v[4][2] + margin < zmin && pv.v[5][2] + margin < zmin) continue;
        T x1[3], x2[3];
        int nx = 0;
        const T di = ccd_objects(m, pv, obj, distmax, x1, x2, &nx);
        if (nx > 0 && di < best) {
          best = di;
          (c1 + r1 * Vec3<T>{x1[0], x1[1], x1[2]}).store(xf);
          (c1 + r1 * Vec3<T>{x2[0], x2[1], x2[2]}).store(xg);
        }
      }
    }
  }
  return best;
}

// Whether MuJoCo 3.17 sends the pair (types t1 <= t2) to its convex collider (mjc_Convex or, with
// nativeccd, mjc_BoxBox), which mj_geomDistance replaces by ccd_distance.
RLT_HD RLT_INLINE bool ccd_pair(int t1, int t2) {
  if (t1 == kGeomPlane || t1 == kGeomHField) return false;
  if (t1 == kGeomSphere) return t2 == kGeomEllipsoid || t2 == kGeomMesh;
  if (t1 == kGeomCapsule) return t2 != kGeomCapsule && t2 != kGeomBox;
  return true;
}

// MuJoCo 3's mj_geomDistance(g1, g2, distmax): the smallest signed distance between the two geoms,
// at most distmax, and fromto (zero when none is found below distmax): the closest points, geom
// 1's first. Convex pairs by ccd_distance; a height field by hfield_distance; the others by the
// narrow phase (collide_pair) with distmax as the margin, its deepest contact (its points pos -+
// dist/2 along the normal); none for plane-plane and pairs of height fields and planes.
template <class T>
RLT_HD T geom_distance(const ModelView<T>& m, const DataView<T>& d, int g1, int g2, T distmax, T fromto[6]) {
  for (int k = 0; k < 6; ++k) fromto[k] = T(0);
  const bool flip = m.geom_type[g1] > m.geom_type[g2];
  const int a = flip ? g2 : g1, b = flip ? g1 : g2;
  const int ta = m.geom_type[a], tb = m.geom_type[b];
  if (tb == kGeomPlane || tb == kGeomHField || (ta == kGeomPlane && tb == kGeomHField)) return distmax;
  if (ccd_pair(ta, tb)) return ccd_distance(m, d, g1, g2, distmax, fromto);
  if (ta == kGeomHField) {
    T xf[3], xg[3];
    const T dist = hfield_distance(m, d, a, b, distmax, xf, xg);
    if (dist < distmax)
      for (int k = 0; k < 3; ++k) fromto[k] = flip ? xg[k] : xf[k], fromto[3 + k] = flip ? xf[k] : xg[k];
    return dist;
  }
  // the narrow phase into a buffer of its own (a copy of the views with their contact list there)
  T buf[kContactStride * kMaxPairContacts];
  ModelView<T> ml = m;
  ml.ncon_max = kMaxPairContacts;
  DataView<T> dl = d;
  dl.contact = buf;
  // collide_pair's rejects read the geoms' bounding radii, which geom_bounds keeps only for geoms in
  // a contact pair: set these two (the same values)
  d.geom_bound[a] = contact_detail::bounding_radius(m, a);
  d.geom_bound[b] = contact_detail::bounding_radius(m, b);
  int n = 0;
  collide_pair(ml, dl, a, b, distmax, T(0), &n);
  T dist = distmax;
  int best = -1;
  for (int i = 0; i < n; ++i) {
    const T di = -buf[kContactStride * i + kConDepth];
    if (di < dist) dist = di, best = i;
  }
  if (best >= 0) {
    const T* c = buf + kContactStride * best;
    const T sign = flip ? T(-1) : T(1);
    for (int k = 0; k < 3; ++k) {
      fromto[k] = c[kConPos + k] + c[kConNormal + k] * (T(-0.5) * sign * dist);
      fromto[3 + k] = c[kConPos + k] + c[kConNormal + k] * (T(0.5) * sign * dist);
    }
  }
  return dist;
}

// MuJoCo's distance, normal and fromto sensors: every geom pair of object 1 (a geom, or each geom of
// a body) and object 2, the smallest geom_distance with the sensor's cutoff as distmax (the first of
// equals), into out (1, 3 or 6 scalars).
template <class T>
RLT_HD void geom_distance_sensor(const ModelView<T>& m, const DataView<T>& d, int i, T* out) {
  const T cutoff = m.sensor_cutoff[i];
  const int type = m.sensor_type[i];
  T dist = cutoff, fromto[6] = {T(0), T(0), T(0), T(0), T(0), T(0)};
  const int ot = m.sensor_objtype[i], oid = m.sensor_objid[i], rt = m.sensor_reftype[i], rid = m.sensor_refid[i];
  for (int g1 = 0; g1 < m.ngeom; ++g1) {
    if (ot == kSensObjBody ? m.geom_bodyid[g1] != oid : g1 != oid) continue;
    for (int g2 = 0; g2 < m.ngeom; ++g2) {
      if (rt == kSensObjBody ? m.geom_bodyid[g2] != rid : g2 != rid) continue;
      T ft[6];
      const T di = geom_distance(m, d, g1, g2, cutoff, ft);
      if (di < dist) {
        dist = di;
        for (int k = 0; k < 6; ++k) fromto[k] = ft[k];
      }
    }
  }
  if (type == kSensGeomDist) {
    out[0] = dist;
  } else if (type == kSensGeomNormal) {
    Vec3<T> n{fromto[3] - fromto[0], fromto[4] - fromto[1], fromto[5] - fromto[2]};
    if (n.x != T(0) || n.y != T(0) || n.z != T(0)) n = normalize3(n);
    n.store(out);
  } else {
    for (int k = 0; k < 6; ++k) out[k] = fromto[k];
  }
}

// MuJoCo's camprojection (cam_project): the site's position in the camera's pixel coordinates, from
// its sensorsize and focal lengths when it has a sensorsize, else from fovy (square pixels); x to
// the right from the left edge, y down from the top (the camera looks along -z, y up).
template <class T>
RLT_HD void camera_projection(const ModelView<T>& m, const DataView<T>& d, int site, int cam, T out[2]) {
  const T w = T(m.cam_resolution[2 * cam]), h = T(m.cam_resolution[2 * cam + 1]);
  const T sx = m.cam_sensorsize[2 * cam], sy = m.cam_sensorsize[2 * cam + 1];
  T fx, fy;
  if (sx != T(0) && sy != T(0)) {
    // in float, as MuJoCo's (its cam_intrinsic and cam_sensorsize are float arrays)
    fx = T(float(m.cam_intrinsic[4 * cam]) / float(sx) * float(m.cam_resolution[2 * cam]));
    fy = T(float(m.cam_intrinsic[4 * cam + 1]) / float(sy) * float(m.cam_resolution[2 * cam + 1]));
  } else {
    fx = fy = T(0.5) / tan_of(T(m.cam_fovy[cam]) * T(3.14159265358979323846) / T(360)) * h;
  }
  Vec3<T> cpos;
  Mat3<T> cmat;
  camera_frame(m, d, cam, &cpos, &cmat);
  const Vec3<T> p = mat_t_vec(cmat.m, Vec3<T>::load(d.site_xpos + 3 * site) - cpos);
  T denom = p.z;
  if (abs_val(denom) < T(kMinVal)) denom = denom < T(0) ? -T(kMinVal) : T(kMinVal);
  out[0] = -fx * (p.x / denom) + T(0.5) * w;
  out[1] = fy * (p.y / denom) + T(0.5) * h;
}

}  // namespace sensor_detail

// Fills d.sensordata from the substep's state (see the header for when physics_step calls it).
template <class T>
RLT_HD void compute_sensors(const ModelView<T>& m, const DataView<T>& d) {
  using namespace sensor_detail;
  if (m.disable_sensor) return;  // flag sensor="disable": sensordata keeps its values (MuJoCo's mjDSBL_SENSOR)
  if (m.nsubtree > 0) subtree_quantities(m, d);
  if (m.nbody_acc > 0) rne_post_constraint(m, d);
  for (int i = 0; i < m.nsensor; ++i) {
    T* out = d.sensordata + m.sensor_adr[i];
    const int type = m.sensor_type[i], ot = m.sensor_objtype[i], id = m.sensor_objid[i];
    const int rt = m.sensor_reftype[i], rid = m.sensor_refid[i];
    Vec3<T> v = Vec3<T>::zero();
    bool vec3 = true;  // the output is v (3 scalars)
    switch (type) {
      case kSensJointPos:
        out[0] = d.qpos[m.jnt_qposadr[id]], vec3 = false;
        break;
      case kSensJointVel:
        out[0] = d.qvel[m.jnt_dofadr[id]], vec3 = false;
        break;
      case kSensActuatorPos:
        out[0] = actuator_length_of(m, d, id), vec3 = false;
        break;
      case kSensActuatorVel:  // MuJoCo's actuator_velocity, 0 under the flag actuation="disable"
        out[0] = m.disable_actuation ? T(0) : actuator_velocity_of(m, d, id), vec3 = false;
        break;
      case kSensTendonPos:
        out[0] = d.ten_length[id], vec3 = false;
        break;
      case kSensTendonVel:
        out[0] = d.ten_velocity[id], vec3 = false;
        break;
      case kSensActuatorFrc:
        out[0] = d.actuator_force[id], vec3 = false;
        break;
      case kSensJointActFrc:
        out[0] = d.qfrc_actuator[m.jnt_dofadr[id]], vec3 = false;
        break;
      case kSensTendonActFrc: {
        T f = T(0);
        for (int a = 0; a < m.nu; ++a)
          if (m.actuator_trntype[a] == kTrnTendon && m.actuator_trnid[a] == id) f += d.actuator_force[a];
        out[0] = f, vec3 = false;
        break;
      }
      case kSensJointLimitPos:
      case kSensJointLimitVel:
      case kSensJointLimitFrc:
      case kSensTendonLimitPos:
      case kSensTendonLimitVel:
      case kSensTendonLimitFrc: {
        const bool tendon = type >= kSensTendonLimitPos;
        const int q = type - (tendon ? kSensTendonLimitPos : kSensJointLimitPos);  // 0 pos, 1 vel, 2 force
        int side = 0;
        const int r = limit_row(m, d, tendon, id, &side);
        T x = T(0);
        if (r >= 0) {
          const T sign = side == 0 ? T(1) : T(-1);
          if (q == 0) {  // MuJoCo's efc_pos - efc_margin
            const T v = tendon ? d.ten_length[id] : d.qpos[m.jnt_qposadr[id]];
            const T lo = tendon ? m.tendon_range[2 * id] : m.jnt_range[2 * id];
            const T hi = tendon ? m.tendon_range[2 * id + 1] : m.jnt_range[2 * id + 1];
            x = (side == 0 ? v - lo : hi - v) - (tendon ? m.tendon_margin[id] : m.jnt_margin[id]);
          } else if (q == 1) {  // efc_vel = J qvel
            x = sign * (tendon ? d.ten_velocity[id] : d.qvel[m.jnt_dofadr[id]]);
          } else {
            x = d.efc[r * kEfcStride + kEfcForce];
          }
        }
        out[0] = x, vec3 = false;
        break;
      }
      case kSensBallQuat: {
        const T* q = d.qpos + m.jnt_qposadr[id];
        const T n = m_sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        if (n < T(kMinVal)) {  // MuJoCo's mju_normalize4
          out[0] = T(1), out[1] = out[2] = out[3] = T(0);
        } else {
          for (int k = 0; k < 4; ++k) out[k] = q[k] / n;
        }
        vec3 = false;
        break;
      }
      case kSensBallAngVel:
        v = Vec3<T>::load(d.qvel + m.jnt_dofadr[id]);
        break;
      case kSensEPotential: {  // MuJoCo's mj_energyPos: gravity, joint springs, tendon springs (deadband)
        T e = potential_energy(m, d) + spring_energy(m, d);
        for (int t = 0; t < m.ntendon; ++t) {
          const T L = d.ten_length[t], lo = m.tendon_lengthspring[2 * t], hi = m.tendon_lengthspring[2 * t + 1];
          const T x = L > hi ? L - hi : L < lo ? L - lo : T(0);
          e += T(0.5) * m.tendon_stiffness[t] * x * x;
        }
        out[0] = e, vec3 = false;
        break;
      }
      case kSensEKinetic:  // under the energy flag, the previous substep's once set (physics_substep)
        out[0] = m.nenergy_lag > 0 && d.energy_lag[1] > T(0) ? d.energy_lag[0] : kinetic_energy(m, d), vec3 = false;
        break;
      case kSensClock:  // MuJoCo's d->time at the start of the substep
        out[0] = d.time[0], vec3 = false;
        break;
      case kSensFramePos:
      case kSensFrameXAxis:
      case kSensFrameYAxis:
      case kSensFrameZAxis: {
        Vec3<T> pos;
        Mat3<T> mat;
        object_frame(m, d, ot, id, &pos, &mat);
        if (type != kSensFramePos) pos = mat.col(type - kSensFrameXAxis);
        v = pos;
        if (rt != kSensObjNone) {
          Vec3<T> rpos;
          Mat3<T> rmat;
          object_frame(m, d, rt, rid, &rpos, &rmat);
          v = mat_t_vec(rmat.m, type == kSensFramePos ? pos - rpos : pos);
        }
        break;
      }
      case kSensFrameQuat: {
        Quat<T> q = object_quat(m, d, ot, id);
        if (rt != kSensObjNone) {
          const Quat<T> r = object_quat(m, d, rt, rid);
          q = quat_mul(Quat<T>{r.w, -r.x, -r.y, -r.z}, q);
        }
        q.store(out), vec3 = false;
        break;
      }
      case kSensFrameLinVel:
      case kSensFrameAngVel: {
        const SVec<T> vel = object_velocity(m, d, ot, id, false);
        if (rt == kSensObjNone) {
          v = type == kSensFrameAngVel ? vel.ang : vel.lin;
          break;
        }
        const SVec<T> rvel = object_velocity(m, d, rt, rid, false);
        Vec3<T> pos, rpos;
        Mat3<T> mat, rmat;
        object_frame(m, d, ot, id, &pos, &mat);
        object_frame(m, d, rt, rid, &rpos, &rmat);
        v = type == kSensFrameAngVel ? vel.ang - rvel.ang : vel.lin - rvel.lin - cross(rvel.ang, pos - rpos);
        v = mat_t_vec(rmat.m, v);
        break;
      }
      case kSensFrameLinAcc:
      case kSensFrameAngAcc: {  // MuJoCo's mj_objectAcceleration, world frame
        const SVec<T> acc = object_acceleration(m, d, ot, id);
        v = type == kSensFrameLinAcc ? acc.lin : acc.ang;
        break;
      }
      case kSensGyro:
        v = object_velocity(m, d, kSensObjSite, id, true).ang;
        break;
      case kSensVelocimeter:
        v = object_velocity(m, d, kSensObjSite, id, true).lin;
        break;
      case kSensMagnetometer:
        v = mat_t_vec(d.site_xmat + 9 * id, Vec3<T>{T(0), T(-0.5), T(0)});
        break;  // MuJoCo's default field
      case kSensSubtreeCom:
        v = Vec3<T>::load(d.subtree_com + 3 * id);
        break;
      case kSensSubtreeLinVel:
        v = Vec3<T>::load(d.subtree_linvel + 3 * id);
        break;
      case kSensSubtreeAngMom:
        v = Vec3<T>::load(d.subtree_angmom + 3 * id);
        break;
      case kSensAccelerometer: {
        const SVec<T> vel = object_velocity(m, d, kSensObjSite, id, true);
        const int b = m.site_bodyid[id];
        const SVec<T> acc = spatial_at(m, d, d.sensor_cacc + 6 * b, b, Vec3<T>::load(d.site_xpos + 3 * id),
                                       d.site_xmat + 9 * id, false);
        v = acc.lin + cross(vel.ang, vel.lin);
        break;
      }
      case kSensForce:
      case kSensTorque: {
        const int b = m.site_bodyid[id];
        const SVec<T> f =
            spatial_at(m, d, d.cfrc_int + 6 * b, b, Vec3<T>::load(d.site_xpos + 3 * id), d.site_xmat + 9 * id, true);
        v = type == kSensForce ? f.lin : f.ang;
        break;
      }
      case kSensTouch: {
        const int b = m.site_bodyid[id];
        T sum = T(0);
        const int ncon = static_cast<int>(d.ncon[0]);
        for (int c = 0; c < ncon; ++c) {
          const T* con = d.contact + kContactStride * c;
          const int b1 = m.geom_bodyid[static_cast<int>(con[kConGeom1])],
                    b2 = m.geom_bodyid[static_cast<int>(con[kConGeom2])];
          if (con[kConActive] == T(0) || (b != b1 && b != b2) || !(con[kConForce] > T(0))) continue;
          Vec3<T> ray = Vec3<T>::load(con + kConNormal);
          if (b == b2) ray = -ray;
          if (ray_meets_zone(m, d, id, Vec3<T>::load(con + kConPos), ray)) sum += con[kConForce];
        }
        out[0] = sum, vec3 = false;
        break;
      }
      case kSensRangefinder: {
        // MuJoCo's mj_sensorPos: a ray from the site along its z axis, the site's body excluded
        // (sim/ray.h); the geoms have not moved since the position stage, so computing it here,
        // with the other sensors, gives MuJoCo's value.
        // Its data fields (sensor_refid: MuJoCo's dataspec bits, dist 1, dir 2, origin 4, point 8,
        // normal 16, depth 32) in MuJoCo's order, as its fill_raydata: dir, point and normal 0 and
        // depth -1 on a miss.
        const T* mat = d.site_xmat + 9 * id;
        const T dir[3] = {mat[2], mat[5], mat[8]};
        const T* origin = d.site_xpos + 3 * id;
        const int spec = rid > 0 ? rid : 1;
        T normal[3];
        const T dist = ray_cast(m, d, origin, dir, m.site_bodyid[id], static_cast<int*>(nullptr),
                                (spec & 16) ? normal : static_cast<T*>(nullptr));
        const bool hit = dist >= T(0);
        int k = 0;
        if (spec & 1) out[k++] = dist;
        if (spec & 2)
          for (int c = 0; c < 3; ++c) out[k++] = hit ? dir[c] : T(0);
        if (spec & 4)
          for (int c = 0; c < 3; ++c) out[k++] = origin[c];
        if (spec & 8)
          for (int c = 0; c < 3; ++c) out[k++] = hit ? origin[c] + dir[c] * dist : T(0);
        if (spec & 16)
          for (int c = 0; c < 3; ++c) out[k++] = hit ? normal[c] : T(0);
        if (spec & 32) out[k++] = hit ? dist : T(-1);
        vec3 = false;
        break;
      }
      case kSensContact:
        contact_sensor(m, d, i, out), vec3 = false;
        break;
      case kSensInsideSite: {  // MuJoCo's mju_insideGeom of the object's position in the site's zone
        Vec3<T> pos;
        Mat3<T> mat;
        object_frame(m, d, ot, id, &pos, &mat);
        // a massless body with mass below it (MuJoCo 3.17): its subtree's center of mass
        if (ot == kSensObjBody && id > 0 && m.body_mass[id] < T(kMinVal) && d.subtree_mass[id] >= T(kMinVal))
          pos = Vec3<T>::load(d.subtree_com + 3 * id);
        out[0] = inside_site(m, d, rid, pos) ? T(1) : T(0), vec3 = false;
        break;
      }
      case kSensGeomDist:
      case kSensGeomNormal:
      case kSensGeomFromTo:
        geom_distance_sensor(m, d, i, out), vec3 = false;
        break;
      case kSensCamProjection:
        camera_projection(m, d, id, rid, out), vec3 = false;
        break;
      default:
        break;
    }
    if (vec3) v.store(out);
    // cutoff (MuJoCo's apply_cutoff): real outputs both ways, touch from above, quaternions and
    // axes never.
    const T cutoff = m.sensor_cutoff[i];
    if (cutoff > T(0) && type != kSensContact && type != kSensFrameQuat && type != kSensBallQuat &&
        type != kSensFrameXAxis && type != kSensFrameYAxis && type != kSensFrameZAxis && type != kSensGeomNormal &&
        type != kSensGeomFromTo) {
      const bool positive = type == kSensTouch || type == kSensInsideSite;  // MuJoCo's mjDATATYPE_POSITIVE
      for (int k = 0; k < m.sensor_dim[i]; ++k) {
        T x = out[k];
        if (x > cutoff) x = cutoff;
        if (!positive && x < -cutoff) x = -cutoff;
        out[k] = x;
      }
    }
  }
}

#ifndef __CUDACC__
// Compiled once for the host, in sim/physics_instances.cpp (nvcc's translation units make their own).
extern template void compute_sensors<float>(const ModelView<float>&, const DataView<float>&);
extern template void compute_sensors<double>(const ModelView<double>&, const DataView<double>&);
#endif

}  // namespace rlt
