// Placement (issue 18): PlacedEnv (sim/placed_env.h) with the CPU on both sides, the CPU twin of
// the CPU<->CUDA staging, through the same copies.
//   * its contract: every output the env has, bit for bit, at a learner-side address that is not
//     the env's and stays the same; contents valid until the next step; final_obs on auto-reset;
//     nullptr where the env has no such output; reset_one, sample_actions, save/load forwarded;
//   * training through it is training on the env directly, bit for bit (parameters, normalizers,
//     every iteration's statistics): CartPole, the Ant, and the Quadruped's asymmetric critic;
//   * the Runtime places envs where a Placement says (and forced copies on one device).
// The CPU<->CUDA directions are tested against the CPU in tests/kernels/test_cuda_ppo.cpp (gpu).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "apps/memory_budget.h"
#include "apps/runtime.h"
#include "envs/registry.h"
#include "kernels/device.h"
#include "rl/config.h"
#include "rl/ppo.h"
#include "sim/placed_env.h"

namespace rlt {
namespace {

using Placed = PlacedEnv<CpuExecutor, CpuExecutor>;

template <class T>
std::vector<T> host_copy(const T* p, i64 n) {
  return p == nullptr ? std::vector<T>{} : std::vector<T>(p, p + n);
}

// Rows [i * width, (i + 1) * width) of p where done[i] (all rows when done is null).
template <class T>
std::vector<T> done_rows(const T* p, i64 n, i64 width, const std::uint8_t* term, const std::uint8_t* trunc) {
  std::vector<T> out;
  if (p == nullptr) return out;
  for (i64 i = 0; i < n; ++i)
    if (term == nullptr || term[i] || trunc[i]) out.insert(out.end(), p + i * width, p + (i + 1) * width);
  return out;
}

// Every output of two envs holds the same bits (and the same nullptr-ness). With where_done, the
// arrays valid only where an episode ended (final obs, episode totals) are compared on those rows
// (the others hold whatever an earlier episode left, which a load_state does not restore).
void expect_same_outputs(const VecEnv& got, const VecEnv& ref, const std::string& where, bool where_done = false) {
  SCOPED_TRACE(where);
  const i64 n = ref.num_envs(), obs = ref.spec().observation.dim, cobs = ref.spec().critic_obs_dim;
  EXPECT_EQ(host_copy(got.obs(), n * obs), host_copy(ref.obs(), n * obs));
  EXPECT_EQ(host_copy(got.reward(), n), host_copy(ref.reward(), n));
  EXPECT_EQ(host_copy(got.terminated(), n), host_copy(ref.terminated(), n));
  EXPECT_EQ(host_copy(got.truncated(), n), host_copy(ref.truncated(), n));
  const std::uint8_t* term = where_done ? ref.terminated() : nullptr;
  const std::uint8_t* trunc = ref.truncated();
  EXPECT_EQ(done_rows(got.final_obs(), n, obs, term, trunc), done_rows(ref.final_obs(), n, obs, term, trunc));
  EXPECT_EQ(done_rows(got.ep_return(), n, 1, term, trunc), done_rows(ref.ep_return(), n, 1, term, trunc));
  EXPECT_EQ(done_rows(got.ep_length(), n, 1, term, trunc), done_rows(ref.ep_length(), n, 1, term, trunc));
  EXPECT_EQ(got.ep_forward_speed() == nullptr, ref.ep_forward_speed() == nullptr);
  EXPECT_EQ(done_rows(got.ep_forward_speed(), n, 1, term, trunc), done_rows(ref.ep_forward_speed(), n, 1, term, trunc));
  EXPECT_EQ(got.tracking() == nullptr, ref.tracking() == nullptr);
  EXPECT_EQ(host_copy(got.tracking(), n * kTrackingFloats), host_copy(ref.tracking(), n * kTrackingFloats));
  EXPECT_EQ(got.critic_obs() == nullptr, ref.critic_obs() == nullptr);
  EXPECT_EQ(host_copy(got.critic_obs(), n * cobs), host_copy(ref.critic_obs(), n * cobs));
  EXPECT_EQ(done_rows(got.final_critic_obs(), n, cobs, term, trunc),
            done_rows(ref.final_critic_obs(), n, cobs, term, trunc));
}

// The env's outputs as presented: the learner-side copies, none at the env's own address.
void expect_learner_side(const VecEnv& placed, const VecEnv& inner) {
  const void* pairs[][2] = {{placed.obs(), inner.obs()},
                            {placed.final_obs(), inner.final_obs()},
                            {placed.reward(), inner.reward()},
                            {placed.terminated(), inner.terminated()},
                            {placed.ep_length(), inner.ep_length()},
                            {placed.critic_obs(), inner.critic_obs()},
                            {placed.tracking(), inner.tracking()}};
  for (const auto& p : pairs) {
    if (p[1] != nullptr) {
      EXPECT_NE(p[0], p[1]);
    }
  }
}

// A placed env and a direct one of the same name and seed, stepped in lockstep with the same
// actions: the same outputs at every step, through auto-resets.
void lockstep(const std::string& name, i64 num_envs, int steps, bool expect_done) {
  CpuExecutor exec(1);
  auto direct = make_vec_env(name, num_envs, exec);
  Placed placed(make_vec_env(name, num_envs, exec), exec, exec);
  EXPECT_EQ(placed.device(), Device::kCpu);
  EXPECT_EQ(placed.spec().name, name);
  direct->reset(3);
  placed.reset(3);
  expect_same_outputs(placed, *direct, name + " after reset");
  expect_learner_side(placed, placed.inner());
  const float* obs_address = placed.obs();
  const i64 n_obs = num_envs * placed.spec().observation.dim;
  int done_rows = 0;
  for (int t = 0; t < steps; ++t) {
    const float* a = direct->sample_actions(11, static_cast<std::uint32_t>(t));
    const std::vector<float> actions(a, a + num_envs * placed.spec().action.dim);
    const float* pa = placed.sample_actions(11, static_cast<std::uint32_t>(t));
    ASSERT_EQ(host_copy(pa, static_cast<i64>(actions.size())), actions) << "sample_actions, step " << t;
    EXPECT_NE(static_cast<const void*>(pa), static_cast<const void*>(placed.inner().sample_actions(11, t)));
    const std::vector<float> before = host_copy(placed.obs(), n_obs);
    direct->step(actions.data());
    // The obs the learner read before this step stay what they were until the step is taken.
    EXPECT_EQ(host_copy(placed.obs(), n_obs), before) << "step " << t;
    placed.step(actions.data());
    expect_same_outputs(placed, *direct, name + " step " + std::to_string(t));
    EXPECT_EQ(placed.obs(), obs_address) << "the learner-side obs moved";
    for (i64 i = 0; i < num_envs; ++i) {
      if (!(placed.terminated()[i] || placed.truncated()[i])) continue;
      ++done_rows;
      // Auto-reset: obs is the next episode's first, final_obs the one that ended this episode.
      const int d = placed.spec().observation.dim;
      EXPECT_NE(0, std::memcmp(placed.obs() + i * d, placed.final_obs() + i * d, sizeof(float) * d))
          << "env " << i << " step " << t;
    }
  }
  if (expect_done) {
    EXPECT_GT(done_rows, 0) << "no episode ended: the auto-reset path was not exercised";
  }
  EXPECT_EQ(placed.num_nonfinite_resets(), direct->num_nonfinite_resets());
}

TEST(PlacedEnv, CartPoleOutputsMatchTheEnvThroughAutoResets) {
  lockstep("cartpole", 64, 60, true);
  // CartPole has no critic observation, tracking or forward speed: nullptr stays nullptr.
  CpuExecutor exec(1);
  Placed placed(make_vec_env("cartpole", 4, exec), exec, exec);
  placed.reset(1);
  EXPECT_EQ(placed.critic_obs(), nullptr);
  EXPECT_EQ(placed.final_critic_obs(), nullptr);
  EXPECT_EQ(placed.tracking(), nullptr);
  EXPECT_EQ(placed.ep_forward_speed(), nullptr);
}

TEST(PlacedEnv, AntOutputsMatchTheEnv) { lockstep("ant", 8, 30, false); }

TEST(PlacedEnv, QuadrupedCriticObsMatchTheEnv) {
  CpuExecutor exec(1);
  Placed placed(make_vec_env("quadruped", 2, exec), exec, exec);
  ASSERT_GT(placed.spec().critic_obs_dim, 0);
  EXPECT_NE(placed.critic_obs(), nullptr);
  lockstep("quadruped", 4, 10, false);
}

TEST(PlacedEnv, Go1TrackingMatchesTheEnv) {
  CpuExecutor exec(1);
  Placed placed(make_vec_env("go1_joystick", 2, exec), exec, exec);
  EXPECT_NE(placed.tracking(), nullptr);
  lockstep("go1_joystick", 3, 5, false);
}

TEST(PlacedEnv, ResetOneParamsAndStateForward) {
  CpuExecutor exec(1);
  auto direct = make_vec_env("cartpole", 8, exec);
  Placed placed(make_vec_env("cartpole", 8, exec), exec, exec);
  // Parameters reach the env.
  ASSERT_TRUE(placed.set_param("max_episode_steps", 7));
  ASSERT_TRUE(direct->set_param("max_episode_steps", 7));
  EXPECT_FALSE(placed.set_param("no_such_parameter", 1));
  EXPECT_EQ(placed.params().size(), direct->params().size());
  direct->reset(5);
  placed.reset(5);
  const std::vector<float> zeros(8, 0.0f);
  for (int t = 0; t < 3; ++t) {
    direct->step(zeros.data());
    placed.step(zeros.data());
  }
  // reset_one restarts env 2 and updates its obs on the learner side.
  direct->reset_one(2);
  placed.reset_one(2);
  expect_same_outputs(placed, *direct, "after reset_one");
  EXPECT_THROW(placed.reset_one(8), std::out_of_range);
  // The episodes end at the parameter's limit (7 steps).
  bool truncated = false;
  for (int t = 3; t < 8; ++t) {
    direct->step(zeros.data());
    placed.step(zeros.data());
    for (i64 i = 0; i < 8; ++i) truncated = truncated || placed.truncated()[i];
  }
  expect_same_outputs(placed, *direct, "after the limit");
  EXPECT_TRUE(truncated);
  // save_state / load_state: the env's, and the learner side follows a load.
  const std::vector<StateBlob> saved = placed.save_state();
  direct->load_state(saved);
  for (int t = 0; t < 4; ++t) placed.step(zeros.data());
  placed.load_state(saved);
  // A load restores the state and obs (not the last step's rewards and flags): obs on the learner
  // side at once, and the same outputs from the next step on.
  EXPECT_EQ(host_copy(placed.obs(), 8 * 4), host_copy(direct->obs(), 8 * 4));
  direct->step(zeros.data());
  placed.step(zeros.data());
  expect_same_outputs(placed, *direct, "a step after load_state", true);
  // Drawing forwards.
  EXPECT_EQ(placed.draw_geoms().size(), direct->draw_geoms().size());
}

TEST(PlacedEnv, RefusesAnEnvOnAnotherExecutor) {
  EXPECT_THROW(Placed(nullptr, CpuExecutor(1), CpuExecutor(1)), std::invalid_argument);
}

// ---- training through the adapter is training on the env ---------------------------------------

const NamedArray& find_array(const std::vector<NamedArray>& arrays, const std::string& name) {
  for (const auto& a : arrays)
    if (a.name == name) return a;
  throw std::runtime_error("no learner array " + name);
}

// max_episode_steps is cut short so that episodes are truncated inside the rollouts: the learner
// then bootstraps from final_obs (final_critic_obs for an asymmetric critic), which a broken copy
// of those arrays would change.
void expect_same_training(const std::string& name, i64 num_envs, int num_steps, int iterations, int max_steps) {
  Config cfg;
  cfg.env.name = name;
  cfg.env.num_envs = num_envs;
  cfg.ppo.num_steps = num_steps;
  cfg.ppo.num_minibatches = 4;
  cfg.ppo.num_epochs = 2;
  cfg.policy.hidden = {32, 32};
  cfg.train.seed = 7;
  cfg.train.eval_episodes = 10;
  CpuExecutor exec(2);
  auto direct = make_vec_env(name, num_envs, exec);
  auto inner = make_vec_env(name, num_envs, exec);
  ASSERT_TRUE(direct->set_param("max_episode_steps", max_steps));
  ASSERT_TRUE(inner->set_param("max_episode_steps", max_steps));
  direct->reset(cfg.train.seed);
  Ppo<CpuExecutor> ref(cfg, *direct, exec);
  ref.start(cfg.train.seed);
  Placed placed(std::move(inner), exec, exec);
  placed.reset(cfg.train.seed);
  Ppo<CpuExecutor> got(cfg, placed, exec);
  got.start(cfg.train.seed);
  std::int64_t finished = 0;
  bool truncated = false;
  for (int it = 1; it <= iterations; ++it) {
    SCOPED_TRACE(name + " iteration " + std::to_string(it));
    const IterationStats r = ref.iterate(it, 100), g = got.iterate(it, 100);
    EXPECT_EQ(g.policy_loss, r.policy_loss);
    EXPECT_EQ(g.value_loss, r.value_loss);
    EXPECT_EQ(g.entropy, r.entropy);
    EXPECT_EQ(g.approx_kl, r.approx_kl);
    EXPECT_EQ(g.clip_frac, r.clip_frac);
    EXPECT_EQ(g.explained_variance, r.explained_variance);
    EXPECT_EQ(g.learning_rate, r.learning_rate);
    EXPECT_EQ(g.num_finished, r.num_finished);
    EXPECT_EQ(g.finished_returns, r.finished_returns);
    EXPECT_EQ(g.finished_lengths, r.finished_lengths);
    finished += r.num_finished;
    for (i64 i = 0; i < num_envs; ++i) truncated = truncated || direct->truncated()[i];
  }
  const auto rs = ref.save(), gs = got.save();
  ASSERT_EQ(rs.size(), gs.size());
  for (size_t i = 0; i < rs.size(); ++i) {
    EXPECT_EQ(gs[i].name, rs[i].name);
    EXPECT_EQ(gs[i].f32, rs[i].f32) << rs[i].name;
    EXPECT_EQ(gs[i].f64, rs[i].f64) << rs[i].name;
  }
  EXPECT_FALSE(find_array(rs, "params").f32.empty());
  // The env state too (the adapter forwards save_state).
  const auto es = direct->save_state(), ps = placed.save_state();
  ASSERT_EQ(es.size(), ps.size());
  for (size_t i = 0; i < es.size(); ++i) EXPECT_EQ(ps[i].bytes, es[i].bytes) << es[i].name;
  EXPECT_GT(finished, 0) << "no episode ended: auto-resets untested";
  EXPECT_TRUE(truncated || finished >= num_envs) << "no truncation seen";
}

TEST(PlacementTraining, CartPoleBitForBit) { expect_same_training("cartpole", 64, 32, 3, 20); }
TEST(PlacementTraining, AntBitForBit) { expect_same_training("ant", 16, 16, 2, 10); }
TEST(PlacementTraining, QuadrupedAsymmetricCriticBitForBit) { expect_same_training("quadruped", 8, 16, 2, 10); }

// ---- the Runtime ----------------------------------------------------------------------------------

TEST(PlacementRuntime, PlacesEnvsWhereAsked) {
  Placement p = same_placement("cpu", "--device");
  {
    const Runtime rt(p, 1);
    EXPECT_FALSE(rt.placed());
    auto env = rt.make_env("cartpole", 4);
    EXPECT_EQ(dynamic_cast<Placed*>(env.get()), nullptr);
  }
  p.force_copies = true;
  {
    const Runtime rt(p, 1);
    EXPECT_TRUE(rt.placed());
    EXPECT_EQ(rt.env_device(), Device::kCpu);
    auto env = rt.make_env("cartpole", 4);
    EXPECT_NE(dynamic_cast<Placed*>(env.get()), nullptr);
    // Config parameters are applied to the env before it is placed.
    Config cfg;
    cfg.env.name = "cartpole";
    cfg.env.num_envs = 4;
    cfg.env.params["max_episode_steps"] = 9;
    auto env2 = rt.make_env(cfg);
    ASSERT_NE(dynamic_cast<Placed*>(env2.get()), nullptr);
    bool found = false;
    for (const auto& info : env2->params())
      if (info.name == "max_episode_steps") {
        found = true;
        EXPECT_EQ(info.value, 9);
      }
    EXPECT_TRUE(found);
  }
}

TEST(PlacementRuntime, BadOrUnavailableDevicesNameTheirSource) {
  Placement p;
  p.env = "gpu", p.env_from = "--env-device";
  try {
    Runtime rt(p, 1);
    FAIL() << "a bad env device was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--env-device: expected one of auto, cpu, cuda, got \"gpu\""), std::string::npos)
        << e.what();
  }
  if (probe_cuda().device_count > 0) GTEST_SKIP() << "a GPU answers: cuda is not bad input here";
  p = same_placement("cpu", "--device");
  p.learner = "cuda", p.learner_from = "r.toml: train.learner_device";
  try {
    Runtime rt(p, 1);
    FAIL() << "cuda was accepted without a GPU";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("r.toml: train.learner_device: cuda requested but"), std::string::npos)
        << e.what();
  }
  // auto falls back to the CPU for both, saying which flag was auto.
  p = same_placement("cpu", "--device");
  p.env = "auto";
  const Runtime rt(p, 1);
  EXPECT_EQ(rt.env_device(), Device::kCpu);
  EXPECT_NE(rt.note().find("env device auto: using the CPU"), std::string::npos) << rt.note();
}

// The memory check counts each part where it lives.
TEST(PlacementMemory, PartsCountWhereTheyLive) {
  Config cfg;
  cfg.env.name = "ant";
  const EnvProbe probe = probe_env(cfg);
  const MemoryNeed same = train_memory(cfg, probe.memory, probe.spec, 256, true);
  const MemoryNeed apart = train_memory(cfg, probe.memory, probe.spec, 256, Device::kCpu, Device::kCuda, true);
  const MemoryNeed reverse = train_memory(cfg, probe.memory, probe.spec, 256, Device::kCuda, Device::kCpu, true);
  auto part = [](const MemoryNeed& m, const std::string& name) -> const MemoryPart& {
    for (const MemoryPart& p : m.parts)
      if (p.name == name) return p;
    throw std::runtime_error("no part " + name);
  };
  // CPU envs, CUDA learner: the envs (no device workspace) in RAM, rollout and learner on the GPU.
  EXPECT_TRUE(part(apart, "envs").host);
  EXPECT_EQ(part(apart, "envs").bytes, probe.memory.bytes(256, false));
  EXPECT_FALSE(part(apart, "rollout").host);
  EXPECT_FALSE(part(apart, "learner").host);
  EXPECT_FALSE(part(apart, "env outputs on the learner's device").host);
  EXPECT_TRUE(part(apart, "placement staging").host);
  // The reverse: the envs with their device workspace on the GPU, the learner (with the CPU gemm's
  // scratch, as on the CPU) in RAM.
  EXPECT_FALSE(part(reverse, "envs").host);
  EXPECT_EQ(part(reverse, "envs").bytes, probe.memory.bytes(256, true));
  EXPECT_TRUE(part(reverse, "learner").host);
  EXPECT_EQ(part(reverse, "learner").bytes, part(same, "learner").bytes);
  EXPECT_GT(part(apart, "placement staging").bytes, 2 * 256 * 4 * probe.spec.observation.dim);
}

}  // namespace
}  // namespace rlt
