// Inertial frames and sameframe (issue 16, dm_control's dog): MuJoCo 3.17's eigen solver for the
// principal axes (sim/mjcf_user_math.h), the compiler's sameframe flags (sim/mjcf_inertia.cpp) and
// kinematics copying the flagged frames (sim/dynamics.h local_to_global). The flags expected below
// are MuJoCo 3.17's compiled model of tests/data/mjcf/structure/inertial_frames.xml (python:
// mujoco.MjModel.from_xml_path(...).geom_sameframe etc.); tools/mujoco_peer.py compares every
// frame and flag of it with MuJoCo and its trajectories (ctest mujoco_peer_structure_inertial_frames).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "sim/dynamics.h"
#include "sim/mjcf.h"
#include "sim/mjcf_user_math.h"
#include "sim/model_view.h"
#include "tests/sim/mjcf_test_util.h"
#include "tests/sim/test_dynamics_util.h"

namespace rlt {
namespace {

using testing_util::mjcf_data;
namespace mjuu = mjcf_detail::mjuu;

// Symmetric 3x3 test matrices: random inertias, and nearly symmetric ones (two moments within
// 1e-16..1e-3 of each other), the case where solvers part.
std::vector<std::vector<double>> test_inertias() {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> n01(0, 1);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::vector<double>> out;
  for (int k = 0; k < 200; ++k) {
    double q[4], s = 0;
    for (double& c : q) c = n01(rng), s += c * c;
    for (double& c : q) c /= std::sqrt(s);
    double r[9];
    mjuu::quat2mat(r, q);
    const double a = 0.5 + u(rng);
    const double moments[3] = {a, k % 2 ? a * (1 + std::pow(10.0, -16 + 13 * u(rng))) : 0.5 + u(rng), 0.3 + u(rng)};
    std::vector<double> mat(9, 0.0);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        for (int l = 0; l < 3; ++l) mat[3 * i + j] += r[3 * i + l] * moments[l] * r[3 * j + l];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < i; ++j) mat[3 * i + j] = mat[3 * j + i];  // exactly symmetric
    out.push_back(mat);
  }
  return out;
}

// The decomposition reproduces the matrix, its moments come in decreasing order and its quaternion
// is a unit one.
TEST(MjcfFrames, Eig3DecomposesTheMatrix) {
  for (const std::vector<double>& mat : test_inertias()) {
    double eigval[3], quat[4], r[9];
    mjuu::eig3(eigval, quat, mat.data(), mjuu::kEigTolBody);
    EXPECT_NEAR(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3], 1.0, 1e-14);
    EXPECT_GE(eigval[0] + 1e-12, eigval[1]);
    EXPECT_GE(eigval[1] + 1e-12, eigval[2]);
    mjuu::quat2mat(r, quat);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        double v = 0;
        for (int l = 0; l < 3; ++l) v += r[3 * i + l] * eigval[l] * r[3 * j + l];
        EXPECT_NEAR(v, mat[3 * i + j], 1e-13) << i << "," << j;
      }
  }
}

// MuJoCo 3.17's tolerances are relative to the matrix's largest entry (older MuJoCo's were absolute
// and left a body of inertia below 1e-12 unrotated): a matrix scaled by a power of two, exactly, gives
// the same quaternion bit for bit and the moments scaled.
TEST(MjcfFrames, Eig3IsScaleInvariant) {
  for (const std::vector<double>& mat : test_inertias()) {
    std::vector<double> small(mat);
    for (double& v : small) v = std::ldexp(v, -40);  // ~1e-12: tiny bodies
    double ev[3], q[4], ev_small[3], q_small[4];
    mjuu::eig3(ev, q, mat.data(), mjuu::kEigTolBody);
    mjuu::eig3(ev_small, q_small, small.data(), mjuu::kEigTolBody);
    for (int k = 0; k < 4; ++k) EXPECT_EQ(q[k], q_small[k]);
    for (int k = 0; k < 3; ++k) EXPECT_EQ(std::ldexp(ev[k], -40), ev_small[k]);
  }
}

// MuJoCo 3.17's flags for the test model (and the frames: a single massive geom's frame is the
// inertial frame bit for bit, massless geoms left out of the selection).
TEST(MjcfFrames, SameframeFlagsAreMuJoCos) {
  const Model m = load_mjcf(mjcf_data("structure/inertial_frames.xml"));
  EXPECT_EQ(m.body_sameframe, (std::vector<int>{1, 0, 0, 0, 0, 1, 3, 0}));
  EXPECT_EQ(m.geom_sameframe, (std::vector<int>{1, 2, 2, 0, 2, 3, 2, 4, 0, 0, 1, 1, 3, 0, 3}));
  EXPECT_EQ(m.site_sameframe, (std::vector<int>{2, 1, 3, 1}));
  const int tail3 = 3, capsule = 6;  // the capsule and a massless sphere: the capsule's frame
  ASSERT_EQ(m.geom_bodyid[capsule], tail3);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(m.body_ipos[3 * tail3 + k], m.geom_pos[3 * capsule + k]);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(m.body_iquat[4 * tail3 + k], m.geom_quat[4 * capsule + k]);
}

// Kinematics copies the frame a flag names (to the bit), and that copy stays within the compiler's
// 1e-6 of the pose composed from the geom's or site's own pos and quat.
template <class T>
void check_copied_frames(const Model& model, double tol) {
  test::Sim<T> sim(model);
  std::mt19937_64 rng(3);
  std::vector<double> qpos, qvel;
  for (int trial = 0; trial < 5; ++trial) {
    test::random_state(model, rng, qpos, qvel);
    sim.set_state(qpos, qvel);
    kinematics(sim.m(), sim.d);
    const DataView<T>& d = sim.d;
    auto check = [&](const char* what, int i, int flag, int b, const T* xpos, const T* xmat, const double* pos,
                     const double* quat) {
      const T* fpos = flag == kSameFrameBody ? d.xpos + 3 * b : flag == kSameFrameInertia ? d.xipos + 3 * b : nullptr;
      const T* fmat = flag == kSameFrameBody || flag == kSameFrameBodyRot         ? d.xmat + 9 * b
                      : flag == kSameFrameInertia || flag == kSameFrameInertiaRot ? d.ximat + 9 * b
                                                                                  : nullptr;
      for (int k = 0; fpos && k < 3; ++k) EXPECT_EQ(xpos[k], fpos[k]) << what << " " << i << " flag " << flag;
      for (int k = 0; fmat && k < 9; ++k) EXPECT_EQ(xmat[k], fmat[k]) << what << " " << i << " flag " << flag;
      // the composed pose: xpos + xmat pos, xmat R(quat)
      double r[9];
      mjuu::quat2mat(r, quat);
      for (int a = 0; a < 3; ++a) {
        double p = d.xpos[3 * b + a];
        for (int c = 0; c < 3; ++c) p += d.xmat[9 * b + 3 * a + c] * pos[c];
        EXPECT_NEAR(xpos[a], p, tol) << what << " " << i;
        for (int c = 0; c < 3; ++c) {
          double v = 0;
          for (int l = 0; l < 3; ++l) v += d.xmat[9 * b + 3 * a + l] * r[3 * l + c];
          EXPECT_NEAR(xmat[3 * a + c], v, tol) << what << " " << i;
        }
      }
    };
    for (int g = 0; g < model.ngeom; ++g)
      check("geom", g, model.geom_sameframe[g], model.geom_bodyid[g], d.geom_xpos + 3 * g, d.geom_xmat + 9 * g,
            &model.geom_pos[3 * g], &model.geom_quat[4 * g]);
    for (int s = 0; s < model.nsite; ++s)
      check("site", s, model.site_sameframe[s], model.site_bodyid[s], d.site_xpos + 3 * s, d.site_xmat + 9 * s,
            &model.site_pos[3 * s], &model.site_quat[4 * s]);
  }
}

TEST(MjcfFrames, KinematicsCopiesTheFlaggedFrames) {
  const Model m = load_mjcf(mjcf_data("structure/inertial_frames.xml"));
  check_copied_frames<double>(m, 4e-6);  // the compiler's 1e-6 per component, over a unit pose
  check_copied_frames<float>(m, 1e-5);   // and float rounding
}

// HostModel refuses a flag its frames do not satisfy (kinematics would move the geom silently).
TEST(MjcfFrames, ModelCheckRefusesAWrongFlag) {
  Model m = load_mjcf(mjcf_data("structure/inertial_frames.xml"));
  const int box = 3;  // tail2's box: not on the body's inertial frame
  ASSERT_EQ(m.geom_sameframe[box], kSameFrameNone);
  m.geom_sameframe[box] = kSameFrameInertia;
  try {
    HostModel<double> host(m);
    FAIL() << "a wrong geom_sameframe was accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("geom 3 has geom_sameframe 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rlt
