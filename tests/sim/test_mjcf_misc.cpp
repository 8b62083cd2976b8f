// MJCF features of the "misc" work (issue 16): position dampratio, explicit contact pairs, equality
// connect/weld, gravcomp, fluid forces. Expected values are MuJoCo 3.17's compiled model (python:
// mujoco.MjModel.from_xml_path on the same files, tests/data/mjcf/misc/); the trajectories are
// compared with MuJoCo 3 by tools/mujoco_peer.py (ctest mujoco_peer_misc_*).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "sim/mjcf.h"
#include "sim/model_view.h"
#include "sim/physics_step.h"
#include "tests/sim/test_dynamics_util.h"
#include "tests/sim/mjcf_test_util.h"

namespace rlt {
namespace {

using testing_util::mjcf_data;
using testing_util::mjcf_error_of;

// MuJoCo 3.17: actuator_biasprm[:, 2] after mj_setConst (dampratio -> -kv).
TEST(MjcfDampratio, KvFromTheDofInertiaAtQpos0) {
  const Model m = load_mjcf(mjcf_data("misc/act_dampratio.xml"));
  const double mujoco[5] = {-10.30371574, -0.79667488, -10.75324979, -0.2, -0.29108482};
  ASSERT_EQ(m.nu, 5);
  for (int u = 0; u < 5; ++u) EXPECT_NEAR(m.actuator_biasprm[kNumGainPrm * u + 2], mujoco[u], 1e-7) << "actuator " << u;
  EXPECT_NEAR(m.actuator_kv[0], 10.30371574, 1e-7);  // the position servo's own kv
}

TEST(MjcfDampratio, RefusesKvWithDampratioAndNegative) {
  const std::string head = "<mujoco><worldbody><body><joint name='j'/><geom size='.1'/></body></worldbody><actuator>";
  EXPECT_NE(mjcf_error_of(head + "<position joint='j' kp='1' kv='1' dampratio='1'/></actuator></mujoco>")
                .find("kv and dampratio cannot both be defined"),
            std::string::npos);
  EXPECT_NE(mjcf_error_of(head + "<position joint='j' kp='1' dampratio='-1'/></actuator></mujoco>").find("dampratio"),
            std::string::npos);
}

// MuJoCo 3.17: pair_* of tests/data/mjcf/misc/contact_pairs.xml.
TEST(MjcfPair, PairsCompileAsMuJoCo) {
  const Model m = load_mjcf(mjcf_data("misc/contact_pairs.xml"));
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
  EXPECT_EQ(plain.view().use_newton, 1);  // (Newton also where its tree factorization is cheap: sim/model_view.h)
  EXPECT_EQ(six.view().use_newton, 1);
  EXPECT_GE(six.view().nefc_max, 10 * six.view().ncon_max);
  EXPECT_LT(plain.view().nefc_max, 10 * plain.view().ncon_max);
}

TEST(MjcfPair, RefusesWhatIsNotModelled) {
  const std::string head =
      "<mujoco><worldbody><geom name='f' type='plane' size='1 1 1'/><body><freejoint/><geom name='b' size='.1'/>"
      "</body></worldbody><contact>";
  // condim 4 and 6 pairs are modelled (torsional, rolling friction); under elliptic cones a pair's
  // solreffriction would need its own rows' solref, so it is refused
  EXPECT_EQ(mjcf_error_of(head + "<pair geom1='f' geom2='b' condim='6'/></contact></mujoco>"), "");
  const std::string elliptic = "<mujoco><option cone='elliptic'/>" + head.substr(std::string("<mujoco>").size());
  EXPECT_EQ(mjcf_error_of(elliptic + "<pair geom1='f' geom2='b' condim='6'/></contact></mujoco>"), "");
  EXPECT_NE(mjcf_error_of(elliptic + "<pair geom1='f' geom2='b' solreffriction='0.01 1'/></contact></mujoco>")
                .find("\"solreffriction\" with elliptic cones"),
            std::string::npos);
  EXPECT_NE(mjcf_error_of(head + "<pair geom1='f' geom2='b'/><pair geom1='b' geom2='f'/></contact></mujoco>")
                .find("already form a pair"),
            std::string::npos);
  EXPECT_NE(mjcf_error_of(head + "<pair geom1='f' geom2='x'/></contact></mujoco>").find("unknown geom \"x\""),
            std::string::npos);
  EXPECT_EQ(mjcf_error_of(head + "<pair geom1='f' geom2='b'/></contact></mujoco>"), "");
}

TEST(MjcfGravcompFluid, CompileAndRefusals) {
  const Model m = load_mjcf(mjcf_data("misc/gravcomp_fluid.xml"));
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
  // implicitfast takes them (their velocity derivative in qDeriv, sim/dynamics.h fluid_velocity_derivative)
  EXPECT_EQ(parse_mjcf("<mujoco><option integrator='implicitfast' density='1'/>" + body, "t.xml").density, 1);
  EXPECT_NE(mjcf_error_of("<mujoco><option viscosity='-1'/>" + body).find("non-negative"), std::string::npos);
}

// MuJoCo 3.17's compiled welds (eq_objtype, eq_obj1id/2id, eq_data[:, :11], eq_active0) and
// body_invweight0 (both columns) of tests/data/mjcf/misc/equality_weld.xml.
TEST(MjcfWeld, CompilesAsMuJoCo) {
  const Model m = load_mjcf(mjcf_data("misc/equality_weld.xml"));
  ASSERT_EQ(m.neq, 6);
  EXPECT_EQ(m.eq_type, (std::vector<int>(6, kEqWeld)));
  EXPECT_EQ(m.eq_objtype, (std::vector<int>{kEqObjBody, kEqObjBody, kEqObjBody, kEqObjSite, kEqObjSite, kEqObjBody}));
  EXPECT_EQ(m.eq_obj1id, (std::vector<int>{2, 3, 5, 2, 3, 7}));  // bodies, or sites (lug 2, eye 3)
  EXPECT_EQ(m.eq_obj2id, (std::vector<int>{1, 0, 4, 1, 0, 0}));  // the world by default; sites tip 1, hook 0
  EXPECT_EQ(m.eq_active, (std::vector<int>{1, 1, 1, 1, 1, 0}));
  // relpose from qpos0 with an anchor; given (normalized); from qpos0 without one
  const double mujoco[3][11] = {{0.3, 0, 0, -0.08137976813, 0.04698463104, -0.03420201433, 0.9437143641, -0.1276794407,
                                 -0.1448781254, -0.2685358228, 1},
                                {1, 0, 1.05, 0, 0, 0.05, 0.9961937175, 0, 0.08716695028, 0, 0.3},
                                {0, 0, 0, -1.380146207, -0.9261330415, -1.049177791, 0.9924038765, -0.08682408883,
                                 -0.007596123494, 0.08682408883, 1}};
  const int eqs[3] = {0, 1, 5};
  for (int k = 0; k < 3; ++k)
    for (int i = 0; i < 11; ++i)
      EXPECT_NEAR(m.eq_data[11 * static_cast<size_t>(eqs[k]) + static_cast<size_t>(i)], mujoco[k][i], 1e-9)
          << "weld " << eqs[k] << " data " << i;
  EXPECT_EQ(m.eq_data[11 * 3 + 10], 0.5);  // sites: torquescale alone
  EXPECT_EQ(m.eq_solref[2 * 3], 0.05);
  EXPECT_EQ(m.eq_solref[2 * 4], 0.01);  // class "stiff"
  EXPECT_EQ(m.eq_solimp[5 * 4], 0.95);

  const HostModel<double> host(m);
  const double mujoco_t[8] = {0, 0.7715419038, 1, 2.5, 0.09137424756, 1.225385615, 2, 5};
  const double mujoco_r[8] = {0, 1298.607277, 481.2619896, 2244.638147, 4.061077669, 32.84173708, 1876.040172, 7812.5};
  for (int b = 0; b < 8; ++b) {
    EXPECT_NEAR(host.view().body_invweight0[b], mujoco_t[b], 1e-9 * (1 + mujoco_t[b])) << b;
    EXPECT_NEAR(host.view().body_invweight0_rot[b], mujoco_r[b], 1e-9 * (1 + mujoco_r[b])) << b;
  }
  // 6 rows per active weld (the inactive one none); no contacts (contype 0)
  EXPECT_EQ(constraint_capacity(host.view()), 5 * 6);
  EXPECT_EQ(host.view().use_newton, 1);  // Gauss-Seidel crawls on weld rows: Newton steps finish the solve
}

// What MuJoCo 3.17's schema and compiler refuse, refused here too (with the element's line).
TEST(MjcfWeld, Refusals) {
  const std::string head =
      "<mujoco><worldbody><body name='a'><freejoint/><geom size='.1'/><site name='s'/><site name='t'/></body>"
      "<body name='b' pos='1 0 0'><freejoint/><geom size='.1'/></body></worldbody><equality>";
  auto weld = [&](const std::string& attrs) { return mjcf_error_of(head + "<weld " + attrs + "/></equality></mujoco>"); };
  EXPECT_EQ(weld("body1='a'"), "");
  EXPECT_EQ(weld("body1='a' body2='b' anchor='0 0 1' relpose='0 0 0 1 0 0 0' torquescale='2'"), "");
  EXPECT_EQ(weld("site1='s' site2='t' torquescale='0'"), "");
  EXPECT_NE(weld("body1='a' site1='s' site2='t'").find("give either body1, body2, anchor, relpose or site1, site2"),
            std::string::npos);
  EXPECT_NE(weld("site1='s' site2='t' relpose='0 0 0 1 0 0 0'").find("give either"), std::string::npos);
  EXPECT_NE(weld("site1='s'").find("\"site1\" and \"site2\" are both required"), std::string::npos);
  EXPECT_NE(weld("body2='b'").find("attribute \"body1\" (or \"site1\" and \"site2\") is required"), std::string::npos);
  EXPECT_NE(weld("").find("is required"), std::string::npos);
  EXPECT_NE(weld("body1='a' body2='a'").find("the same body"), std::string::npos);
  EXPECT_NE(weld("site1='s' site2='s'").find("the same site"), std::string::npos);
  EXPECT_NE(weld("body1='x'").find("unknown body \"x\""), std::string::npos);
  EXPECT_NE(weld("site1='s' site2='x'").find("unknown site \"x\""), std::string::npos);
  EXPECT_NE(weld("body1='a' relpose='0 0 0 1 0 0'").find("\"relpose\": expected 7 numbers, got 6"), std::string::npos);
  EXPECT_NE(weld("body1='a' anchor='0 0'").find("\"anchor\": expected 3 numbers, got 2"), std::string::npos);
  EXPECT_NE(weld("body1='a' joint1='j'").find("joint1"), std::string::npos);
  EXPECT_NE(mjcf_error_of(head + "<flex flex='f'/></equality></mujoco>").find("equality \"flex\" is not supported yet"),
            std::string::npos);
}

// The CUDA executor steps in float: the weld rows (and the Newton steps that finish their solve)
// follow double there too, from the moving keyframe (the double run is MuJoCo's to 1e-12,
// mujoco_peer_misc_equality_weld); and the welds hold: the gripped box stays where the arm's tip
// carries it.
TEST(MjcfWeld, FloatFollowsDouble) {
  const Model m = load_mjcf(mjcf_data("misc/equality_weld.xml"));
  ASSERT_EQ(m.nkey, 1);
  test::Sim<double> a(m);
  test::Sim<float> b(m);
  const std::vector<double> qpos(m.key_qpos.begin(), m.key_qpos.begin() + m.nq);
  const std::vector<double> qvel(m.key_qvel.begin(), m.key_qvel.begin() + m.nv);
  a.set_state(qpos, qvel);
  b.set_state(qpos, qvel);
  for (int s = 0; s < 300; ++s) {
    physics_step(a.m(), a.d, static_cast<const double*>(nullptr), 1, nullptr);
    physics_step(b.m(), b.d, static_cast<const float*>(nullptr), 1, nullptr);
  }
  for (int i = 0; i < m.nq; ++i) {
    ASSERT_TRUE(std::isfinite(b.d.qpos[i])) << "qpos " << i;
    EXPECT_NEAR(b.d.qpos[i], a.d.qpos[i], 1e-4) << "qpos " << i;  // measured 6e-7
  }
  // the arm's tip (0.3 0 0 in its frame) and the box's weld point (eq_data 3-5) together within
  // the soft constraint's give (measured 1e-4 m)
  const double* R = a.d.xmat + 9 * 1;
  const double* p = m.eq_data.data() + 3;
  const double* Rb = a.d.xmat + 9 * 2;
  for (int k = 0; k < 3; ++k) {
    const double tip = a.d.xpos[3 + k] + R[3 * k] * 0.3;
    const double held = a.d.xpos[6 + k] + Rb[3 * k] * p[0] + Rb[3 * k + 1] * p[1] + Rb[3 * k + 2] * p[2];
    EXPECT_NEAR(held, tip, 1e-3) << k;
  }
}

}  // namespace
}  // namespace rlt

namespace rlt {
namespace {
// <flag equality="disable"> (and constraint="disable") leave no equality rows, as in MuJoCo: the
// constraint stays in the model, inactive.
TEST(MjcfFlags, EqualityDisableLeavesNoEqualityRows) {
  auto model = [](const std::string& flag) {
    return parse_mjcf("<mujoco><option>" + flag + "</option><worldbody><body name='a' pos='0 0 1'><freejoint/>"
                      "<geom size='.1'/></body></worldbody><equality><connect body1='a' anchor='0 0 0'/>"
                      "</equality></mujoco>",
                      "t.xml");
  };
  EXPECT_EQ(model("").eq_active, std::vector<int>{1});
  EXPECT_EQ(model("<flag equality='disable'/>").eq_active, std::vector<int>{0});
  EXPECT_EQ(model("<flag constraint='disable'/>").eq_active, std::vector<int>{0});
  EXPECT_EQ(HostModel<double>(model("")).view().nefc_max, 3);
  EXPECT_EQ(HostModel<double>(model("<flag equality='disable'/>")).view().nefc_max, 0);
}
}  // namespace
}  // namespace rlt
