// MuJoCo's noslip post-pass (sim/noslip.h) and joint springdamper (sim/mjcf_setconst.cpp):
// a physical property of noslip (it takes out the creep that the soft contacts' regularizer lets a
// resting box make down a slope its friction should hold, pyramidal and elliptic cones), its
// forces within the friction cones, and springdamper's compiled stiffness and damping against
// MuJoCo 3.17's (python: mujoco.MjModel.from_xml_path on tests/data/mjcf/misc/springdamper_chain.xml).
// The trajectories are compared with MuJoCo 3 by tools/mujoco_peer.py (ctest
// mujoco_peer_misc_noslip_*, mujoco_peer_misc_springdamper_chain).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "sim/mjcf.h"
#include "sim/model_view.h"
#include "sim/physics_step.h"
#include "tests/sim/mjcf_test_util.h"

namespace rlt {
namespace {

using testing_util::mjcf_data;
using testing_util::mjcf_error_of;

// A box resting on a plane, gravity tilted so that the slope is tan = 0.3 against friction 0.8:
// static friction holds it, so any motion along the plane is the soft contact's creep.
std::string slope_box(int noslip_iterations, const char* cone) {
  return "<mujoco><option timestep='0.002' gravity='2.9 0.5 -9.81' noslip_iterations='" +
         std::to_string(noslip_iterations) + "' cone='" + cone +
         "'/><worldbody><geom type='plane' size='5 5 .1' friction='0.8'/>"
         "<body pos='0 0 0.0495' euler='0 0 20'><freejoint/><geom type='box' size='0.1 0.08 0.05' mass='1'/></body>"
         "</worldbody></mujoco>";
}

struct SlopeRun {
  double slip;       // distance the box moved along the plane (m) over the run's second half
  double max_ratio;  // largest friction / (mu * normal) over the contacts of the last step
  bool forces_ok;    // every pyramid edge force >= 0
};

SlopeRun run_slope(int noslip_iterations, const char* cone, int steps) {
  const Model model = parse_mjcf(slope_box(noslip_iterations, cone), "slope.xml");
  HostModel<double> host(model);
  const ModelView<double>& m = host.view();
  std::vector<double> row(static_cast<size_t>(data_size(m)), 0.0);
  const DataView<double> d = data_view(m, row.data());
  reset_data(m, d);
  // the first half settles the box into the contact (a bounded displacement), the second measures
  // the creep
  for (int s = 0; s < steps / 2; ++s) physics_step(m, d, static_cast<const double*>(nullptr), 1, nullptr);
  const double x0 = d.qpos[0], y0 = d.qpos[1];
  for (int s = steps / 2; s < steps; ++s) physics_step(m, d, static_cast<const double*>(nullptr), 1, nullptr);
  SlopeRun out{std::hypot(d.qpos[0] - x0, d.qpos[1] - y0), 0.0, true};
  for (int c = 0; c < static_cast<int>(d.ncon[0]); ++c) {
    const double* con = d.contact + kContactStride * c;
    if (con[kConForce] <= 0) continue;
    const double ft = std::sqrt(con[kConFriction] * con[kConFriction] + con[kConFriction + 1] * con[kConFriction + 1] +
                                con[kConFriction + 2] * con[kConFriction + 2]);
    out.max_ratio = std::max(out.max_ratio, ft / (0.8 * con[kConForce]));
  }
  for (int r = 0; r < static_cast<int>(d.nefc[0]); ++r)
    if (std::string(cone) == "pyramidal" && d.efc[r * kEfcStride + kEfcForce] < -1e-12) out.forces_ok = false;
  return out;
}

// 1 s on the slope. Without noslip the box creeps (the soft contact's friction is a stiff
// spring-damper with regularization R, so it yields ~1e-4 m/s here); with MuJoCo's default noslip
// budget the friction rows are solved without R and the creep drops by orders of magnitude
// (measured: 7.7e-4 m -> 4.4e-8 m over 0.5 s pyramidal, 3.8e-4 -> 1.9e-8 elliptic).
TEST(Noslip, TakesOutTheCreepOnASlopePyramidal) {
  const SlopeRun soft = run_slope(0, "pyramidal", 500);
  const SlopeRun noslip = run_slope(10, "pyramidal", 500);
  EXPECT_GT(soft.slip, 1e-5) << "the soft contacts alone should creep";
  EXPECT_LT(noslip.slip, soft.slip * 1e-3) << "soft " << soft.slip << " noslip " << noslip.slip;
  EXPECT_TRUE(noslip.forces_ok);
  // the pyramid's friction stays inside its cone (the sum of each edge pair is kept)
  EXPECT_LE(noslip.max_ratio, 1.0 + 1e-9);
  EXPECT_GT(noslip.max_ratio, 0.1);  // friction is what holds the box
}

TEST(Noslip, TakesOutTheCreepOnASlopeElliptic) {
  const SlopeRun soft = run_slope(0, "elliptic", 500);
  const SlopeRun noslip = run_slope(10, "elliptic", 500);
  EXPECT_GT(soft.slip, 1e-5);
  EXPECT_LT(noslip.slip, soft.slip * 1e-3) << "soft " << soft.slip << " noslip " << noslip.slip;
  EXPECT_LE(noslip.max_ratio, 1.0 + 1e-9);  // |f_t| <= mu f_n: the ellipse
  EXPECT_GT(noslip.max_ratio, 0.1);
}

// A slope steeper than the friction (tan 1.2 > 0.8): noslip must not hold the box; it slides as
// far as with the soft contacts alone (the friction saturates at the cone in both).
TEST(Noslip, DoesNotHoldABoxTheFrictionCannot) {
  auto slide = [](int noslip_iterations) {
    std::string xml = slope_box(noslip_iterations, "pyramidal");
    xml.replace(xml.find("2.9 0.5 -9.81"), 13, "11.8 0 -9.81");
    const Model model = parse_mjcf(xml, "steep.xml");
    HostModel<double> host(model);
    const ModelView<double>& m = host.view();
    std::vector<double> row(static_cast<size_t>(data_size(m)), 0.0);
    const DataView<double> d = data_view(m, row.data());
    reset_data(m, d);
    for (int s = 0; s < 250; ++s) physics_step(m, d, static_cast<const double*>(nullptr), 1, nullptr);
    return d.qpos[0];
  };
  const double soft = slide(0), noslip = slide(10);
  EXPECT_GT(soft, 0.1);
  EXPECT_NEAR(noslip, soft, 0.05 * soft);
}

TEST(Noslip, ReadsItsOptionsAndRefusesNegative) {
  const Model m = parse_mjcf(
      "<mujoco><option noslip_iterations='4' noslip_tolerance='1e-7'/><worldbody/></mujoco>", "t.xml");
  EXPECT_EQ(m.noslip_iterations, 4);
  EXPECT_EQ(m.noslip_tolerance, 1e-7);
  EXPECT_NE(mjcf_error_of("<mujoco><option noslip_iterations='-1'/><worldbody/></mujoco>").find("noslip_iterations"),
            std::string::npos);
  EXPECT_NE(mjcf_error_of("<mujoco><option noslip_tolerance='-1'/><worldbody/></mujoco>").find("noslip_tolerance"),
            std::string::npos);
}

// MuJoCo 3.17's jnt_stiffness and dof_damping of springdamper_chain.xml (AutoSpringDamper): j2's
// own stiffness 7 and damping 3 are replaced; the ball's three dofs share one damping.
TEST(Springdamper, StiffnessAndDampingAsMuJoCo) {
  const Model m = load_mjcf(mjcf_data("misc/springdamper_chain.xml"));
  const double stiffness[5] = {725.7387295244, 1.7599274821035797, 474.1160904304453, 5.332158186797673,
                               8.344802295066373};
  const double damping[7] = {35.5611977466956,    1.5839347338932221,  23.231688431091822, 0.09597884736235812,
                             0.09597884736235812, 0.09597884736235812, 0.40889531245825234};
  ASSERT_EQ(m.njnt, 5);
  ASSERT_EQ(m.nv, 7);
  for (int j = 0; j < 5; ++j) EXPECT_NEAR(m.jnt_stiffness[j], stiffness[j], 1e-9 * stiffness[j]) << "joint " << j;
  for (int i = 0; i < 7; ++i) EXPECT_NEAR(m.dof_damping[i], damping[i], 1e-9 * damping[i]) << "dof " << i;
}

// The formula itself on a one-dof pendulum: I = 1 / (M^-1)_00 at qpos0, k = I / (tc z)^2, b = 2 I / tc.
TEST(Springdamper, FormulaOnAPendulum) {
  // point-like mass 2 at 0.5 m on a hinge, armature 0.1: I = 2 * 0.25 + 0.1 (+ the sphere's own 2/5 m r^2)
  const Model m = parse_mjcf(
      "<mujoco><worldbody><body><joint type='hinge' axis='0 1 0' armature='0.1' springdamper='0.1 0.5'/>"
      "<geom type='sphere' size='0.01' pos='0 0 -0.5' mass='2'/></body></worldbody></mujoco>",
      "p.xml");
  const double inertia = 2 * 0.25 + 0.4 * 2 * 0.01 * 0.01 + 0.1;
  EXPECT_NEAR(m.jnt_stiffness[0], inertia / (0.1 * 0.1 * 0.5 * 0.5), 1e-9);
  EXPECT_NEAR(m.dof_damping[0], 2 * inertia / 0.1, 1e-9);
}

// <flag spring="disable"> / damper="disable": no spring, no damper, springdamper or not.
TEST(Springdamper, FlagsDisableIt) {
  auto model = [](const std::string& flag) {
    return parse_mjcf("<mujoco><option>" + flag +
                          "</option><worldbody><body><joint type='hinge' springdamper='0.1 0.5'/>"
                          "<geom type='sphere' size='0.01' pos='0 0 -0.5' mass='2'/></body></worldbody></mujoco>",
                      "p.xml");
  };
  EXPECT_GT(model("").jnt_stiffness[0], 0);
  EXPECT_GT(model("").dof_damping[0], 0);
  EXPECT_EQ(model("<flag spring='disable'/>").jnt_stiffness[0], 0);
  EXPECT_GT(model("<flag spring='disable'/>").dof_damping[0], 0);
  EXPECT_EQ(model("<flag damper='disable'/>").dof_damping[0], 0);
  EXPECT_GT(model("<flag damper='disable'/>").jnt_stiffness[0], 0);
}

TEST(Springdamper, RefusesNonPositive) {
  const std::string head = "<mujoco><worldbody><body><joint springdamper='";
  const std::string tail = "'/><geom size='.1'/></body></worldbody></mujoco>";
  EXPECT_NE(mjcf_error_of(head + "0 1" + tail).find("springdamper"), std::string::npos);
  EXPECT_NE(mjcf_error_of(head + "0.1 -1" + tail).find("springdamper"), std::string::npos);
  EXPECT_EQ(mjcf_error_of(head + "0 0" + tail), "");  // 0 0: off
}

}  // namespace
}  // namespace rlt
