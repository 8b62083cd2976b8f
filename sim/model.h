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

#include "sim/common.h"
#include "sim/model_fields.h"

namespace rlt {

enum JointType : int { kJointFree = 0, kJointBall = 1, kJointSlide = 2, kJointHinge = 3 };
enum GeomType : int {  // MuJoCo's numbers
  kGeomPlane = 0,
  kGeomHField = 1,  // height field (sim/hfield.h): static or moving, collides with the primitives but planes, and meshes
  kGeomSphere = 2,
  kGeomCapsule = 3,
  kGeomEllipsoid = 4,
  kGeomCylinder = 5,
  kGeomBox = 6,
  kGeomMesh = 7  // its convex hull collides (sim/convex.h); the full triangle mesh is host only
};
// How a frame fixed to a body relates to the body's frames (MuJoCo 3.17's mjtSameFrame numbers): the
// compiler's 1e-6 test; kinematics then copies the body's (or its inertial frame's) world pose instead of
// composing one (body_sameframe, geom_sameframe, site_sameframe; sim/dynamics.h local_to_global).
enum SameFrame : int {
  kSameFrameNone = 0,        // composed: xmat pos + xpos, xquat quat
  kSameFrameBody = 1,        // the body's frame: xpos, xmat
  kSameFrameInertia = 2,     // the body's inertial frame: xipos, ximat
  kSameFrameBodyRot = 3,     // the body's orientation (xmat), position composed
  kSameFrameInertiaRot = 4,  // the inertial frame's orientation (ximat), position composed
};
enum EqualityType : int { kEqConnect = 0, kEqWeld = 1, kEqJoint = 2, kEqTendon = 3 };  // MuJoCo's numbers
// What eq_obj1id/eq_obj2id of a weld name (MuJoCo's eq_objtype mjOBJ_BODY, mjOBJ_SITE).
enum EqualityObj : int { kEqObjBody = 0, kEqObjSite = 1 };
// A tendon's wraps (sim/tendon.h; MuJoCo's mjtWrap numbers) and an actuator's transmission.
enum WrapType : int { kWrapJoint = 1, kWrapPulley = 2, kWrapSite = 3, kWrapSphere = 4, kWrapCylinder = 5 };
// Transmissions (sim/actuators.h, sim/transmission.h; rltrain's numbers): a joint (MuJoCo's mjTRN_JOINT;
// also mjTRN_JOINTINPARENT on a hinge or slide, where the two are the same), a tendon, a site (MuJoCo's
// mjTRN_SITE, with or without a refsite), a slider-crank (mjTRN_SLIDERCRANK), a ball or free joint
// with its gear in the parent frame (mjTRN_JOINTINPARENT) or a body's contacts (mjTRN_BODY, adhesion).
enum TransmissionType : int {
  kTrnJoint = 0,
  kTrnTendon = 1,
  kTrnSite = 2,
  kTrnSliderCrank = 3,
  kTrnJointInParent = 4,
  kTrnBody = 5
};
// kActGeneral: MuJoCo's gain/bias/dynamics form (actuator_gaintype, _biastype, _dyntype and their
// prm fields; sim/actuators.h); motor, position and velocity keep their own kinds (bit-identical).
enum ActuatorKind : int { kActMotor = 0, kActPosition = 1, kActVelocity = 2, kActGeneral = 3 };
// MuJoCo's numbers (mjtDyn, mjtGain, mjtBias); the muscle types are MuJoCo's muscle model (sim/actuators.h).
enum ActuatorDyn : int { kDynNone = 0, kDynIntegrator = 1, kDynFilter = 2, kDynFilterExact = 3, kDynMuscle = 4 };
enum ActuatorGain : int { kGainFixed = 0, kGainAffine = 1, kGainMuscle = 2 };
enum ActuatorBias : int { kBiasNone = 0, kBiasAffine = 1, kBiasMuscle = 2 };
// Parameters per actuator in actuator_gainprm and actuator_biasprm (MuJoCo's mjNGAIN, mjNBIAS; a muscle
// uses 9) and in actuator_dynprm (a muscle uses 3; MuJoCo keeps 10).
constexpr int kNumGainPrm = 10;
constexpr int kNumDynPrm = 3;
// MuJoCo's integrators (option/integrator); the numbers are rltrain's.
enum Integrator : int { kIntEuler = 0, kIntRK4 = 1, kIntImplicitFast = 2, kIntImplicit = 3 };
// implicitfast and implicit both factor M - h qDeriv (sim/physics_step.h) and keep qDeriv's workspace.
RLT_HD constexpr bool velocity_implicit(int integrator) {
  return integrator == kIntImplicitFast || integrator == kIntImplicit;
}
// MuJoCo's friction cones (mjtCone; sim/constraints.h).
enum Cone : int { kConePyramidal = 0, kConeElliptic = 1 };
// Sensors (sim/sensors.h computes them, sim/mjcf_sensors.cpp compiles them): what each measures,
// and the kinds of object one reads (MuJoCo's mjtSensor / mjtObj meanings, rltrain's numbers).
enum SensorType : int {
  kSensJointPos = 0,
  kSensJointVel,
  kSensActuatorPos,
  kSensActuatorVel,
  kSensActuatorFrc,
  kSensFramePos,
  kSensFrameQuat,
  kSensFrameXAxis,
  kSensFrameYAxis,
  kSensFrameZAxis,
  kSensFrameLinVel,
  kSensFrameAngVel,
  kSensGyro,
  kSensVelocimeter,
  kSensAccelerometer,
  kSensForce,
  kSensTorque,
  kSensTouch,
  kSensMagnetometer,
  kSensSubtreeCom,
  kSensSubtreeLinVel,
  kSensSubtreeAngMom,
  kSensContact,  // MuJoCo 3's contact sensor: data fields and reduce in sensor_intprm (sim/sensors.h)
  kSensTendonPos,  // tendons (sim/tendon.h)
  kSensTendonVel,
  kSensRangefinder,  // distance along the site's z axis to the nearest geom, -1 if none (sim/ray.h)
  kSensJointActFrc,    // qfrc_actuator at a hinge or slide joint's dof
  kSensTendonActFrc,   // the summed actuator_force of the tendon's actuators
  kSensJointLimitPos,  // an active limit row of the joint: distance - margin, J qvel, force (0 if none)
  kSensJointLimitVel,
  kSensJointLimitFrc,
  kSensTendonLimitPos,  // the same for a tendon's limit
  kSensTendonLimitVel,
  kSensTendonLimitFrc,
  kSensBallQuat,    // a ball joint's qpos quaternion, normalized
  kSensBallAngVel,  // a ball joint's qvel (3)
  kSensEPotential,  // gravity and spring (joint, tendon) potential energy (MuJoCo's mj_energyPos)
  kSensEKinetic,    // 1/2 qvel^T M qvel (mj_energyVel)
  kSensFrameLinAcc,  // an object's linear acceleration (mj_objectAcceleration, world)
  kSensFrameAngAcc,  // its angular acceleration
  kSensClock,        // the simulation time (DataView::time)
  kSensInsideSite,   // 1 when the object's position is inside the site's zone (mju_insideGeom), else 0
  kSensGeomDist,     // signed distance between two geoms or the closest geom pair of two bodies, at most cutoff
  kSensGeomNormal,   // the unit direction of that pair's closest points (from object 1 to object 2)
  kSensGeomFromTo,   // the two closest points (6)
  kSensCamProjection,  // a site's position in a camera's pixel coordinates (2)
  kNumSensorTypes    // their count (HostModel checks sensor_type against it)
};
enum SensorObj : int {
  kSensObjNone = 0,
  kSensObjBody,
  kSensObjXBody,
  kSensObjGeom,
  kSensObjSite,
  kSensObjJoint,
  kSensObjActuator,
  kSensObjTendon,
  kSensObjCamera  // a camera (its pose as MuJoCo's mj_camlight: sim/sensors.h camera_frame)
};
// A camera's mode (MuJoCo's mjtCamLight; cam_mode): how its world pose follows its body (mj_camlight).
enum CameraMode : int { kCamFixed = 0, kCamTrack, kCamTrackCom, kCamTargetBody, kCamTargetBodyCom };
// A contact sensor's data fields (MuJoCo's mjtConDataField bits in sensor_intprm[2 i]) and its
// reduction (sensor_intprm[2 i + 1]; MuJoCo's numbers).
enum ContactData : int {
  kConDataFound = 0,
  kConDataForce,
  kConDataTorque,
  kConDataDist,
  kConDataPos,
  kConDataNormal,
  kConDataTangent,
  kConDataLinVel,  // MuJoCo 3.17's: the contact's relative velocity (geom 2's body minus geom 1's at its
  kConDataAngVel,  // point), linear and angular, in the contact frame
  kNumConData
};
enum ContactReduce : int { kReduceNone = 0, kReduceMinDist = 1, kReduceMaxForce = 2, kReduceNetForce = 3 };

inline int joint_nq(int type) { return type == kJointFree ? 7 : type == kJointBall ? 4 : 1; }
inline int joint_nv(int type) { return type == kJointFree ? 6 : type == kJointBall ? 3 : 1; }

struct Model {
  // sizes
  int nq = 0, nv = 0, nbody = 0, njnt = 0, ngeom = 0, nsite = 0, nu = 0, nkey = 0;
  int neq = 0;                                   // equality constraints (MJCF <equality>: connect, joint)
  int nsensor = 0, nsensordata = 0;              // sensors, and the scalars of their outputs (sum of sensor_dim)
  int nmesh = 0, nmeshvert = 0, nmeshgraph = 0;  // meshes, their vertices, the ints of their hulls
  int nmeshface = 0;                              // the triangles of all meshes (mesh_face)
  int nmeshpoly = 0, nmeshpolyvert = 0;           // the hulls' polygons, their vertices (mesh_polyvert)
  int nhfield = 0, nhfielddata = 0;  // height fields (sim/hfield.h), and their elevations (sum of nrow * ncol)
  int ntendon = 0, nwrap = 0;        // tendons and their wraps (MJCF <tendon>; sim/tendon.h)
  int npair = 0;                     // explicit contact pairs (MJCF <contact><pair>)
  int ncam = 0;                      // cameras (MJCF <camera>: their frames, for frame sensors)
  int nmocap = 0;                    // mocap bodies (MJCF body mocap="true"; Data's mocap_pos, mocap_quat)

  // options
  double timestep = 0.002;            // s (MJCF option/timestep)
  double gravity[3] = {0, 0, -9.81};  // m/s^2
  int integrator = kIntEuler;         // Integrator (MJCF option/integrator)
  // Contacts, joint limits and friction loss follow MuJoCo's soft constraints (sim/constraints.h)
  // with the per-object solref/solimp of sim/model_fields.h and these model-wide options:
  double impratio = 1;    // MJCF option/impratio
  bool refsafe = true;    // MJCF flag refsafe (disable: false)
  bool eulerdamp = true;  // MJCF flag eulerdamp (disable: joint damping explicit)
  // MJCF disable flags read by the dynamics (MuJoCo 3's mjDSBL_*; true is MuJoCo's default):
  // actuation (false: no actuator forces, actuator_velocity 0, activations held), clampctrl (false:
  // ctrl not clamped to ctrlrange), filterparent (false: a body and its parent may collide), sensor
  // (false: sensors not computed, sensordata keeps its values).
  bool actuation = true, clampctrl = true, filterparent = true, sensor = true;
  // MJCF option/cone: the friction cone of contacts (Cone; sim/constraints.h)
  int cone = kConePyramidal;
  // MuJoCo's noslip post-pass on the friction rows (sim/noslip.h): MJCF option noslip_iterations
  // (0: off) and noslip_tolerance
  int noslip_iterations = 0;
  double noslip_tolerance = 1e-6;
  // Fluid forces (MuJoCo's inertia-box model; sim/dynamics.h fluid_forces): MJCF option density
  // (kg/m^3), viscosity (Pa s), wind (m/s, world); all 0: none.
  double density = 0, viscosity = 0, wind[3] = {0, 0, 0};
  // MuJoCo's native convex collision (sim/mjccd.h, the height fields' prisms): MJCF option
  // ccd_iterations (GJK's and EPA's most iterations, at most mjccd::kMaxIterations) and ccd_tolerance
  int ccd_iterations = 35;
  double ccd_tolerance = 1e-6;
  // MJCF option/tolerance: the constraint solver's stopping tolerance on its scaled cost improvement,
  // gradient and Newton decrement (sim/constraints.h newton_solve, MuJoCo's mj_solNewton); 0: run
  // until rounding stops it
  double tolerance = 1e-8;
  // MJCF option/iterations: the most iterations (line searches) of MuJoCo's solver; the float Newton
  // solve stops there where it is below kNewtonMaxIter (sim/model_view.h; MuJoCo's default 100)
  int iterations = 100;
  // MJCF option/ls_iterations and ls_tolerance: MuJoCo's line search's most evaluations of the cost and
  // its slope tolerance (relative to `tolerance`); the float Newton solve under such a budget searches
  // as MuJoCo does with them (sim/constraints.h mujoco_line_search); MuJoCo's defaults
  int ls_iterations = 50;
  double ls_tolerance = 0.01;
  // MJCF flag warmstart (disable: false): the float Newton solve of a model with such a budget starts
  // from the last substep's acceleration where that costs less than qacc_smooth (MuJoCo's warm start)
  bool warmstart = true;

  // The arrays the dynamics read (sim/model_fields.h: name, shape, doc), as std::vector<double> or
  // std::vector<int>.
#define RLT_DECLARE_MODEL_FIELD(type, name, count, need, doc) std::vector<RLT_FIELD_HOST_TYPE_##type> name;
  RLT_MODEL_FIELDS(RLT_DECLARE_MODEL_FIELD)
#undef RLT_DECLARE_MODEL_FIELD

  // Host-only arrays (the compiler, the viewer and the envs read them; the dynamics do not).
  std::vector<int> dof_jntid;        // (nv) joint of the dof
  std::vector<float> geom_rgba;      // (ngeom x 4)
  std::vector<int> geom_group;       // (ngeom) MuJoCo's visibility group (the viewer shows 0-2, as MuJoCo's)
  std::vector<double> sensor_noise;  // (nsensor) MJCF noise, kept as information: not applied
                                     // (MuJoCo's mj_step does not add it either)
  std::vector<float> tendon_rgba;    // (ntendon x 4) for the viewer
  std::vector<double> tendon_width;  // (ntendon) m, for the viewer
  std::vector<int> tendon_group;     // (ntendon) visibility group

  // meshes, host only: the frame MuJoCo moved each mesh by (its centre of mass and principal axes in
  // the file's frame)
  std::vector<double> mesh_pos, mesh_quat;      // (nmesh x 3), (nmesh x 4)
  std::vector<std::string> mesh_name;           // (nmesh)

  // keyframes (nkey)
  std::vector<double> key_time;  // (nkey) s
  std::vector<double> key_qpos;  // (nkey x nq)
  std::vector<double> key_qvel;  // (nkey x nv)
  std::vector<double> key_ctrl;  // (nkey x nu)
  std::vector<double> key_act;   // (nkey x nu): each actuator's activation (MuJoCo's key_act, whose na
                                 // entries go to the stateful actuators in order; 0 for the others)
  std::vector<double> key_mpos;   // (nkey x 3 nmocap) the mocap bodies' positions (MuJoCo's key_mpos)
  std::vector<double> key_mquat;  // (nkey x 4 nmocap) their orientations, unit (MuJoCo's key_mquat)

  // asset directories (MJCF <compiler> meshdir / texturedir, else assetdir) resolved against the
  // main file's directory, ending in '/' ("" for the working directory): the mesh and texture
  // readers prefix a relative file name with them. Host only.
  std::string meshdir, texturedir;

  // names (empty string when unnamed)
  std::vector<std::string> body_name, jnt_name, geom_name, site_name, actuator_name, key_name, sensor_name;
  std::vector<std::string> tendon_name, cam_name;

  int body_id(const std::string& name) const;  // -1 when absent
  int joint_id(const std::string& name) const;
  int key_id(const std::string& name) const;
  int sensor_id(const std::string& name) const;  // its output: sensordata + sensor_adr[id], sensor_dim[id] scalars
};

}  // namespace rlt
