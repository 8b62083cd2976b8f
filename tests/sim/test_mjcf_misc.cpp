// MJCF features of the "misc" work (issue 16): position dampratio, explicit contact pairs, equality
// connect/weld, gravcomp, fluid forces. Expected values are MuJoCo 3.17's compiled model (python:
// mujoco.MjModel.from_xml_path on the same files, tests/data/mjcf/misc/); the trajectories are
// compared with MuJoCo 3 by tools/mujoco_peer.py (ctest mujoco_peer_misc_*).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/mjcf.h"

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

}  // namespace
}  // namespace rlt
