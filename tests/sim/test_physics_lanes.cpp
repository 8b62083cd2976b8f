// sim/physics_lanes.h: the smooth stages of sim/dynamics.h in SIMD lanes (T = LaneFloat, kLanes envs
// field-major) give every lane the bits that T = float gives its env alone: step_euler (kinematics,
// com quantities, RNE bias, passive forces, CRBA, the L^T D L factorization and solve, the Euler
// integration) on the shipped robots and on a model with springs on every joint type, gravity
// compensation and fluid forces, from eight different states, some of which take the other side of
// the physics' selects (a hinge at exactly qpos0, a free body at rest, a zero quaternion).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "sim/dynamics.h"
#include "sim/lanes.h"
#include "sim/mjcf.h"
#include "sim/model_view.h"
#include "sim/physics_lanes.h"

namespace rlt {
namespace {

// The field of DataView holding scalar k of one env's block, and the index in it.
std::string field_at(const DataLayout& l, int k) {
  std::string name = "?";
  int start = -1;
#define RLT_FIELD_AT(field, count, stage, doc) \
  if (l.field <= k && l.field > start) name = #field, start = l.field;
  RLT_DATA_ALL_FIELDS(RLT_FIELD_AT)
#undef RLT_FIELD_AT
  return name + "[" + std::to_string(k - start) + "]";
}

// Eight different states of `model`: qpos0 plus noise, random velocities and forces. Lane 0 stays
// at qpos0 at rest (every hinge angle exactly 0, every free body still); lane 1 also gets a zero
// quaternion on its first free or ball joint (kinematics takes the identity there).
std::vector<std::vector<float>> random_envs(const ModelView<float>& m, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const int n = data_size(m);
  std::vector<std::vector<float>> envs(kLanes, std::vector<float>(static_cast<size_t>(n), 0.0f));
  for (int l = 0; l < kLanes; ++l) {
    const DataView<float> d = data_view(m, envs[static_cast<size_t>(l)].data());
    reset_data(m, d);
    if (l == 0) continue;
    for (int i = 0; i < m.nq; ++i) d.qpos[i] += 0.3f * u(rng);
    for (int i = 0; i < m.nv; ++i) d.qvel[i] = 2.0f * u(rng), d.qfrc_applied[i] = u(rng), d.qfrc_actuator[i] = u(rng);
    if (l == 1)
      for (int j = 0; j < m.njnt; ++j)
        if (m.jnt_type[j] == kJointFree || m.jnt_type[j] == kJointBall) {
          float* q = d.qpos + m.jnt_qposadr[j] + (m.jnt_type[j] == kJointFree ? 3 : 0);
          q[0] = q[1] = q[2] = q[3] = 0.0f;
          break;
        }
  }
  return envs;
}

// num_steps Euler steps of each env alone (float) and of all of them in lanes; every scalar of
// every env's block (its row and its workspace) compared bit for bit.
void expect_lanes_equal_scalar(const Model& model, int num_steps, std::uint32_t seed) {
  const HostModel<float> host(model);
  const ModelView<float>& m = host.view();
  const ModelView<LaneFloat> lm = lane_model_view(m);
  const DataLayout layout = data_layout(m);
  ASSERT_EQ(data_size(lm), layout.total);
  std::vector<std::vector<float>> scalar = random_envs(m, seed);
  std::vector<float*> rows;
  for (auto& e : scalar) rows.push_back(e.data());
  std::vector<LaneFloat> lanes(static_cast<size_t>(layout.total));
  gather_lanes(lanes.data(), rows.data(), layout.total);
  const DataView<LaneFloat> dl = data_view(lm, lanes.data());
  for (int s = 0; s < num_steps; ++s) {
    for (auto& e : scalar) step_euler(m, data_view(m, e.data()));
    step_euler(lm, dl);
  }
  std::vector<std::vector<float>> from_lanes(kLanes, std::vector<float>(static_cast<size_t>(layout.total)));
  std::vector<float*> out;
  for (auto& e : from_lanes) out.push_back(e.data());
  scatter_lanes(out.data(), lanes.data(), layout.total);
  for (int l = 0; l < kLanes; ++l) {
    int differing = 0, first = -1;
    for (int k = 0; k < layout.total; ++k)
      if (std::memcmp(&scalar[l][k], &from_lanes[l][k], sizeof(float)) != 0) {
        if (first < 0) first = k;
        ++differing;
      }
    EXPECT_EQ(differing, 0) << "lane " << l << ": " << differing << " scalars differ from the env stepped alone; first "
                            << field_at(layout, first) << ": lanes " << (first >= 0 ? from_lanes[l][first] : 0.0f)
                            << ", alone " << (first >= 0 ? scalar[l][first] : 0.0f);
  }
  // the states moved (a comparison of untouched zeros would prove nothing)
  const DataView<float> d1 = data_view(m, scalar[1].data());
  float moved = 0;
  for (int i = 0; i < m.nv; ++i) moved += d1.qacc[i] * d1.qacc[i];
  EXPECT_GT(moved, 0.0f);
}

// gather_lanes (8 fields at a time through transpose_lanes, then one at a time) puts field k of
// lane l's block in lanes[k] lane l; scatter_lanes brings every block back.
TEST(PhysicsLanes, GatherAndScatterTransposeTheBlocks) {
  const int n = 8 * 5 + 3;
  std::vector<std::vector<float>> blocks(kLanes, std::vector<float>(n)), back(kLanes, std::vector<float>(n, -1.0f));
  std::vector<const float*> in;
  std::vector<float*> out;
  for (int l = 0; l < kLanes; ++l) {
    for (int k = 0; k < n; ++k) blocks[l][k] = static_cast<float>(1000 * l + k);
    in.push_back(blocks[l].data()), out.push_back(back[l].data());
  }
  std::vector<LaneFloat> lanes(n);
  gather_lanes(lanes.data(), in.data(), n);
  for (int k = 0; k < n; ++k)
    for (int l = 0; l < kLanes; ++l) ASSERT_EQ(lanes[k].lane(l), blocks[l][k]) << "field " << k << " lane " << l;
  scatter_lanes(out.data(), lanes.data(), n);
  EXPECT_EQ(back, blocks);
}

std::string asset(const std::string& path) { return std::string(RLT_SOURCE_DIR) + "/envs/assets/" + path; }

TEST(PhysicsLanes, AntStepsInLanesAsAlone) { expect_lanes_equal_scalar(load_mjcf(asset("ant.xml")), 20, 1); }
TEST(PhysicsLanes, HumanoidStepsInLanesAsAlone) { expect_lanes_equal_scalar(load_mjcf(asset("humanoid.xml")), 20, 2); }
TEST(PhysicsLanes, Go1StepsInLanesAsAlone) {
  expect_lanes_equal_scalar(load_mjcf(asset("go1/scene_mjx_feetonly_flat_terrain.xml")), 20, 3);
}

// Springs on free, ball, hinge and slide joints (quat_difference's selects), gravity compensation,
// fluid drag and viscosity (fluid_box's selects and |v|), sites and geoms off their body frames.
TEST(PhysicsLanes, SpringsGravcompAndFluidInLanesAsAlone) {
  const char* xml = R"(
<mujoco>
  <option timestep="0.005" density="1.2" viscosity="0.02" wind="0.3 0 0"/>
  <worldbody>
    <body name="torso" pos="0 0 1">
      <freejoint/>
      <geom type="box" size="0.2 0.1 0.05" mass="2" pos="0.05 0 0" euler="0 10 0"/>
      <site name="s0" pos="0.1 0.05 0" euler="10 0 0"/>
      <body name="arm" pos="0.2 0 0" gravcomp="0.5">
        <joint name="shoulder" type="ball" stiffness="3" damping="0.1" springref="0"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04" mass="0.5"/>
        <body name="fore" pos="0.3 0 0">
          <joint name="elbow" type="hinge" axis="0 0 1" stiffness="2" springref="20" damping="0.05"/>
          <geom type="capsule" fromto="0 0 0 0.25 0 0" size="0.03" mass="0.3"/>
          <body name="hand" pos="0.25 0 0">
            <joint name="slide" type="slide" axis="1 0 0" stiffness="50" springref="0.01"/>
            <geom type="sphere" size="0.05" mass="0.2"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>)";
  const Model model = parse_mjcf(xml, "springs_gravcomp_fluid.xml");
  ASSERT_GT(model.density, 0.0);
  expect_lanes_equal_scalar(model, 20, 4);
}

}  // namespace
}  // namespace rlt
