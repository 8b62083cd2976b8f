// MJCF compiler, the last step: constants MuJoCo's mj_setConst computes from the compiled model at
// qpos0 that change the model itself (sim/mjcf_compiler.h).
#include <cmath>

#include "sim/mjcf_compiler.h"
#include "sim/model_view.h"

namespace rlt::mjcf_detail {

// MuJoCo's mj_setConst (engine_setconst.c), the actuator part: a position-like actuator (gainprm[0] ==
// -biasprm[1]) whose biasprm[2] is positive holds a damping ratio (`dampratio`), turned here into
// the damping -biasprm[2] = dampratio * 2 * sqrt(kp * mass), mass the inertia the actuator sees at
// qpos0: 1 / (moment M^-1 moment^T), for a joint 1 / (gear^2 (M^-1)_dd) (measured on MuJoCo 3.17,
// whose value this is; later sources take the diagonal of M, dof_M0, instead).
void MjcfCompiler::set_const() {
  // misc: body_gravcomp (optional) over every body, or none; MuJoCo skips gravity compensation and
  // fluid forces with the rest of mj_passive when both spring and damper are disabled
  if (!m.body_gravcomp.empty()) m.body_gravcomp.resize(static_cast<size_t>(m.nbody), 0.0);
  if (!m_flags.spring && !m_flags.damper) {
    m.body_gravcomp.clear();
    m.density = m.viscosity = 0;
  }
  if ((m.density > 0 || m.viscosity > 0) && m.integrator == kIntImplicitFast)  // (options split over elements)
    throw MjcfError(m_file, 0, "option", "",
                    "fluid forces (density, viscosity) with integrator=\"implicitfast\" are not supported (their "
                    "velocity derivative is not modelled); use Euler or RK4");
  auto is_ratio = [&](int u) {
    const double* gain = m.actuator_gainprm.data() + 3 * u;
    const double* bias = m.actuator_biasprm.data() + 3 * u;
    return gain[0] == -bias[1] && bias[2] > 0;
  };
  bool any = false;
  for (int u = 0; u < m.nu; ++u) any = any || is_ratio(u);
  if (!any) return;
  const HostModel<double> host(m);  // its dof_invweight0: the diagonal of M^-1 at qpos0
  for (int u = 0; u < m.nu; ++u) {
    if (!is_ratio(u)) continue;
    const int dof = m.jnt_dofadr[static_cast<size_t>(m.actuator_trnid[static_cast<size_t>(u)])];
    const double trn2 = m.actuator_gear[static_cast<size_t>(u)] * m.actuator_gear[static_cast<size_t>(u)];
    const double w = host.view().dof_invweight0[dof] * trn2;
    const double mass = w > kMinVal ? 1.0 / w : 0.0;
    double* bias = m.actuator_biasprm.data() + 3 * u;
    const double kp = m.actuator_gainprm[static_cast<size_t>(3 * u)];
    const double damping = bias[2] * 2 * std::sqrt(kp * mass);
    bias[2] = -damping;
    if (m.actuator_kind[static_cast<size_t>(u)] == kActPosition) m.actuator_kv[static_cast<size_t>(u)] = damping;
  }
}

}  // namespace rlt::mjcf_detail
