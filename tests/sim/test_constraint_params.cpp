// MuJoCo's constraint parameters from MJCF (sim/mjcf_constraints.cpp, sim/constraints.h): the
// compiled values, and physical properties: dry friction (frictionloss) holds a joint under a
// torque below it and gives way above it; a limit acts from its margin; actuatorfrcrange clamps
// the force at the joint; per-geom solref makes a contact softer, mixed by solmix; the geom of
// higher priority gives the pair its friction; the <flag>s switch their part off; what is
// not supported is refused. Trajectories against MuJoCo 3: tools/mujoco_peer.py on
// tests/data/mjcf/constraints_*.xml (ctest mujoco_peer_constraints_*).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "sim/constraints.h"
#include "sim/mjcf.h"
#include "sim/physics_step.h"
#include "tests/sim/test_dynamics_util.h"

namespace rlt {
namespace {

std::string data(const std::string& name) { return std::string(RLT_SOURCE_DIR) + "/tests/data/mjcf/" + name; }

// A horizontal arm on a vertical hinge (no gravity torque) driven by a motor with torque `tau`.
Model hinge_arm(const std::string& joint_attrs, const std::string& option = "") {
  return parse_mjcf("<mujoco><option timestep='0.002'>" + option +
                        "</option><worldbody><body>"
                        "<joint name='j' type='hinge' axis='0 0 1' " +
                        joint_attrs +
                        "/>"
                        "<geom type='capsule' fromto='0 0 0 0.5 0 0' size='0.05' mass='1' contype='0' conaffinity='0'/>"
                        "</body></worldbody><actuator><motor joint='j'/></actuator></mujoco>",
                    "hinge_arm.xml");
}

double spin(const Model& model, double tau, int steps) {
  test::Sim<double> env(model);
  for (int s = 0; s < steps; ++s) physics_step(env.m(), env.d, &tau, 1, nullptr);
  return env.d.qpos[0];
}

TEST(ConstraintParams, CompiledValues) {
  const Model m = load_mjcf(data("constraints_joints.xml"));
  ASSERT_EQ(m.njnt, 3);
  EXPECT_DOUBLE_EQ(m.dof_frictionloss[0], 0.3);
  EXPECT_DOUBLE_EQ(m.dof_frictionloss[2], 2);
  EXPECT_DOUBLE_EQ(m.jnt_margin[0], 0.05);  // not converted from degrees (as MuJoCo)
  EXPECT_DOUBLE_EQ(m.jnt_solref[0], 0.05);
  EXPECT_DOUBLE_EQ(m.jnt_solimp[4], 3);
  EXPECT_DOUBLE_EQ(m.jnt_solref[4], -5000);
  EXPECT_DOUBLE_EQ(m.dof_solref[2], 0.03);
  EXPECT_DOUBLE_EQ(m.dof_solimp[5 + 3], 0.5);  // solimp with 3 numbers keeps the default midpoint
  EXPECT_EQ(m.jnt_actfrclimited[1], 1);
  EXPECT_DOUBLE_EQ(m.jnt_actfrcrange[3], 0.6);
  const Model c = load_mjcf(data("constraints_contacts.xml"));
  EXPECT_DOUBLE_EQ(c.impratio, 3);
  EXPECT_DOUBLE_EQ(c.geom_solref[0], 0.01);  // the ground: the main class
  EXPECT_DOUBLE_EQ(c.geom_solref[2], 0.05);  // the soft box: its class
  EXPECT_DOUBLE_EQ(c.geom_solimp[5 + 2], 0.01);
  EXPECT_DOUBLE_EQ(c.geom_solimp[5 + 4], 3);  // the rest inherited from main
  EXPECT_DOUBLE_EQ(c.geom_solmix[1], 3);
  EXPECT_EQ(c.geom_priority[2], 1);
  EXPECT_DOUBLE_EQ(c.geom_gap[3], 0.01);
}

TEST(ConstraintParams, FrictionLossHoldsBelowAndGivesWayAbove) {
  const Model m = hinge_arm("frictionloss='0.5'");
  // Held: a soft constraint creeps a little, 4.65e-3 rad in 1 s (MuJoCo 3.17: 0.004650840879)
  EXPECT_NEAR(spin(m, 0.4, 500), 0.004650840879375618, 1e-8);
  EXPECT_NEAR(spin(m, 0.8, 500), 1.6698635732374856, 1e-6);  // slips (MuJoCo 3.17: 1.66986357)
  const double free_turn = spin(hinge_arm(""), 0.8, 500);
  EXPECT_LT(spin(m, 0.8, 500), free_turn);  // slower than without friction
  // <flag frictionloss="disable"/> turns it off.
  EXPECT_NEAR(spin(hinge_arm("frictionloss='0.5'", "<flag frictionloss='disable'/>"), 0.8, 500), free_turn, 1e-12);
}

TEST(ConstraintParams, FloatFollowsDoubleWithFrictionLossAndLimits) {
  // The CUDA executor steps in float: the same rows, within float's precision.
  const Model m = load_mjcf(data("constraints_joints.xml"));
  test::Sim<double> a(m);
  test::Sim<float> b(m);
  const double ctrl[3] = {0.7, -0.9, 0.5};
  const float ctrlf[3] = {0.7f, -0.9f, 0.5f};
  for (int s = 0; s < 300; ++s) {
    physics_step(a.m(), a.d, ctrl, 1, nullptr);
    physics_step(b.m(), b.d, ctrlf, 1, nullptr);
  }
  for (int i = 0; i < m.nq; ++i) EXPECT_NEAR(b.d.qpos[i], a.d.qpos[i], 2e-3) << "qpos " << i;
}

TEST(ConstraintParams, ActuatorForceRangeClampsAtTheJoint) {
  const double clamped = spin(hinge_arm("actuatorfrclimited='true' actuatorfrcrange='-0.2 0.2'"), 5, 300);
  const double reference = spin(hinge_arm(""), 0.2, 300);
  EXPECT_NEAR(clamped, reference, 1e-12);
}

TEST(ConstraintParams, LimitActsFromItsMargin) {
  // Spun toward its limit at 30 degrees: with a 0.2 rad margin it stops that much earlier.
  const double plain = spin(hinge_arm("limited='true' range='-30 30'"), 0.3, 1500);
  const double early = spin(hinge_arm("limited='true' range='-30 30' margin='0.2'"), 0.3, 1500);
  EXPECT_NEAR(plain, 30 * M_PI / 180, 0.02);
  EXPECT_NEAR(early, 30 * M_PI / 180 - 0.2, 0.02);
  // A stiffer solreflimit lets it press in less.
  const double stiff = spin(hinge_arm("limited='true' range='-30 30' solreflimit='0.005 1'"), 0.3, 1500);
  EXPECT_LT(stiff - 30 * M_PI / 180, plain - 30 * M_PI / 180);
  // <flag limit="disable"/>: no limit.
  EXPECT_GT(spin(hinge_arm("limited='true' range='-30 30'", "<flag limit='disable'/>"), 0.3, 1500), 1.0);
}

// A 1 kg ball resting on the floor: its steady height with the given geom attributes.
double rest_height(const std::string& ball_attrs, const std::string& floor_attrs = "") {
  test::Sim<double> env(parse_mjcf("<mujoco><worldbody><geom type='plane' size='5 5 0.1' " + floor_attrs +
                                       "/><body pos='0 0 0.1'><freejoint/><geom type='sphere' size='0.1' mass='1' " +
                                       ball_attrs + "/></body></worldbody></mujoco>",
                                   "ball.xml"));
  for (int s = 0; s < 2000; ++s) physics_step(env.m(), env.d, static_cast<const double*>(nullptr), 1, nullptr);
  return env.d.qpos[2];
}

TEST(ConstraintParams, GeomSolrefGapAndMixing) {
  // Rest heights, each as MuJoCo 3.17 has them (2000 steps from 0.1 m).
  const double plain = rest_height("");
  EXPECT_NEAR(plain, 0.09963281815760042, 1e-9);
  // Equal priority, solmix 1 each: the mean of the floor's 0.02 and the ball's 0.1 timeconst.
  EXPECT_NEAR(rest_height("solref='0.1 1'"), 0.09823419999782236, 1e-9);
  // The floor's solmix 0 leaves the ball's own solref; so does the same solref on both.
  EXPECT_NEAR(rest_height("solref='0.1 1'", "solmix='0'"), 0.09509500000082276, 1e-9);
  EXPECT_NEAR(rest_height("solref='0.1 1'", "solref='0.1 1'"), 0.09509500000082276, 1e-9);
  // The floor of higher priority gives its own (default) solref.
  EXPECT_NEAR(rest_height("solref='0.1 1'", "priority='1'"), plain, 1e-9);
  // The margin lifts it; MuJoCo 3's gap only lists contacts beyond the margin, without force.
  EXPECT_NEAR(rest_height("margin='0.02'"), 0.1196328181575922, 1e-9);
  EXPECT_NEAR(rest_height("margin='0.02' gap='0.02'"), 0.1196328181575922, 1e-9);
}

TEST(ConstraintParams, PriorityGivesFriction) {
  // A box sliding at 2 m/s: the floor's friction 0.2 at higher priority wins over the box's 1.
  auto slide = [](const std::string& floor) {
    test::Sim<double> env(parse_mjcf("<mujoco><worldbody><geom type='plane' size='50 50 0.1' " + floor +
                                         "/><body pos='0 0 0.1'><freejoint/><geom type='box' size='0.1 0.1 0.1' "
                                         "mass='1'/></body></worldbody></mujoco>",
                                     "slide.xml"));
    env.d.qvel[0] = 2;
    for (int s = 0; s < 2000; ++s) physics_step(env.m(), env.d, static_cast<const double*>(nullptr), 1, nullptr);
    return env.d.qpos[0];
  };
  EXPECT_NEAR(slide("friction='0.2' priority='1'"), 4.0 / (2 * 0.2 * 9.81), 0.05);
  EXPECT_NEAR(slide("friction='0.2'"), 4.0 / (2 * 1.0 * 9.81), 0.05);  // equal priority: the larger
}

TEST(ConstraintParams, FlagsSwitchTheirPartOff) {
  EXPECT_NEAR(rest_height("", "") - rest_height(""), 0, 1e-12);
  const Model m = load_mjcf(data("constraints_flags.xml"));
  EXPECT_EQ(m.gravity[2], 0);
  EXPECT_EQ(m.jnt_limited[0], 0);
  EXPECT_EQ(m.dof_damping[0], 0);
  EXPECT_FALSE(m.refsafe);
  const Model nc = parse_mjcf(
      "<mujoco><option><flag contact='disable'/></option><worldbody><geom type='plane' "
      "size='1 1 1'/><body><freejoint/><geom size='0.1'/></body></worldbody></mujoco>",
      "nocontact.xml");
  EXPECT_EQ(nc.geom_contype[0] | nc.geom_conaffinity[1], 0);
  // The disable flags the dynamics read (peer tests tests/data/mjcf/flags/): off only when disabled.
  const Model on = parse_mjcf("<mujoco><worldbody/></mujoco>", "on.xml");
  EXPECT_TRUE(on.actuation && on.clampctrl && on.filterparent && on.sensor);
  const Model off = parse_mjcf(
      "<mujoco><option><flag actuation='disable' clampctrl='disable' filterparent='disable' sensor='disable'/>"
      "</option><worldbody/></mujoco>",
      "off.xml");
  EXPECT_FALSE(off.actuation || off.clampctrl || off.filterparent || off.sensor);
  const HostModel<double> hv(off);
  EXPECT_EQ(hv.view().disable_actuation + hv.view().disable_clampctrl + hv.view().disable_filterparent +
                hv.view().disable_sensor,
            4);
}

void expect_refused(const std::string& xml, const std::string& what) {
  try {
    parse_mjcf(xml, "refused.xml");
    ADD_FAILURE() << "accepted: " << xml;
  } catch (const MjcfError& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(ConstraintParams, UnsupportedIsRefused) {
  const std::string body = "<worldbody><geom size='1'/></worldbody></mujoco>";
  expect_refused("<mujoco><option noslip_iterations='-3'/>" + body, "noslip_iterations");  // (3 runs noslip, sim/noslip.h)
  expect_refused("<mujoco><option viscosity='-0.1'/>" + body, "viscosity");
  expect_refused("<mujoco><option><flag sleep='enable'/></option>" + body, "flag \"sleep\"");
  expect_refused("<mujoco><option><flag override='enable'/></option>" + body, "flag \"override\"");
  // MuJoCo's libccd path and its single contacts without multiccd are not modelled (sim/multiccd.h)
  expect_refused("<mujoco><option><flag nativeccd='disable'/></option>" + body, "flag \"nativeccd\"=\"disable\"");
  expect_refused("<mujoco><option><flag multiccd='disable'/></option>" + body, "flag \"multiccd\"=\"disable\"");
  parse_mjcf("<mujoco><option><flag nativeccd='enable' multiccd='enable'/></option>" + body, "ccd_flags.xml");
  expect_refused("<mujoco><option solver='Jacobi'/>" + body, "not one of");
  // Without autolimits a range needs its limited flag (with MuJoCo 3's default autolimits it is implied).
  expect_refused(
      "<mujoco><compiler autolimits='false'/><worldbody><body><joint actuatorfrcrange='-1 1'/>"
      "<geom size='1'/></body></worldbody></mujoco>",
      "actuatorfrclimited");
  parse_mjcf("<mujoco><worldbody><body><joint actuatorfrcrange='-1 1'/><geom size='1'/></body></worldbody></mujoco>",
             "autolimits.xml");
  // accepted: the solver options MuJoCo's files carry
  parse_mjcf(
      "<mujoco><option solver='PGS' iterations='100' tolerance='1e-8' ls_iterations='10' "
      "ls_tolerance='0.01' noslip_iterations='0' jacobian='sparse'><flag warmstart='disable' "
      "energy='enable' equality='disable'/></option>" +
          body,
      "accepted.xml");
  // friction cones (sim/constraints.h)
  EXPECT_EQ(parse_mjcf("<mujoco><option cone='elliptic'/>" + body, "cone.xml").cone, kConeElliptic);
  EXPECT_EQ(parse_mjcf("<mujoco><option cone='pyramidal'/>" + body, "cone.xml").cone, kConePyramidal);
  EXPECT_EQ(parse_mjcf("<mujoco>" + body, "cone.xml").cone, kConePyramidal);
  expect_refused("<mujoco><option cone='round'/>" + body, "not one of");
}

}  // namespace
}  // namespace rlt

namespace rlt {
namespace {

TEST(ConstraintParams, ExcludeRemovesContacts) {
  const Model m = load_mjcf(data("constraints_exclude.xml"));
  test::Sim<double> env(m);
  for (int s = 0; s < 1000; ++s) physics_step(env.m(), env.d, static_cast<const double*>(nullptr), 1, nullptr);
  EXPECT_NEAR(env.d.qpos[2], 0.1, 2e-3);             // the box fell through the shelf to the floor
  EXPECT_NEAR(env.d.qpos[7 + 2], 0.32 + 0.1, 2e-3);  // the ball rests on the shelf
  expect_refused(
      "<mujoco><worldbody><body name='a'><geom size='1'/></body></worldbody><contact><exclude "
      "body1='a' body2='b'/></contact></mujoco>",
      "unknown body \"b\"");
  expect_refused(
      "<mujoco><worldbody><geom name='a' size='1'/><geom name='b' size='1'/></worldbody><contact><pair "
      "geom1='a' geom2='c'/></contact></mujoco>",
      "unknown geom \"c\"");  // pairs: tests/sim/test_mjcf_misc.cpp
}

}  // namespace
}  // namespace rlt

namespace rlt {
namespace {

TEST(ConstraintParams, JointEqualityCouplesTwoHinges) {
  const Model m = load_mjcf(data("constraints_equality.xml"));
  ASSERT_EQ(m.neq, 3);
  EXPECT_EQ(m.eq_type[0], kEqJoint);
  EXPECT_EQ(m.eq_active[2], 0);
  EXPECT_DOUBLE_EQ(m.eq_data[11 + 1], 1);
  EXPECT_DOUBLE_EQ(parse_mjcf("<mujoco><worldbody><body><joint name='a'/><geom size='1'/></body></worldbody>"
                              "<equality><joint joint1='a' polycoef='0.2'/></equality></mujoco>",
                              "p.xml")
                       .eq_data[1],
                   1);  // fewer than 5 numbers (MuJoCo 3): the default slope 1 kept
  test::Sim<double> env(m);
  const double ctrl[2] = {0.5, 0};
  for (int s = 0; s < 2000; ++s) physics_step(env.m(), env.d, ctrl, 1, nullptr);
  // c1 - 0 = 0.1 - 0.5 x + 0.3 x^2 + 0.2 x^3 with x = c2 - c2_ref: held to the soft constraint's mm
  const double x = env.d.qpos[1] - m.qpos0[1];
  EXPECT_NEAR(env.d.qpos[0], 0.1 - 0.5 * x + 0.3 * x * x + 0.2 * x * x * x, 2e-2);
  EXPECT_NEAR(env.d.qpos[2], 0.05, 1e-2);  // the slider held at 0.05 against gravity
  expect_refused(
      "<mujoco><worldbody><body name='a'><joint/><geom size='1'/></body></worldbody><equality><flex "
      "flex='a'/></equality></mujoco>",
      "\"flex\" is not supported yet");
}

}  // namespace
}  // namespace rlt
