// VecEnvT<Env, Exec>: the single-source VecEnv over one env type and one executor.
// Included by envs/registry.cpp (CPU) and kernels/cuda_envs.cu (CUDA).
//
// The Env contract (see envs/cartpole.h for a documented example):
//   static constexpr const char* kName; kObsDim; kActDim; kDiscrete; kNumActions; kMaxEpisodeSteps
//   struct Params { ...; template <class V> void visit(V&& v); };   v(name, field, doc)
//   struct State  { ... };                                            plain data, one env
//   static void spaces(const Params&, Space& obs, Space& act);       host
//   RLT_HD static void reset(const Params&, State&, Philox& rng);
//   RLT_HD static void step(const Params&, State&, const float* action, Philox& rng,
//                           float& reward, bool& terminated);
//   RLT_HD static void observe(const Params&, const State&, float* obs);
// Optional, for the viewer (detected, so envs without it still compile):
//   static std::vector<DrawGeom> draw_geoms(const Params&);                host
//   RLT_HD static void draw(const Params&, const State&, float* poses);  draw_geoms().size() x 12
#pragma once

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>
#include <type_traits>

#include "sim/env_step.h"  // EnvCounters, finish_env_step, blob helpers (shared with envs/robot_env.h)
#include "sim/philox.h"
#include "sim/vec_env.h"

namespace rlt {

// One env's step with auto-reset: the body that both executors run per env index.
template <class Env>
struct StepOne {
  typename Env::Params params;
  std::uint64_t seed;
  int max_steps;
  typename Env::State* states;
  EnvCounters* counters;
  const float* actions;
  float* obs;
  float* final_obs;
  float* reward;
  std::uint8_t* terminated;
  std::uint8_t* truncated;
  float* ep_return;
  std::int32_t* ep_length;
  std::uint32_t* nonfinite;

  RLT_HD void operator()(i64 i) const {
    using State = typename Env::State;
    State s = states[i];
    EnvCounters c = counters[i];
    Philox rng(seed, RngStream::kEnvStep, static_cast<u32>(i), c.episode, static_cast<u32>(c.step));
    float r = 0.0f;
    bool term = false;
    Env::step(params, s, actions + i * Env::kActDim, rng, r, term);
    c.step += 1;
    float* o = obs + i * Env::kObsDim;
    Env::observe(params, s, o);
    const bool finite = all_finite(o, Env::kObsDim) && is_finite(r);
    const StepOutputs out{reward, terminated, truncated, ep_return, ep_length, nonfinite};
    if (finish_env_step(out, i, max_steps, finite, r, term, c)) {  // D9, truncation, totals
      keep_final_obs(final_obs + i * Env::kObsDim, o, Env::kObsDim, finite);
      Philox reset_rng(seed, RngStream::kEnvReset, static_cast<u32>(i), c.episode);
      Env::reset(params, s, reset_rng);
      Env::observe(params, s, o);
    }
    states[i] = s;
    counters[i] = c;
  }
};

// Uniform random actions: one Philox block gives four action components, so item g fills
// components [4g, 4g + 4) of the (num_envs x act_dim) array.
struct RandomActions {
  float* actions;
  i64 num_components;  // num_envs * act_dim
  int act_dim;
  bool discrete;
  int num_actions;
  const float* low;  // (act_dim) bounds, continuous only
  const float* high;
  u64 seed;
  u32 step;
  RLT_HD void operator()(i64 g) const {
    Philox rng(seed, RngStream::kBench, static_cast<u32>(g), step);
    const U32x4 r = rng.next4();
    for (int q = 0; q < 4; ++q) {
      const i64 c = g * 4 + q;
      if (c >= num_components) return;
      const int k = static_cast<int>(c % act_dim);
      const float u = u32_to_unit_float(r.v[q]);
      actions[c] = discrete ? static_cast<float>(static_cast<int>(u * num_actions)) : low[k] + u * (high[k] - low[k]);
    }
  }
};

// Starts env i's episode c.episode.
template <class Env>
struct ResetOne {
  typename Env::Params params;
  std::uint64_t seed;
  typename Env::State* states;
  EnvCounters* counters;
  float* obs;
  RLT_HD void operator()(i64 i) const {
    typename Env::State s;
    EnvCounters c = counters[i];
    Philox rng(seed, RngStream::kEnvReset, static_cast<u32>(i), c.episode);
    Env::reset(params, s, rng);
    Env::observe(params, s, obs + i * Env::kObsDim);
    c.step = 0;
    c.ret = 0.0f;
    states[i] = s;
    counters[i] = c;
  }
};

// Whether Env has the optional draw hook.
template <class Env, class = void>
struct EnvHasDraw : std::false_type {};
template <class Env>
struct EnvHasDraw<Env, std::void_t<decltype(Env::draw_geoms(std::declval<const typename Env::Params&>())),
                                   decltype(&Env::draw)>> : std::true_type {};

// Env first + k's geom poses into out + k * floats_per_env.
template <class Env>
struct DrawPosesOne {
  typename Env::Params params;
  const typename Env::State* states;
  i64 first;
  int floats_per_env;
  float* out;
  RLT_HD void operator()(i64 k) const { Env::draw(params, states[first + k], out + k * floats_per_env); }
};

// The per-env arrays behind VecEnv's outputs (sim/vec_env.h), on one executor, and the work on them
// that does not depend on the env type: VecEnvT and RobotVecEnvT (envs/robot_env.h) each hold one.
template <class Exec>
struct EnvOutputs {
  template <class T>
  using Buffer = typename Exec::template Buffer<T>;
  Buffer<EnvCounters> counters;         // (num_envs) step/episode/return
  Buffer<float> obs, final_obs;         // (num_envs x obs_dim)
  Buffer<float> reward;                 // (num_envs)
  Buffer<std::uint8_t> terminated, truncated;  // (num_envs)
  Buffer<float> ep_return;              // (num_envs) valid where done
  Buffer<std::int32_t> ep_length;       // (num_envs) valid where done
  Buffer<std::uint32_t> nonfinite;      // (num_envs) non-finite resets
  Buffer<float> random_actions;         // (num_envs x act_dim) sample_actions()
  Buffer<float> act_low, act_high;      // (act_dim) action bounds

  void resize(i64 num_envs, int obs_dim, int act_dim) {
    counters.resize(num_envs);
    obs.resize(num_envs * obs_dim);
    final_obs.resize(num_envs * obs_dim);
    reward.resize(num_envs);
    terminated.resize(num_envs);
    truncated.resize(num_envs);
    ep_return.resize(num_envs);
    ep_length.resize(num_envs);
    nonfinite.resize(num_envs);
    random_actions.resize(num_envs * act_dim);
    act_low.resize(act_dim);
    act_high.resize(act_dim);
  }
  // Every env at its first episode's start, no flags, no non-finite resets counted (VecEnv::reset).
  void clear(Exec& exec, i64 num_envs) {
    exec.fill(counters.data(), EnvCounters{0, 0, 0.0f, 0}, num_envs);
    exec.fill(nonfinite.data(), std::uint32_t{0}, num_envs);
    exec.fill(terminated.data(), std::uint8_t{0}, num_envs);
    exec.fill(truncated.data(), std::uint8_t{0}, num_envs);
  }
  void upload_action_bounds(Exec& exec, const Space& act) {
    exec.copy_from_host(act_low.data(), act.low.data(), act.dim);
    exec.copy_from_host(act_high.data(), act.high.data(), act.dim);
  }
  // VecEnv::sample_actions: uniform over the declared action space.
  const float* sample_actions(Exec& exec, i64 num_envs, const Space& act, std::uint64_t seed, std::uint32_t step) {
    const i64 components = num_envs * act.dim;
    RandomActions f{random_actions.data(), components, act.dim, act.discrete, act.num_actions,
                    act_low.data(),       act_high.data(), seed,    step};
    parallel_for(exec, (components + 3) / 4, f);
    return random_actions.data();
  }
  i64 num_nonfinite_resets(const Exec& exec, i64 num_envs) const {
    std::vector<std::uint32_t> h(static_cast<size_t>(num_envs));
    exec.copy_to_host(h.data(), nonfinite.data(), num_envs);
    i64 total = 0;
    for (auto v : h) total += v;
    return total;
  }
};

// The part of a VecEnv that does not depend on what is simulated, shared by VecEnvT (below) and
// RobotVecEnvT (envs/robot_env.h): the executor, the batch, the spec, the episode limit, the seed
// and the output arrays, with the VecEnv accessors over them.
template <class Exec>
class VecEnvCommon : public VecEnv {
 public:
  const EnvSpec& spec() const override { return m_spec; }
  i64 num_envs() const override { return m_num_envs; }
  Device device() const override { return Exec::kDevice; }
  Exec& executor() { return m_exec; }

  const float* sample_actions(std::uint64_t seed, std::uint32_t step) override {
    return m_out.sample_actions(m_exec, m_num_envs, m_spec.action, seed, step);
  }
  const float* obs() const override { return m_out.obs.data(); }
  const float* final_obs() const override { return m_out.final_obs.data(); }
  const float* reward() const override { return m_out.reward.data(); }
  const std::uint8_t* terminated() const override { return m_out.terminated.data(); }
  const std::uint8_t* truncated() const override { return m_out.truncated.data(); }
  const float* ep_return() const override { return m_out.ep_return.data(); }
  const std::int32_t* ep_length() const override { return m_out.ep_length.data(); }
  i64 num_nonfinite_resets() const override { return m_out.num_nonfinite_resets(m_exec, m_num_envs); }

 protected:
  VecEnvCommon(Exec exec, i64 num_envs, const char* name, int max_episode_steps)
      : m_exec(std::move(exec)), m_num_envs(num_envs), m_max_steps(max_episode_steps) {
    if (num_envs <= 0) throw std::invalid_argument("num_envs must be positive");
    m_spec.name = name;
    m_spec.max_episode_steps = max_episode_steps;
  }
  // set_param's generic key; true when `name` is it.
  bool set_common_param(const std::string& name, double value) {
    if (name != "max_episode_steps") return false;
    if (value < 1 || value != std::floor(value)) throw std::invalid_argument("a positive integer");
    m_max_steps = static_cast<int>(value);
    m_spec.max_episode_steps = m_max_steps;
    return true;
  }
  std::vector<ParamInfo> common_params() const {
    return {{"max_episode_steps", static_cast<double>(m_max_steps), "episode length before truncation"}};
  }
  void upload_action_bounds() { m_out.upload_action_bounds(m_exec, m_spec.action); }
  // request_draw_poses's ranges: the number of envs they cover; std::out_of_range for one outside
  // [0, num_envs).
  i64 draw_range_total(const std::vector<DrawRange>& ranges) const {
    i64 total = 0;
    for (const auto& [first, count] : ranges) {
      if (first < 0 || count < 0 || first + count > m_num_envs)
        throw std::out_of_range("draw_poses: envs [" + std::to_string(first) + ", " + std::to_string(first + count) +
                                ") outside [0, " + std::to_string(m_num_envs) + ")");
      total += count;
    }
    return total;
  }

  Exec m_exec;
  i64 m_num_envs;
  EnvSpec m_spec;
  int m_max_steps;
  std::uint64_t m_seed = 0;
  EnvOutputs<Exec> m_out;  // counters, obs, final_obs, reward, flags, episode totals, random actions
};

// The members of VecEnvCommon, named in a class template deriving from it.
#define RLT_VEC_ENV_COMMON_MEMBERS(Exec)                                                 \
  using Common = VecEnvCommon<Exec>;                                                     \
  using Common::m_exec, Common::m_num_envs, Common::m_spec, Common::m_max_steps, Common::m_seed, \
      Common::m_out, Common::upload_action_bounds, Common::set_common_param, Common::common_params, \
      Common::draw_range_total;                                                          \
  using ParamInfo = VecEnv::ParamInfo;                                                   \
  using DrawRange = VecEnv::DrawRange

template <class Env, class Exec>
class VecEnvT final : public VecEnvCommon<Exec> {
  RLT_VEC_ENV_COMMON_MEMBERS(Exec);

 public:
  using State = typename Env::State;
  static_assert(std::is_trivially_copyable<State>::value, "env state must be plain data");

  VecEnvT(Exec exec, i64 num_envs) : Common(std::move(exec), num_envs, Env::kName, Env::kMaxEpisodeSteps) {
    Env::spaces(m_params, m_spec.observation, m_spec.action);
    m_states.resize(num_envs);
    m_out.resize(num_envs, Env::kObsDim, Env::kActDim);
    upload_action_bounds();
  }

  const typename Env::Params& env_params() const { return m_params; }

  bool set_param(const std::string& name, double value) override {
    if (set_common_param(name, value)) return true;
    bool found = false;
    m_params.visit([&](const char* n, auto& field, const char*) {
      if (name == n) {
        field = static_cast<std::remove_reference_t<decltype(field)>>(value);
        found = true;
      }
    });
    if (found) {
      Env::spaces(m_params, m_spec.observation, m_spec.action);
      upload_action_bounds();
    }
    return found;
  }

  std::vector<ParamInfo> params() const override {
    std::vector<ParamInfo> out = common_params();
    auto p = m_params;
    p.visit([&](const char* n, auto& field, const char* doc) {
      out.push_back({n, static_cast<double>(field), doc});
    });
    return out;
  }

  void reset(std::uint64_t seed) override {
    m_seed = seed;
    m_out.clear(m_exec, m_num_envs);
    ResetOne<Env> f{m_params, m_seed, m_states.data(), m_out.counters.data(), m_out.obs.data()};
    parallel_for(m_exec, m_num_envs, f);
  }

  void step(const float* actions) override {
    StepOne<Env> f{m_params,         m_seed,          m_max_steps,         m_states.data(),
                   m_out.counters.data(), actions,        m_out.obs.data(),        m_out.final_obs.data(),
                   m_out.reward.data(),   m_out.terminated.data(), m_out.truncated.data(), m_out.ep_return.data(),
                   m_out.ep_length.data(), m_out.nonfinite.data()};
    parallel_for(m_exec, m_num_envs, f);
  }

  // Drawing (viewer/): the env's draw hook when it has one, else nothing to draw.
  std::vector<DrawGeom> draw_geoms() const override {
    if constexpr (EnvHasDraw<Env>::value) return Env::draw_geoms(m_params);
    else return {};
  }

  // Only the envs of the requested ranges are posed and copied (sim/vec_env.h): one gather per
  // range into Exec::Readback's target (CPU: host memory; CUDA: device scratch), then start() (CUDA:
  // one asynchronous copy into pinned memory and an event); wait_draw_poses() waits on that event.
  using VecEnv::request_draw_poses;
  void request_draw_poses(const std::vector<DrawRange>& ranges) const override {
    if constexpr (EnvHasDraw<Env>::value) {
      const i64 total = draw_range_total(ranges);
      if (m_num_draw_geoms < 0) m_num_draw_geoms = static_cast<int>(Env::draw_geoms(m_params).size());
      const int per_env = 12 * m_num_draw_geoms;
      float* out = m_draw_readback.target(total * per_env);
      for (const auto& [first, count] : ranges) {
        if (count > 0) parallel_for(m_exec, count, DrawPosesOne<Env>{m_params, m_states.data(), first, per_env, out});
        out += count * per_env;
      }
      m_draw_readback.start(m_exec, total * per_env);
      m_draw_requested = true;
    } else {
      (void)ranges;
    }
  }
  const float* wait_draw_poses() const override { return m_draw_requested ? m_draw_readback.wait() : nullptr; }

  // Direct access for tests and for setting a state by hand.
  State* states() { return m_states.data(); }

  std::vector<StateBlob> save_state() const override {
    return {buffer_blob<State>(m_exec, "states", m_states), buffer_blob<EnvCounters>(m_exec, "counters", m_out.counters),
            buffer_blob<float>(m_exec, "obs", m_out.obs), buffer_blob<std::uint32_t>(m_exec, "nonfinite", m_out.nonfinite),
            u64_state_blob("seed", m_seed)};
  }

  void load_state(const std::vector<StateBlob>& blobs) override {
    buffer_unblob<State>(m_exec, find_state_blob(blobs, "states"), m_states);
    buffer_unblob<EnvCounters>(m_exec, find_state_blob(blobs, "counters"), m_out.counters);
    buffer_unblob<float>(m_exec, find_state_blob(blobs, "obs"), m_out.obs);
    buffer_unblob<std::uint32_t>(m_exec, find_state_blob(blobs, "nonfinite"), m_out.nonfinite);
    m_seed = u64_from_state_blob(find_state_blob(blobs, "seed"));
  }

 private:
  typename Env::Params m_params;
  typename Exec::template Buffer<State> m_states;            // (num_envs) env state
  // Drawing scratch (the pose requests are const: filled on demand, hold no simulation state).
  mutable int m_num_draw_geoms = -1;                                 // draw_geoms().size(), cached
  mutable typename Exec::template Readback<float> m_draw_readback;  // the requested envs' poses
  mutable bool m_draw_requested = false;
};

}  // namespace rlt
