// Mocap bodies (issue 16; MJCF body mocap="true", keyframe mpos/mquat, DataView::mocap_pos and
// mocap_quat): the compiled model as MuJoCo 3.17's (values from mujoco.MjModel on the same files,
// tests/data/mjcf/mocap/), MuJoCo's compile-time refusals, kinematics reading the inputs, reset and
// the contact filter. The trajectories are compared with MuJoCo by tools/mujoco_peer.py (ctest
// mujoco_peer_mocap_*).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "sim/mjcf.h"
#include "sim/model_view.h"
#include "sim/physics_step.h"
#include "tests/sim/mjcf_test_util.h"
#include "tests/sim/test_dynamics_util.h"

namespace rlt {
namespace {

using testing_util::mjcf_data;
using testing_util::mjcf_error_of;

bool has(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

// MuJoCo 3.17 on tests/data/mjcf/mocap/keyframe.xml: nmocap, body_mocapid, key_mpos, key_mquat (a
// key's mquat normalized, the omitted values the bodies' compiled pos/quat).
TEST(MjcfMocap, CompilesAsMuJoCo) {
  const Model m = load_mjcf(mjcf_data("mocap/keyframe.xml"));
  EXPECT_EQ(m.nmocap, 2);
  EXPECT_EQ(m.body_mocapid, (std::vector<int>{-1, 0, 1, -1, -1}));
  ASSERT_EQ(m.nkey, 2);
  const double mpos[12] = {0, 0, 0.2, 0.8, 0.1, 0.7, 0.1, 0, 0.35, 0.8, 0, 0.6};
  const double mquat[16] = {0.99503719, 0, 0.09950372, 0, 0.96592583, 0, 0, 0.25881905,
                            1,          0, 0,          0, 0.96592583, 0, 0, 0.25881905};
  ASSERT_EQ(m.key_mpos.size(), 12u);
  ASSERT_EQ(m.key_mquat.size(), 16u);
  for (int i = 0; i < 12; ++i) EXPECT_NEAR(m.key_mpos[i], mpos[i], 1e-15) << i;
  for (int i = 0; i < 16; ++i) EXPECT_NEAR(m.key_mquat[i], mquat[i], 1e-8) << i;
  // A model without mocap bodies has none, and no body_mocapid at all (size 0 costs nothing).
  const Model plain = load_mjcf(mjcf_data("misc/equality_weld.xml"));
  EXPECT_EQ(plain.nmocap, 0);
  EXPECT_TRUE(plain.body_mocapid.empty());
}

// In <frame> and <replicate> (MuJoCo 3.17: one mocap body per copy, in body order; the frame's pose
// composed into body_pos/body_quat, which mocap_pos/mocap_quat start from).
TEST(MjcfMocap, FramesAndReplicates) {
  const Model m = load_mjcf(mjcf_data("mocap/weld.xml"));
  ASSERT_EQ(m.nmocap, 2);
  const int anchor = m.body_id("anchor");
  EXPECT_EQ(m.body_mocapid[static_cast<size_t>(anchor)], 1);
  const double pos[3] = {0.6, 0, 1}, quat[4] = {0.66712438, -0.14824986, 0.29649973, 0.66712438};
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(m.body_pos[3 * anchor + k], pos[k], 1e-12);
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(m.body_quat[4 * anchor + k], quat[k], 1e-8);
  const Model r = parse_mjcf(
      "<mujoco><worldbody><replicate count='3' offset='1 0 0'><body name='m' mocap='true' pos='1 2 3'>"
      "<geom size='.1'/></body></replicate></worldbody></mujoco>",
      "t.xml");
  EXPECT_EQ(r.nmocap, 3);
  EXPECT_EQ(r.body_mocapid, (std::vector<int>{-1, 0, 1, 2}));
  // mocap="false" is an ordinary body
  EXPECT_EQ(parse_mjcf("<mujoco><worldbody><body mocap='false'><geom size='.1'/></body></worldbody></mujoco>", "t.xml")
                .nmocap,
            0);
}

// MuJoCo's rule "mocap body '...' is not a fixed child of world", and the keyframe sizes; one line
// naming file, line and element.
TEST(MjcfMocap, Refusals) {
  const std::string nested = mjcf_error_of(
      "<mujoco><worldbody>\n<body><joint/><geom size='.1'/>\n<body name='m' mocap='true'><geom size='.1'/></body>"
      "</body></worldbody></mujoco>");
  EXPECT_TRUE(has(nested, "t.xml:3: body m: mocap body 'm' is not a fixed child of world")) << nested;
  for (const char* joint : {"<joint/>", "<freejoint/>"}) {
    const std::string e = mjcf_error_of(std::string("<mujoco><worldbody>\n<body name='m' mocap='true'>") + joint +
                                        "<geom size='.1'/></body></worldbody></mujoco>");
    EXPECT_TRUE(has(e, "t.xml:2: body m: mocap body 'm' is not a fixed child of world")) << e;
  }
  EXPECT_TRUE(has(mjcf_error_of("<mujoco><worldbody><body mocap='yes'/></worldbody></mujoco>"), "\"yes\" is not one of false, true"));
  const std::string head = "<mujoco><worldbody><body mocap='true'><geom size='.1'/></body></worldbody><keyframe>\n";
  const std::string longer = mjcf_error_of(head + "<key mpos='1 2 3 4 5 6'/></keyframe></mujoco>");
  EXPECT_TRUE(has(longer, "t.xml:2: key: attribute \"mpos\": expected 3 numbers")) << longer;
  const std::string partial = mjcf_error_of(head + "<key mquat='1 0 0'/></keyframe></mujoco>");
  EXPECT_TRUE(has(partial, "t.xml:2: key: attribute \"mquat\": expected 4 numbers")) << partial;
  const std::string none = mjcf_error_of(
      "<mujoco><worldbody><body><geom size='.1'/></body></worldbody><keyframe>\n<key mpos='1 2 3'/></keyframe></mujoco>");
  EXPECT_TRUE(has(none, "t.xml:2: key: attribute \"mpos\": expected 0 numbers")) << none;
  // MuJoCo keeps a zero key mquat as it is (mjuu_normvec), and so does the compiler here
  const Model z = parse_mjcf(head + "<key mquat='0 0 0 0'/></keyframe></mujoco>", "t.xml");
  EXPECT_EQ(z.key_mquat, (std::vector<double>{0, 0, 0, 0}));
}

// kinematics places a mocap body, its geoms, sites and child bodies from mocap_pos and the
// normalized mocap_quat (which it leaves as given, as MuJoCo's mj_kinematics); reset_data puts the
// inputs back at body_pos/body_quat.
TEST(MocapKinematics, InputsMoveTheBodyAndWhatHangsFromIt) {
  const Model model = parse_mjcf(
      "<mujoco><worldbody><body name='m' mocap='true' pos='1 2 3'><geom pos='0.1 0 0' size='.1'/>"
      "<site name='s' pos='0 0.2 0'/><body name='c' pos='0 0 0.5'><joint axis='1 0 0'/><geom size='.1'/></body>"
      "</body></worldbody></mujoco>",
      "t.xml");
  HostModel<double> host(model);
  const ModelView<double>& m = host.view();
  std::vector<double> row(static_cast<size_t>(data_size(m)), 0.0);
  const DataView<double> d = data_view(m, row.data());
  reset_data(m, d);
  EXPECT_EQ(d.mocap_pos[0], 1);
  EXPECT_EQ(d.mocap_pos[1], 2);
  EXPECT_EQ(d.mocap_pos[2], 3);
  EXPECT_EQ(d.mocap_quat[0], 1);
  EXPECT_EQ(d.mocap_quat[3], 0);
  // a quarter turn about z, given with norm 2
  const double h = std::sqrt(0.5);
  d.mocap_pos[0] = -1, d.mocap_pos[1] = 0.5, d.mocap_pos[2] = 2;
  d.mocap_quat[0] = 2 * h, d.mocap_quat[1] = 0, d.mocap_quat[2] = 0, d.mocap_quat[3] = 2 * h;
  kinematics(m, d);
  EXPECT_NEAR(d.xpos[3], -1, 1e-15);
  EXPECT_NEAR(d.xpos[4], 0.5, 1e-15);
  EXPECT_NEAR(d.xpos[5], 2, 1e-15);
  EXPECT_NEAR(d.xquat[4], h, 1e-15);
  EXPECT_NEAR(d.xquat[7], h, 1e-15);
  EXPECT_EQ(d.mocap_quat[0], 2 * h);  // the input stays as given
  EXPECT_NEAR(d.geom_xpos[0], -1, 1e-15);
  EXPECT_NEAR(d.geom_xpos[1], 0.6, 1e-15);  // (0.1, 0, 0) turned to y
  EXPECT_NEAR(d.site_xpos[0], -1.2, 1e-15);
  EXPECT_NEAR(d.site_xpos[1], 0.5, 1e-15);
  EXPECT_NEAR(d.xpos[6], -1, 1e-15);
  EXPECT_NEAR(d.xpos[8], 2.5, 1e-15);  // the child body
  // a zero quaternion is the identity (MuJoCo's mju_normalize4)
  for (int k = 0; k < 4; ++k) d.mocap_quat[k] = 0;
  kinematics(m, d);
  EXPECT_EQ(d.xquat[4], 1);
  EXPECT_EQ(d.xquat[7], 0);
  reset_data(m, d);
  EXPECT_EQ(d.mocap_pos[0], 1);
  EXPECT_EQ(d.mocap_quat[0], 1);
}

// MuJoCo's collision filter: a mocap body is its own weld body without dofs, so it touches bodies
// that move (not its jointed child: parent and child), never the world or another mocap body.
TEST(MocapKinematics, ContactFilterAsMuJoCo) {
  const Model model = parse_mjcf(
      "<mujoco><worldbody><geom name='floor' type='plane' size='1 1 1'/><geom name='post' size='.1'/>"
      "<body mocap='true'><geom name='m1' size='.1'/><body><joint/><geom name='child' size='.1'/></body></body>"
      "<body mocap='true'><geom name='m2' size='.1'/></body>"
      "<body><freejoint/><geom name='free' size='.1'/></body></worldbody></mujoco>",
      "t.xml");
  HostModel<double> host(model);
  const ModelView<double>& m = host.view();
  const auto g = [&](const char* name) {
    for (int i = 0; i < model.ngeom; ++i)
      if (model.geom_name[static_cast<size_t>(i)] == name) return i;
    return -1;
  };
  EXPECT_FALSE(geom_pair_allowed(m, g("floor"), g("m1")));
  EXPECT_FALSE(geom_pair_allowed(m, g("post"), g("m1")));
  EXPECT_FALSE(geom_pair_allowed(m, g("m1"), g("m2")));
  EXPECT_FALSE(geom_pair_allowed(m, g("m1"), g("child")));
  EXPECT_TRUE(geom_pair_allowed(m, g("m1"), g("free")));
  EXPECT_TRUE(geom_pair_allowed(m, g("m2"), g("child")));
  EXPECT_TRUE(geom_pair_allowed(m, g("floor"), g("child")));
  EXPECT_TRUE(geom_pair_allowed(m, g("floor"), g("free")));
}

// HostModel checks what the compiler guarantees: mocap ids once each, on jointless children of the world.
TEST(MocapKinematics, HostModelChecksTheMocapIds) {
  Model model = parse_mjcf("<mujoco><worldbody><body mocap='true'><geom size='.1'/></body></worldbody></mujoco>", "t.xml");
  Model bad = model;
  bad.nmocap = 2;
  EXPECT_THROW(HostModel<double>{bad}, ModelError);
  bad = model;
  bad.body_mocapid.clear();
  EXPECT_THROW(HostModel<double>{bad}, ModelError);
  EXPECT_NO_THROW(HostModel<double>{model});
}

// The envs' precision: float follows double where a script moves the mocap bodies (the inputs set
// through the DataView before each step, as env code does), and the weld makes the box follow its
// target: its origin stays within the soft weld's give of where the target's frame carries it.
TEST(MocapKinematics, FloatFollowsDoubleOnAScriptedPath) {
  const Model m = load_mjcf(mjcf_data("mocap/weld.xml"));
  ASSERT_EQ(m.nmocap, 2);
  test::Sim<double> a(m);
  test::Sim<float> b(m);
  const int box = m.body_id("box"), target = m.body_id("target");
  double worst = 0;
  for (int s = 0; s < 300; ++s) {  // 1 s along the path, then 0.5 s held at its end
    const double t = 0.005 * std::min(s + 1, 200);
    const double pos[3] = {0.15 * std::sin(12 * t), 0.05 * (1 - std::cos(12 * t)), 0.5 + 0.1 * t};
    const double yaw = 0.35 + 1.2 * t, quat[4] = {std::cos(yaw / 2), 0, 0, std::sin(yaw / 2)};
    for (int k = 0; k < 3; ++k) a.d.mocap_pos[k] = pos[k], b.d.mocap_pos[k] = static_cast<float>(pos[k]);
    for (int k = 0; k < 4; ++k) a.d.mocap_quat[k] = quat[k], b.d.mocap_quat[k] = static_cast<float>(quat[k]);
    physics_step(a.m(), a.d, static_cast<const double*>(nullptr), 1, nullptr);
    physics_step(b.m(), b.d, static_cast<const float*>(nullptr), 1, nullptr);
    for (int i = 0; i < m.nq; ++i) worst = std::max(worst, std::fabs(b.d.qpos[i] - a.d.qpos[i]));
  }
  EXPECT_LT(worst, 1e-4);  // float rounding through 300 steps of a stiff weld
  kinematics(a.m(), a.d);
  // the box's origin where the weld's relpose (the qpos0 offset, (0.05, 0.02, -0.05) in the target's
  // frame at 20 degrees) puts it, within the soft weld's sag under gravity once the target rests
  const double* R = a.d.xmat + 9 * target;
  const double off[3] = {0.05 * std::cos(0.349066) + 0.02 * std::sin(0.349066),
                         -0.05 * std::sin(0.349066) + 0.02 * std::cos(0.349066), -0.05};
  for (int k = 0; k < 3; ++k) {
    const double want = a.d.xpos[3 * target + k] + R[3 * k] * off[0] + R[3 * k + 1] * off[1] + R[3 * k + 2] * off[2];
    EXPECT_NEAR(a.d.xpos[3 * box + k], want, 5e-3) << k;  // measured: 2.2e-3 in z, the sag
  }
  EXPECT_GT(a.d.xpos[3 * box + 2], 0.5) << "lifted with the target, not fallen to the floor";
}

}  // namespace
}  // namespace rlt
