// MJCF compiler, the last step: constants MuJoCo's mj_setConst computes from the compiled model at
// qpos0 that change the model itself (sim/mjcf_compiler.h).
#include <algorithm>
#include <cmath>

#include "sim/mjcf_compiler.h"
#include "sim/model_view.h"
#include "sim/sensors.h"
#include "sim/tendon.h"
#include "sim/transmission.h"

namespace rlt::mjcf_detail {

void position_stage(const ModelView<double>& m, const DataView<double>& d) {
  kinematics(m, d);
  com_position(m, d);
  if (m.ntendon > 0) tendon_kinematics(m, d);
  transmission_kinematics(m, d);
  mass_matrix(m, d);
  factor_mass(m, d, 0.0);
}

// MuJoCo's mj_setConst (engine_setconst.c), the actuator part, and joints' springdamper (below):
// every actuator's actuator_acc0 (|M^-1 moment| at qpos0, a muscle's force scale); a position-like actuator (gainprm[0]
// == -biasprm[1]) whose biasprm[2] is positive holds a damping ratio (`dampratio`), turned here into the damping
// -biasprm[2] = dampratio * 2 * sqrt(kp * mass), mass the inertia the actuator sees at qpos0: 1 / (moment M^-1
// moment^T), for a joint 1 / (gear^2 (M^-1)_dd) (measured on MuJoCo 3.17, whose value this is, for joint, tendon and
// site transmissions; later sources take the diagonal of M, dof_M0, instead).
// MuJoCo's camera constants (mj_setConst after set0's mj_kinematics, mj_comPos, mj_camlight, with
// every camera posed as mode fixed): cam_pos0 = cam_xpos - xpos[body], cam_poscom0 = cam_xpos -
// subtree_com[target, else body], cam_mat0 = cam_xmat, at qpos0 (measured on MuJoCo 3.17: a
// trackcom camera with a target keeps its offset from the target's subtree com, applied to its own
// body's). Also resolves each camera's target body.
void MjcfCompiler::camera_constants() {
  const size_t ncam = static_cast<size_t>(m.ncam);
  m.cam_targetbodyid.assign(ncam, -1);
  for (size_t i = 0; i < ncam; ++i) {
    const std::string& target = m_cam_target[i].first;
    if (target.empty()) continue;
    const int b = m.body_id(target);
    if (b < 0) fail(m_cam_target[i].second, "camera target: unknown body " + quoted(target));
    m.cam_targetbodyid[i] = b;
  }
  m.cam_pos0.assign(3 * ncam, 0.0);
  m.cam_poscom0.assign(3 * ncam, 0.0);
  m.cam_mat0.assign(9 * ncam, 0.0);
  if (ncam == 0) return;
  const HostModel<double> host(m);
  const ModelView<double>& view = host.view();
  std::vector<double> row0(static_cast<size_t>(data_size(view)), 0.0);
  const DataView<double> d0 = data_view(view, row0.data());
  reset_data(view, d0);
  kinematics(view, d0);
  // subtree centers of mass (MuJoCo's mj_comPos)
  const size_t nb = static_cast<size_t>(m.nbody);
  std::vector<double> mass(nb), com(3 * nb);
  for (size_t b = 0; b < nb; ++b) {
    mass[b] = m.body_mass[b];
    for (int k = 0; k < 3; ++k) com[3 * b + k] = m.body_mass[b] * d0.xipos[3 * b + k];
  }
  for (size_t b = nb - 1; b > 0; --b) {
    const size_t p = static_cast<size_t>(m.body_parentid[b]);
    mass[p] += mass[b];
    for (int k = 0; k < 3; ++k) com[3 * p + k] += com[3 * b + k];
  }
  for (size_t b = 0; b < nb; ++b)
    for (int k = 0; k < 3; ++k) com[3 * b + k] = mass[b] < kMinVal ? d0.xipos[3 * b + k] : com[3 * b + k] / mass[b];
  for (size_t i = 0; i < ncam; ++i) {
    const size_t b = static_cast<size_t>(m.cam_bodyid[i]);
    const int t = m.cam_targetbodyid[i];
    const size_t cb = t >= 0 ? static_cast<size_t>(t) : b;
    Vec3<double> p;
    Mat3<double> r;
    sensor_detail::camera_fixed_pose(view, d0, static_cast<int>(i), &p, &r);
    double xpos[3], xmat[9];
    p.store(xpos), r.store(xmat);
    for (int k = 0; k < 3; ++k) {
      m.cam_pos0[3 * i + k] = xpos[k] - d0.xpos[3 * b + k];
      m.cam_poscom0[3 * i + k] = xpos[k] - com[3 * cb + k];
    }
    std::copy_n(xmat, 9, m.cam_mat0.begin() + static_cast<long>(9 * i));
  }
}

void MjcfCompiler::set_const() {
  camera_constants();
  // misc: body_gravcomp (optional) over every body, or none; MuJoCo skips gravity compensation and
  // fluid forces with the rest of mj_passive when both spring and damper are disabled
  if (!m.body_gravcomp.empty()) m.body_gravcomp.resize(static_cast<size_t>(m.nbody), 0.0);
  if (!m_flags.spring && !m_flags.damper) {
    m.body_gravcomp.clear();
    m.density = m.viscosity = 0;
  }
  auto is_ratio = [&](int u) {
    const double* gain = m.actuator_gainprm.data() + kNumGainPrm * u;
    const double* bias = m.actuator_biasprm.data() + kNumGainPrm * u;
    return gain[0] == -bias[1] && bias[2] > 0;
  };
  auto has_springdamper = [&](int j) {
    const double* sd = m_joints[static_cast<size_t>(j)].springdamper;
    return sd[0] > 0 && sd[1] > 0;
  };
  bool any = m.nu > 0;  // every actuator's acc0 (below)
  for (int j = 0; j < m.njnt; ++j) any = any || has_springdamper(j);
  if (!any) return;
  const HostModel<double> host(m);  // its dof_invweight0: the diagonal of M^-1 at qpos0
  // MuJoCo's AutoSpringDamper (user_model.cc, right after mj_setConst): a joint with springdamper
  // (timeconst tc, dampratio z, both positive) gets stiffness = I / (tc^2 z^2) and damping (each of
  // its dofs) = 2 I / tc, I = ndof / (sum of its dofs' dof_invweight0), as a standard solref's K and B.
  for (int j = 0; j < m.njnt; ++j) {
    if (!has_springdamper(j)) continue;
    const double tc = m_joints[static_cast<size_t>(j)].springdamper[0];
    const double z = m_joints[static_cast<size_t>(j)].springdamper[1];
    const int adr = m.jnt_dofadr[static_cast<size_t>(j)], ndof = joint_nv(m.jnt_type[static_cast<size_t>(j)]);
    double w = 0;
    for (int k = 0; k < ndof; ++k) w += host.view().dof_invweight0[adr + k];
    const double inertia = ndof / std::max(kMinVal, w);
    // (<flag spring/damper="disable"> keep them 0, as for every joint: MuJoCo applies no such force)
    if (m_flags.spring) m.jnt_stiffness[static_cast<size_t>(j)] = inertia / std::max(kMinVal, tc * tc * z * z);
    for (int k = 0; k < ndof && m_flags.damper; ++k)
      m.dof_damping[static_cast<size_t>(adr + k)] = 2 * inertia / std::max(kMinVal, tc);
  }
  // Tendon, site, slider-crank, ball and free joint transmissions: their moment rows at qpos0 and
  // M^-1 there (a body's row is 0 there: no contacts, no damping).
  const ModelView<double>& view = host.view();
  std::vector<double> row0(static_cast<size_t>(data_size(view)), 0.0), x(static_cast<size_t>(m.nv));
  const DataView<double> d0 = data_view(view, row0.data());
  reset_data(view, d0);
  position_stage(view, d0);
  m.actuator_acc0.assign(static_cast<size_t>(m.nu), 0.0);
  for (int u = 0; u < m.nu; ++u) {
    // actuator_acc0 = |M^-1 moment| (MuJoCo's set0), the acceleration a unit force gives at qpos0
    // (a muscle's force scale); w = moment M^-1 moment^T, the inverse inertia the actuator sees
    const int trn = m.actuator_trntype[static_cast<size_t>(u)], id = m.actuator_trnid[static_cast<size_t>(u)];
    const double gear = m.actuator_gear[static_cast<size_t>(u)];
    // a hinge or slide joint's moment is gear on its dof; any other transmission's is its moment row
    const bool joint_row = trn == kTrnJoint && !moment_transmission(view, u);
    for (int i = 0; i < m.nv; ++i)
      x[static_cast<size_t>(i)] = trn == kTrnTendon ? gear * d0.ten_J[id * m.nv + i]
                                  : joint_row       ? (i == m.jnt_dofadr[static_cast<size_t>(id)] ? gear : 0.0)
                                                    : d0.actuator_moment[u * m.nv + i];
    const std::vector<double> moment = x;
    solve_mass(view, d0, x.data());
    double w = 0, acc = 0;
    for (int i = 0; i < m.nv; ++i) {
      w += moment[static_cast<size_t>(i)] * x[static_cast<size_t>(i)];
      acc += x[static_cast<size_t>(i)] * x[static_cast<size_t>(i)];
    }
    m.actuator_acc0[static_cast<size_t>(u)] = std::sqrt(acc);
    if (!is_ratio(u)) continue;
    // (a joint's as before: its dof_invweight0 gear^2, MuJoCo 3.17's value to rounding)
    if (joint_row) w = view.dof_invweight0[m.jnt_dofadr[static_cast<size_t>(id)]] * gear * gear;
    const double mass = w > kMinVal ? 1.0 / w : 0.0;
    double* bias = m.actuator_biasprm.data() + kNumGainPrm * u;
    const double kp = m.actuator_gainprm[static_cast<size_t>(kNumGainPrm * u)];
    const double damping = bias[2] * 2 * std::sqrt(kp * mass);
    bias[2] = -damping;
    if (m.actuator_kind[static_cast<size_t>(u)] == kActPosition) m.actuator_kv[static_cast<size_t>(u)] = damping;
  }
}

}  // namespace rlt::mjcf_detail
