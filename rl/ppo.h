// PPO over a VecEnv, single source for every executor (DESIGN.md D6), read top to bottom like
// CleanRL: rollout (num_steps x num_envs), GAE, then epochs x minibatches. Everything inside
// launch() stays in executor memory; the only host read is the per-iteration statistics' (collect()).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <time.h>  // clock_gettime (POSIX)

#include "rl/actor_critic.h"
#include "rl/config.h"
#include "rl/distributed.h"
#include "sim/vec_env.h"

namespace rlt {

inline Activation parse_activation(const std::string& name) {
  if (name == "tanh") return Activation::kTanh;
  if (name == "elu") return Activation::kElu;
  if (name == "relu") return Activation::kRelu;
  throw std::invalid_argument("unknown activation '" + name + "' (tanh, elu, relu)");
}

// Why a tanh-squashed policy cannot act in env's action space ("" when it can): it needs continuous
// actions bounded in every component.
inline std::string squash_refusal(const EnvSpec& env) {
  if (env.action.discrete) return "env '" + env.name + "' has discrete actions";
  for (int k = 0; k < env.action.dim; ++k) {
    const float lo = env.action.low.empty() ? -INFINITY : env.action.low[static_cast<size_t>(k)];
    const float hi = env.action.high.empty() ? INFINITY : env.action.high[static_cast<size_t>(k)];
    if (!std::isfinite(lo) || !std::isfinite(hi) || !(hi > lo))
      return "env '" + env.name + "' action " + std::to_string(k) + " is not bounded (" + std::to_string(lo) + ", " +
             std::to_string(hi) + ")";
  }
  return "";
}

// Why ppo.bounds_loss_coef > 0 cannot apply to this env and policy ("" when it can): the bounds loss
// pulls a Gaussian's means back into a bounded continuous action box.
inline std::string bounds_loss_refusal(const EnvSpec& env, const std::string& squash) {
  if (squash == "tanh") return "policy.squash = \"tanh\" keeps its actions in the box (its entropy term pulls means back)";
  return squash_refusal(env);
}

// Why policy.min_log_std / max_log_std cannot apply to this env ("" when they can, or are unset):
// "policy.KEY: reason". Only a Gaussian over continuous actions has a log std.
inline std::string log_std_bounds_refusal(const EnvSpec& env, const PolicyConfig& p) {
  if (!env.action.discrete) return "";
  const char* key = std::isfinite(p.max_log_std)   ? "policy.max_log_std"
                    : std::isfinite(p.min_log_std) ? "policy.min_log_std"
                                                   : nullptr;
  if (key == nullptr) return "";
  return std::string(key) + ": env '" + env.name + "' has discrete actions (its policy has no log std)";
}

// The env's action box as middle and half-width per component (a bounded continuous box: the
// squashed policy's and the bounds loss's refusals check that first).
inline void action_box(const EnvSpec& env, std::vector<float>& center, std::vector<float>& scale) {
  center.clear(), scale.clear();
  for (int k = 0; k < env.action.dim; ++k) {
    const float lo = env.action.low[static_cast<size_t>(k)], hi = env.action.high[static_cast<size_t>(k)];
    center.push_back(0.5f * (lo + hi));
    scale.push_back(0.5f * (hi - lo));
  }
}

inline PolicySpec policy_spec_for(const EnvSpec& env, const PolicyConfig& cfg) {
  PolicySpec s;
  s.obs_dim = env.observation.dim;
  s.discrete = env.action.discrete;
  s.act_dim = env.action.dim;
  s.num_actions = env.action.num_actions;
  s.hidden = cfg.hidden;
  s.act = parse_activation(cfg.activation);
  s.critic_obs_dim = env.critic_obs_dim;
  if (cfg.squash == "tanh") {
    const std::string why = squash_refusal(env);
    if (!why.empty()) throw std::invalid_argument("policy.squash = \"tanh\": " + why);
    action_box(env, s.squash_center, s.squash_scale);
  } else if (cfg.squash != "none") {
    throw std::invalid_argument("policy.squash: unknown value '" + cfg.squash + "' (none, tanh)");
  }
  return s;
}

// What one iteration reports (host).
struct IterationStats {
  std::int64_t iteration = 0;  // 1-based, after this iteration
  std::int64_t env_steps = 0;  // total env steps after this iteration
  double policy_loss = 0, value_loss = 0, entropy = 0, approx_kl = 0, clip_frac = 0;
  double explained_variance = 0;
  double learning_rate = 0;                    // at the end of the iteration
  int epochs_run = 0;                          // < num_epochs when target_kl stopped early
  std::int64_t num_finished = 0;               // episodes that ended in this iteration
  std::vector<float> finished_returns;         // the last min(num_finished, eval_episodes) of them
  std::vector<std::int32_t> finished_lengths;  // (oldest first)
  std::int64_t skipped_updates = 0;            // minibatch updates skipped for a non-finite loss or gradient
  std::int64_t consecutive_skipped = 0;        // skipped updates in a row at the end of the iteration
  std::int64_t nonfinite_resets = 0;           // this process's envs' non-finite resets so far (VecEnv)
};

// Running mean and variance of a vector quantity (Chan et al.'s parallel merge): mean/var live
// in executor memory (read by kernels), the count on the host.
template <class Exec>
struct RunningMoments {
  typename Exec::template Buffer<float> mean, var;  // (dim)
  typename Exec::template Buffer<double> batch;     // (2 x dim) batch mean, batch M2
  double count = 0;
  int dim = 0;
  void init(const Exec& exec, int d) {
    dim = d;
    mean.resize(d);
    var.resize(d);
    batch.resize(2 * d);
    exec.fill(mean.data(), 0.0f, d);
    exec.fill(var.data(), 1.0f, d);
    count = 0;
  }
};

// Folds a batch (n rows x dim, row-major) into running moments. With comm, every process folds
// its batch of n rows, and all fold the union of the batches (the same moments on every process).
template <class Exec>
void update_moments(const Exec& exec, RunningMoments<Exec>& m, const float* x, i64 n, Communicator* comm = nullptr);

// A named host array of the learner's state, for checkpoints.
struct NamedArray {
  std::string name;
  std::vector<float> f32;
  std::vector<double> f64;
};

// The learner as the trainer, eval and bench see it, whatever the executor.
// How much of a saved learner Learner::load restores (see there).
enum class LearnerLoad { kAll, kModel, kPolicy };

// Where a PPO iteration's time goes (`rltrain bench --phases`): the process's CPU time (all its
// threads) per phase, summed over the iterations launched since Learner::time_phases. The phases:
// the envs' steps; the policy in the rollout (normalizers, actor and critic forward, sampling,
// bookkeeping); the advantages (return scaling, GAE, explained-variance sums); the update's
// minibatch gathers, its forward and backward passes, its optimizer step (gradient norm and Adam);
// the normalizers' moments after the update.
enum PpoPhase : int {
  kPhaseEnvStep,
  kPhasePolicy,
  kPhaseAdvantages,
  kPhaseGather,
  kPhaseForwardBackward,
  kPhaseAdam,
  kPhaseNormalizers,
  kNumPpoPhases
};
inline const char* ppo_phase_name(int p) {
  static const char* const names[kNumPpoPhases] = {"env step", "policy",          "advantages", "gather",
                                                   "fwd+bwd",  "adam (+grad norm)", "normalizers"};
  return names[p];
}
inline double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
struct PpoPhaseTimes {
  double cpu_seconds[kNumPpoPhases] = {};
};

class Learner {
 public:
  virtual ~Learner() = default;
  // Starts training from scratch: initial weights, normalizers seeded with the reset obs.
  virtual void start(std::uint64_t seed) = 0;
  // One rollout (num_steps env steps per env) and one update, queued on the executor with the
  // asynchronous copy of its statistics into pinned host memory; collect() reads them. On the CPU
  // the work is done when launch returns; on CUDA the host returns once it is queued, so a caller
  // that reads iteration k's statistics after launching k + 1 never waits on the device inside the
  // loop (the trainer does: train.stats_readback). At most two launched iterations may be uncollected
  // (std::logic_error beyond).
  virtual void launch(std::int64_t iteration, std::int64_t num_iterations) = 0;
  // The statistics of the oldest launched iteration not yet collected, waiting for their copy only
  // (std::logic_error when none is pending).
  virtual IterationStats collect() = 0;
  // Iterations a caller may keep launched ahead of collect() and gain by it: 1 where launch only
  // queues work (CUDA), 0 where it does the work (CPU).
  virtual int stats_lag() const = 0;
  // One iteration, its statistics at once: launch, then collect.
  IterationStats iterate(std::int64_t iteration, std::int64_t num_iterations) {
    launch(iteration, num_iterations);
    return collect();
  }
  // Actions for the env's current observations (executor memory, num_envs x act_dim, valid
  // until the next call): the mode when deterministic, else sampled from the stream keyed by step_key.
  virtual const float* act(bool deterministic, std::uint32_t step_key) = 0;
  // The learner's full state as host arrays, and restoring it (std::runtime_error naming the
  // array on a missing one or a shape mismatch).
  // What is restored (LearnerLoad): kAll, everything (--resume); kModel, what defines the policy's
  // and critic's functions (weights, the observation, critic-observation and return normalizers
  // with their counts) but not the optimizer, schedule or per-env arrays (train.init_from);
  // kPolicy, only what acting needs (weights, observation normalizer), so a checkpoint evaluates on
  // any number of envs. An asymmetric learner also saves its critic observation normalizer
  // (critic_obs_mean/var/count), restored by kAll and kModel.
  virtual std::vector<NamedArray> save() const = 0;
  virtual void load(const std::vector<NamedArray>& arrays, LearnerLoad what) = 0;
  virtual const PolicySpec& policy_spec() const = 0;
  virtual i64 num_params() const = 0;
  virtual i64 batch_size() const = 0;
  // Joins a data-parallel job (rl/distributed.h), before start() or load(): this learner's envs are
  // envs [rank x num_envs, (rank + 1) x num_envs) of the job's (its action draws keyed so), the
  // gradient is averaged over the job's processes once per minibatch, advantages are normalized
  // and the normalizers and iteration statistics merged over all of them. Without a call (or with
  // a job of one process) the learner runs exactly as it does alone.
  virtual void set_communicator(Communicator& comm) = 0;
  // Adds each phase's CPU time of the iterations launched from now on to *out (nullptr: stop).
  // The CPU executor only, whose calls return with their work done: false on CUDA, where the phases
  // are queued and overlap (profile those with Nsight Systems).
  virtual bool time_phases(PpoPhaseTimes* out) = 0;
};

// The most rows a rollout (num_envs x num_steps) may hold: the update's minibatch order is a table
// of 32-bit row indices over the permutation's domain (up to 4x the rows; Ppo::m_perm_index).
constexpr i64 kMaxPpoBatch = i64{1} << 30;

// What a Ppo over num_envs envs allocates in executor memory (its constructor's buffers), in two
// parts: the rollout storage (num_steps x num_envs rows: observations, critic observations,
// actions, log-probs, values, rewards, bootstraps, discounted returns, advantages, returns,
// episode totals, done flags; and the update's permutation table over them) and the learner proper
// (parameters, gradients, Adam moments, the actor-critic's scratch, minibatch and per-step buffers,
// normalizers and their scales, the iteration block).
struct PpoMemory {
  i64 rollout = 0;
  i64 learner = 0;
};
inline PpoMemory ppo_memory(const PolicySpec& spec, const Config& cfg, i64 num_envs) {
  constexpr i64 f = sizeof(float), d = sizeof(double);
  const i64 n = num_envs, b = n * cfg.ppo.num_steps, mb = b / cfg.ppo.num_minibatches;
  const i64 obs = spec.obs_dim, act = spec.act_dim, cobs = spec.asymmetric() ? spec.critic_obs_dim : 0;
  const i64 params = ActorCriticLayout(spec).num_params;
  // Ppo::m_perm_index (4 x b bounds it where the batch is beyond what Ppo accepts).
  const i64 perm_table = b <= kMaxPpoBatch ? static_cast<i64>(IndexPermutation::domain_of(static_cast<u64>(b))) : 4 * b;
  PpoMemory m;
  m.rollout = b * (f * (obs + cobs + act + 8) + static_cast<i64>(sizeof(std::uint8_t) + sizeof(std::int32_t))) +
              perm_table * static_cast<i64>(sizeof(u32));
  const i64 block = kNumPpoStats + 9 + 2 * static_cast<i64>(cfg.train.eval_episodes);
  const auto moments = [&](i64 dim) { return dim * (2 * f + 2 * d); };  // RunningMoments::init
  m.learner = 4 * params * f + f + 2 * d + kNumPpoStats * d + 3 * block * d +  // + the two readback slots
              moments(obs) + moments(cobs) + moments(1) + n * f +              // normalizers, discounted return
              (obs + cobs) * f +                                                // the normalizers' scales
              n * f * (2 * obs + 1 + act + 2 * cobs) +                          // per-step scratch
              mb * f * (obs + cobs + act + 4) +                                 // minibatch gather
              (spec.squashed() ? (n + 2) * act * f : 0) +                       // squashed actions, action box
              (!spec.squashed() && cfg.ppo.bounds_loss_coef > 0 ? 2 * act * f : 0) +  // the bounds loss's box
              actor_critic_scratch_bytes(spec, std::max(n, mb), f);
  return m;
}

template <class Exec>
class Ppo final : public Learner {
 public:
  using FBuf = typename Exec::template Buffer<float>;
  using DBuf = typename Exec::template Buffer<double>;

  Ppo(const Config& cfg, VecEnv& env, const Exec& exec);

  void start(std::uint64_t seed) override;
  void launch(std::int64_t iteration, std::int64_t num_iterations) override;
  IterationStats collect() override;
  int stats_lag() const override { return Exec::kDevice == Device::kCuda ? 1 : 0; }
  const float* act(bool deterministic, std::uint32_t step_key) override;
  std::vector<NamedArray> save() const override;
  void load(const std::vector<NamedArray>& arrays, LearnerLoad what) override;
  const PolicySpec& policy_spec() const override { return m_ac.spec(); }
  i64 num_params() const override { return m_ac.num_params(); }
  i64 batch_size() const override { return m_batch; }
  void set_communicator(Communicator& comm) override;
  bool time_phases(PpoPhaseTimes* out) override {
    if (Exec::kDevice != Device::kCpu) return false;
    m_phases = out;
    return true;
  }

  // The last rollout as stored (executor memory), for tests: values V(s_t) (num_steps x num_envs)
  // and the truncation bootstrap gamma * V(final obs) (0 where the step did not truncate).
  const float* rollout_values() const { return m_values.data(); }
  const float* rollout_bootstrap() const { return m_boot.data(); }

 private:
  void normalize(const float* raw, float* out, i64 rows);
  // Asymmetric actor-critic: the critic's observation through its own normalizer.
  void normalize_critic(const float* raw, float* out, i64 rows);
  void collect_rollout(std::int64_t iteration);
  void compute_advantages();
  int update(std::int64_t iteration);  // returns the epochs run
  // m_perm_index[0, batch) <- the epoch's minibatch order, IndexPermutation(batch, seed, iteration, epoch).
  void permute_batch(std::int64_t iteration, int epoch);
  // time_phases: the CPU time since the last mark is phase p's (nothing when not timing).
  void mark_phase(PpoPhase p) {
    if (m_phases == nullptr) return;
    const double now = process_cpu_seconds();
    m_phases->cpu_seconds[p] += now - m_phase_mark;
    m_phase_mark = now;
  }
  void start_phases() {
    if (m_phases != nullptr) m_phase_mark = process_cpu_seconds();
  }

  Config m_cfg;
  VecEnv& m_env;
  Exec m_exec;
  i64 m_num_envs, m_num_steps, m_batch, m_minibatch;
  int m_obs_dim, m_act_dim;
  int m_critic_dim;  // spec().critic_obs_dim: > 0 when the critic reads env.critic_obs() (asymmetric)
  ActorCritic<float, Exec> m_ac;
  std::uint64_t m_seed = 0;
  std::int64_t m_adam_step = 0;

  FBuf m_params, m_adam_m, m_adam_v;  // (num_params) the flat buffer and its Adam state
  // (num_params + kNumPpoStats) the minibatch's gradient; in a job (m_comm) followed by its loss-term
  // sums as float, so that one all-reduce carries both (update()).
  FBuf m_grads;
  FBuf m_lr;                                   // (1) current learning rate
  DBuf m_grad_sq;                              // (1) squared gradient norm of the minibatch
  DBuf m_skip_run;                             // (1) consecutive skipped (non-finite) updates
  DBuf m_stat_sums;                            // (kNumPpoStats) minibatch sums
  // In a job with advantage normalization: (num_epochs x num_minibatches x 2) the advantages' sum
  // and sum of squares of every minibatch of the update, of all processes (one all-reduce per update).
  DBuf m_job_adv_moments;
  // The iteration block: everything the host reads per iteration, copied in one transfer:
  //   [0, kNumPpoStats) loss-term sums | 4 explained-variance sums | lr | num_finished |
  //   returns of the last K finished episodes | their lengths | skipped updates | consecutive skipped |
  //   the envs' non-finite resets (K = train.eval_episodes)
  DBuf m_block;
  // Two readbacks of the block (Exec::Readback: on CUDA device scratch, an asynchronous copy into
  // pinned memory and an event), so that iteration k + 1 is queued while k's copy waits to be read.
  typename Exec::template Readback<double> m_readback[2];
  struct Launched {
    std::int64_t iteration;
    int epochs_run;
    int slot;                      // m_readback's
    std::int64_t host_nonfinite;   // the env's count read on the host at launch, where it has no nonfinite_counts()
  };
  Launched m_launched[2] = {};  // oldest first
  int m_num_launched = 0;
  int m_next_slot = 0;
  RunningMoments<Exec> m_obs_rms;     // observation normalizer
  RunningMoments<Exec> m_critic_rms;  // critic observation normalizer (asymmetric only)
  RunningMoments<Exec> m_ret_rms;     // discounted-return moments (reward scaling)
  FBuf m_disc_return;                 // (num_envs) running discounted return per env

  // Rollout storage, (num_steps x num_envs x ...), written by collect_rollout.
  FBuf m_obs, m_actions, m_logp, m_values, m_rewards, m_boot, m_disc, m_adv, m_returns, m_ep_ret;
  typename Exec::template Buffer<std::uint8_t> m_done;
  typename Exec::template Buffer<std::int32_t> m_ep_len;
  FBuf m_cobs;  // (num_steps x num_envs x critic_dim) raw critic observations (asymmetric only)
  // Per-step scratch (num_envs x ...).
  FBuf m_step_obs, m_step_final, m_next_value, m_step_actions;
  FBuf m_step_cobs, m_step_cfinal;  // (num_envs x critic_dim) normalized critic obs (asymmetric only)
  // The action box's middle and half-width (act_dim), for a tanh-squashed policy (PolicySpec::squashed())
  // and for the bounds loss (ppo.bounds_loss_coef > 0); and (num_envs x act_dim) the squashed actions
  // the env steps with (m_actions keeps the samples).
  FBuf m_box_center, m_box_scale, m_step_env_actions;
  // policy.min_log_std / max_log_std as the learner clamps the log std (m_log_std_bounded: either finite).
  bool m_log_std_bounded = false;
  float m_log_std_lo = 0.0f, m_log_std_hi = 0.0f;
  // (IndexPermutation::domain_of(batch)) the epoch's minibatch order in [0, batch), the permutation
  // network's one pass over its whole domain behind it (permute_batch: PermutationTable, PermutationWalk).
  typename Exec::template Buffer<u32> m_perm_index;
  FBuf m_obs_inv_std;     // (obs_dim) ObsInvStd of m_obs_rms, for the update's gathers
  FBuf m_critic_inv_std;  // (critic_dim) the same of m_critic_rms (asymmetric only)
  // Minibatch gather (minibatch x ...).
  FBuf m_mb_obs, m_mb_actions, m_mb_logp, m_mb_adv, m_mb_ret, m_mb_val;
  FBuf m_mb_cobs;                    // (minibatch x critic_dim) normalized (asymmetric only)
  std::vector<double> m_host_block;  // the collected block (merged over a job's processes in place)
  // Data-parallel job (set_communicator): null, or a job of more than one process.
  Communicator* m_comm = nullptr;
  int m_world = 1;     // processes in the job
  u32 m_first_row = 0; // global index of this process's env 0
  PpoPhaseTimes* m_phases = nullptr;  // time_phases
  double m_phase_mark = 0;
};

}  // namespace rlt
