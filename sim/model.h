// The compiled, immutable description of a robot (DESIGN.md D2, D3), MuJoCo-style: flat arrays
// named <object>_<property>, each declared with its shape and meaning in sim/model_fields.h (the
// arrays the dynamics read) or below (host-only ones). Built on the host (in double) by the
// MJCF compiler (sim/mjcf.h); viewed by the dynamics through ModelView<T> (pointers into host or
// device memory, in float or double).
//
// Conventions (as MuJoCo's):
//  * body 0 is the world; body_parentid[b] < b for every other body (tree order).
//  * quaternions are (w, x, y, z), unit; a body's frame is body_pos/body_quat in its parent's frame.
//  * qpos layout per joint: free 7 (pos 3, quat 4), ball 4 (quat), hinge 1, slide 1;
//    qvel layout per joint: free 6 (linear velocity in the world frame 3, angular velocity in the
//    body frame 3), ball 3 (angular velocity in the body frame), hinge 1, slide 1.
//  * joints of a body act in order, at jnt_pos in the body frame, about/along jnt_axis (body frame).
//  * hinge/slide joints move by qpos - qpos0 (qpos0 = the MJCF ref), so body_pos/body_quat are the
//    body's frame at qpos = qpos0; a free joint's qpos0 is its body's pos/quat, a ball's 1 0 0 0.
#pragma once

#include <string>
#include <vector>

#include "sim/model_fields.h"

namespace rlt {

enum JointType : int { kJointFree = 0, kJointBall = 1, kJointSlide = 2, kJointHinge = 3 };
enum GeomType : int {  // MuJoCo's numbers
  kGeomPlane = 0, kGeomSphere = 2, kGeomCapsule = 3, kGeomEllipsoid = 4, kGeomCylinder = 5, kGeomBox = 6
};
enum ActuatorKind : int { kActMotor = 0, kActPosition = 1, kActVelocity = 2 };

inline int joint_nq(int type) { return type == kJointFree ? 7 : type == kJointBall ? 4 : 1; }
inline int joint_nv(int type) { return type == kJointFree ? 6 : type == kJointBall ? 3 : 1; }

struct Model {
  // sizes
  int nq = 0, nv = 0, nbody = 0, njnt = 0, ngeom = 0, nsite = 0, nu = 0, nkey = 0;

  // options
  double timestep = 0.002;                   // s (MJCF option/timestep)
  double gravity[3] = {0, 0, -9.81};         // m/s^2
  // Contacts and joint limits follow MuJoCo's soft constraints with its default solref/solimp
  // (sim/constraints.h); they have no model-wide parameters.

  // The arrays the dynamics read (sim/model_fields.h: name, shape, doc), as std::vector<double> or
  // std::vector<int>.
#define RLT_DECLARE_MODEL_FIELD(type, name, count, need, doc) std::vector<RLT_FIELD_HOST_TYPE_##type> name;
  RLT_MODEL_FIELDS(RLT_DECLARE_MODEL_FIELD)
#undef RLT_DECLARE_MODEL_FIELD

  // Host-only arrays (the compiler, the viewer and the envs read them; the dynamics do not).
  std::vector<int> dof_jntid;                // (nv) joint of the dof
  std::vector<float> geom_rgba;              // (ngeom x 4)

  // keyframes (nkey)
  std::vector<double> key_time;              // (nkey) s
  std::vector<double> key_qpos;              // (nkey x nq)
  std::vector<double> key_qvel;              // (nkey x nv)
  std::vector<double> key_ctrl;              // (nkey x nu)

  // names (empty string when unnamed)
  std::vector<std::string> body_name, jnt_name, geom_name, site_name, actuator_name, key_name;

  int body_id(const std::string& name) const;   // -1 when absent
  int joint_id(const std::string& name) const;
  int key_id(const std::string& name) const;
};

}  // namespace rlt
