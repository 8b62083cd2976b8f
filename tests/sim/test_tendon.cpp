// Tendons (sim/tendon.h, sim/mjcf_tendons.cpp): moment arms against finite differences of the
// length, velocity = J qvel, the passive spring's deadband, the compiler's refusals. (Trajectories
// against MuJoCo itself: the mujoco_peer_tendon_* ctest tests.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "sim/mjcf.h"
#include "sim/physics_step.h"
#include "tests/sim/test_dynamics_util.h"

namespace rlt {
namespace {
using test::Sim;

std::string data_file(const char* name) { return std::string(RLT_MJCF_DATA_DIR) + "/" + name; }
std::string sci(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", x);
  return buf;
}

// Lengths and moments at the current qpos (kinematics, com, tendons).
void tendons_at(Sim<double>& s) {
  kinematics(s.m(), s.d);
  com_position(s.m(), s.d);
  tendon_kinematics(s.m(), s.d);
}

// Every tendon's J against central differences of its length along each dof (positions moved on
// the joint manifold, integrate_positions), at random states; ten_velocity against J qvel.
// Returns, per tendon, the states whose path had more points than at the first (a geom wrapped).
void check_moments(const char* file, int states, double tol, std::vector<int>* wrapped = nullptr) {
  const Model model = load_mjcf(data_file(file));
  ASSERT_GT(model.ntendon, 0);
  Sim<double> s(model);
  const int nq = s.nq(), nv = s.nv(), nt = model.ntendon;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-0.8, 0.8);
  const double eps = 1e-6;
  double worst = 0;
  for (int k = 0; k < states; ++k) {
    std::vector<double> q0(s.m().qpos0, s.m().qpos0 + nq), dq(static_cast<size_t>(nv));
    for (double& x : dq) x = u(rng);
    integrate_positions(s.m(), q0.data(), dq.data(), 1.0);
    for (int i = 0; i < nq; ++i) s.d.qpos[i] = q0[static_cast<size_t>(i)];
    for (int i = 0; i < nv; ++i) s.d.qvel[i] = u(rng);
    tendons_at(s);
    const std::vector<double> J = s.get(s.d.ten_J, nt * nv), vel = s.get(s.d.ten_velocity, nt);
    if (wrapped) {
      wrapped->resize(static_cast<size_t>(nt));
      for (int t = 0; t < nt; ++t)  // sites and pulleys give one point each, a wrapped geom two
        (*wrapped)[static_cast<size_t>(t)] += s.d.ten_wrapnum[t] > model.tendon_num[static_cast<size_t>(t)] ? 1 : 0;
    }
    for (int t = 0; t < nt; ++t) {
      double jv = 0;
      for (int i = 0; i < nv; ++i) jv += J[static_cast<size_t>(t * nv + i)] * s.d.qvel[i];
      EXPECT_NEAR(vel[static_cast<size_t>(t)], jv, 1e-12) << file << " tendon " << t;
    }
    for (int i = 0; i < nv; ++i) {
      std::vector<double> L[2];
      for (int side = 0; side < 2; ++side) {
        std::vector<double> q = q0, step(static_cast<size_t>(nv), 0.0);
        step[static_cast<size_t>(i)] = side == 0 ? eps : -eps;
        integrate_positions(s.m(), q.data(), step.data(), 1.0);
        for (int c = 0; c < nq; ++c) s.d.qpos[c] = q[static_cast<size_t>(c)];
        tendons_at(s);
        L[side] = s.get(s.d.ten_length, nt);
      }
      for (int t = 0; t < nt; ++t) {
        const double fd = (L[0][static_cast<size_t>(t)] - L[1][static_cast<size_t>(t)]) / (2 * eps);
        const double err = std::abs(fd - J[static_cast<size_t>(t * nv + i)]);
        worst = std::max(worst, err);
        EXPECT_NEAR(fd, J[static_cast<size_t>(t * nv + i)], tol) << file << " tendon " << t << " dof " << i;
      }
    }
  }
  ::testing::Test::RecordProperty("worst_fd_error", sci(worst));
}

TEST(Tendons, FixedMomentsAreTheLengthsDerivatives) { check_moments("tendon_fixed.xml", 10, 1e-8); }

// Spatial paths through sites, a pulley, a sphere (side site), a cylinder and an inside wrap (its
// tangent point from Newton's method, hence the looser tolerance; measured 9e-9), and a free body.
TEST(Tendons, SpatialMomentsAreTheLengthsDerivatives) {
  std::vector<int> wrapped;
  check_moments("tendon_spatial.xml", 40, 1e-7, &wrapped);
  // the three geom tendons wrapped in some of the states and went straight in others
  for (int t = 0; t < 3; ++t) {
    EXPECT_GT(wrapped[static_cast<size_t>(t)], 0) << t;
    EXPECT_LT(wrapped[static_cast<size_t>(t)], 40) << t;
  }
}

TEST(Tendons, FixedLengthIsTheCoefWeightedQpos) {
  const Model model = load_mjcf(data_file("tendon_fixed.xml"));
  Sim<double> s(model);
  const double q[5] = {0.3, -0.2, 0.5, 0.1, -0.4};
  for (int i = 0; i < 5; ++i) s.d.qpos[i] = q[i];
  tendons_at(s);
  EXPECT_DOUBLE_EQ(s.d.ten_length[0], 0.3 - 0.7 * -0.2);              // ab: a - 0.7 b
  EXPECT_DOUBLE_EQ(s.d.ten_length[1], 0.5 * -0.2 + 0.5 + 0.3 * 0.3);  // bc: 0.5 b + c + 0.3 a
  EXPECT_DOUBLE_EQ(s.d.ten_length[2], 2 * 0.1 + 0.3 * -0.4);          // sh: 2 s + 0.3 h
  // springlength: explicit [-0.2, 0.1]; default: the length at qpos_spring (a's springref 10 deg)
  EXPECT_DOUBLE_EQ(s.m().tendon_lengthspring[0], -0.2);
  EXPECT_DOUBLE_EQ(s.m().tendon_lengthspring[1], 0.1);
  EXPECT_NEAR(s.m().tendon_lengthspring[2], 0.3 * 10 * M_PI / 180, 1e-15);
  EXPECT_NEAR(s.m().tendon_lengthspring[3], 0.3 * 10 * M_PI / 180, 1e-15);
}

// Inside the deadband the spring is silent; outside, it pulls back toward the nearer end.
TEST(Tendons, SpringDeadband) {
  const Model model = parse_mjcf(
      "<mujoco><worldbody><body><joint name='j' axis='0 1 0'/><geom size='.1' mass='1'/></body></worldbody>"
      "<tendon><fixed springlength='-0.1 0.2' stiffness='3'><joint joint='j' coef='2'/></fixed></tendon></mujoco>",
      "deadband.xml");
  Sim<double> s(model);
  for (double q : {-0.2, -0.01, 0.0, 0.05, 0.3}) {
    s.d.qpos[0] = q, s.d.qvel[0] = 0;
    smooth_forces(s.m(), s.d);
    tendon_forward(s.m(), s.d);
    const double L = 2 * q, x = L > 0.2 ? L - 0.2 : L < -0.1 ? L + 0.1 : 0;
    EXPECT_NEAR(s.d.qfrc_passive[0], -3 * x * 2, 1e-14) << q;
  }
}

// The float build (the GPU's) follows the double one on the spatial model: wraps, pulley, limits,
// tendon actuators, from the keyframe under a fixed control for 200 steps.
TEST(Tendons, FloatFollowsDouble) {
  const Model model = load_mjcf(data_file("tendon_spatial.xml"));
  Sim<double> sd(model);
  Sim<float> sf(model);
  const std::vector<double> qpos(model.key_qpos.begin(), model.key_qpos.begin() + model.nq);
  const std::vector<double> qvel(model.key_qvel.begin(), model.key_qvel.begin() + model.nv);
  sd.set_state(qpos, qvel);
  sf.set_state(qpos, qvel);
  const double ctrl_d[3] = {0.5, 0.4, -0.3};
  const float ctrl_f[3] = {0.5f, 0.4f, -0.3f};
  double worst = 0;
  for (int k = 0; k < 200; ++k) {
    physics_step(sd.m(), sd.d, ctrl_d, 1, nullptr);
    physics_step(sf.m(), sf.d, ctrl_f, 1, nullptr);
    for (int i = 0; i < model.nq; ++i) worst = std::max(worst, std::abs(sd.d.qpos[i] - double(sf.d.qpos[i])));
  }
  ::testing::Test::RecordProperty("worst_qpos_difference", sci(worst));
  EXPECT_LT(worst, 1e-4);  // measured 1e-6
  for (int t = 0; t < model.ntendon; ++t) EXPECT_NEAR(sd.d.ten_length[t], sf.d.ten_length[t], 1e-4) << t;
}

TEST(Tendons, CompilerRefusals) {
  auto error_of = [](const std::string& body) {
    try {
      parse_mjcf(
          "<mujoco><worldbody><body><joint name='j'/><joint name='f' type='ball'/><geom size='.1'/>"
          "<site name='s'/></body></worldbody>\n" +
              body + "</mujoco>",
          "t.xml");
    } catch (const MjcfError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of("<tendon><fixed><joint joint='f' coef='1'/></fixed></tendon>").find("hinge and slide joints only"),
            std::string::npos);
  EXPECT_NE(error_of("<tendon><fixed><joint joint='j'/></fixed></tendon>").find("\"coef\" is required"),
            std::string::npos);
  EXPECT_NE(error_of("<tendon><fixed/></tendon>").find("at least one wrap"), std::string::npos);
  EXPECT_NE(error_of("<tendon><spatial><site site='s'/><pulley divisor='2'/></spatial></tendon>")
                .find("a pulley must have a site on each side"),
            std::string::npos);
  EXPECT_NE(error_of("<tendon><spatial><site site='s'/></spatial></tendon>").find("start and end with a site"),
            std::string::npos);
  EXPECT_NE(error_of("<tendon><fixed armature='1'><joint joint='j' coef='1'/></fixed></tendon>").find("armature"),
            std::string::npos);
  EXPECT_NE(error_of("<tendon><fixed springlength='0.2 0.1'><joint joint='j' coef='1'/></fixed></tendon>")
                .find("springlength"),
            std::string::npos);
  EXPECT_EQ(error_of("<tendon><fixed name='t'><joint joint='j' coef='1'/></fixed></tendon>"
                     "<actuator><motor tendon='t'/></actuator><sensor><tendonpos tendon='t'/></sensor>"),
            "");
}

}  // namespace
}  // namespace rlt
