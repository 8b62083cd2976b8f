// VecEnv::reset_one, checked the same way for every env (tests/envs/test_vec_env.cpp for classic
// control, test_robot_envs.cpp for the robot tasks), through the VecEnv interface and save_state.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/env_step.h"
#include "sim/vec_env.h"

namespace rlt {
namespace testing_util {

// Row r of a per-env blob (num_envs rows); nullptr for a blob that is not per env ("seed").
inline const std::uint8_t* blob_row(const StateBlob& b, i64 num_envs, i64 r) {
  if (b.name == "seed" || b.bytes.size() % static_cast<size_t>(num_envs) != 0) return nullptr;
  return b.bytes.data() + static_cast<size_t>(r) * (b.bytes.size() / static_cast<size_t>(num_envs));
}
inline size_t blob_row_size(const StateBlob& b, i64 num_envs) { return b.bytes.size() / static_cast<size_t>(num_envs); }

inline EnvCounters counters_of(const std::vector<StateBlob>& blobs, i64 num_envs, i64 env) {
  EnvCounters c{};
  for (const auto& b : blobs)
    if (b.name == "counters") std::memcpy(&c, blob_row(b, num_envs, env), sizeof(c));
  return c;
}

// `make` gives the same env (same params) each call. Env `target` of a batch stepped `steps` times
// is restarted with reset_one: nothing of the other envs changes, no step output is written, its
// counters move to the next episode; and a twin batch that reaches that episode by an auto-reset
// (max_episode_steps = 1 for one step) holds the same state for it, and steps it identically.
// A robot's physics row also keeps quantities derived in the last step (forces, contacts) until the
// next step recomputes them; they differ between the two, so `same_physics_state(a, b, target)`
// compares the row's state (qpos, qvel) instead of its bytes.
using PhysicsStateCheck = std::function<void(VecEnv&, VecEnv&, i64)>;
inline void expect_reset_one_is_an_auto_reset(const std::function<std::unique_ptr<VecEnv>()>& make, std::uint64_t seed,
                                              i64 target, int steps,
                                              const PhysicsStateCheck& same_physics_state = nullptr) {
  auto a = make(), b = make();
  const i64 n = a->num_envs();
  const int od = a->spec().observation.dim, ad = a->spec().action.dim;
  a->reset(seed);
  b->reset(seed);
  for (int t = 0; t < steps; ++t) {
    a->step(a->sample_actions(77, static_cast<std::uint32_t>(t)));
    b->step(b->sample_actions(77, static_cast<std::uint32_t>(t)));
  }
  auto copy = [](const auto* p, i64 count) {
    return std::vector<std::uint8_t>(reinterpret_cast<const std::uint8_t*>(p),
                                     reinterpret_cast<const std::uint8_t*>(p + count));
  };
  auto outputs = [&](const VecEnv& e) {
    return std::vector<std::vector<std::uint8_t>>{copy(e.reward(), n),    copy(e.terminated(), n),
                                                  copy(e.truncated(), n), copy(e.ep_return(), n),
                                                  copy(e.ep_length(), n), copy(e.final_obs(), n * od)};
  };
  const auto before = a->save_state();
  const auto outputs_before = outputs(*a);
  const std::vector<float> obs_before(a->obs(), a->obs() + n * od);
  a->reset_one(target);
  const auto after = a->save_state();
  ASSERT_EQ(before.size(), after.size());
  for (size_t k = 0; k < before.size(); ++k) {
    SCOPED_TRACE(before[k].name);
    ASSERT_EQ(before[k].bytes.size(), after[k].bytes.size());
    if (!blob_row(before[k], n, 0)) {
      EXPECT_EQ(before[k].bytes, after[k].bytes);
      continue;
    }
    for (i64 i = 0; i < n; ++i) {
      if (i == target) continue;
      EXPECT_EQ(0, std::memcmp(blob_row(before[k], n, i), blob_row(after[k], n, i), blob_row_size(before[k], n)))
          << "env " << i << " changed";
    }
  }
  EXPECT_EQ(outputs_before, outputs(*a)) << "reset_one wrote step outputs";
  const EnvCounters c0 = counters_of(before, n, target), c1 = counters_of(after, n, target);
  EXPECT_EQ(c1.episode, c0.episode + 1);
  EXPECT_EQ(c1.step, 0);
  EXPECT_EQ(c1.ret, 0.0f);
  EXPECT_NE(0, std::memcmp(obs_before.data() + target * od, a->obs() + target * od, sizeof(float) * od))
      << "the observation of the new episode";
  for (i64 i = 0; i < n * od; ++i) {
    if (i / od == target) continue;
    ASSERT_EQ(obs_before[static_cast<size_t>(i)], a->obs()[i]) << "obs of env " << i / od;
  }

  // The twin: one step with a time limit of 1 ends every episode, so env `target` auto-resets into
  // the episode reset_one started.
  const int max_steps = b->spec().max_episode_steps;
  ASSERT_TRUE(b->set_param("max_episode_steps", 1));
  b->step(b->sample_actions(77, static_cast<std::uint32_t>(steps)));
  ASSERT_TRUE(b->set_param("max_episode_steps", max_steps));
  ASSERT_TRUE(b->terminated()[target] || b->truncated()[target]);
  const auto twin = b->save_state();
  for (size_t k = 0; k < after.size(); ++k) {
    SCOPED_TRACE(after[k].name);
    if (!blob_row(after[k], n, 0) || after[k].name == "nonfinite" || after[k].name == "physics") continue;
    EXPECT_EQ(0, std::memcmp(blob_row(after[k], n, target), blob_row(twin[k], n, target), blob_row_size(after[k], n)))
        << "env " << target << " after reset_one differs from its auto-reset";
  }
  EXPECT_EQ(0, std::memcmp(a->obs() + target * od, b->obs() + target * od, sizeof(float) * od));
  if (same_physics_state) same_physics_state(*a, *b, target);
  // ... and it then steps alike (other envs of the two batches are one step apart: not compared).
  std::vector<float> actions(static_cast<size_t>(n * ad));
  for (int t = 0; t < 20; ++t) {
    const float* s = a->sample_actions(78, static_cast<std::uint32_t>(t));
    actions.assign(s, s + n * ad);
    a->step(actions.data());
    b->step(actions.data());
    ASSERT_EQ(0, std::memcmp(a->obs() + target * od, b->obs() + target * od, sizeof(float) * od)) << "step " << t;
    ASSERT_EQ(a->reward()[target], b->reward()[target]) << "step " << t;
  }
}

// reset_one outside [0, num_envs) throws std::out_of_range and changes nothing.
inline void expect_reset_one_rejects_bad_index(VecEnv& env) {
  env.reset(1);
  const auto before = env.save_state();
  EXPECT_THROW(env.reset_one(-1), std::out_of_range);
  EXPECT_THROW(env.reset_one(env.num_envs()), std::out_of_range);
  const auto after = env.save_state();
  for (size_t k = 0; k < before.size(); ++k) EXPECT_EQ(before[k].bytes, after[k].bytes) << before[k].name;
}

}  // namespace testing_util
}  // namespace rlt
