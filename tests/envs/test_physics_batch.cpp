// PhysicsBatch (envs/physics_batch.h) on the CPU executor: the batch steps exactly what the per-env
// functors step by hand (one env at a time, and in SIMD lanes with set_lanes), one env resets alone,
// manual controls reach every env, poses come in the VecEnv layout, bad indices are refused. (Its CUDA twin is compared
// in tests/sim/test_contacts_cuda.cpp.)
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "envs/physics_batch.h"
#include "sim/cpu_executor.h"
#include "sim/mjcf.h"
#include "sim/slot_step.h"

namespace rlt {
namespace {

Model ant() { return load_mjcf(std::string(RLT_SOURCE_DIR) + "/envs/assets/ant.xml"); }

TEST(PhysicsBatch, RandomControlStepsMatchTheFunctorsByHand) {
  const Model model = ant();
  const int n = 5, substeps = 5;
  CpuExecutor exec(2);
  auto batch = make_physics_batch(model, n, substeps, 11, exec);
  const HostModel<float> host(model);
  const ModelView<float>& m = host.view();
  const DataLayout layout = data_layout(m);
  const std::vector<double> range_d = ctrl_sample_range(model);
  const std::vector<float> range(range_d.begin(), range_d.end());
  std::vector<float> data(static_cast<size_t>(n * layout.row), 0.0f), ctrl(static_cast<size_t>(n * m.nu));
  std::vector<int> ncon(n);
  ResetModelEnvs{m, layout, data.data(), {}, 0}(0);
  for (int e = 1; e < n; ++e) ResetModelEnvs{m, layout, data.data(), {}, e}(0);
  for (u32 k = 0; k < 8; ++k) {
    for (int e = 0; e < n; ++e) random_ctrl(range.data(), m.nu, 11, static_cast<u32>(e), k, ctrl.data() + e * m.nu);
    for (int e = 0; e < n; ++e) PhysicsStepEnvs<float>{m, layout, data.data(), ctrl.data(), substeps, ncon.data()}(e);
    batch->control_step(CtrlMode::kRandom, k);
  }
  std::vector<float> got;
  std::vector<int> got_ncon;
  batch->download(&got, &got_ncon);
  EXPECT_EQ(got, data);
  EXPECT_EQ(got_ncon, ncon);
  EXPECT_EQ(batch->ctrl_row(2), std::vector<float>(ctrl.begin() + 2 * m.nu, ctrl.begin() + 3 * m.nu));
}

TEST(PhysicsBatch, ResetOneLeavesTheOthersAndManualControlReachesEveryEnv) {
  const Model model = ant();
  CpuExecutor exec(1);
  auto batch = make_physics_batch(model, 4, 5, 3, exec);
  for (u32 k = 0; k < 10; ++k) batch->control_step(CtrlMode::kRandom, k);
  std::vector<std::vector<float>> before;
  for (i64 e = 0; e < 4; ++e) before.push_back(batch->row(e));
  batch->reset_one(2);
  auto fresh = make_physics_batch(model, 1, 5, 3, exec);
  // The state (qpos, qvel) and the poses kinematics derives from it; the rest of a row is scratch.
  const DataLayout& l = batch->layout();
  auto state = [&](const std::vector<float>& row) {
    std::vector<float> s(row.begin() + l.qpos, row.begin() + l.qpos + model.nq);
    s.insert(s.end(), row.begin() + l.qvel, row.begin() + l.qvel + model.nv);
    s.insert(s.end(), row.begin() + l.geom_xpos, row.begin() + l.geom_xpos + 3 * model.ngeom);
    return s;
  };
  for (i64 e = 0; e < 4; ++e)
    if (e == 2) EXPECT_EQ(state(batch->row(e)), state(fresh->row(0)));
    else EXPECT_EQ(batch->row(e), before[static_cast<size_t>(e)]) << e;
  std::vector<float> manual(static_cast<size_t>(model.nu));
  for (size_t u = 0; u < manual.size(); ++u) manual[u] = 0.1f * static_cast<float>(u) - 0.3f;
  batch->set_manual_ctrl(manual);
  batch->control_step(CtrlMode::kManual, 10);
  for (i64 e = 0; e < 4; ++e) EXPECT_EQ(batch->ctrl_row(e), manual);
  batch->control_step(CtrlMode::kZero, 11);
  EXPECT_EQ(batch->ctrl_row(1), std::vector<float>(static_cast<size_t>(model.nu), 0.0f));
  EXPECT_THROW(batch->reset_one(4), std::out_of_range);
  EXPECT_THROW(batch->row(-1), std::out_of_range);
  EXPECT_THROW(make_physics_batch(model, 0, 5, 3, exec), std::invalid_argument);
}

TEST(PhysicsBatch, PosesAreEachGeomsPositionThenRotation) {
  const Model model = ant();
  CpuExecutor exec(1);
  auto batch = make_physics_batch(model, 3, 5, 1, exec);
  batch->control_step(CtrlMode::kRandom, 0);
  batch->request_draw_poses({{2, 1}, {0, 1}});
  const float* p = batch->wait_draw_poses();
  ASSERT_NE(p, nullptr);
  const DataLayout& l = batch->layout();
  const std::vector<float> row2 = batch->row(2), row0 = batch->row(0);
  const int ng = model.ngeom;
  for (int g = 0; g < ng; ++g) {
    for (int q = 0; q < 3; ++q) EXPECT_EQ(p[12 * g + q], row2[static_cast<size_t>(l.geom_xpos + 3 * g + q)]);
    for (int q = 0; q < 9; ++q) EXPECT_EQ(p[12 * (ng + g) + 3 + q], row0[static_cast<size_t>(l.geom_xmat + 9 * g + q)]);
  }
  EXPECT_EQ(batch->draw_geoms().size(), static_cast<size_t>(ng));
  EXPECT_THROW(batch->request_draw_poses({{2, 2}}), std::out_of_range);
}

// set_lanes: groups of eight envs in SIMD lanes and the rest alone give every env slot_physics_step's
// bits (13 envs: one group and five alone), on one thread or two alike; a model the slots do not
// cover is refused with the reason, and the batch steps on as before.
TEST(PhysicsBatch, InLanesEachEnvStepsAsSlotPhysicsStepAlone) {
  const Model model = load_mjcf(std::string(RLT_SOURCE_DIR) + "/envs/assets/go1/scene_mjx_feetonly_flat_terrain.xml");
  const int n = 13, substeps = 5;
  const HostModel<float> host(model);
  const ModelView<float>& m = host.view();
  const DataLayout layout = data_layout(m);
  SlotLayout lay;
  std::string why;
  ASSERT_TRUE(lay.build(m, &why)) << why;
  SlotStepWork<float> w(m, lay);
  std::vector<std::vector<float>> got;
  for (int threads : {1, 2}) {
    CpuExecutor exec(threads);
    auto batch = make_physics_batch(model, n, substeps, 5, exec);
    ASSERT_TRUE(batch->set_lanes(true, &why)) << why;
    // by hand: each env's row with a workspace of its own, the batch's controls
    std::vector<std::vector<float>> env(n);
    for (int e = 0; e < n; ++e) {
      env[static_cast<size_t>(e)] = batch->row(e);
      env[static_cast<size_t>(e)].resize(static_cast<size_t>(layout.total), 0.0f);
    }
    for (u32 k = 0; k < 6; ++k) {
      batch->control_step(CtrlMode::kRandom, k);
      for (int e = 0; e < n; ++e) {
        const std::vector<float> c = batch->ctrl_row(e);
        int ncon = 0;
        slot_physics_step(m, data_view(m, env[static_cast<size_t>(e)].data()), c.data(), substeps, &ncon, lay, w);
      }
    }
    std::vector<float> data;
    std::vector<int> ncon;
    batch->download(&data, &ncon);
    for (int e = 0; e < n; ++e) {
      const DataView<float> a = data_view(layout, data.data() + e * layout.row, static_cast<float*>(nullptr));
      const DataView<float> b = data_view(m, env[static_cast<size_t>(e)].data());
      for (int i = 0; i < m.nq; ++i)
        ASSERT_EQ(a.qpos[i], b.qpos[i]) << threads << " threads, env " << e << " qpos " << i;
      for (int i = 0; i < m.nv; ++i)
        ASSERT_EQ(a.qvel[i], b.qvel[i]) << threads << " threads, env " << e << " qvel " << i;
      for (int i = 0; i < m.nsensordata; ++i)
        ASSERT_EQ(a.sensordata[i], b.sensordata[i]) << "env " << e << " sensor " << i;
      EXPECT_EQ(ncon[static_cast<size_t>(e)], active_contacts(b)) << "env " << e;
    }
    std::vector<float> state;
    for (int e = 0; e < n; ++e) {
      const float* row = data.data() + e * layout.row;
      state.insert(state.end(), row + layout.qpos, row + layout.qpos + m.nq);
      state.insert(state.end(), row + layout.qvel, row + layout.qvel + m.nv);
    }
    got.push_back(state);
  }
  EXPECT_EQ(got[0], got[1]) << "the thread count changed the bits";
  // the Ant (solved to convergence: no iterations budget) is refused with the reason
  CpuExecutor exec(1);
  auto ant_batch = make_physics_batch(ant(), 2, 5, 5, exec);
  EXPECT_FALSE(ant_batch->set_lanes(true, &why));
  EXPECT_NE(why.find("no iterations budget"), std::string::npos) << why;
}

// Two batches in lanes stepped in turns on one executor (each thread's workspace made again for the
// other model) give each env slot_physics_step's bits; after set_lanes(false) a batch steps one env
// at a time again, as PhysicsStepEnvs by hand; and a refused batch steps on that way.
TEST(PhysicsBatch, LanesBatchesInTurnsAndBackToOneEnvAtATime) {
  const std::string dir = std::string(RLT_SOURCE_DIR) + "/envs/assets/";
  const Model models[2] = {load_mjcf(dir + "go1/scene_mjx_feetonly_flat_terrain.xml"),
                           load_mjcf(dir + "g1/scene_mjx_feetonly_flat_terrain.xml")};
  CpuExecutor exec(2);
  const int n = 9, substeps = 4;
  std::string why;
  std::vector<std::unique_ptr<PhysicsBatch>> batches;
  std::vector<std::unique_ptr<HostModel<float>>> hosts;
  std::vector<SlotLayout> layouts(2);
  std::vector<std::vector<std::vector<float>>> env(2);
  for (int b = 0; b < 2; ++b) {
    batches.push_back(make_physics_batch(models[b], n, substeps, 9, exec));
    ASSERT_TRUE(batches[static_cast<size_t>(b)]->set_lanes(true, &why)) << why;
    hosts.push_back(std::make_unique<HostModel<float>>(models[b]));
    ASSERT_TRUE(layouts[static_cast<size_t>(b)].build(hosts.back()->view(), &why)) << why;
    const DataLayout l = data_layout(hosts.back()->view());
    for (int e = 0; e < n; ++e) {
      env[static_cast<size_t>(b)].push_back(batches.back()->row(e));
      env[static_cast<size_t>(b)].back().resize(static_cast<size_t>(l.total), 0.0f);
    }
  }
  for (u32 k = 0; k < 3; ++k)
    for (int b = 0; b < 2; ++b) {
      PhysicsBatch& batch = *batches[static_cast<size_t>(b)];
      const ModelView<float>& m = hosts[static_cast<size_t>(b)]->view();
      batch.control_step(CtrlMode::kRandom, k);
      SlotStepWork<float> w(m, layouts[static_cast<size_t>(b)]);
      for (int e = 0; e < n; ++e) {
        const std::vector<float> c = batch.ctrl_row(e);
        const DataView<float> d = data_view(m, env[static_cast<size_t>(b)][static_cast<size_t>(e)].data());
        slot_physics_step(m, d, c.data(), substeps, nullptr, layouts[static_cast<size_t>(b)], w);
        const std::vector<float> row = batch.row(e);
        for (int i = 0; i < m.nq; ++i)
          ASSERT_EQ(row[static_cast<size_t>(batch.layout().qpos + i)], d.qpos[i]) << "batch " << b << " env " << e;
      }
    }
  // back to one env at a time: the next step as PhysicsStepEnvs by hand from the batch's rows
  PhysicsBatch& go1 = *batches[0];
  const ModelView<float>& m = hosts[0]->view();
  const DataLayout& l = go1.layout();
  EXPECT_TRUE(go1.set_lanes(false, &why));
  std::vector<float> data, by_hand;
  std::vector<int> ncon, ncon_hand(n);
  go1.download(&by_hand, &ncon);
  go1.control_step(CtrlMode::kRandom, 3);
  std::vector<float> ctrl;
  for (int e = 0; e < n; ++e) {
    const std::vector<float> c = go1.ctrl_row(e);
    ctrl.insert(ctrl.end(), c.begin(), c.end());
  }
  for (int e = 0; e < n; ++e) PhysicsStepEnvs<float>{m, l, by_hand.data(), ctrl.data(), substeps, ncon_hand.data()}(e);
  go1.download(&data, &ncon);
  for (int e = 0; e < n; ++e)
    for (int i = 0; i < m.nq; ++i)
      ASSERT_EQ(data[static_cast<size_t>(e * l.row + l.qpos + i)], by_hand[static_cast<size_t>(e * l.row + l.qpos + i)])
          << "env " << e << " after set_lanes(false)";
  EXPECT_EQ(ncon, ncon_hand);
}

}  // namespace
}  // namespace rlt
