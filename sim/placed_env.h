// PlacedEnv<EnvExec, LearnerExec>: a VecEnv that lives on one executor presented on another (issue
// 18, "Placement"): CPU envs feeding a CUDA learner, a CUDA env feeding a CPU learner, or, as the CPU
// twin of both, the CPU on either side through the same copies (what the CPU tests check).
//
// It owns the env (made on EnvExec) and mirrors its outputs into LearnerExec memory:
//   step(actions)   actions (learner memory) -> host staging -> env memory; env.step; then every
//                   output the env has (a nullptr stays nullptr) env memory -> host staging ->
//                   learner memory. The pointers obs(), reward(), ... are the learner-side copies:
//                   the same addresses for the adapter's life, their contents valid until the next
//                   step(), reset(), reset_one() or load_state(), as the VecEnv contract says.
//   reset, reset_one, load_state   forward, then carry the outputs again (reset_one: obs and
//                   critic_obs only, as it changes nothing else)
//   sample_actions  forwards and carries the actions into a learner-side buffer
//   everything else (spec, params, set_first_env, memory, drawing, non-finite count, save_state)
//   forwards unchanged; device() is the learner's.
//
// Host staging, per direction: two slots (double buffering) for the outputs and two for the
// actions, host memory that the learner's copy reads (page-locked when either side is CUDA, so the
// copies are DMA). Each slot has an event recorded after the last copy that reads it; a slot is
// written again only after its event is waited on, so the host never overwrites what a queued copy
// still reads. A step's order of work:
//   1. actions: learner memory -> action slot k (queued on the learner's executor; waited: the env
//      needs them now) -> env memory (queued on the env's executor; action event k recorded)
//   2. env.step (queued on the env's executor)
//   3. outputs: wait output event k; env memory -> output slot k (queued on the env's executor;
//      waited: the copies into the learner memory read it from the host) -> learner memory (queued
//      on the learner's executor; output event k recorded); k flips
// With the CPU on both sides every copy is a memcpy done on return and the events do nothing:
// the same order of copies, the same bytes, so that training through the adapter is bit-for-bit
// training on the env directly (tests/sim/test_placed_env.cpp, tests/rl/test_placement.cpp).
//
// How an executor moves arrays to and from host staging is HostStaging<Exec> (the CPU's below,
// CUDA's in kernels/cuda_staging.h):
//   using Buffer<T>           host memory copies go through (pinned on CUDA)
//   using Event               record(exec) after queued work; wait() until it is done
//   to_host(exec, host, src, n)    host <- executor memory, queued on the executor
//   from_host(exec, dst, host, n)  executor memory <- host, queued; host must stay unchanged until
//                                  an event recorded after it has been waited on
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/cpu_executor.h"
#include "sim/vec_env.h"

namespace rlt {

template <class Exec>
struct HostStaging;

// The CPU executor's memory is host memory: every copy is a memcpy, done when it returns.
template <>
struct HostStaging<CpuExecutor> {
  static constexpr bool kPinned = false;
  template <class T>
  using Buffer = HostBuffer<T>;
  struct Event {
    void record(const CpuExecutor&) {}
    void wait() {}
  };
  template <class T>
  static void to_host(const CpuExecutor& exec, T* host, const T* src, i64 n) {
    exec.copy(host, src, n);
  }
  template <class T>
  static void from_host(const CpuExecutor& exec, T* dst, const T* host, i64 n) {
    exec.copy(dst, host, n);
  }
};

template <class EnvExec, class LearnerExec>
class PlacedEnv final : public VecEnv {
  // Host staging is pinned when either side wants it (a CUDA executor's copies are DMA from it).
  template <class T>
  using Staging = std::conditional_t<HostStaging<LearnerExec>::kPinned || !HostStaging<EnvExec>::kPinned,
                                     typename HostStaging<LearnerExec>::template Buffer<T>,
                                     typename HostStaging<EnvExec>::template Buffer<T>>;
  template <class T>
  using LearnerBuffer = typename LearnerExec::template Buffer<T>;
  using EnvStaging = HostStaging<EnvExec>;
  using LearnerStaging = HostStaging<LearnerExec>;

 public:
  // env: made on env_exec; learner_exec: where its outputs are presented.
  PlacedEnv(std::unique_ptr<VecEnv> env, const EnvExec& env_exec, const LearnerExec& learner_exec)
      : m_env(std::move(env)), m_env_exec(env_exec), m_learner_exec(learner_exec) {
    if (!m_env) throw std::invalid_argument("PlacedEnv: no env");
    if (m_env->device() != EnvExec::kDevice)
      throw std::invalid_argument(std::string("PlacedEnv: the env is on ") + device_name(m_env->device()) +
                                  ", its executor is " + device_name(EnvExec::kDevice));
    allocate();
  }

  ~PlacedEnv() override {
    // No copy may outlive the staging it reads or writes.
    for (auto& e : m_act_done) e.wait();
    for (auto& e : m_out_done) e.wait();
  }

  // The env as made (its executor's memory), for tests.
  VecEnv& inner() { return *m_env; }

  const EnvSpec& spec() const override { return m_env->spec(); }
  i64 num_envs() const override { return m_env->num_envs(); }
  Device device() const override { return LearnerExec::kDevice; }
  EnvMemory memory() const override { return m_env->memory(); }
  // A parameter may change the env's spaces: the buffers follow (Runtime sets them before placing).
  bool set_param(const std::string& name, double value) override {
    const bool known = m_env->set_param(name, value);
    if (known) allocate();
    return known;
  }
  std::vector<ParamInfo> params() const override { return m_env->params(); }
  void set_first_env(i64 first) override { m_env->set_first_env(first); }

  void reset(std::uint64_t seed) override {
    m_env->reset(seed);
    carry_outputs(false);
  }
  void reset_one(i64 env) override {
    m_env->reset_one(env);
    carry_outputs(true);
  }

  void step(const float* actions) override {
    const int k = m_slot;
    const i64 n = num_envs() * spec().action.dim;
    m_act_done[k].wait();  // the env-side copy that read this slot two steps ago
    LearnerStaging::to_host(m_learner_exec, m_act_stage[k].data(), actions, n);
    m_act_read.record(m_learner_exec);
    m_act_read.wait();
    EnvStaging::from_host(m_env_exec, m_env_actions.data(), m_act_stage[k].data(), n);
    m_act_done[k].record(m_env_exec);
    m_env->step(m_env_actions.data());
    carry_outputs(false);
  }

  const float* sample_actions(std::uint64_t seed, std::uint32_t step) override {
    const float* a = m_env->sample_actions(seed, step);
    carry_one(m_sampled, a);
    return m_sampled.presented();
  }

  const float* obs() const override { return m_obs.presented(); }
  const float* final_obs() const override { return m_final_obs.presented(); }
  const float* reward() const override { return m_reward.presented(); }
  const std::uint8_t* terminated() const override { return m_terminated.presented(); }
  const std::uint8_t* truncated() const override { return m_truncated.presented(); }
  const float* ep_return() const override { return m_ep_return.presented(); }
  const std::int32_t* ep_length() const override { return m_ep_length.presented(); }
  const float* ep_forward_speed() const override { return m_ep_forward_speed.presented(); }
  const float* tracking() const override { return m_tracking.presented(); }
  const float* critic_obs() const override { return m_critic_obs.presented(); }
  const float* final_critic_obs() const override { return m_final_critic_obs.presented(); }

  std::vector<DrawGeom> draw_geoms() const override { return m_env->draw_geoms(); }
  using VecEnv::request_draw_poses;
  void request_draw_poses(const std::vector<DrawRange>& ranges) const override { m_env->request_draw_poses(ranges); }
  const float* wait_draw_poses() const override { return m_env->wait_draw_poses(); }

  i64 num_nonfinite_resets() const override { return m_env->num_nonfinite_resets(); }
  std::vector<StateBlob> save_state() const override { return m_env->save_state(); }
  void load_state(const std::vector<StateBlob>& blobs) override {
    m_env->load_state(blobs);
    carry_outputs(false);
  }

 private:
  // One output: its learner-side copy and two host staging slots, allocated with the adapter when
  // the env has the output (decided once, at construction: whether an output is nullptr is a property
  // of the env's type); one the env does not have allocates nothing and presents nullptr.
  template <class T>
  struct Carried {
    i64 size = 0;
    bool present = false;
    LearnerBuffer<T> learner;
    Staging<T> stage[2];
    void init(i64 n, const void* env_output) {
      size = n;
      present = env_output != nullptr && n > 0;
      learner.resize(present ? n : 0);
      for (auto& s : stage) s.resize(present ? n : 0);
    }
    const T* presented() const { return present ? learner.data() : nullptr; }
  };

  // Sizes every buffer from the env's spec, and which outputs it has from its pointers.
  void allocate() {
    for (auto& e : m_act_done) e.wait();
    for (auto& e : m_out_done) e.wait();
    const i64 n = m_env->num_envs(), obs = m_env->spec().observation.dim, act = m_env->spec().action.dim;
    const i64 cobs = m_env->spec().critic_obs_dim;
    const VecEnv& e = *m_env;
    m_obs.init(n * obs, e.obs());
    m_final_obs.init(n * obs, e.final_obs());
    m_reward.init(n, e.reward());
    m_terminated.init(n, e.terminated());
    m_truncated.init(n, e.truncated());
    m_ep_return.init(n, e.ep_return());
    m_ep_length.init(n, e.ep_length());
    m_ep_forward_speed.init(n, e.ep_forward_speed());
    m_tracking.init(n * kTrackingFloats, e.tracking());
    m_critic_obs.init(n * cobs, e.critic_obs());
    m_final_critic_obs.init(n * cobs, e.final_critic_obs());
    m_sampled.init(n * act, m_env.get());
    m_env_actions.resize(n * act);
    for (auto& s : m_act_stage) s.resize(n * act);
  }

  // Queues the copy of src (env memory) into c's slot k (env executor).
  template <class T>
  void to_stage(Carried<T>& c, const T* src, int k) {
    if (!c.present) return;
    if (src == nullptr) throw std::logic_error("PlacedEnv: an output of env '" + spec().name + "' became nullptr");
    EnvStaging::to_host(m_env_exec, c.stage[k].data(), src, c.size);
  }
  // Queues the copy of c's slot k into its learner-side buffer (learner executor).
  template <class T>
  void from_stage(Carried<T>& c, int k) {
    if (c.present) LearnerStaging::from_host(m_learner_exec, c.learner.data(), c.stage[k].data(), c.size);
  }

  // Every output of the env into the learner's memory through slot m_slot (obs_only: reset_one's
  // obs and critic_obs), then flips the slot.
  void carry_outputs(bool obs_only) {
    const int k = m_slot;
    m_out_done[k].wait();  // the learner-side copies that read this slot two carries ago
    to_stage(m_obs, m_env->obs(), k);
    to_stage(m_critic_obs, m_env->critic_obs(), k);
    if (!obs_only) {
      to_stage(m_final_obs, m_env->final_obs(), k);
      to_stage(m_reward, m_env->reward(), k);
      to_stage(m_terminated, m_env->terminated(), k);
      to_stage(m_truncated, m_env->truncated(), k);
      to_stage(m_ep_return, m_env->ep_return(), k);
      to_stage(m_ep_length, m_env->ep_length(), k);
      to_stage(m_ep_forward_speed, m_env->ep_forward_speed(), k);
      to_stage(m_tracking, m_env->tracking(), k);
      to_stage(m_final_critic_obs, m_env->final_critic_obs(), k);
    }
    m_staged.record(m_env_exec);
    m_staged.wait();  // the learner-side copies read the slot from the host
    from_stage(m_obs, k);
    from_stage(m_critic_obs, k);
    if (!obs_only) {
      from_stage(m_final_obs, k);
      from_stage(m_reward, k);
      from_stage(m_terminated, k);
      from_stage(m_truncated, k);
      from_stage(m_ep_return, k);
      from_stage(m_ep_length, k);
      from_stage(m_ep_forward_speed, k);
      from_stage(m_tracking, k);
      from_stage(m_final_critic_obs, k);
    }
    m_out_done[k].record(m_learner_exec);
    m_slot = 1 - k;
  }

  // One array (sample_actions) through the same path.
  template <class T>
  void carry_one(Carried<T>& c, const T* src) {
    const int k = m_slot;
    m_out_done[k].wait();
    to_stage(c, src, k);
    m_staged.record(m_env_exec);
    m_staged.wait();
    from_stage(c, k);
    m_out_done[k].record(m_learner_exec);
    m_slot = 1 - k;
  }

  std::unique_ptr<VecEnv> m_env;
  EnvExec m_env_exec;
  LearnerExec m_learner_exec;
  int m_slot = 0;  // the staging slot the next carry writes
  Carried<float> m_obs, m_final_obs, m_reward, m_ep_return, m_ep_forward_speed, m_tracking, m_critic_obs,
      m_final_critic_obs;
  Carried<std::uint8_t> m_terminated, m_truncated;
  Carried<std::int32_t> m_ep_length;
  Carried<float> m_sampled;  // sample_actions()
  // Actions: two host slots, and the env-side array the env steps with.
  Staging<float> m_act_stage[2];
  typename EnvExec::template Buffer<float> m_env_actions;
  // Events: the learner-to-host copy of the actions, the env-to-host copies of the outputs (both
  // waited at once), and per slot the last copies that read it.
  typename LearnerStaging::Event m_act_read;
  typename EnvStaging::Event m_staged;
  typename EnvStaging::Event m_act_done[2];
  typename LearnerStaging::Event m_out_done[2];
};

// What a PlacedEnv adds to a batch of num_envs envs of `spec`, beyond the env's own memory(): the
// learner-side copies of its outputs (learner memory: obs, final obs, critic pair, reward, episode
// return and forward speed, tracking, flags, length, sampled actions; counted as if the env had
// every optional output) and the host staging (two slots of each, and two of the actions).
struct PlacementMemory {
  i64 learner = 0;
  i64 host = 0;
};
inline PlacementMemory placement_memory(const EnvSpec& spec, i64 num_envs) {
  const i64 f = sizeof(float), n = num_envs;
  const i64 obs = spec.observation.dim, cobs = spec.critic_obs_dim, act = spec.action.dim;
  const i64 outputs = n * (f * (2 * obs + 2 * cobs + 3 + kTrackingFloats) + 2 + 4);
  PlacementMemory m;
  m.learner = outputs + n * act * f;
  m.host = 2 * outputs + 2 * n * act * f + n * act * f;  // + the env-side actions (host or device)
  return m;
}

}  // namespace rlt
