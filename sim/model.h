// The compiled, immutable description of a robot (DESIGN.md D2, D3), MuJoCo-style: flat arrays
// named <object>_<property>, each commented with its shape. Built on the host (in double) by the
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

namespace rlt {

enum JointType : int { kJointFree = 0, kJointBall = 1, kJointSlide = 2, kJointHinge = 3 };
enum GeomType : int { kGeomPlane = 0, kGeomSphere = 2, kGeomCapsule = 3, kGeomBox = 6 };  // MuJoCo's numbers
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

  // bodies (nbody)
  std::vector<int> body_parentid;            // (nbody)
  std::vector<double> body_pos;              // (nbody x 3) frame position in the parent frame
  std::vector<double> body_quat;             // (nbody x 4) frame orientation in the parent frame
  std::vector<double> body_ipos;             // (nbody x 3) center of mass in the body frame
  std::vector<double> body_iquat;            // (nbody x 4) principal axes of inertia in the body frame
  std::vector<double> body_mass;             // (nbody) kg
  std::vector<double> body_inertia;          // (nbody x 3) diagonal inertia in the principal frame
  std::vector<int> body_jntadr;              // (nbody) first joint of the body, -1 if none
  std::vector<int> body_jntnum;              // (nbody)
  std::vector<int> body_dofadr;              // (nbody) first dof, -1 if none
  std::vector<int> body_dofnum;              // (nbody)

  // joints (njnt)
  std::vector<int> jnt_type;                 // (njnt) JointType
  std::vector<int> jnt_bodyid;               // (njnt)
  std::vector<int> jnt_qposadr;              // (njnt)
  std::vector<int> jnt_dofadr;               // (njnt)
  std::vector<double> jnt_pos;               // (njnt x 3) anchor in the body frame
  std::vector<double> jnt_axis;              // (njnt x 3) unit axis in the body frame (hinge, slide)
  std::vector<int> jnt_limited;              // (njnt) 0/1
  std::vector<double> jnt_range;             // (njnt x 2) rad or m (hinge/slide)
  std::vector<double> jnt_stiffness;         // (njnt) joint spring, N m/rad (hinge, ball, free rotation) or
                                             // N/m (slide, free translation); 0: no spring

  // dofs (nv)
  std::vector<int> dof_bodyid;               // (nv)
  std::vector<int> dof_jntid;                // (nv)
  std::vector<int> dof_parentid;             // (nv) previous dof in the kinematic tree, -1 at the root
  std::vector<double> dof_damping;           // (nv) N m s / rad (or N s / m)
  std::vector<double> dof_armature;          // (nv) added diagonal inertia

  // geoms (ngeom)
  std::vector<int> geom_type;                // (ngeom) GeomType
  std::vector<int> geom_bodyid;              // (ngeom)
  std::vector<double> geom_size;             // (ngeom x 3) MuJoCo's meaning per type
  std::vector<double> geom_pos;              // (ngeom x 3) in the body frame
  std::vector<double> geom_quat;             // (ngeom x 4) in the body frame
  std::vector<double> geom_friction;         // (ngeom x 3) sliding, torsional, rolling (only sliding acts)
  std::vector<int> geom_contype;             // (ngeom)
  std::vector<int> geom_conaffinity;         // (ngeom)
  std::vector<float> geom_rgba;              // (ngeom x 4)
  std::vector<int> geom_condim;              // (ngeom) MuJoCo's condim: 1 frictionless, 3 sliding friction (4 and 6
                                             // are not supported); a pair uses the larger (empty: all 3)
  std::vector<double> geom_margin;           // (ngeom) m, MJCF geom margin, MuJoCo's meaning: a pair's contact acts from
                                             // max(both) apart (empty: all 0)

  // sites (nsite)
  std::vector<int> site_bodyid;              // (nsite)
  std::vector<double> site_pos;              // (nsite x 3)
  std::vector<double> site_quat;             // (nsite x 4)

  // actuators (nu), each driving one joint
  std::vector<int> actuator_kind;            // (nu) ActuatorKind
  std::vector<int> actuator_trnid;           // (nu) joint id
  std::vector<double> actuator_gear;         // (nu) force = gear * (gain term + bias term)
  std::vector<int> actuator_ctrllimited;     // (nu)
  std::vector<double> actuator_ctrlrange;    // (nu x 2)
  std::vector<int> actuator_forcelimited;    // (nu)
  std::vector<double> actuator_forcerange;   // (nu x 2)
  std::vector<double> actuator_kp;           // (nu) position servo gain
  std::vector<double> actuator_kv;           // (nu) velocity servo gain

  // keyframes (nkey)
  std::vector<double> key_time;              // (nkey) s
  std::vector<double> key_qpos;              // (nkey x nq)
  std::vector<double> key_qvel;              // (nkey x nv)
  std::vector<double> key_ctrl;              // (nkey x nu)

  std::vector<double> qpos0;                 // (nq) initial configuration (reference pose)
  std::vector<double> qpos_spring;           // (nq) where the joint springs are at rest (MuJoCo's qpos_spring):
                                             // the MJCF springref for hinge/slide, qpos0 for free/ball

  // names (empty string when unnamed)
  std::vector<std::string> body_name, jnt_name, geom_name, site_name, actuator_name, key_name;

  int body_id(const std::string& name) const;   // -1 when absent
  int joint_id(const std::string& name) const;
  int key_id(const std::string& name) const;
};

}  // namespace rlt
