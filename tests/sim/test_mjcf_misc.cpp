// MJCF features of the "misc" work (issue 16): position dampratio, explicit contact pairs, equality
// connect/weld, gravcomp, fluid forces. Expected values are MuJoCo 3.17's compiled model (python:
// mujoco.MjModel.from_xml_path on the same files, tests/data/mjcf/misc/); the trajectories are
// compared with MuJoCo 3 by tools/mujoco_peer.py (ctest mujoco_peer_misc_*).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/mjcf.h"
#include "sim/model_view.h"

namespace rlt {
namespace {

std::string data(const std::string& name) { return std::string(RLT_MJCF_DATA_DIR) + "/" + name; }

std::string error_of(const std::string& xml) {
  try {
    parse_mjcf(xml, "t.xml");
  } catch (const MjcfError& e) {
    return e.what();
  }
  return "";
}

// MuJoCo 3.17: actuator_biasprm[:, 2] after mj_setConst (dampratio -> -kv).
TEST(MjcfDampratio, KvFromTheDofInertiaAtQpos0) {
  const Model m = load_mjcf(data("misc/act_dampratio.xml"));
  const double mujoco[5] = {-10.30371574, -0.79667488, -10.75324979, -0.2, -0.29108482};
  ASSERT_EQ(m.nu, 5);
  for (int u = 0; u < 5; ++u) EXPECT_NEAR(m.actuator_biasprm[3 * u + 2], mujoco[u], 1e-7) << "actuator " << u;
  EXPECT_NEAR(m.actuator_kv[0], 10.30371574, 1e-7);  // the position servo's own kv
}

TEST(MjcfDampratio, RefusesKvWithDampratioAndNegative) {
  const std::string head = "<mujoco><worldbody><body><joint name='j'/><geom size='.1'/></body></worldbody><actuator>";
  EXPECT_NE(error_of(head + "<position joint='j' kp='1' kv='1' dampratio='1'/></actuator></mujoco>")
                .find("kv and dampratio cannot both be defined"),
            std::string::npos);
  EXPECT_NE(error_of(head + "<position joint='j' kp='1' dampratio='-1'/></actuator></mujoco>").find("dampratio"),
            std::string::npos);
}

// MuJoCo 3.17: pair_* of tests/data/mjcf/misc/contact_pairs.xml.
TEST(MjcfPair, PairsCompileAsMuJoCo) {
  const Model m = load_mjcf(data("misc/contact_pairs.xml"));
  ASSERT_EQ(m.npair, 3);
  EXPECT_EQ(m.pair_condim, (std::vector<int>{3, 1, 3}));
  const std::vector<double> friction = {0.6,    0.6,    0.005, 0.0001, 0.0001, 1,      1,     0.005,
                                        0.0001, 0.0001, 0.3,   0.3,    0.005,  0.0001, 0.0001};
  EXPECT_EQ(m.pair_friction, friction);
  EXPECT_EQ(m.pair_solref, (std::vector<double>{0.03, 1, 0.01, 0.8, 0.02, 1}));
  EXPECT_EQ(m.pair_solimp[0], 0.8);
  EXPECT_EQ(m.pair_solimp[2], 0.002);
  EXPECT_EQ(m.pair_margin, (std::vector<double>{0.005, 0.01, 0}));
  EXPECT_EQ(m.pair_gap, (std::vector<double>{0, 0.005, 0}));
}

// A pair's condim counts like a geom's: its rows fit the constraint capacity (a condim 6 pyramid
// has 10 edges) and condim 4/6 switch on the Newton polish, even where every geom has condim 3.
TEST(MjcfPair, PairCondimSizesTheRowsAndTheSolver) {
  const std::string head =
      "<mujoco><worldbody><geom name='f' type='plane' size='1 1 1'/><body><freejoint/><geom name='b' size='.1'/>"
      "</body></worldbody><contact>";
  const HostModel<double> plain(parse_mjcf(head + "</contact></mujoco>", "t.xml"));
  const HostModel<double> six(parse_mjcf(head + "<pair geom1='f' geom2='b' condim='6'/></contact></mujoco>", "t.xml"));
  EXPECT_EQ(plain.view().contact_newton, 0);
  EXPECT_EQ(six.view().contact_newton, 1);
  EXPECT_GE(six.view().nefc_max, 10 * six.view().ncon_max);
  EXPECT_LT(plain.view().nefc_max, 10 * plain.view().ncon_max);
}

TEST(MjcfPair, RefusesWhatIsNotModelled) {
  const std::string head =
      "<mujoco><worldbody><geom name='f' type='plane' size='1 1 1'/><body><freejoint/><geom name='b' size='.1'/>"
      "</body></worldbody><contact>";
  // condim 4 and 6 pairs are modelled (torsional, rolling friction); under elliptic cones a pair's
  // solreffriction would need its own rows' solref, so it is refused
  EXPECT_EQ(error_of(head + "<pair geom1='f' geom2='b' condim='6'/></contact></mujoco>"), "");
  const std::string elliptic = "<mujoco><option cone='elliptic'/>" + head.substr(std::string("<mujoco>").size());
  EXPECT_EQ(error_of(elliptic + "<pair geom1='f' geom2='b' condim='6'/></contact></mujoco>"), "");
  EXPECT_NE(error_of(elliptic + "<pair geom1='f' geom2='b' solreffriction='0.01 1'/></contact></mujoco>")
                .find("\"solreffriction\" with elliptic cones"),
            std::string::npos);
  EXPECT_NE(error_of(head + "<pair geom1='f' geom2='b'/><pair geom1='b' geom2='f'/></contact></mujoco>")
                .find("already form a pair"),
            std::string::npos);
  EXPECT_NE(error_of(head + "<pair geom1='f' geom2='x'/></contact></mujoco>").find("unknown geom \"x\""),
            std::string::npos);
  EXPECT_EQ(error_of(head + "<pair geom1='f' geom2='b'/></contact></mujoco>"), "");
}

TEST(MjcfGravcompFluid, CompileAndRefusals) {
  const Model m = load_mjcf(data("misc/gravcomp_fluid.xml"));
  EXPECT_EQ(m.body_gravcomp, (std::vector<double>{0, 0.5, 1, 0, 0}));
  EXPECT_EQ(m.density, 1000);
  EXPECT_EQ(m.viscosity, 0.05);
  EXPECT_EQ(m.wind[1], -0.2);
  const std::string body = "<worldbody><body gravcomp='1'><joint/><geom size='.1'/></body></worldbody></mujoco>";
  EXPECT_TRUE(parse_mjcf("<mujoco>" + body, "t.xml").body_gravcomp.size() == 2);
  // MuJoCo's mj_passive skips them both when springs and dampers are disabled
  const Model off =
      parse_mjcf("<mujoco><option density='10'><flag spring='disable' damper='disable'/></option>" + body, "t.xml");
  EXPECT_TRUE(off.body_gravcomp.empty());
  EXPECT_EQ(off.density, 0);
  EXPECT_NE(error_of("<mujoco><option integrator='implicitfast' density='1'/>" + body).find("implicitfast"),
            std::string::npos);
  EXPECT_NE(error_of("<mujoco><option viscosity='-1'/>" + body).find("non-negative"), std::string::npos);
}

}  // namespace
}  // namespace rlt
