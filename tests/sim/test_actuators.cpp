// Actuator dynamics and integrators (sim/actuators.h, sim/physics_step.h): physical properties of
// MuJoCo 3's actuator types and of its Euler, RK4 and implicitfast integrators, on small MJCF models.
// (Trajectories against MuJoCo itself: the mujoco_peer_act_* ctest tests.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/mjcf.h"
#include "sim/physics_step.h"
#include "tests/sim/mjcf_test_util.h"
#include "tests/sim/test_dynamics_util.h"

namespace rlt {
namespace {
using test::Sim;

// A pendulum: one hinge about y, a 1 kg point-like sphere 0.5 m below it (no contacts), and the
// given option and actuator elements.
std::string pendulum(const std::string& option, const std::string& actuators, const std::string& joint_attrs = "") {
  return "<mujoco><compiler autolimits=\"true\"/><option " + option +
         "/><worldbody><body pos=\"0 0 1\"><joint name=\"j\" type=\"hinge\" axis=\"0 1 0\" " + joint_attrs +
         "/><geom type=\"sphere\" size=\"0.05\" pos=\"0 0 -0.5\" mass=\"1\" contype=\"0\" conaffinity=\"0\"/>"
         "</body></worldbody><actuator>" +
         actuators + "</actuator></mujoco>";
}

void run(Sim<double>& s, const std::vector<double>& ctrl, int steps) {
  for (int k = 0; k < steps; ++k) physics_step(s.m(), s.d, ctrl.empty() ? nullptr : ctrl.data(), 1, nullptr);
}

TEST(Actuators, PositionServoSettlesAtItsTarget) {
  for (const char* integrator : {"Euler", "RK4", "implicitfast"}) {
    const Model model = parse_mjcf(pendulum("gravity=\"0 0 0\" integrator=\"" + std::string(integrator) + "\"",
                                            "<position joint=\"j\" kp=\"20\" kv=\"4\" ctrlrange=\"-1 1\"/>"),
                                   "servo.xml");
    Sim<double> s(model);
    run(s, {0.5}, 3000);  // 6 s, time constants ~0.1 s
    EXPECT_NEAR(s.d.qpos[0], 0.5, 1e-6) << integrator;
    EXPECT_NEAR(s.d.qvel[0], 0.0, 1e-6) << integrator;
    // ctrl is clamped to ctrlrange: a target of 3 goes to 1.
    run(s, {3.0}, 3000);
    EXPECT_NEAR(s.d.qpos[0], 1.0, 1e-6) << integrator;
  }
}

TEST(Actuators, FilterFollowsExponential) {
  const double tau = 0.1, h = 0.002;
  for (const char* dyn : {"filter", "filterexact"}) {
    const Model model = parse_mjcf(pendulum("gravity=\"0 0 0\"", "<general joint=\"j\" dyntype=\"" + std::string(dyn) +
                                                                     "\" dynprm=\"0.1\" gainprm=\"0\"/>"),
                                   "filter.xml");
    Sim<double> s(model);
    double worst = 0;
    for (int n = 1; n <= 500; ++n) {
      run(s, {1.0}, 1);
      const double exact = 1 - std::exp(-n * h / tau);
      worst = std::max(worst, std::abs(s.d.act[0] - exact));
      if (std::string(dyn) == "filter") {
        ASSERT_NEAR(s.d.act[0], 1 - std::pow(1 - h / tau, n), 1e-12);  // forward Euler of act' = (u - act) / tau
      }
    }
    if (std::string(dyn) == "filterexact") {
      EXPECT_LT(worst, 1e-12);
    } else {
      EXPECT_LT(worst, 0.5 * h / tau);  // first order in h / tau
    }
  }
}

TEST(Actuators, IntVelocityIntegratesCtrlWithinActrange) {
  const Model model =
      parse_mjcf(pendulum("gravity=\"0 0 0\"",
                          "<intvelocity joint=\"j\" kp=\"50\" kv=\"5\" actrange=\"-0.3 0.3\" ctrlrange=\"-1 1\"/>"),
                 "intvelocity.xml");
  Sim<double> s(model);
  run(s, {0.5}, 100);  // act = 0.5 * 0.2 s
  EXPECT_NEAR(s.d.act[0], 0.1, 1e-12);
  run(s, {0.5}, 1000);  // clamped at actrange[1]; the joint follows it
  EXPECT_DOUBLE_EQ(s.d.act[0], 0.3);
  EXPECT_NEAR(s.d.qpos[0], 0.3, 1e-4);
}

TEST(Actuators, DamperForceIsMinusKvCtrlVelocity) {
  const Model model =
      parse_mjcf(pendulum("gravity=\"0 0 0\"", "<damper joint=\"j\" kv=\"2\" ctrlrange=\"0 1\"/>"), "damper.xml");
  Sim<double> s(model);
  s.d.qvel[0] = 3;
  const std::vector<double> ctrl{0.25};
  actuator_forces(s.m(), s.d, ctrl.data());
  EXPECT_DOUBLE_EQ(s.d.actuator_force[0], -2 * 0.25 * 3);
}

// Total energy of an undamped pendulum swinging from 1 rad for 10 s at h = 0.01: RK4 keeps it far
// better than (semi-implicit) Euler.
TEST(Integrators, Rk4EnergyDriftBelowEuler) {
  double drift[2];
  int i = 0;
  for (const char* integrator : {"Euler", "RK4"}) {
    const Model model =
        parse_mjcf(pendulum("timestep=\"0.01\" integrator=\"" + std::string(integrator) + "\"", ""), "pendulum.xml");
    Sim<double> s(model);
    s.d.qpos[0] = 1.0;
    auto energy = [&] {
      smooth_forces(s.m(), s.d);
      return kinetic_energy(s.m(), s.d) + potential_energy(s.m(), s.d);
    };
    const double e0 = energy();
    double worst = 0;
    for (int k = 0; k < 1000; ++k) {
      run(s, {}, 1);
      worst = std::max(worst, std::abs(energy() - e0));
    }
    drift[i++] = worst;
  }
  EXPECT_LT(drift[1], 1e-3 * drift[0]) << "Euler " << drift[0] << ", RK4 " << drift[1];
}

// A stiff velocity servo (kv h / I = 40) on the pendulum: explicit Euler diverges, implicitfast
// (M - h dforce/dqvel) stays bounded and settles.
TEST(Integrators, ImplicitFastStableUnderStiffVelocityServo) {
  for (const char* integrator : {"Euler", "implicitfast"}) {
    const Model model =
        parse_mjcf(pendulum("timestep=\"0.01\" gravity=\"0 0 0\" integrator=\"" + std::string(integrator) + "\"",
                            "<velocity joint=\"j\" kv=\"1000\" ctrlrange=\"-1 1\"/>"),
                   "stiff.xml");
    Sim<double> s(model);
    run(s, {0.5}, 200);
    if (std::string(integrator) == "Euler") {
      EXPECT_FALSE(std::abs(s.d.qvel[0]) < 10) << "expected explicit Euler to diverge";
    } else {
      EXPECT_NEAR(s.d.qvel[0], 0.5, 1e-9);
    }
  }
}

TEST(MjcfActuators, RefusesWhatIsNotModelled) {
  auto refuses = [](const std::string& act, const char* what) {
    try {
      parse_mjcf(pendulum("", act), "bad.xml");
      ADD_FAILURE() << "accepted " << act;
    } catch (const MjcfError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refuses("<general joint=\"j\" dyntype=\"user\"/>", "dyntype");
  refuses("<general joint=\"j\" dynprm=\"1 0 0 2\"/>", "first 3 parameters");
  refuses("<position joint=\"j\" kv=\"1\" dampratio=\"1\"/>", "kv and dampratio cannot both be defined");
  refuses("<motor tendon=\"t\"/>", "unknown tendon \"t\"");
  refuses("<position joint=\"j\" inheritrange=\"1\"/>", "no range");
  // transmissions (sim/transmission.h): MuJoCo's rules and its schema's
  const std::string site =
      "<mujoco><worldbody><site name=\"w\"/><body><joint name=\"j\" axis=\"0 1 0\"/>"
      "<geom size=\".1\" mass=\"1\"/><site name=\"s\" pos=\".1 0 0\"/></body></worldbody>"
      "<actuator>";
  auto refuses_site = [&](const std::string& act, const char* what, const std::string& option = "") {
    try {
      parse_mjcf("<mujoco><option " + option + "/>" + site.substr(8) + act + "</actuator></mujoco>", "bad.xml");
      ADD_FAILURE() << "accepted " << act;
    } catch (const MjcfError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refuses_site("<motor body=\"world\"/>", "attribute \"body\" is not allowed on motor");
  refuses_site("<adhesion joint=\"j\"/>", "attribute \"joint\" is not allowed on adhesion");
  refuses_site("<adhesion body=\"nowhere\"/>", "unknown body \"nowhere\"");
  refuses_site("<adhesion body=\"world\" gain=\"-1\"/>", "adhesion gain cannot be negative");
  refuses_site("<adhesion body=\"world\" ctrlrange=\"-1 1\"/>", "adhesion control range cannot be negative");
  refuses_site("<adhesion body=\"world\" gear=\"2\"/>", "gear");  // (not in MuJoCo's adhesion schema)
  refuses_site("<adhesion body=\"world\" ctrllimited=\"false\"/>", "ctrllimited");
  try {
    parse_mjcf(
        "<mujoco><worldbody><body name=\"b\"><freejoint/><geom size=\"0.1\" gap=\"0.01\"/></body>"
        "</worldbody><actuator><adhesion body=\"b\"/></actuator></mujoco>",
        "bad.xml");
    ADD_FAILURE() << "accepted a body transmission with a gap";
  } catch (const MjcfError& e) {
    EXPECT_NE(std::string(e.what()).find("contact gap"), std::string::npos) << e.what();
  }
  refuses_site("<motor joint=\"j\" site=\"s\"/>", "give one of \"joint\" and \"site\"");
  refuses_site("<motor joint=\"j\" refsite=\"w\"/>", "refsite can only be used with site transmission");
  refuses_site("<motor site=\"s\" slidersite=\"w\"/>", "slidersite can only be used in slidercrank");
  refuses_site("<motor site=\"s\" cranklength=\"1\"/>", "slidersite can only be used in slidercrank");
  refuses_site("<motor cranksite=\"s\" cranklength=\"1\"/>", "missing base site for slider-crank");
  refuses_site("<motor cranksite=\"s\" slidersite=\"w\"/>", "crank length must be positive");
  refuses_site("<motor site=\"nowhere\"/>", "unknown site \"nowhere\"");
  refuses_site("<motor site=\"s\" refsite=\"nowhere\"/>", "unknown reference site \"nowhere\"");
  refuses_site("<position site=\"s\" inheritrange=\"1\"/>", "inheritrange can only be used with joint and tendon");
  refuses_site("<motor/>", "a transmission target is required");
  // every MuJoCo integrator is taken (implicit: sim/physics_step.h implicit_acceleration), a misspelt one refused
  EXPECT_EQ(parse_mjcf(pendulum("integrator=\"implicit\"", ""), "ok.xml").integrator, kIntImplicit);
  try {
    parse_mjcf(pendulum("integrator=\"implict\"", ""), "bad.xml");
    ADD_FAILURE() << "accepted implict";
  } catch (const MjcfError& e) {
    EXPECT_NE(std::string(e.what()).find("is not one of Euler, RK4, implicitfast, implicit"), std::string::npos)
        << e.what();
  }
}

// ---- site and slider-crank transmissions (sim/transmission.h) ------------------------------------

// An arm in 3D: yaw, shoulder and elbow hinges and a slide along the forearm, a grip site turned
// against its body, a tilted world site, a slider site on the shoulder link, joint damping; the given
// actuators.
std::string arm(const std::string& actuators) {
  return "<mujoco><option gravity=\"0 0 0\"/><default><geom contype=\"0\" conaffinity=\"0\"/><joint "
         "damping=\"0.2\"/></default><worldbody>"
         "<site name=\"ref\" pos=\"0.2 -0.1 1.1\" quat=\"0.9 0.1 -0.3 0.2\"/>"
         "<body pos=\"0 0 1\"><joint name=\"yaw\" axis=\"0 0 1\"/><geom size=\"0.05\" mass=\"1\"/>"
         "<body pos=\"0 0 0.05\"><joint name=\"shoulder\" axis=\"0 1 0\"/>"
         "<geom type=\"capsule\" fromto=\"0 0 0 0.3 0 0\" size=\"0.03\" mass=\"0.8\"/>"
         "<site name=\"slider\" pos=\"0.1 0.02 0.03\" zaxis=\"1 0.2 -0.1\"/>"
         "<body pos=\"0.3 0 0\"><joint name=\"elbow\" axis=\"0 1 0\"/>"
         "<geom type=\"capsule\" fromto=\"0 0 0 0.25 0 0\" size=\"0.025\" mass=\"0.5\"/>"
         "<body pos=\"0.25 0 0\"><joint name=\"ext\" type=\"slide\" axis=\"1 0 0\"/><geom size=\"0.03\" mass=\"0.2\"/>"
         "<site name=\"grip\" pos=\"0.05 0.01 -0.02\" quat=\"0.7 0.5 0.2 0.1\"/>"
         "</body></body></body></body></worldbody><actuator>" +
         actuators + "</actuator></mujoco>";
}

// Positions and transmissions at qpos (hinges and a slide: qpos and qvel share coordinates).
void transmission_at(Sim<double>& s, const std::vector<double>& qpos) {
  for (int i = 0; i < s.nq(); ++i) s.d.qpos[i] = qpos[static_cast<size_t>(i)];
  kinematics(s.m(), s.d);
  com_position(s.m(), s.d);
  transmission_kinematics(s.m(), s.d);
}

// Where MuJoCo's moment is the exact derivative of its length (translation relative to a refsite
// that does not turn, a slider-crank whose rod reaches), it matches central differences of the length.
TEST(Transmissions, MomentIsTheGradientOfTheLength) {
  const Model model =
      parse_mjcf(arm("<motor site=\"grip\" refsite=\"ref\" gear=\"0.4 -1 0.7 0 0 0\"/>"
                     "<motor cranksite=\"grip\" slidersite=\"slider\" cranklength=\"0.6\" gear=\"1.5\"/>"),
                 "arm.xml");
  Sim<double> s(model);
  ASSERT_EQ(s.m().nmoment, 2);
  const std::vector<double> q = {0.3, -0.4, 0.7, 0.05};
  transmission_at(s, q);
  const std::vector<double> moment = s.get(s.d.actuator_moment, 2 * s.nv());
  const double h = 1e-6;
  for (int a = 0; a < 2; ++a) {
    for (int i = 0; i < s.nv(); ++i) {
      std::vector<double> qp = q, qm = q;
      qp[static_cast<size_t>(i)] += h, qm[static_cast<size_t>(i)] -= h;
      transmission_at(s, qp);
      const double lp = s.d.actuator_length[a];
      transmission_at(s, qm);
      const double lm = s.d.actuator_length[a];
      EXPECT_NEAR(moment[static_cast<size_t>(a * s.nv() + i)], (lp - lm) / (2 * h), 1e-8) << a << " dof " << i;
    }
  }
}

// Without a refsite the moment is the site's Jacobian projected on the gear's wrench in the site's
// frame: moment . qvel = gear . (site velocity, angular velocity), both in the site's frame
// (central differences of site_xpos and site_xmat along qvel); the length is 0.
TEST(Transmissions, SiteMomentIsTheWrenchInTheSiteFrame) {
  const double gear[6] = {0.5, -0.2, 1, 0.1, 0.3, -0.2};
  const Model model = parse_mjcf(arm("<motor site=\"grip\" gear=\"0.5 -0.2 1 0.1 0.3 -0.2\"/>"), "arm.xml");
  Sim<double> s(model);
  const std::vector<double> q = {0.3, -0.4, 0.7, 0.05}, qvel = {0.8, -0.5, 1.1, 0.3};
  transmission_at(s, q);
  EXPECT_EQ(s.d.actuator_length[0], 0.0);
  for (int i = 0; i < s.nv(); ++i) s.d.qvel[i] = qvel[static_cast<size_t>(i)];
  const double velocity = moment_velocity(s.m(), s.d, 0);
  const std::vector<double> R = s.get(s.d.site_xmat + 9 * 2, 9);  // grip is site 2
  const double h = 1e-6;
  std::vector<double> qp = q, qm = q;
  for (int i = 0; i < s.nv(); ++i) qp[static_cast<size_t>(i)] += h * qvel[static_cast<size_t>(i)];
  for (int i = 0; i < s.nv(); ++i) qm[static_cast<size_t>(i)] -= h * qvel[static_cast<size_t>(i)];
  transmission_at(s, qp);
  const std::vector<double> pp = s.get(s.d.site_xpos + 6, 3), Rp = s.get(s.d.site_xmat + 18, 9);
  transmission_at(s, qm);
  const std::vector<double> pm = s.get(s.d.site_xpos + 6, 3), Rm = s.get(s.d.site_xmat + 18, 9);
  // world velocity v and angular velocity w (the axial vector of dR/dt R^T)
  double v[3], W[9], w[3];
  for (int k = 0; k < 3; ++k) v[k] = (pp[static_cast<size_t>(k)] - pm[static_cast<size_t>(k)]) / (2 * h);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      W[3 * r + c] = 0;
      for (int k = 0; k < 3; ++k)
        W[3 * r + c] += (Rp[static_cast<size_t>(3 * r + k)] - Rm[static_cast<size_t>(3 * r + k)]) / (2 * h) *
                        R[static_cast<size_t>(3 * c + k)];
    }
  w[0] = 0.5 * (W[7] - W[5]), w[1] = 0.5 * (W[2] - W[6]), w[2] = 0.5 * (W[3] - W[1]);
  double expected = 0;
  for (int k = 0; k < 3; ++k)  // gear . (R^T v, R^T w)
    for (int r = 0; r < 3; ++r)
      expected +=
          gear[k] * R[static_cast<size_t>(3 * r + k)] * v[r] + gear[3 + k] * R[static_cast<size_t>(3 * r + k)] * w[r];
  EXPECT_NEAR(velocity, expected, 1e-8);
}

// A slider-crank in closed form: the slider axis along world x through the origin, the crank
// (radius c) turning about y at (d, 0, 0), rod r. The pin sits at v = (d + c cos t, 0, -c sin t), the
// rod's slider end at L along x with |v - L x| = r: L = v_x - sqrt(r^2 - v_z^2). The actuator's
// length is gear L, its moment gear dL/dt, and a motor's force f turns the crank with gear dL/dt f.
TEST(Transmissions, SliderCrankMatchesTheClosedForm) {
  const double c = 0.1, d = 0.5, r = 0.3, gear = 2, f = 0.7;
  const Model model = parse_mjcf(
      "<mujoco><option gravity=\"0 0 0\"/><worldbody><site name=\"slider\" zaxis=\"1 0 0\"/>"
      "<body pos=\"0.5 0 0\"><joint name=\"crank\" axis=\"0 1 0\"/><geom size=\"0.05\" mass=\"1\" contype=\"0\" "
      "conaffinity=\"0\"/><site name=\"pin\" pos=\"0.1 0 0\"/></body></worldbody><actuator>"
      "<motor cranksite=\"pin\" slidersite=\"slider\" cranklength=\"0.3\" gear=\"2\"/></actuator></mujoco>",
      "crank.xml");
  Sim<double> s(model);
  for (double t : {0.0, 0.4, 1.3, 2.5, -2.0}) {
    transmission_at(s, {t});
    const double vx = d + c * std::cos(t), vz = -c * std::sin(t);
    const double L = vx - std::sqrt(r * r - vz * vz);
    const double dvx = -c * std::sin(t), dvz = -c * std::cos(t);
    const double dL = dvx + vz * dvz / std::sqrt(r * r - vz * vz);
    EXPECT_NEAR(s.d.actuator_length[0], gear * L, 1e-14) << t;
    EXPECT_NEAR(s.d.actuator_moment[0], gear * dL, 1e-14) << t;
    const double ctrl = f;
    actuator_forces(s.m(), s.d, &ctrl);
    EXPECT_NEAR(s.d.qfrc_actuator[0], gear * dL * f, 1e-14) << t;
  }
}

// A Cartesian position servo (site + refsite, translation) holds the grip at its target: after the
// arm settles (20 s), the grip sits at ctrl along the gear's direction in the refsite's frame.
TEST(Transmissions, CartesianServoReachesItsTarget) {
  const Model model =
      parse_mjcf(arm("<position site=\"grip\" refsite=\"ref\" gear=\"1 0 0 0 0 0\" kp=\"30\" kv=\"3\"/>"
                     "<position site=\"grip\" refsite=\"ref\" gear=\"0 1 0 0 0 0\" kp=\"30\" kv=\"3\"/>"
                     "<position site=\"grip\" refsite=\"ref\" gear=\"0 0 1 0 0 0\" kp=\"30\" kv=\"3\"/>"),
                 "arm.xml");
  Sim<double> s(model);
  const std::vector<double> target = {0.1, 0.05, -0.05};
  for (int k = 0; k < 10000; ++k) physics_step(s.m(), s.d, target.data(), 1, nullptr);  // 20 s
  const std::vector<double> p = s.get(s.d.site_xpos + 6, 3), pr = s.get(s.d.site_xpos, 3), Rr = s.get(s.d.site_xmat, 9);
  for (int k = 0; k < 3; ++k) {
    double local = 0;  // Rr^T (p - pr)
    for (int r = 0; r < 3; ++r)
      local += Rr[static_cast<size_t>(3 * r + k)] * (p[static_cast<size_t>(r)] - pr[static_cast<size_t>(r)]);
    EXPECT_NEAR(local, target[static_cast<size_t>(k)], 1e-9) << k;  // (measured 3e-16)
  }
}

// The float instantiation (what the CUDA executor runs) follows double: every transmission kind on
// the arm, 500 steps (1 s) under constant controls.
TEST(Transmissions, FloatFollowsDouble) {
  const Model model = parse_mjcf(
      arm("<motor site=\"grip\" gear=\"0.5 -0.2 1 0.1 0.3 -0.2\"/>"
          "<position site=\"grip\" refsite=\"ref\" gear=\"1 0.5 0 0 0 0\" kp=\"20\" kv=\"2\"/>"
          "<general site=\"grip\" refsite=\"ref\" gear=\"0 0 0 0.3 1 0.2\" gainprm=\"2\" biastype=\"affine\" "
          "biasprm=\"0 -2 -0.1\"/>"
          "<motor cranksite=\"grip\" slidersite=\"slider\" cranklength=\"0.6\" gear=\"1.5\"/>"),
      "arm.xml");
  Sim<double> sd(model);
  Sim<float> sf(model);
  const std::vector<double> ctrl = {0.3, 0.1, -0.4, 0.2};
  const std::vector<float> ctrlf(ctrl.begin(), ctrl.end());
  double worst = 0;
  for (int k = 0; k < 500; ++k) {
    physics_step(sd.m(), sd.d, ctrl.data(), 1, nullptr);
    physics_step(sf.m(), sf.d, ctrlf.data(), 1, nullptr);
    for (int i = 0; i < sd.nq(); ++i) worst = std::max(worst, std::abs(double(sf.d.qpos[i]) - sd.d.qpos[i]));
  }
  EXPECT_LT(worst, 1e-5);  // measured 1.4e-6 (float rounding over 500 steps)
}

// ---- ball, free and body transmissions (sim/transmission.h) -------------------------------------

// A ball joint's torque: with joint= the gear is the torque in the child's frame (qfrc on the three
// dofs = gear u); with jointinparent= it is the torque in the parent's (world) frame, so the dofs get
// R^T gear u (R the body's orientation). The length is the gear axis . the rotation vector of q.
TEST(Transmissions, BallJointGearInChildAndParentFrames) {
  const Model model = parse_mjcf(
      "<mujoco><option gravity=\"0 0 0\"/><worldbody><body pos=\"0 0 1\"><joint name=\"b\" type=\"ball\"/>"
      "<geom size=\"0.1\" mass=\"1\" contype=\"0\" conaffinity=\"0\"/></body></worldbody><actuator>"
      "<motor joint=\"b\" gear=\"0.5 -1 0.2\"/><motor jointinparent=\"b\" gear=\"0.5 -1 0.2\"/></actuator></mujoco>",
      "ball.xml");
  Sim<double> s(model);
  const double n = std::sqrt(0.98), angle = 2.5, axis[3] = {0.3 / n, -0.8 / n, 0.5 / n}, g[3] = {0.5, -1, 0.2};
  const double q[4] = {std::cos(angle / 2), std::sin(angle / 2) * axis[0], std::sin(angle / 2) * axis[1],
                       std::sin(angle / 2) * axis[2]};
  for (int k = 0; k < 4; ++k) s.d.qpos[k] = q[k];
  kinematics(s.m(), s.d);
  com_position(s.m(), s.d);
  transmission_kinematics(s.m(), s.d);
  const double length = angle * (axis[0] * g[0] + axis[1] * g[1] + axis[2] * g[2]);
  EXPECT_NEAR(s.d.actuator_length[0], length, 1e-14);
  EXPECT_NEAR(s.d.actuator_length[1], length, 1e-14);  // (the rotation vector is its own rotation's axis)
  const std::vector<double> R = s.get(s.d.xmat + 9, 9);
  for (int u = 0; u < 2; ++u) {
    std::vector<double> ctrl = {0, 0};
    ctrl[static_cast<size_t>(u)] = 0.7;
    actuator_forces(s.m(), s.d, ctrl.data());
    for (int k = 0; k < 3; ++k) {
      double expected = g[k] * 0.7;  // joint: the child's frame
      if (u == 1) {                  // jointinparent: R^T g
        expected = 0;
        for (int r = 0; r < 3; ++r) expected += R[static_cast<size_t>(3 * r + k)] * g[r] * 0.7;
      }
      EXPECT_NEAR(s.d.qfrc_actuator[k], expected, 1e-14) << u << " " << k;
    }
  }
}

// A box (0.2 x 0.2 x 0.1 m, 1 kg) resting flat on the floor with an adhesion actuator on it: four
// corner contacts, normal +z from the floor (geom 1) to the box, placed symmetrically about the box's
// centre, so the moment is minus their mean normal Jacobian: qfrc_actuator = (0, 0, -gain u) on the
// translation dofs and no torque. Lifted clear of the floor (no contacts) the moment is 0.
TEST(Transmissions, AdhesionPullsABoxOntoTheFloor) {
  const Model model = parse_mjcf(
      "<mujoco><worldbody><geom type=\"plane\" size=\"1 1 0.1\"/><body name=\"box\" pos=\"0 0 0.0499\">"
      "<freejoint/><geom type=\"box\" size=\"0.1 0.1 0.05\" mass=\"1\"/></body></worldbody>"
      "<actuator><adhesion body=\"box\" gain=\"20\" ctrlrange=\"0 1\"/></actuator></mujoco>",
      "adhesion.xml");
  Sim<double> s(model);
  const double ctrl = 0.6;
  physics_forward(s.m(), s.d, &ctrl, 0.0);
  ASSERT_EQ(static_cast<int>(s.d.ncon[0]), 4);
  EXPECT_EQ(s.d.actuator_length[0], 0.0);
  EXPECT_NEAR(s.d.actuator_force[0], 20 * ctrl, 1e-14);
  const double expected[6] = {0, 0, -20 * ctrl, 0, 0, 0};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(s.d.qfrc_actuator[i], expected[i], 1e-13) << i;
  s.d.qpos[2] = 0.3;  // clear of the floor
  physics_forward(s.m(), s.d, &ctrl, 0.0);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(s.d.qfrc_actuator[i], 0.0) << i;
}

// The float instantiation follows double on the ball, free and body transmission peers' models from
// their moving keyframes, 500 steps under the keyframe's controls (adhesion: the box held up).
TEST(Transmissions, BallFreeBodyFloatFollowsDouble) {
  for (const char* file : {"trn/ball.xml", "trn/free_implicitfast.xml", "trn/adhesion.xml"}) {
    const Model model = load_mjcf(testing_util::mjcf_data(file));
    Sim<double> sd(model);
    Sim<float> sf(model);
    const int nq = sd.nq(), nv = sd.nv(), nu = model.nu;
    const std::vector<double> qpos(model.key_qpos.begin(), model.key_qpos.begin() + nq);
    const std::vector<double> qvel(model.key_qvel.begin(), model.key_qvel.begin() + nv);
    const std::vector<double> ctrl(model.key_ctrl.begin(), model.key_ctrl.begin() + nu);
    const std::vector<float> ctrlf(ctrl.begin(), ctrl.end());
    sd.set_state(qpos, qvel);
    sf.set_state(qpos, qvel);
    double worst = 0;
    for (int k = 0; k < 500; ++k) {
      physics_step(sd.m(), sd.d, ctrl.data(), 1, nullptr);
      physics_step(sf.m(), sf.d, ctrlf.data(), 1, nullptr);
      for (int i = 0; i < nq; ++i) worst = std::max(worst, std::abs(double(sf.d.qpos[i]) - sd.d.qpos[i]));
    }
    // measured 1.9e-6 (ball, free: float rounding over 500 steps) and 7.2e-5 (adhesion: the held
    // box's contact solve in float)
    EXPECT_LT(worst, 3e-4) << file;
    std::printf("%s: float vs double, worst qpos difference over 500 steps %.2e\n", file, worst);
  }
}

}  // namespace
}  // namespace rlt
