// Rigid-body dynamics (sim/dynamics.h) against analytic solutions and against itself (finite
// differences, inverse versus forward dynamics, float versus double). Models are built inline with
// test::ModelBuilder; the comparison with MuJoCo is in test_dynamics_mujoco.cpp.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <unistd.h>
#include <memory>
#include <random>
#include <vector>

#include "sim/cpu_executor.h"
#include "sim/dynamics.h"
#include "sim/mjcf.h"
#include "sim/physics_step.h"
#include "tests/sim/test_dynamics_util.h"

namespace rlt {
namespace {

using test::ModelBuilder;
using test::Q4;
using test::random_state;
using test::Sim;
using test::V3;

constexpr double kPi = 3.14159265358979323846;

Q4 axis_angle(V3 axis, double angle) {
  const double n = std::sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
  const double s = std::sin(angle / 2) / n;
  return {std::cos(angle / 2), s * axis[0], s * axis[1], s * axis[2]};
}

double norm(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v * v;
  return std::sqrt(s);
}

// ||a - b|| / ||b||: the relative error of a against the reference b.
double rel_err(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0;
  for (size_t i = 0; i < a.size(); ++i) num += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(num) / std::max(norm(b), 1e-300);
}

// A branching tree with every joint type: a free root; a ball child carrying a hinge grandchild;
// a child with two joints (hinge then slide); a second tree on the world (hinge, hinge); damping
// and armature on some dofs; centers of mass and principal axes off the body frames.
Model branching_tree(V3 gravity = {0, 0, -9.81}) {
  ModelBuilder b;
  b.gravity(gravity);
  const int torso = b.body(0, {0.1, -0.2, 1.0}, {1, 0, 0, 0}, 3.0, {0.05, 0.02, -0.03}, {0.10, 0.08, 0.05},
                           axis_angle({1, 2, 3}, 0.4));
  b.joint(kJointFree);
  b.geom({0, 0, 0.1}, axis_angle({0, 1, 0}, 0.3));
  b.site({0.1, 0, 0}, {1, 0, 0, 0});
  const int arm = b.body(torso, {0.2, 0.1, 0}, axis_angle({0, 0, 1}, 0.5), 1.1, {0.1, 0, 0.02}, {0.01, 0.02, 0.025},
                         axis_angle({1, -1, 0}, 0.7));
  b.joint(kJointBall, {0, 0, 1}, {-0.02, 0.01, 0.0}, 0.05, 0.01);
  b.body(arm, {0.25, 0, 0}, {1, 0, 0, 0}, 0.7, {0.1, 0.01, 0}, {0.004, 0.006, 0.005}, axis_angle({0, 1, 1}, 0.2));
  b.joint(kJointHinge, {0, 1, 0.2}, {0.01, 0, 0}, 0.1, 0.02);
  b.geom({0.1, 0, 0}, {1, 0, 0, 0});
  b.body(torso, {-0.2, 0, -0.1}, axis_angle({1, 0, 0}, -0.3), 0.9, {0, 0.03, -0.15}, {0.012, 0.011, 0.003});
  b.joint(kJointHinge, {1, 0, 0}, {0, 0, 0.02}, 0.02, 0.0);
  b.joint(kJointSlide, {0.2, 0.1, 1}, {0, 0, 0}, 0.3, 0.05);
  b.site({0, 0, -0.3}, axis_angle({0, 0, 1}, 1.0));
  const int pole = b.body(0, {1.0, 0.5, 0.5}, axis_angle({0, 1, 0}, 0.2), 0.5, {0, 0, -0.2}, {0.007, 0.007, 0.001});
  b.joint(kJointHinge, {0, 1, 0}, {0, 0, 0}, 0.0, 0.0);
  b.body(pole, {0, 0, -0.4}, {1, 0, 0, 0}, 0.4, {0.01, 0, -0.15}, {0.004, 0.005, 0.001});
  b.joint(kJointHinge, {1, 0.3, 0}, {0, 0, 0}, 0.01, 0.0);
  return b.build();
}

// A planar-ish chain of hinges and a slide (qvel = d qpos / dt everywhere), for Lagrange's equations.
Model hinge_slide_chain() {
  ModelBuilder b;
  const int l1 =
      b.body(0, {0, 0, 1}, {1, 0, 0, 0}, 1.0, {0.02, 0, -0.2}, {0.02, 0.015, 0.004}, axis_angle({1, 1, 0}, 0.3));
  b.joint(kJointHinge, {0, 1, 0}, {0, 0, 0.05}, 0.1, 0.01);
  const int l2 = b.body(l1, {0, 0, -0.4}, axis_angle({1, 0, 0}, 0.3), 0.8, {0, 0.01, -0.2}, {0.012, 0.01, 0.002});
  b.joint(kJointHinge, {1, 0, 0});
  b.joint(kJointSlide, {0, 0.3, 1}, {0, 0, 0}, 0.2);
  b.body(l2, {0, 0, -0.4}, {1, 0, 0, 0}, 0.5, {0.01, 0, -0.1}, {0.003, 0.004, 0.002});
  b.joint(kJointHinge, {0.3, 0.2, 1});
  return b.build();
}

// ---- analytic -----------------------------------------------------------------------------------

// A point mass on a massless rod: small-angle period 2 pi sqrt(L / g).
TEST(PhysicsAnalytic, SimplePendulumSmallAnglePeriod) {
  const double length = 0.8, g = 9.81, dt = 1e-4;
  ModelBuilder b;
  b.timestep(dt).gravity({0, 0, -g});
  b.body(0, {0, 0, 2}, {1, 0, 0, 0}, 1.5, {0, 0, -length}, {1e-9, 1e-9, 1e-9});
  b.joint(kJointHinge, {0, 1, 0});
  Sim<double> s(b.build());
  const double theta0 = 0.05;
  s.d.qpos[0] = theta0;
  // Period from upward zero crossings of the angle (linear interpolation between steps).
  std::vector<double> crossings;
  double prev = s.d.qpos[0], t = 0;
  while (crossings.size() < 6 && t < 20) {
    step_euler(s.m(), s.d);
    t += dt;
    const double cur = s.d.qpos[0];
    if (prev < 0 && cur >= 0) crossings.push_back(t - dt * cur / (cur - prev));
    prev = cur;
  }
  ASSERT_EQ(crossings.size(), 6u);
  const double period = (crossings.back() - crossings.front()) / 5;
  const double expected = 2 * kPi * std::sqrt(length / g);
  const double err = std::abs(period - expected) / expected;
  std::printf("pendulum: period %.6f s, small-angle %.6f s, relative error %.2e (dt %.0e, amplitude %.2f rad)\n",
              period, expected, err, dt, theta0);
  EXPECT_LT(err, 0.005);
  // The finite-amplitude correction (1 + theta0^2 / 16) is 1.6e-4: the simulation sees it.
  EXPECT_LT(std::abs(period / (expected * (1 + theta0 * theta0 / 16)) - 1), 1e-4);
}

// Total energy of an undamped double pendulum released from a large angle, over 10 s. Semi-implicit
// Euler is not symplectic when M depends on q, so the energy drifts (as MuJoCo's Euler does): the
// drift must be small at dt = 2e-5 and first order in dt (halving dt halves it), which tells an
// integrator error from a modeling one (a wrong Coriolis term would not shrink with dt).
double double_pendulum_drift(double dt, double& max_speed) {
  ModelBuilder b;
  b.timestep(dt);
  const int l1 = b.body(0, {0, 0, 2}, {1, 0, 0, 0}, 1.0, {0, 0, -0.5}, {0.02, 0.02, 0.002});
  b.joint(kJointHinge, {0, 1, 0});
  b.body(l1, {0, 0, -1.0}, {1, 0, 0, 0}, 0.6, {0, 0, -0.4}, {0.01, 0.01, 0.001});
  b.joint(kJointHinge, {0, 1, 0});
  Sim<double> s(b.build());
  // Energy is measured above the resting configuration, so the relative drift is meaningful.
  forward(s.m(), s.d);
  const double rest = potential_energy(s.m(), s.d);
  s.d.qpos[0] = 1.6, s.d.qpos[1] = -1.0;
  forward(s.m(), s.d);
  const double e0 = potential_energy(s.m(), s.d) + kinetic_energy(s.m(), s.d) - rest;
  double worst = 0;
  max_speed = 0;
  const int steps = static_cast<int>(10.0 / dt + 0.5);
  for (int k = 1; k <= steps; ++k) {
    step_euler(s.m(), s.d);
    max_speed = std::max(max_speed, std::abs(s.d.qvel[1]));
    if (k % 10) continue;
    forward(s.m(), s.d);  // energy of the new state
    const double e = potential_energy(s.m(), s.d) + kinetic_energy(s.m(), s.d) - rest;
    worst = std::max(worst, std::abs(e - e0) / e0);
  }
  return worst;
}

TEST(PhysicsAnalytic, DoublePendulumEnergyDrift) {
  double speed_fine = 0, speed_coarse = 0;
  const double fine = double_pendulum_drift(2e-5, speed_fine), coarse = double_pendulum_drift(4e-5, speed_coarse);
  std::printf(
      "double pendulum: max relative energy drift over 10 s %.2e at dt 2e-5, %.2e at dt 4e-5 (max |qvel2| %.1f)\n",
      fine, coarse, speed_fine);
  EXPECT_GT(speed_fine, 3.0);  // it really swings
  EXPECT_LT(fine, 0.005);
  EXPECT_NEAR(coarse / fine, 2.0, 0.2);
}

// A body on a hinge spring (no gravity, no damping): qpos - springref oscillates harmonically with
// period 2 pi sqrt(I / k), I the body's moment about the axis plus the armature. The Euler step
// (velocity first, then position) is symplectic for this linear system: its samples are exactly a
// sinusoid of period 2 pi / w_d, cos(w_d dt) = 1 - (w dt)^2 / 2 (relative difference from the
// continuous period (w dt)^2 / 24 = 3.5e-5 here), and the energy oscillates by ~w dt / 2 around a
// constant, without drift.
TEST(PhysicsAnalytic, HingeSpringPeriodAndEnergy) {
  const double inertia = 0.05, armature = 0.01, k = 50, springref = 0.3, dt = 1e-3;
  ModelBuilder b;
  b.timestep(dt).gravity({0, 0, 0});
  b.body(0, {0, 0, 1}, {1, 0, 0, 0}, 2.0, {0, 0, 0}, {0.04, inertia, 0.03});
  const int hinge = b.joint(kJointHinge, {0, 1, 0}, {0, 0, 0}, 0.0, armature);
  b.spring(hinge, k, springref);
  Sim<double> s(b.build());
  s.d.qpos[0] = springref + 0.2;
  const double w = std::sqrt(k / (inertia + armature));
  const double expected = 2 * kPi / w, discrete = 2 * kPi * dt / std::acos(1 - 0.5 * (w * dt) * (w * dt));
  auto energy = [&] {
    forward(s.m(), s.d);  // qM for the kinetic energy
    return kinetic_energy(s.m(), s.d) + spring_energy(s.m(), s.d);
  };
  const double e0 = energy();
  EXPECT_NEAR(e0, 0.5 * k * 0.2 * 0.2, 1e-12);
  const int steps_per_period = static_cast<int>(expected / dt);
  const int periods = 100;
  std::vector<double> crossings;
  double prev = s.d.qpos[0] - springref, t = 0, worst = 0, mean_first = 0, mean_last = 0;
  for (int n = 1; n <= periods * steps_per_period; ++n) {
    step_euler(s.m(), s.d);
    t += dt;
    const double cur = s.d.qpos[0] - springref;
    if (prev < 0 && cur >= 0) crossings.push_back(t - dt * cur / (cur - prev));
    prev = cur;
    const double e = energy();
    worst = std::max(worst, std::abs(e - e0) / e0);
    if (n <= steps_per_period) mean_first += e / steps_per_period;
    if (n > (periods - 1) * steps_per_period) mean_last += e / steps_per_period;
  }
  ASSERT_GE(crossings.size(), 11u);
  const double period = (crossings[10] - crossings[0]) / 10;
  std::printf(
      "hinge spring: period %.7f s, 2 pi sqrt(I/k) %.7f s (relative %.1e), discrete Euler %.7f s "
      "(relative %.1e); energy over %d periods: max deviation %.2e, drift of the mean %.1e\n",
      period, expected, std::abs(period / expected - 1), discrete, std::abs(period / discrete - 1), periods, worst,
      std::abs(mean_last - mean_first) / e0);
  EXPECT_LT(std::abs(period / expected - 1), 1e-4);
  EXPECT_LT(std::abs(period / discrete - 1), 1e-5);
  EXPECT_LT(worst, w * dt);                                // bounded: ~w dt / 2 = 1.4% oscillation at any time
  EXPECT_LT(std::abs(mean_last - mean_first) / e0, 1e-4);  // and no drift
}

// Reference for a torque-free rigid body: Euler's equations and q' = q (0, w) / 2 in the principal
// frame, by classic RK4 with a small step.
struct RigidBodyRk4 {
  double inertia[3];
  double w[3];  // principal-frame angular velocity
  double q[4];  // world <- principal frame

  void deriv(const double* w_, const double* q_, double* dw, double* dq) const {
    const double* I = inertia;
    dw[0] = (I[1] - I[2]) * w_[1] * w_[2] / I[0];
    dw[1] = (I[2] - I[0]) * w_[2] * w_[0] / I[1];
    dw[2] = (I[0] - I[1]) * w_[0] * w_[1] / I[2];
    dq[0] = 0.5 * (-q_[1] * w_[0] - q_[2] * w_[1] - q_[3] * w_[2]);
    dq[1] = 0.5 * (q_[0] * w_[0] + q_[2] * w_[2] - q_[3] * w_[1]);
    dq[2] = 0.5 * (q_[0] * w_[1] - q_[1] * w_[2] + q_[3] * w_[0]);
    dq[3] = 0.5 * (q_[0] * w_[2] + q_[1] * w_[1] - q_[2] * w_[0]);
  }
  void step(double h) {
    double k1w[3], k1q[4], k2w[3], k2q[4], k3w[3], k3q[4], k4w[3], k4q[4], tw[3], tq[4];
    auto mix = [&](const double* dw, const double* dq, double s) {
      for (int i = 0; i < 3; ++i) tw[i] = w[i] + s * dw[i];
      for (int i = 0; i < 4; ++i) tq[i] = q[i] + s * dq[i];
    };
    deriv(w, q, k1w, k1q);
    mix(k1w, k1q, h / 2);
    deriv(tw, tq, k2w, k2q);
    mix(k2w, k2q, h / 2);
    deriv(tw, tq, k3w, k3q);
    mix(k3w, k3q, h);
    deriv(tw, tq, k4w, k4q);
    for (int i = 0; i < 3; ++i) w[i] += h / 6 * (k1w[i] + 2 * k2w[i] + 2 * k3w[i] + k4w[i]);
    for (int i = 0; i < 4; ++i) q[i] += h / 6 * (k1q[i] + 2 * k2q[i] + 2 * k3q[i] + k4q[i]);
  }
};

Vec3<double> rot_vec(const Q4& q, Vec3<double> v) { return quat_rotate(Quat<double>{q[0], q[1], q[2], q[3]}, v); }

// Angular momentum about the center of mass and linear momentum of a single free body, world frame.
void momenta(const Sim<double>& s, Vec3<double>& angular, Vec3<double>& linear) {
  const auto& m = s.m();
  const Mat3<double> ri = Mat3<double>::load(s.d.ximat + 9), rb = Mat3<double>::load(s.d.xmat + 9);
  const Vec3<double> w = rb * Vec3<double>::load(s.d.qvel + 3);  // world angular velocity
  // I_world w = R diag(I) R^T w
  const Vec3<double> wp{dot(ri.col(0), w), dot(ri.col(1), w), dot(ri.col(2), w)};
  const Vec3<double> iw{m.body_inertia[3] * wp.x, m.body_inertia[4] * wp.y, m.body_inertia[5] * wp.z};
  angular = ri * iw;
  const Vec3<double> com_vel =
      Vec3<double>::load(s.d.qvel) + cross(w, Vec3<double>::load(s.d.xipos + 3) - Vec3<double>::load(s.d.xpos + 3));
  linear = m.body_mass[1] * com_vel;
}

// Torque-free motion of an asymmetric body (I = 1, 2, 3) spinning near its unstable intermediate
// axis, center of mass off the body origin, principal axes tilted in the body frame: angular and
// linear momentum are conserved and the body-rate history matches Euler's equations.
TEST(PhysicsAnalytic, FreeBodyTorqueFreePrecession) {
  const double dt = 1e-5, duration = 4.0;
  const V3 inertia{1.0, 2.0, 3.0};
  const Q4 iquat = axis_angle({0.3, -0.5, 1.0}, 0.9);
  ModelBuilder b;
  b.timestep(dt).gravity({0, 0, 0});
  b.body(0, {0, 0, 0}, {1, 0, 0, 0}, 2.0, {0.1, -0.05, 0.2}, inertia, iquat);
  b.joint(kJointFree);
  Sim<double> s(b.build());
  const Q4 q0 = axis_angle({1, 1, 0}, 0.6);
  for (int k = 0; k < 4; ++k) s.d.qpos[3 + k] = q0[static_cast<size_t>(k)];
  s.d.qpos[0] = 0.3, s.d.qpos[1] = -0.1, s.d.qpos[2] = 0.5;
  // Body rates: mostly about the intermediate principal axis, a little about the others.
  const Vec3<double> wp0{0.4, 2.0, 0.3};
  const Vec3<double> wb0 = rot_vec(iquat, wp0);
  wb0.store(s.d.qvel + 3);
  s.d.qvel[0] = 0.2, s.d.qvel[1] = -0.4, s.d.qvel[2] = 0.1;
  forward(s.m(), s.d);
  Vec3<double> l0, p0;
  momenta(s, l0, p0);
  const Vec3<double> c0 = Vec3<double>::load(s.d.xipos + 3);

  RigidBodyRk4 ref{{inertia[0], inertia[1], inertia[2]}, {wp0.x, wp0.y, wp0.z}, {0, 0, 0, 0}};
  const Quat<double> qp0 =
      quat_mul(Quat<double>{q0[0], q0[1], q0[2], q0[3]}, Quat<double>{iquat[0], iquat[1], iquat[2], iquat[3]});
  ref.q[0] = qp0.w, ref.q[1] = qp0.x, ref.q[2] = qp0.y, ref.q[3] = qp0.z;

  double worst_l = 0, worst_p = 0, worst_com = 0, worst_w = 0, worst_rot = 0, min_wy = 1e9;
  const int steps = static_cast<int>(duration / dt + 0.5);
  for (int k = 1; k <= steps; ++k) {
    step_euler(s.m(), s.d);
    ref.step(dt);
    if (k % 100) continue;
    forward(s.m(), s.d);
    Vec3<double> l, p;
    momenta(s, l, p);
    worst_l = std::max(worst_l, norm(l - l0) / norm(l0));
    worst_p = std::max(worst_p, norm(p - p0) / norm(p0));
    const Vec3<double> com_expected = c0 + (k * dt / s.m().body_mass[1]) * p0;
    worst_com = std::max(worst_com, norm(Vec3<double>::load(s.d.xipos + 3) - com_expected));
    // Body rates in the principal frame against the reference.
    const Vec3<double> wb = Vec3<double>::load(s.d.qvel + 3);
    const Quat<double> iq{iquat[0], iquat[1], iquat[2], iquat[3]};
    const Vec3<double> wp = quat_rotate(Quat<double>{iq.w, -iq.x, -iq.y, -iq.z}, wb);
    worst_w = std::max(worst_w, norm(wp - Vec3<double>{ref.w[0], ref.w[1], ref.w[2]}) / norm(wp0));
    min_wy = std::min(min_wy, wp.y);
    // Orientation of the principal frame against the reference.
    const Mat3<double> rs = Mat3<double>::load(s.d.ximat + 9);
    const Mat3<double> rr = quat_to_mat(quat_normalize(Quat<double>{ref.q[0], ref.q[1], ref.q[2], ref.q[3]}));
    double dr = 0;
    for (int e = 0; e < 9; ++e) dr = std::max(dr, std::abs(rs.m[e] - rr.m[e]));
    worst_rot = std::max(worst_rot, dr);
  }
  std::printf(
      "free body (dt %.0e, %.1f s): |dL|/|L| %.2e, |dp|/|p| %.2e, com %.2e m, body rates %.2e, "
      "orientation %.2e, min w_intermediate %.2f\n",
      dt, duration, worst_l, worst_p, worst_com, worst_w, worst_rot, min_wy);
  EXPECT_LT(min_wy, -0.5);   // it tumbles: the intermediate-axis rate reverses
  EXPECT_LT(worst_l, 1e-3);  // semi-implicit Euler: first order in dt
  // The body origin, not the center of mass, is integrated: momentum is kept to first order in dt.
  EXPECT_LT(worst_p, 1e-4);
  EXPECT_LT(worst_com, 1e-4);
  EXPECT_LT(worst_w, 2e-3);
  EXPECT_LT(worst_rot, 2e-3);
}

// A spinning projectile: the center of mass follows the parabola (exactly the semi-implicit Euler
// one when the body origin is the center of mass) and a spin about a principal axis stays constant.
TEST(PhysicsAnalytic, ProjectileWithSpin) {
  const double dt = 1e-4, g = 9.81;
  const Q4 iquat = axis_angle({1, 2, -1}, 1.1);
  const Vec3<double> spin = rot_vec(iquat, {0, 0, 7.0});  // about the third principal axis, body frame
  for (int offset = 0; offset < 2; ++offset) {
    ModelBuilder b;
    b.timestep(dt).gravity({0, 0, -g});
    const V3 ipos = offset ? V3{0.15, -0.1, 0.05} : V3{0, 0, 0};
    b.body(0, {0, 0, 0}, {1, 0, 0, 0}, 1.3, ipos, {0.02, 0.03, 0.045}, iquat);
    b.joint(kJointFree);
    Sim<double> s(b.build());
    const Q4 q0 = axis_angle({0, 1, 1}, 0.4);
    for (int k = 0; k < 4; ++k) s.d.qpos[3 + k] = q0[static_cast<size_t>(k)];
    spin.store(s.d.qvel + 3);
    forward(s.m(), s.d);
    // Launch the center of mass at v0: the origin moves at v0 - w x (c - p).
    const Vec3<double> v0{1.5, -0.5, 6.0};
    const Vec3<double> c0 = Vec3<double>::load(s.d.xipos + 3);
    const Vec3<double> w_world = Mat3<double>::load(s.d.xmat + 9) * spin;
    (v0 - cross(w_world, c0 - Vec3<double>::load(s.d.xpos + 3))).store(s.d.qvel);
    const Vec3<double> gv{0, 0, -g};
    double worst_discrete = 0, worst_parabola = 0, worst_spin = 0;
    const int steps = 10000;  // 1 s
    for (int n = 1; n <= steps; ++n) {
      step_euler(s.m(), s.d);
      kinematics(s.m(), s.d);
      const double t = n * dt;
      const Vec3<double> c = Vec3<double>::load(s.d.xipos + 3);
      // qvel += dt g, then pos += dt qvel: x_n = x_0 + n dt v_0 + dt^2 g n (n + 1) / 2.
      const Vec3<double> discrete = c0 + t * v0 + (dt * dt * n * (n + 1) / 2.0) * gv;
      const Vec3<double> parabola = c0 + t * v0 + (t * t / 2) * gv;
      worst_discrete = std::max(worst_discrete, norm(c - discrete));
      worst_parabola = std::max(worst_parabola, norm(c - parabola));
      worst_spin = std::max(worst_spin, norm(Vec3<double>::load(s.d.qvel + 3) - spin));
    }
    std::printf(
        "projectile (com offset %d, dt %.0e, 1 s): com vs discrete parabola %.2e m, vs parabola %.2e m "
        "(bound g t dt / 2 = %.2e), spin change %.2e rad/s\n",
        offset, dt, worst_discrete, worst_parabola, g * dt / 2, worst_spin);
    EXPECT_LT(worst_spin, 1e-10);
    if (!offset) {
      EXPECT_LT(worst_discrete, 1e-10);
    } else {
      // The origin circles the center of mass; integrating it to first order costs O(dt).
      EXPECT_LT(worst_discrete, 5e-4);
    }
    EXPECT_LT(worst_parabola, g * dt / 2 + (offset ? 5e-4 : 1e-10));
  }
}

// ---- consistency --------------------------------------------------------------------------------

// CRBA's mass matrix equals the one RNEA implies (columns M e_i = rne(e_i) - rne(0)), and is
// symmetric positive definite.
TEST(PhysicsConsistency, MassMatrixMatchesRneaAndIsSymmetricPositiveDefinite) {
  const Model model = branching_tree();
  Sim<double> s(model);
  const int nv = s.nv();
  std::mt19937_64 rng(1);
  for (int trial = 0; trial < 10; ++trial) {
    std::vector<double> qpos, qvel;
    random_state(model, rng, qpos, qvel);
    s.set_state(qpos, qvel);
    forward(s.m(), s.d);
    std::vector<double> bias(static_cast<size_t>(nv)), col(static_cast<size_t>(nv)), e(static_cast<size_t>(nv));
    rne(s.m(), s.d, static_cast<const double*>(nullptr), bias.data());
    Eigen::MatrixXd from_rne(nv, nv), crba(nv, nv);
    for (int j = 0; j < nv; ++j) {
      std::fill(e.begin(), e.end(), 0.0);
      e[static_cast<size_t>(j)] = 1.0;
      rne(s.m(), s.d, e.data(), col.data());
      for (int i = 0; i < nv; ++i) {
        // rne has no armature: it is the joint-space inertia of the rotors, added to M alone.
        from_rne(i, j) = col[static_cast<size_t>(i)] - bias[static_cast<size_t>(i)] +
                         (i == j ? model.dof_armature[static_cast<size_t>(i)] : 0.0);
        crba(i, j) = s.d.qM[i * nv + j];
      }
    }
    const double scale = crba.norm();
    EXPECT_LT((crba - from_rne).norm() / scale, 1e-13) << "trial " << trial;
    EXPECT_LT((from_rne - from_rne.transpose()).norm() / scale, 1e-13) << "trial " << trial;
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(crba);
    EXPECT_GT(eig.eigenvalues().minCoeff(), 1e-6) << "trial " << trial;
  }
}

// Tree-sparse L^T D L solve against Eigen's dense LDL^T of M + h D.
TEST(PhysicsConsistency, SparseFactorizationSolvesLikeDense) {
  const Model model = branching_tree();
  Sim<double> s(model);
  const int nv = s.nv();
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<double> u(-1, 1);
  for (double h : {0.0, 0.01}) {
    std::vector<double> qpos, qvel;
    random_state(model, rng, qpos, qvel);
    s.set_state(qpos, qvel);
    forward(s.m(), s.d);
    factor_mass(s.m(), s.d, h);
    Eigen::MatrixXd a(nv, nv);
    for (int i = 0; i < nv; ++i)
      for (int j = 0; j < nv; ++j)
        a(i, j) = s.d.qM[i * nv + j] + (i == j ? h * model.dof_damping[static_cast<size_t>(i)] : 0);
    Eigen::VectorXd rhs(nv);
    std::vector<double> x(static_cast<size_t>(nv));
    for (int i = 0; i < nv; ++i) rhs(i) = x[static_cast<size_t>(i)] = u(rng);
    solve_mass(s.m(), s.d, x.data());
    const Eigen::VectorXd ref = a.ldlt().solve(rhs);
    double err = 0;
    for (int i = 0; i < nv; ++i) err = std::max(err, std::abs(x[static_cast<size_t>(i)] - ref(i)));
    EXPECT_LT(err / ref.cwiseAbs().maxCoeff(), 1e-12) << "h " << h;
  }
}

// Kinetic energy from the bodies' motion (finite differences of the kinematics along qvel) equals
// 1/2 qvel^T M qvel, and its gradient in qvel equals M qvel.
TEST(PhysicsConsistency, KineticEnergyGradientIsMassTimesVelocity) {
  const Model model = branching_tree();
  Sim<double> s(model);
  Sim<double> probe(model);
  const int nv = s.nv(), nq = s.nq();
  std::mt19937_64 rng(3);
  // KE of the bodies (plus the rotors' armature) moving with qvel, from poses at q -/+ eps qvel.
  auto kinetic_fd = [&](const std::vector<double>& qpos, const std::vector<double>& qvel) {
    const double eps = 1e-6;
    std::vector<std::vector<double>> com(2), quat(2);
    for (int side = 0; side < 2; ++side) {
      for (int i = 0; i < nq; ++i) probe.d.qpos[i] = qpos[static_cast<size_t>(i)];
      integrate_positions(probe.m(), probe.d.qpos, qvel.data(), side ? eps : -eps);
      kinematics(probe.m(), probe.d);
      com[static_cast<size_t>(side)] = probe.get(probe.d.xipos, 3 * model.nbody);
      quat[static_cast<size_t>(side)] = probe.get(probe.d.xquat, 4 * model.nbody);
    }
    for (int i = 0; i < nq; ++i) probe.d.qpos[i] = qpos[static_cast<size_t>(i)];
    kinematics(probe.m(), probe.d);
    double ke = 0;
    for (int b = 1; b < model.nbody; ++b) {
      const size_t bs = static_cast<size_t>(b);
      const Vec3<double> v =
          (1 / (2 * eps)) * (Vec3<double>::load(&com[1][3 * bs]) - Vec3<double>::load(&com[0][3 * bs]));
      const Quat<double> qm = Quat<double>::load(&quat[0][4 * bs]), qp = Quat<double>::load(&quat[1][4 * bs]);
      const Quat<double> dq = quat_mul(qp, Quat<double>{qm.w, -qm.x, -qm.y, -qm.z});  // world frame rotation
      const double sign = dq.w < 0 ? -1.0 : 1.0;
      const Vec3<double> w = (sign / eps) * Vec3<double>{dq.x, dq.y, dq.z};  // 2 * vec(dq) / (2 eps)
      const Mat3<double> ri = Mat3<double>::load(probe.d.ximat + 9 * b);
      const Vec3<double> wp{dot(ri.col(0), w), dot(ri.col(1), w), dot(ri.col(2), w)};
      const double* in = &model.body_inertia[3 * bs];
      ke += 0.5 * model.body_mass[bs] * dot(v, v) +
            0.5 * (in[0] * wp.x * wp.x + in[1] * wp.y * wp.y + in[2] * wp.z * wp.z);
    }
    for (int i = 0; i < nv; ++i)
      ke += 0.5 * model.dof_armature[static_cast<size_t>(i)] * qvel[static_cast<size_t>(i)] *
            qvel[static_cast<size_t>(i)];
    return ke;
  };
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<double> qpos, qvel;
    random_state(model, rng, qpos, qvel);
    s.set_state(qpos, qvel);
    forward(s.m(), s.d);
    const double ke = kinetic_energy(s.m(), s.d);
    EXPECT_NEAR(kinetic_fd(qpos, qvel), ke, 1e-8 * ke) << "trial " << trial;
    std::vector<double> grad(static_cast<size_t>(nv)), mv(static_cast<size_t>(nv), 0.0);
    const double h = 1e-3;  // KE is quadratic in qvel: central differences are exact but for rounding
    for (int i = 0; i < nv; ++i) {
      std::vector<double> plus = qvel, minus = qvel;
      plus[static_cast<size_t>(i)] += h, minus[static_cast<size_t>(i)] -= h;
      grad[static_cast<size_t>(i)] = (kinetic_fd(qpos, plus) - kinetic_fd(qpos, minus)) / (2 * h);
      for (int j = 0; j < nv; ++j) mv[static_cast<size_t>(i)] += s.d.qM[i * nv + j] * qvel[static_cast<size_t>(j)];
    }
    EXPECT_LT(rel_err(grad, mv), 1e-6) << "trial " << trial;
  }
}

// Inverse dynamics (RNEA with qacc) of forward dynamics' qacc gives back the applied forces.
TEST(PhysicsConsistency, InverseDynamicsInvertsForward) {
  const Model model = branching_tree();
  Sim<double> s(model);
  const int nv = s.nv();
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int trial = 0; trial < 10; ++trial) {
    std::vector<double> qpos, qvel;
    random_state(model, rng, qpos, qvel);
    s.set_state(qpos, qvel);
    for (int i = 0; i < nv; ++i) s.d.qfrc_applied[i] = 5 * u(rng), s.d.qfrc_actuator[i] = 2 * u(rng);
    forward(s.m(), s.d);
    std::vector<double> tau(static_cast<size_t>(nv)), want(static_cast<size_t>(nv));
    rne(s.m(), s.d, s.d.qacc, tau.data());
    for (int i = 0; i < nv; ++i) {
      // rne gives (M - armature) qacc + bias; the rotors take armature * qacc.
      tau[static_cast<size_t>(i)] += model.dof_armature[static_cast<size_t>(i)] * s.d.qacc[i];
      want[static_cast<size_t>(i)] = s.d.qfrc_applied[i] + s.d.qfrc_actuator[i] + s.d.qfrc_passive[i];
    }
    EXPECT_LT(rel_err(tau, want), 1e-12) << "trial " << trial;
  }
}

// Central-difference gradient of energy(probe) at qpos along each dof's motion (qvel's coordinates:
// integrate_positions moves qpos by +-h along one dof; ball and free rotations in the body frame).
template <class Energy>
std::vector<double> energy_gradient(Sim<double>& probe, const std::vector<double>& qpos, double h, Energy energy) {
  const int nv = probe.nv(), nq = probe.nq();
  std::vector<double> grad(static_cast<size_t>(nv));
  for (int i = 0; i < nv; ++i) {
    std::vector<double> dir(static_cast<size_t>(nv), 0.0);
    dir[static_cast<size_t>(i)] = 1.0;
    double v[2];
    for (int side = 0; side < 2; ++side) {
      for (int k = 0; k < nq; ++k) probe.d.qpos[k] = qpos[static_cast<size_t>(k)];
      integrate_positions(probe.m(), probe.d.qpos, dir.data(), side ? h : -h);
      v[side] = energy(probe);
    }
    grad[static_cast<size_t>(i)] = (v[1] - v[0]) / (2 * h);
  }
  return grad;
}

// Gravity forces (bias at rest) are the gradient of the potential energy along each dof's motion.
TEST(PhysicsConsistency, GravityIsPotentialGradient) {
  const Model model = branching_tree();
  Sim<double> s(model);
  Sim<double> probe(model);
  const int nv = s.nv();
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<double> qpos, qvel;
    random_state(model, rng, qpos, qvel);
    std::fill(qvel.begin(), qvel.end(), 0.0);
    s.set_state(qpos, qvel);
    forward(s.m(), s.d);
    const std::vector<double> bias = s.get(s.d.qfrc_bias, nv);
    const std::vector<double> grad = energy_gradient(probe, qpos, 1e-5, [](Sim<double>& p) {
      kinematics(p.m(), p.d);
      return potential_energy(p.m(), p.d);
    });
    EXPECT_LT(rel_err(grad, bias), 1e-8) << "trial " << trial;
  }
}

// The branching tree with a spring on every joint, resting away from qpos0 where it can (hinge and
// slide springref; a ball rest orientation other than MuJoCo's identity; the free joint's is qpos0).
Model springy_tree() {
  Model m = branching_tree({0, 0, 0});
  const double k[] = {20, 3, 0.7, 1.5, 40, 2, 0.5};  // per joint: free, ball, hinge, hinge, slide, hinge, hinge
  EXPECT_EQ(m.njnt, 7);
  for (int j = 0; j < m.njnt; ++j) {
    m.jnt_stiffness[static_cast<size_t>(j)] = k[j];
    const size_t a = static_cast<size_t>(m.jnt_qposadr[static_cast<size_t>(j)]);
    const int type = m.jnt_type[static_cast<size_t>(j)];
    if (type == kJointBall) {
      const Q4 q = axis_angle({1, 2, -1}, 0.8);
      for (size_t c = 0; c < 4; ++c) m.qpos_spring[a + c] = q[c];
    } else if (type != kJointFree) {
      m.qpos_spring[a] = 0.1 * (j + 1) - 0.35;
    }
  }
  return m;
}

// Spring forces are minus the gradient of spring_energy, for every joint type (for ball and free
// joints along the body-frame rotations that qvel measures), by central differences; and float
// computes the same forces as double.
TEST(PhysicsConsistency, SpringForcesAreEnergyGradient) {
  const Model model = springy_tree();
  Sim<double> s(model), probe(model);
  Sim<float> sf(model);
  const int nv = s.nv();
  std::mt19937_64 rng(11);
  double worst_float = 0;
  for (int trial = 0; trial < 10; ++trial) {
    std::vector<double> qpos, qvel;
    random_state(model, rng, qpos, qvel);
    std::fill(qvel.begin(), qvel.end(), 0.0);  // no damping force
    s.set_state(qpos, qvel), sf.set_state(qpos, qvel);
    forward(s.m(), s.d), forward(sf.m(), sf.d);
    const std::vector<double> passive = s.get(s.d.qfrc_passive, nv);
    std::vector<double> minus_grad =
        energy_gradient(probe, qpos, 1e-6, [](Sim<double>& p) { return spring_energy(p.m(), p.d); });
    for (double& g : minus_grad) g = -g;
    EXPECT_GT(norm(passive), 1.0) << "trial " << trial;
    EXPECT_LT(rel_err(passive, minus_grad), 1e-7) << "trial " << trial;
    worst_float = std::max(worst_float, rel_err(sf.get(sf.d.qfrc_passive, nv), passive));
  }
  EXPECT_LT(worst_float, 1e-5);
}

// Coriolis and centrifugal forces of a hinge/slide chain from Lagrange's equations:
// bias - gravity = dM/dt qvel - d/dq (1/2 qvel^T M qvel), both by central differences.
TEST(PhysicsConsistency, CoriolisMatchesLagrange) {
  const Model model = hinge_slide_chain();
  Sim<double> s(model), probe(model);
  const int nv = s.nv();
  ASSERT_EQ(nv, s.nq());
  std::mt19937_64 rng(6);
  auto mass_at = [&](const std::vector<double>& q) {
    for (int i = 0; i < nv; ++i) probe.d.qpos[i] = q[static_cast<size_t>(i)];
    forward(probe.m(), probe.d);
    return probe.get(probe.d.qM, nv * nv);
  };
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<double> qpos, qvel;
    random_state(model, rng, qpos, qvel);
    s.set_state(qpos, qvel);
    forward(s.m(), s.d);
    const std::vector<double> bias = s.get(s.d.qfrc_bias, nv);
    std::vector<double> zero(static_cast<size_t>(nv), 0.0);
    s.set_state(qpos, zero);
    forward(s.m(), s.d);
    const std::vector<double> gravity = s.get(s.d.qfrc_bias, nv);
    const double h = 1e-5;
    std::vector<double> qp = qpos, qm = qpos;
    for (int i = 0; i < nv; ++i)
      qp[static_cast<size_t>(i)] += h * qvel[static_cast<size_t>(i)],
          qm[static_cast<size_t>(i)] -= h * qvel[static_cast<size_t>(i)];
    const std::vector<double> mp = mass_at(qp), mm = mass_at(qm);
    std::vector<double> coriolis(static_cast<size_t>(nv), 0.0), lagrange(static_cast<size_t>(nv), 0.0);
    for (int i = 0; i < nv; ++i) {
      coriolis[static_cast<size_t>(i)] = bias[static_cast<size_t>(i)] - gravity[static_cast<size_t>(i)];
      for (int j = 0; j < nv; ++j)
        lagrange[static_cast<size_t>(i)] +=
            (mp[static_cast<size_t>(i * nv + j)] - mm[static_cast<size_t>(i * nv + j)]) / (2 * h) *
            qvel[static_cast<size_t>(j)];
      std::vector<double> ei_p = qpos, ei_m = qpos;
      ei_p[static_cast<size_t>(i)] += h, ei_m[static_cast<size_t>(i)] -= h;
      const std::vector<double> a = mass_at(ei_p), b = mass_at(ei_m);
      double dke = 0;
      for (int r = 0; r < nv; ++r)
        for (int c = 0; c < nv; ++c)
          dke += 0.5 * qvel[static_cast<size_t>(r)] *
                 (a[static_cast<size_t>(r * nv + c)] - b[static_cast<size_t>(r * nv + c)]) / (2 * h) *
                 qvel[static_cast<size_t>(c)];
      lagrange[static_cast<size_t>(i)] -= dke;
    }
    EXPECT_LT(rel_err(coriolis, lagrange), 1e-7) << "trial " << trial;
  }
}

// Power balance for every joint type (ball and free included, where qvel is not d qpos / dt):
// d(KE)/dt = qvel . (applied + passive - gravity), KE differentiated along the motion.
TEST(PhysicsConsistency, PowerBalance) {
  const Model model = branching_tree();
  Sim<double> s(model), probe(model);
  const int nv = s.nv(), nq = s.nq();
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<double> qpos, qvel, applied(static_cast<size_t>(nv));
    random_state(model, rng, qpos, qvel);
    for (double& f : applied) f = 3 * u(rng);
    s.set_state(qpos, qvel);
    for (int i = 0; i < nv; ++i) s.d.qfrc_applied[i] = applied[static_cast<size_t>(i)];
    forward(s.m(), s.d);
    const std::vector<double> qacc = s.get(s.d.qacc, nv);
    double power = 0;
    for (int i = 0; i < nv; ++i)
      power += qvel[static_cast<size_t>(i)] * (applied[static_cast<size_t>(i)] + s.d.qfrc_passive[i]);
    std::vector<double> zero(static_cast<size_t>(nv), 0.0);
    s.set_state(qpos, zero);
    forward(s.m(), s.d);
    for (int i = 0; i < nv; ++i) power -= qvel[static_cast<size_t>(i)] * s.d.qfrc_bias[i];
    // KE at t -/+ h: positions moved along qvel (the h^2 terms cancel in the central difference).
    const double h = 1e-5;
    double ke[2];
    for (int side = 0; side < 2; ++side) {
      const double sh = side ? h : -h;
      for (int k = 0; k < nq; ++k) probe.d.qpos[k] = qpos[static_cast<size_t>(k)];
      integrate_positions(probe.m(), probe.d.qpos, qvel.data(), sh);
      for (int i = 0; i < nv; ++i) probe.d.qvel[i] = qvel[static_cast<size_t>(i)] + sh * qacc[static_cast<size_t>(i)];
      forward(probe.m(), probe.d);
      ke[side] = kinetic_energy(probe.m(), probe.d);
    }
    const double dke = (ke[1] - ke[0]) / (2 * h);
    EXPECT_NEAR(dke, power, 1e-6 * (std::abs(power) + 1)) << "trial " << trial;
  }
}

// Float runs the same code as double and agrees to float precision.
TEST(PhysicsConsistency, FloatAgreesWithDouble) {
  const Model model = branching_tree();
  Sim<double> sd(model);
  Sim<float> sf(model);
  const int nv = sd.nv();
  std::mt19937_64 rng(8);
  double worst_m = 0, worst_bias = 0, worst_acc = 0;
  for (int trial = 0; trial < 10; ++trial) {
    std::vector<double> qpos, qvel;
    random_state(model, rng, qpos, qvel);
    sd.set_state(qpos, qvel), sf.set_state(qpos, qvel);
    forward(sd.m(), sd.d), forward(sf.m(), sf.d);
    worst_m = std::max(worst_m, rel_err(sf.get(sf.d.qM, nv * nv), sd.get(sd.d.qM, nv * nv)));
    worst_bias = std::max(worst_bias, rel_err(sf.get(sf.d.qfrc_bias, nv), sd.get(sd.d.qfrc_bias, nv)));
    worst_acc = std::max(worst_acc, rel_err(sf.get(sf.d.qacc, nv), sd.get(sd.d.qacc, nv)));
  }
  std::printf("float vs double: qM %.2e, qfrc_bias %.2e, qacc %.2e\n", worst_m, worst_bias, worst_acc);
  EXPECT_LT(worst_m, 1e-5);
  EXPECT_LT(worst_bias, 1e-5);
  EXPECT_LT(worst_acc, 1e-4);
}

// Euler damping: with implicit_damping the step solves (M + dt D) qacc = f; a heavily damped
// slider (dt * damping / mass = 10, unstable explicitly) decays monotonically.
TEST(PhysicsConsistency, ImplicitDampingIsStable) {
  ModelBuilder b;
  b.timestep(0.01).gravity({0, 0, 0});
  b.body(0, {0, 0, 0}, {1, 0, 0, 0}, 1.0, {0, 0, 0}, {0.01, 0.01, 0.01});
  b.joint(kJointSlide, {1, 0, 0}, {0, 0, 0}, 1000.0);
  const Model model = b.build();
  Sim<double> implicit(model, true), explicit_(model, false);
  implicit.d.qvel[0] = explicit_.d.qvel[0] = 1.0;
  step_euler(implicit.m(), implicit.d);
  step_euler(explicit_.m(), explicit_.d);
  // v1 = v0 - dt b v0 / (m + dt b) = 1 / 11 ; explicitly v1 = v0 (1 - dt b / m) = -9.
  EXPECT_NEAR(implicit.d.qvel[0], 1.0 / 11.0, 1e-15);
  EXPECT_NEAR(explicit_.d.qvel[0], -9.0, 1e-12);
  EXPECT_NEAR(implicit.d.qpos[0], 0.01 / 11.0, 1e-15);
}

// ---- model checks and batches -------------------------------------------------------------------

TEST(PhysicsModel, HostModelRejectsMalformedModels) {
  const Model good = hinge_slide_chain();
  EXPECT_NO_THROW(HostModel<double>{good});
  Model bad = good;
  bad.body_parentid[2] = 3;  // parent after child
  EXPECT_THROW(HostModel<double>{bad}, ModelError);
  bad = good;
  bad.dof_damping.pop_back();
  EXPECT_THROW(HostModel<double>{bad}, ModelError);
  bad = good;
  bad.dof_parentid[1] = 2;
  EXPECT_THROW(HostModel<double>{bad}, ModelError);
  bad = good;
  bad.jnt_qposadr[1] = 0;
  EXPECT_THROW(HostModel<double>{bad}, ModelError);
  bad = good;
  bad.jnt_stiffness.pop_back();
  EXPECT_THROW(HostModel<double>{bad}, ModelError);
  bad = good;
  bad.jnt_stiffness[1] = -1;
  EXPECT_THROW(HostModel<double>{bad}, ModelError);
  bad = good;
  bad.qpos_spring.push_back(0);
  EXPECT_THROW(HostModel<double>{bad}, ModelError);
  {
    ModelBuilder b;  // MuJoCo's compiler rejects this too ("ball followed by rotation")
    b.body(0, {0, 0, 0}, {1, 0, 0, 0}, 1.0, {0, 0, 0}, {0.1, 0.1, 0.1});
    b.joint(kJointBall);
    b.joint(kJointHinge);
    EXPECT_THROW(HostModel<double>{b.build()}, ModelError);
  }
  {
    ModelBuilder b;
    b.body(0, {0, 0, 0}, {1, 0, 0, 0}, 1.0, {0, 0, 0}, {0.1, 0.1, 0.1});
    b.joint(kJointFree);
    b.joint(kJointSlide);
    EXPECT_THROW(HostModel<double>{b.build()}, ModelError);
  }
  try {
    bad = good;
    bad.body_mass.push_back(1.0);
    HostModel<float> h(bad);
    FAIL() << "no throw";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("body_mass"), std::string::npos) << e.what();
  }
}

// A HostModel's view points into its own arrays, also after a copy or a move of it.
TEST(PhysicsModel, HostModelCopiesAndMovesRebindTheirViews) {
  const Model model = hinge_slide_chain();
  auto original = std::make_unique<HostModel<double>>(model);
  const HostModel<double> copy(*original);
  HostModel<double> moved(HostModel<double>{model});
  auto owns = [](const HostModel<double>& h) {
    const double* lo = h.reals().data();
    const double* hi = lo + h.reals().size();
    const int* ilo = h.ints().data();
    return h.view().body_pos == lo && h.view().qpos0 < hi && h.view().body_parentid == ilo;
  };
  EXPECT_TRUE(owns(copy));
  EXPECT_TRUE(owns(moved));
  std::vector<double> row_a(static_cast<size_t>(data_size(copy.view()))), row_b = row_a;
  const DataView<double> a = data_view(copy.view(), row_a.data()), b = data_view(original->view(), row_b.data());
  reset_data(copy.view(), a), reset_data(original->view(), b);
  a.qpos[0] = b.qpos[0] = 0.7;
  forward(original->view(), b);
  original.reset();
  forward(copy.view(), a);
  for (int i = 0; i < model.nv; ++i) EXPECT_EQ(a.qacc[i], b.qacc[i]);
}

// A batch is one array with a row per env; StepEulerEnvs through the CPU executor equals stepping
// each env alone, whatever the thread count.
TEST(PhysicsBatch, StepEulerEnvsMatchesOneByOne) {
  const Model model = branching_tree();
  HostModel<float> host(model);
  const ModelView<float> m = host.view();
  const DataLayout layout = data_layout(m);
  const int num_envs = 37;
  std::vector<float> batch(static_cast<size_t>(num_envs) * static_cast<size_t>(layout.row), 0.0f);
  std::mt19937_64 rng(9);
  for (int e = 0; e < num_envs; ++e) {
    const DataView<float> d = BatchRows<float>{layout, batch.data(), {}}.env(e);
    reset_data(m, d);
    std::vector<double> qpos, qvel;
    random_state(model, rng, qpos, qvel);
    for (int i = 0; i < m.nq; ++i) d.qpos[i] = static_cast<float>(qpos[static_cast<size_t>(i)]);
    for (int i = 0; i < m.nv; ++i) d.qvel[i] = static_cast<float>(qvel[static_cast<size_t>(i)]);
  }
  std::vector<float> serial = batch;
  for (int e = 0; e < num_envs; ++e) StepEulerEnvs<float>{m, layout, serial.data(), 25}(e);
  CpuExecutor exec(3);
  parallel_for(exec, num_envs, StepEulerEnvs<float>{m, layout, batch.data(), 25});
  for (int e = 0; e < num_envs; ++e) {
    const size_t row = static_cast<size_t>(e) * static_cast<size_t>(layout.row);
    for (int i = 0; i < m.nq; ++i)
      ASSERT_EQ(batch[row + static_cast<size_t>(layout.qpos + i)], serial[row + static_cast<size_t>(layout.qpos + i)]);
    for (int i = 0; i < m.nv; ++i)
      ASSERT_EQ(batch[row + static_cast<size_t>(layout.qvel + i)], serial[row + static_cast<size_t>(layout.qvel + i)]);
  }
  // The envs really moved, and differently.
  EXPECT_NE(batch[static_cast<size_t>(layout.qpos)], batch[static_cast<size_t>(layout.row + layout.qpos)]);
}


// tree_ltdl_factor runs each ancestor row's update over the span from its tree's first dof
// (dof_treestart) instead of following the parent links; the ancestor entries must come out with
// the bits of the link-following elimination (the same operations per entry, in the same order),
// and the entries between them, zero when loaded, must stay zero (so the span never carries
// garbage). It also eliminates runs of consecutive parent-child dofs together (kLtdlRun): the free
// joints' six dofs (runs of 4 and 2), the hinge-then-ball chain (a run of 4 across two bodies), the
// hinge-and-slide body, the G1's limbs; they must give the same bits too. Checked on M + h
// diag(damping) along random-control runs of a model with three trees (a branching free body, a
// free box, a hinge chain on the world) and of the G1, in float and double.
// The same for the spans of tree_ltdl_solve's L^T pass and of the Newton line search's M x.
template <class T>
void check_span_factor_matches_parent_links(const std::string& path, int substeps) {
  const Model model = load_mjcf(path);
  Sim<T> s(model);
  const ModelView<T>& m = s.m();
  const int nv = m.nv;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<T> ctrl(static_cast<size_t>(m.nu) + 1), ref(static_cast<size_t>(nv * nv));
  int trees = 0, compared = 0;
  for (int i = 0; i < nv; ++i) trees += m.dof_parentid[i] < 0;
  for (int step = 0; step < substeps; ++step) {
    for (int k = 0; k < m.nu; ++k) ctrl[static_cast<size_t>(k)] = static_cast<T>(u(rng));
    physics_substep(m, s.d, ctrl.data());
    factor_mass_load(m, s.d, T(0.01));
    // the reference: the parent-link elimination on the ancestor entries, NaN elsewhere (never read)
    for (auto& v : ref) v = std::numeric_limits<T>::quiet_NaN();
    for (int i = 0; i < nv; ++i)
      for (int j = i; j >= 0; j = m.dof_parentid[j]) ref[static_cast<size_t>(i * nv + j)] = s.d.qLD[i * nv + j];
    for (int k = nv - 1; k >= 0; --k) {
      const T inv_dkk = T(1) / ref[static_cast<size_t>(k * nv + k)];
      for (int i = m.dof_parentid[k]; i >= 0; i = m.dof_parentid[i]) {
        const T a = ref[static_cast<size_t>(k * nv + i)] * inv_dkk;
        for (int j = i; j >= 0; j = m.dof_parentid[j])
          ref[static_cast<size_t>(i * nv + j)] -= ref[static_cast<size_t>(k * nv + j)] * a;
        ref[static_cast<size_t>(k * nv + i)] = a;
      }
    }
    factor_mass_eliminate(m, s.d);
    for (int i = 0; i < nv; ++i) {
      std::vector<bool> ancestor(static_cast<size_t>(nv), false);
      for (int j = i; j >= 0; j = m.dof_parentid[j]) ancestor[static_cast<size_t>(j)] = true;
      for (int j = m.dof_treestart[i]; j <= i; ++j) {
        const T got = s.d.qLD[i * nv + j];
        if (ancestor[static_cast<size_t>(j)]) {
          ASSERT_EQ(std::memcmp(&got, &ref[static_cast<size_t>(i * nv + j)], sizeof(T)), 0)
              << path << " substep " << step << " entry (" << i << ", " << j << "): " << got << " vs "
              << ref[static_cast<size_t>(i * nv + j)];
          ++compared;
        } else {
          ASSERT_EQ(got, T(0)) << path << " substep " << step << " entry (" << i << ", " << j << ") between ancestors";
        }
      }
    }
    // tree_ltdl_solve (its L^T pass over the spans) against the parent-link solve on the reference
    // factors, and the Newton line search's mass_product (its mirror over the spans) against the
    // parent-link product, on a random right-hand side with some exact zeros
    std::vector<T> x(static_cast<size_t>(nv)), xref(static_cast<size_t>(nv)), y(static_cast<size_t>(nv)),
        yref(static_cast<size_t>(nv), T(0));
    for (int i = 0; i < nv; ++i) x[static_cast<size_t>(i)] = i % 5 == 3 ? T(0) : static_cast<T>(u(rng));
    const auto R = [&](int i, int j) { return ref[static_cast<size_t>(i * nv + j)]; };
    xref = x;
    for (int i = nv - 1; i >= 0; --i)
      for (int j = m.dof_parentid[i]; j >= 0; j = m.dof_parentid[j])
        xref[static_cast<size_t>(j)] -= R(i, j) * xref[static_cast<size_t>(i)];
    for (int i = 0; i < nv; ++i) xref[static_cast<size_t>(i)] /= R(i, i);
    for (int i = 0; i < nv; ++i)
      for (int j = m.dof_parentid[i]; j >= 0; j = m.dof_parentid[j])
        xref[static_cast<size_t>(i)] -= R(i, j) * xref[static_cast<size_t>(j)];
    for (int i = 0; i < nv; ++i) {
      yref[static_cast<size_t>(i)] += s.d.qM[i * nv + i] * x[static_cast<size_t>(i)];
      for (int j = m.dof_parentid[i]; j >= 0; j = m.dof_parentid[j]) {
        yref[static_cast<size_t>(i)] += s.d.qM[i * nv + j] * x[static_cast<size_t>(j)];
        yref[static_cast<size_t>(j)] += s.d.qM[i * nv + j] * x[static_cast<size_t>(i)];
      }
    }
    constraint_detail::mass_product(m, s.d, x.data(), y.data());
    tree_ltdl_solve(m, static_cast<const T*>(s.d.qLD), x.data());
    for (int i = 0; i < nv; ++i) {
      ASSERT_EQ(std::memcmp(&x[static_cast<size_t>(i)], &xref[static_cast<size_t>(i)], sizeof(T)), 0)
          << path << " substep " << step << " solve, dof " << i << ": " << x[static_cast<size_t>(i)] << " vs "
          << xref[static_cast<size_t>(i)];
      ASSERT_EQ(std::memcmp(&y[static_cast<size_t>(i)], &yref[static_cast<size_t>(i)], sizeof(T)), 0)
          << path << " substep " << step << " M x, dof " << i << ": " << y[static_cast<size_t>(i)] << " vs "
          << yref[static_cast<size_t>(i)];
    }
  }
  EXPECT_GT(compared, 0);
  if (path.find("three_trees") != std::string::npos) {
    EXPECT_EQ(trees, 3);
  }
}

// mass_matrix fills M column by column over each dof's subtree (dof_subtreeend, crb_cdof) and
// carries composite inertias down chains in registers; kinematics skips the anchor rotations of
// joints at their body's origin (jnt_at_origin). Each must give the bits of the plain loops they
// replaced: MuJoCo's row-by-row CRBA along the parent links (composite inertias added in memory,
// leaves first) and the joint loop with every rotation, written out here. Along random-control runs,
// in float and double. dof_subtreeend is checked against its definition (the last dof whose chain
// passes through i).
template <class T>
void check_crba_and_kinematics_shortcuts(const std::string& path, int substeps) {
  const Model model = load_mjcf(path);
  Sim<T> s(model);
  const ModelView<T>& m = s.m();
  const int nv = m.nv;
  for (int i = 0; i < nv; ++i) {
    int last = i;
    for (int k = i + 1; k < nv; ++k)
      for (int a = k; a >= 0; a = m.dof_parentid[a])
        if (a == i) last = k;
    ASSERT_EQ(m.dof_subtreeend[i], last) << path << " dof " << i;
  }
  int at_origin = 0;
  for (int j = 0; j < m.njnt; ++j) at_origin += m.jnt_at_origin[j];
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<T> ctrl(static_cast<size_t>(m.nu) + 1), crb(static_cast<size_t>(10 * m.nbody)),
      qm(static_cast<size_t>(nv * nv));
  int compared = 0;
  for (int step = 0; step < substeps; ++step) {
    for (int k = 0; k < m.nu; ++k) ctrl[static_cast<size_t>(k)] = static_cast<T>(u(rng));
    physics_substep(m, s.d, ctrl.data());
    kinematics(m, s.d);
    com_position(m, s.d);
    mass_matrix(m, s.d);
    // CRBA, row by row along the parent links
    for (int k = 0; k < 10 * m.nbody; ++k) crb[static_cast<size_t>(k)] = s.d.cinert[k];
    for (int b = m.nbody - 1; b > 0; --b)
      if (m.body_parentid[b] > 0) add_inertia(crb.data() + 10 * m.body_parentid[b], crb.data() + 10 * b);
    for (auto& v : qm) v = T(0);
    for (int i = 0; i < nv; ++i) {
      const SVec<T> f = Inertia<T>::load(crb.data() + 10 * m.dof_bodyid[i]) * SVec<T>::load(s.d.cdof + 6 * i);
      for (int j = i; j >= 0; j = m.dof_parentid[j])
        qm[static_cast<size_t>(i * nv + j)] = qm[static_cast<size_t>(j * nv + i)] =
            dot(f, SVec<T>::load(s.d.cdof + 6 * j));
      qm[static_cast<size_t>(i * nv + i)] += m.dof_armature[i];
    }
    ASSERT_EQ(std::memcmp(crb.data(), s.d.crb, sizeof(T) * crb.size()), 0) << path << " substep " << step << ": crb";
    for (int k = 0; k < nv * nv; ++k)
      ASSERT_EQ(std::memcmp(&qm[static_cast<size_t>(k)], &s.d.qM[k], sizeof(T)), 0)
          << path << " substep " << step << " qM(" << k / nv << ", " << k % nv << "): " << s.d.qM[k] << " vs "
          << qm[static_cast<size_t>(k)];
    // kinematics' joints with every rotation (bodies with hinge, slide or ball joints)
    for (int b = 1; b < m.nbody; ++b) {
      const int jadr = m.body_jntadr[b], jnum = m.body_jntnum[b], parent = m.body_parentid[b];
      if (jnum == 0 || m.jnt_type[jadr] == kJointFree) continue;
      Vec3<T> pos = Vec3<T>::load(s.d.xpos + 3 * parent) +
                    Mat3<T>::load(s.d.xmat + 9 * parent) * Vec3<T>::load(m.body_pos + 3 * b);
      Quat<T> quat = quat_mul(Quat<T>::load(s.d.xquat + 4 * parent), Quat<T>::load(m.body_quat + 4 * b));
      for (int j = jadr; j < jadr + jnum; ++j) {
        const T* q = s.d.qpos + m.jnt_qposadr[j];
        const T angle = q[0] - m.qpos0[m.jnt_qposadr[j]];
        const Vec3<T> local_axis = Vec3<T>::load(m.jnt_axis + 3 * j), local_pos = Vec3<T>::load(m.jnt_pos + 3 * j);
        const Vec3<T> anchor = pos + quat_rotate(quat, local_pos);
        if (m.jnt_type[j] == kJointSlide) {
          pos += angle * quat_rotate(quat, local_axis);
        } else {
          quat = quat_mul(quat, m.jnt_type[j] == kJointBall ? quat_normalize(Quat<T>::load(q))
                                                            : quat_from_axis_angle(local_axis, angle));
          pos = anchor - quat_rotate(quat, local_pos);
        }
        T got[3], want[3];
        anchor.store(want);
        for (int k = 0; k < 3; ++k) got[k] = s.d.xanchor[3 * j + k];
        ASSERT_EQ(std::memcmp(got, want, sizeof(got)), 0) << path << " substep " << step << " joint " << j << " anchor";
      }
      T got[7], want[7];
      pos.store(want), quat_normalize(quat).store(want + 3);
      for (int k = 0; k < 3; ++k) got[k] = s.d.xpos[3 * b + k];
      for (int k = 0; k < 4; ++k) got[3 + k] = s.d.xquat[4 * b + k];
      ASSERT_EQ(std::memcmp(got, want, sizeof(got)), 0) << path << " substep " << step << " body " << b;
      ++compared;
    }
  }
  EXPECT_GT(compared, 0);
  EXPECT_GT(at_origin, 0) << path;
}

TEST(TreeFactors, CrbaColumnsAndKinematicsShortcutsGiveThePlainBits) {
  const std::string dir = std::string(RLT_SOURCE_DIR);
  for (const std::string& path : {dir + "/envs/assets/g1/scene_mjx_feetonly_flat_terrain.xml",
                                 dir + "/envs/assets/humanoid.xml", dir + "/tests/data/mjcf/dyn_ball_chain.xml",
                                 dir + "/tests/data/mjcf/dyn_slide_hinge.xml"}) {
    check_crba_and_kinematics_shortcuts<float>(path, 100);
    check_crba_and_kinematics_shortcuts<double>(path, 100);
  }
}

TEST(TreeFactors, SpanEliminationGivesTheParentLinkBits) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("rlt_three_trees_" + std::to_string(::getpid()) + ".xml")).string();
  std::ofstream(path) << R"(<mujoco><option timestep="0.002"/>
  <worldbody><geom type="plane" size="5 5 0.1"/>
    <body pos="0 0 1"><freejoint/><geom type="sphere" size="0.1" mass="1"/>
      <body pos="0.2 0 0"><joint name="a" type="hinge" axis="0 1 0" damping="0.5"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/>
        <body pos="0.3 0 0"><joint type="ball"/><geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/></body></body>
      <body pos="-0.2 0 0"><joint name="b" type="hinge" axis="0 1 0"/><joint type="slide" axis="1 0 0"/>
        <geom type="capsule" fromto="0 0 0 -0.3 0 0" size="0.04"/></body></body>
    <body pos="1 0 0.5"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="2"/></body>
    <body pos="0 1 0.5"><joint name="c" type="hinge" axis="1 0 0"/><geom type="capsule" fromto="0 0 0 0 0.3 0" size="0.04"/>
      <body pos="0 0.3 0"><joint type="hinge" axis="1 0 0"/><geom type="capsule" fromto="0 0 0 0 0.3 0" size="0.04"/></body></body>
  </worldbody>
  <actuator><motor joint="a" gear="5"/><motor joint="b" gear="5"/><motor joint="c" gear="5"/></actuator></mujoco>)";
  check_span_factor_matches_parent_links<float>(path, 300);
  check_span_factor_matches_parent_links<double>(path, 300);
  std::remove(path.c_str());
  const std::string g1 = std::string(RLT_SOURCE_DIR) + "/envs/assets/g1/scene_mjx_feetonly_flat_terrain.xml";
  check_span_factor_matches_parent_links<float>(g1, 200);
  check_span_factor_matches_parent_links<double>(g1, 200);
}

// physics_step's inner substeps place only the geoms and sites a substep reads (ModelView::geom_substep,
// site_substep; the last substep places them all): the rows end bit for bit as those of substeps that
// place every pose, on models whose substeps read geoms and sites (tendons wrapping on geoms with side
// sites, site and slider-crank transmissions, site welds) and on the Playground scenes, whose visual
// geoms and sensor sites the inner substeps skip.
template <class T>
void check_inner_substep_poses(const std::string& path, int substeps, int steps) {
  const Model model = load_mjcf(path);
  const HostModel<T> host(model);
  const ModelView<T>& m = host.view();
  std::vector<T> row_a(static_cast<size_t>(data_size(m)), T(0)), row_b = row_a;
  const DataView<T> a = data_view(m, row_a.data()), b = data_view(m, row_b.data());
  reset_data(m, a), reset_data(m, b);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<T> ctrl(static_cast<size_t>(m.nu) + 1, T(0));
  for (int step = 0; step < steps; ++step) {
    for (int k = 0; k < m.nu; ++k) {
      const double lo = m.actuator_ctrllimited[k] ? static_cast<double>(m.actuator_ctrlrange[2 * k]) : -1.0;
      const double hi = m.actuator_ctrllimited[k] ? static_cast<double>(m.actuator_ctrlrange[2 * k + 1]) : 1.0;
      ctrl[static_cast<size_t>(k)] = static_cast<T>(lo + (hi - lo) * u(rng));
    }
    physics_step(m, a, ctrl.data(), substeps, static_cast<int*>(nullptr));
    for (int s = 0; s < substeps; ++s) physics_substep(m, b, ctrl.data(), m.nsensor > 0 && s == substeps - 1, true);
    contact_external_forces(m, b, m.timestep);
    ASSERT_EQ(std::memcmp(row_a.data(), row_b.data(), row_a.size() * sizeof(T)), 0) << path << " step " << step;
  }
}

TEST(InnerSubstepPoses, StepsEndAsWithEveryPosePlaced) {
  const std::string dir = std::string(RLT_SOURCE_DIR);
  for (const char* f : {"/tests/data/mjcf/tendon_spatial.xml", "/tests/data/mjcf/trn/site.xml",
                        "/tests/data/mjcf/trn/slidercrank_implicitfast.xml", "/tests/data/mjcf/misc/equality_weld.xml",
                        "/tests/data/mjcf/mujoco3/sensors_camera_modes.xml", "/envs/assets/ant.xml",
                        "/envs/assets/go1/scene_mjx_feetonly_flat_terrain.xml",
                        "/envs/assets/g1/scene_mjx_feetonly_flat_terrain.xml"}) {
    check_inner_substep_poses<float>(dir + f, 4, 30);
    check_inner_substep_poses<double>(dir + f, 3, 20);
  }
}

// The poses outside the lists are not read by a substep: with every geom and site pose outside
// geom_substep / site_substep set to NaN, an inner substep gives the bits of one that placed them all
// (a listed pose left out would carry the NaN into qacc). The Playground scenes' lists hold their
// colliders alone.
template <class T>
void check_unlisted_poses_unread(const std::string& path) {
  const HostModel<T> host(load_mjcf(path));
  const ModelView<T>& m = host.view();
  std::vector<T> row_a(static_cast<size_t>(data_size(m)), T(0)), row_b = row_a;
  const DataView<T> a = data_view(m, row_a.data()), b = data_view(m, row_b.data());
  reset_data(m, a);
  std::vector<T> ctrl(static_cast<size_t>(m.nu) + 1, T(0));
  for (int k = 0; k < m.nu; ++k) ctrl[static_cast<size_t>(k)] = T(0.3);
  physics_step(m, a, ctrl.data(), 5, static_cast<int*>(nullptr));
  row_b = row_a;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<char> geom_listed(static_cast<size_t>(m.ngeom), 0), site_listed(static_cast<size_t>(m.nsite), 0);
  for (int k = 0; k < m.ngeom_substep; ++k) geom_listed[static_cast<size_t>(m.geom_substep[k])] = 1;
  for (int k = 0; k < m.nsite_substep; ++k) site_listed[static_cast<size_t>(m.site_substep[k])] = 1;
  for (int g = 0; g < m.ngeom; ++g)
    for (int q = 0; q < 12 && !geom_listed[static_cast<size_t>(g)]; ++q)
      (q < 3 ? b.geom_xpos[3 * g + q] : b.geom_xmat[9 * g + q - 3]) = nan;
  for (int s = 0; s < m.nsite; ++s)
    for (int q = 0; q < 12 && !site_listed[static_cast<size_t>(s)]; ++q)
      (q < 3 ? b.site_xpos[3 * s + q] : b.site_xmat[9 * s + q - 3]) = nan;
  physics_substep(m, a, ctrl.data(), false, true);
  physics_substep(m, b, ctrl.data(), false, false);
  for (int i = 0; i < m.nv; ++i) ASSERT_TRUE(std::isfinite(static_cast<double>(b.qacc[i]))) << path << " dof " << i;
  EXPECT_EQ(std::memcmp(a.qpos, b.qpos, sizeof(T) * static_cast<size_t>(m.nq)), 0) << path;
  EXPECT_EQ(std::memcmp(a.qvel, b.qvel, sizeof(T) * static_cast<size_t>(m.nv)), 0) << path;
  EXPECT_EQ(std::memcmp(a.qacc, b.qacc, sizeof(T) * static_cast<size_t>(m.nv)), 0) << path;
}

TEST(InnerSubstepPoses, PosesOutsideTheListsAreNotRead) {
  const std::string dir = std::string(RLT_SOURCE_DIR);
  for (const char* f : {"/tests/data/mjcf/tendon_spatial.xml", "/tests/data/mjcf/trn/site.xml",
                        "/tests/data/mjcf/trn/slidercrank_implicitfast.xml", "/tests/data/mjcf/misc/equality_weld.xml",
                        "/envs/assets/go1/scene_mjx_feetonly_flat_terrain.xml",
                        "/envs/assets/g1/scene_mjx_feetonly_flat_terrain.xml"}) {
    check_unlisted_poses_unread<float>(dir + f);
    check_unlisted_poses_unread<double>(dir + f);
  }
  for (const char* f : {"/envs/assets/go1/scene_mjx_feetonly_flat_terrain.xml",
                        "/envs/assets/g1/scene_mjx_feetonly_flat_terrain.xml"}) {
    const HostModel<float> host(load_mjcf(dir + f));
    const ModelView<float>& m = host.view();
    EXPECT_EQ(std::vector<int>(m.geom_substep, m.geom_substep + m.ngeom_substep),
              std::vector<int>(m.geom_collider, m.geom_collider + m.ncollider)) << f;
    EXPECT_LT(m.ngeom_substep, m.ngeom) << f;
    EXPECT_EQ(m.nsite_substep, 0) << f;  // (their sites are the sensors')
  }
}

TEST(TreeFactors, DofDepthIsTheChainLength) {
  const std::string dir = std::string(RLT_SOURCE_DIR);
  for (const char* f : {"/envs/assets/humanoid.xml", "/envs/assets/g1/scene_mjx_feetonly_flat_terrain.xml",
                        "/tests/data/mjcf/dyn_ball_chain.xml"}) {
    const HostModel<float> host(load_mjcf(dir + f));
    const ModelView<float>& m = host.view();
    for (int i = 0; i < m.nv; ++i) {
      int chain = 0;
      for (int j = i; j >= 0; j = m.dof_parentid[j]) ++chain;
      EXPECT_EQ(m.dof_depth[i], chain) << f << " dof " << i;
    }
  }
}

}  // namespace
}  // namespace rlt
