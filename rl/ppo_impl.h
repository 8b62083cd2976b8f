// Ppo<Exec> implementation. Included once per executor: rl/ppo_cpu.cpp, rl/ppo_cuda.cu.
#pragma once

#include <algorithm>
#include <cstring>

#include "rl/policy.h"  // policy_sample_seed
#include "rl/ppo.h"

namespace rlt {

// ---- functors (one element or row each) -----------------------------------------------------------

struct BatchMomentTerm {  // (x[i, k] - mean_k)^2 with mean_k = batch[k] / n read from executor memory
  const float* x;
  const double* batch;
  int dim, k;
  double n;
  RLT_HD double operator()(i64 i) const {
    const double d = static_cast<double>(x[i * dim + k]) - batch[k] / n;
    return d * d;
  }
};

struct MergeMoments {  // Chan et al.: fold (n_b, mean_b, M2_b) into (n_a, mean_a, var_a)
  float* mean;
  float* var;
  const double* batch;  // [0, dim) sums, [dim, 2 dim) M2
  int dim;
  double n_a, n_b;
  RLT_HD void operator()(i64 k) const {
    const double mb = batch[k] / n_b, m2b = batch[dim + k];
    const double ma = mean[k], m2a = static_cast<double>(var[k]) * n_a;
    const double n = n_a + n_b, delta = mb - ma;
    mean[k] = static_cast<float>(ma + delta * n_b / n);
    var[k] = static_cast<float>((m2a + m2b + delta * delta * n_a * n_b / n) / n);
  }
};

struct PostStep {  // bookkeeping after env.step for env i at rollout step t
  const float* reward;
  const std::uint8_t* terminated;
  const std::uint8_t* truncated;
  const float* ep_return;
  const std::int32_t* ep_length;
  const float* final_value;  // (num_envs) V(final obs)
  float* disc_return;        // (num_envs)
  float* rewards;            // rollout rows at step t
  float* boot;
  float* disc;
  std::uint8_t* done;
  float* ep_ret;
  std::int32_t* ep_len;
  float gamma;
  RLT_HD void operator()(i64 i) const {
    const float r = reward[i];
    const bool d = terminated[i] || truncated[i];
    rewards[i] = r;
    // Gymnasium's semantics: a truncated episode is bootstrapped from its final observation.
    boot[i] = truncated[i] ? gamma * final_value[i] : 0.0f;
    const float g = disc_return[i] * gamma + r;
    disc[i] = g;
    disc_return[i] = d ? 0.0f : g;
    done[i] = d;
    ep_ret[i] = d ? ep_return[i] : 0.0f;
    ep_len[i] = d ? ep_length[i] : 0;
  }
};

struct ScaleRewards {  // r <- r / sqrt(var(discounted return) + eps) + bootstrap
  float* rewards;
  const float* boot;
  const float* ret_var;
  bool enabled;
  RLT_HD void operator()(i64 k) const {
    const float s = enabled ? 1.0f / sqrtf(ret_var[0] + 1e-8f) : 1.0f;
    rewards[k] = rewards[k] * s + boot[k];
  }
};

// An epoch's minibatch order: the whole batch's permutation (IndexPermutation) in one u32 table of
// the network's domain (Ppo::m_perm_index), in two passes: PermutationTable runs the network once
// over the domain (a loop without branches: vectorized on the CPU), then PermutationWalk follows each
// index's cycle walk through the table. Row j of the epoch's order is then table[j], for every gather
// and sum of the epoch (the same map as IndexPermutation::operator(), computed once per epoch).
struct PermutationTable {  // table[y] <- one pass of the network, y in [0, domain)
  IndexPermutation perm;
  u32* table;
  RLT_HD void operator()(i64 y) const { table[y] = perm.feistel32(static_cast<u32>(y)); }
};
struct PermutationWalk {  // table[i] <- perm(i) for i < n, in place: a walk reads its own entry and
  u32* table;             // entries >= n, which no walk writes
  u32 n;
  RLT_HD void operator()(i64 i) const {
    u32 x = table[i];
    // One step without a branch (about half the indices need one on a domain of 2n), then the rest.
    const u32 next = table[x];
    x = x < n ? x : next;
    while (x >= n) x = table[x];
    table[i] = x;
  }
};

struct GatherMinibatch {  // row j of the minibatch <- rollout row index[j], obs normalized
  const u32* index;       // the epoch's order from the minibatch's first row (PermutationWalk)
  const float* obs;
  const float* actions;
  const float* logp;
  const float* adv;
  const float* ret;
  const float* values;
  const float* obs_mean;
  const float* obs_inv_std;  // ObsInvStd of the normalizer's variance
  float* mb_obs;
  float* mb_actions;
  float* mb_logp;
  float* mb_adv;
  float* mb_ret;
  float* mb_val;
  int obs_dim, act_dim;
  float clip;
  bool normalize;
  RLT_HD void operator()(i64 j) const {
    const i64 src = static_cast<i64>(index[j]);
    for (int k = 0; k < obs_dim; ++k)
      mb_obs[j * obs_dim + k] = normalize_obs_scaled(obs[src * obs_dim + k], obs_mean[k], obs_inv_std[k], clip, normalize);
    for (int k = 0; k < act_dim; ++k) mb_actions[j * act_dim + k] = actions[src * act_dim + k];
    mb_logp[j] = logp[src];
    mb_adv[j] = adv[src];
    mb_ret[j] = ret[src];
    mb_val[j] = values[src];
  }
};

struct GatherCriticObs {  // asymmetric: row j of the minibatch's critic obs <- rollout row index[j]
  const u32* index;
  const float* cobs;
  const float* mean;
  const float* inv_std;
  float* mb_cobs;
  int dim;
  float clip;
  bool normalize;
  RLT_HD void operator()(i64 j) const {
    const i64 src = static_cast<i64>(index[j]);
    for (int k = 0; k < dim; ++k)
      mb_cobs[j * dim + k] = normalize_obs_scaled(cobs[src * dim + k], mean[k], inv_std[k], clip, normalize);
  }
};

struct AdaptiveLr {  // rsl_rl's rule, on the minibatch's approximate KL, in executor memory
  float* lr;
  const double* stat_sums;
  double rows, desired_kl;
  RLT_HD void operator()(i64) const {
    const double kl = stat_sums[kStatApproxKl] / rows;
    if (kl > 2.0 * desired_kl) lr[0] = fmaxf(lr[0] / 1.5f, 1e-5f);
    else if (kl < 0.5 * desired_kl && kl > 0.0) lr[0] = fminf(lr[0] * 1.5f, 1e-2f);
  }
};

struct StoreLr {
  double* out;
  const float* lr;
  RLT_HD void operator()(i64) const { *out = static_cast<double>(*lr); }
};

struct CopyScalar {
  double* out;
  const double* x;
  RLT_HD void operator()(i64) const { *out = *x; }
};

struct Accumulate {
  double* acc;
  const double* x;
  RLT_HD void operator()(i64 s) const { acc[s] += x[s]; }
};

struct PermutedValueOf {  // x[index[j]] (or its square): a minibatch's advantages, not gathered
  const u32* index;       // the epoch's order from the minibatch's first row
  const float* x;
  bool square;
  RLT_HD double operator()(i64 j) const {
    const double v = static_cast<double>(x[index[j]]);
    return square ? v * v : v;
  }
};

// A job's minibatch: its gradient (n floats) and loss-term sums travel in one all-reduce (update()).
struct PackStatSums {  // grads[n + s] <- stat_sums[s]
  float* grads;
  const double* stat_sums;
  i64 n;
  RLT_HD void operator()(i64 s) const { grads[n + s] = static_cast<float>(stat_sums[s]); }
};
struct UnpackStatSums {  // stat_sums[s] <- grads[n + s] (the job's sums)
  double* stat_sums;
  const float* grads;
  i64 n;
  RLT_HD void operator()(i64 s) const { stat_sums[s] = static_cast<double>(grads[n + s]); }
};
struct ScaleBy {  // x[i] *= f: the sum of the processes' gradients to their mean (Communicator::allreduce_mean)
  float* x;
  float f;
  RLT_HD void operator()(i64 i) const { x[i] *= f; }
};

struct ResidualOf {  // returns - values, and its square
  const float* ret;
  const float* val;
  bool square;
  RLT_HD double operator()(i64 k) const {
    const double d = static_cast<double>(ret[k]) - static_cast<double>(val[k]);
    return square ? d * d : d;
  }
};

// ---- moments ------------------------------------------------------------------------------------

template <class Exec>
void update_moments(const Exec& exec, RunningMoments<Exec>& m, const float* x, i64 n, Communicator* comm) {
  if (n <= 0) return;
  // Several processes: the sums first (so every process centres on the union's mean), then the
  // sums of squared deviations; each rank holds n rows.
  const bool merge = comm != nullptr && comm->size() > 1;
  const double rows = static_cast<double>(n) * (merge ? comm->size() : 1);
  for (int k = 0; k < m.dim; ++k) reduce_sum(exec, n, StridedValueOf<float>{x, m.dim, k}, m.batch.data() + k);
  if (merge) exec_allreduce_sum(exec, *comm, m.batch.data(), m.dim);
  for (int k = 0; k < m.dim; ++k)
    reduce_sum(exec, n, BatchMomentTerm{x, m.batch.data(), m.dim, k, rows}, m.batch.data() + m.dim + k);
  if (merge) exec_allreduce_sum(exec, *comm, m.batch.data() + m.dim, m.dim);
  parallel_for(exec, m.dim, MergeMoments{m.mean.data(), m.var.data(), m.batch.data(), m.dim, m.count, rows});
  m.count += rows;
}

// The episodes that ended in an iteration on every process of a job, from each one's iteration
// block (hl: lr | num_finished | the last k returns | their lengths): num_finished summed, and
// the last k of all, taken newest first from each process in turn (so no process's episodes
// crowd out another's), oldest first in st.
inline void merge_episodes(Communicator& comm, const double* hl, i64 k, IterationStats& st) {
  const i64 kept = std::min<i64>(static_cast<i64>(hl[1]), k);
  std::vector<double> mine{hl[1]};
  for (i64 e = 0; e < kept; ++e) mine.push_back(hl[2 + e]), mine.push_back(hl[2 + k + e]);
  const std::vector<std::string> all =
      comm.allgather(std::string(reinterpret_cast<const char*>(mine.data()), mine.size() * sizeof(double)));
  std::vector<std::vector<double>> ranks;
  st.num_finished = 0;
  for (const std::string& r : all) {
    ranks.emplace_back(r.size() / sizeof(double));
    std::memcpy(ranks.back().data(), r.data(), ranks.back().size() * sizeof(double));
    st.num_finished += static_cast<std::int64_t>(ranks.back()[0]);
  }
  std::vector<std::pair<float, std::int32_t>> newest_first;
  for (i64 age = 0; static_cast<i64>(newest_first.size()) < k; ++age) {
    bool any = false;
    for (const auto& r : ranks) {
      const i64 n = static_cast<i64>(r.size() - 1) / 2;
      if (age >= n || static_cast<i64>(newest_first.size()) >= k) continue;
      const i64 e = n - 1 - age;
      newest_first.emplace_back(static_cast<float>(r[1 + 2 * e]), static_cast<std::int32_t>(r[2 + 2 * e]));
      any = true;
    }
    if (!any) break;
  }
  for (auto it = newest_first.rbegin(); it != newest_first.rend(); ++it) {
    st.finished_returns.push_back(it->first);
    st.finished_lengths.push_back(it->second);
  }
}

// ---- Ppo ------------------------------------------------------------------------------------------

template <class Exec>
Ppo<Exec>::Ppo(const Config& cfg, VecEnv& env, const Exec& exec)
    : m_cfg(cfg),
      m_env(env),
      m_exec(exec),
      m_num_envs(env.num_envs()),
      m_num_steps(cfg.ppo.num_steps),
      m_batch(m_num_envs * cfg.ppo.num_steps),
      m_minibatch(m_batch / cfg.ppo.num_minibatches),
      m_obs_dim(env.spec().observation.dim),
      m_act_dim(env.spec().action.dim),
      m_critic_dim(env.spec().critic_obs_dim),
      m_ac(policy_spec_for(env.spec(), cfg.policy), std::max(m_num_envs, m_batch / cfg.ppo.num_minibatches), exec) {
  if (m_batch % cfg.ppo.num_minibatches != 0)
    throw std::invalid_argument("num_envs * num_steps must be divisible by num_minibatches");
  if (m_batch > kMaxPpoBatch)  // the epoch's order is a table of 32-bit row indices (permute_batch)
    throw std::invalid_argument("num_envs * num_steps = " + std::to_string(m_batch) + " exceeds " +
                                std::to_string(kMaxPpoBatch) + " rows");
  if (m_critic_dim < 0 || (m_critic_dim > 0 && (env.critic_obs() == nullptr || env.final_critic_obs() == nullptr)))
    throw std::invalid_argument("env '" + env.spec().name + "' declares critic_obs_dim " +
                                std::to_string(m_critic_dim) + " but provides no critic observations");
  const std::string why_log_std = log_std_bounds_refusal(env.spec(), cfg.policy);
  if (!why_log_std.empty()) throw std::invalid_argument(why_log_std);
  m_log_std_bounded = std::isfinite(cfg.policy.min_log_std) || std::isfinite(cfg.policy.max_log_std);  // (continuous: refused above)
  m_log_std_lo = static_cast<float>(cfg.policy.min_log_std);
  m_log_std_hi = static_cast<float>(cfg.policy.max_log_std);
  const i64 p = m_ac.num_params(), b = m_batch, n = m_num_envs, mb = m_minibatch;
  for (FBuf* buf : {&m_params, &m_adam_m, &m_adam_v}) buf->resize(p);
  m_grads.resize(p + kNumPpoStats);
  m_lr.resize(1);
  m_grad_sq.resize(1);
  m_skip_run.resize(1);
  m_exec.fill(m_skip_run.data(), 0.0, 1);
  m_stat_sums.resize(kNumPpoStats);
  m_block.resize(kNumPpoStats + 9 + 2 * static_cast<i64>(cfg.train.eval_episodes));
  m_obs_rms.init(m_exec, m_obs_dim);
  m_ret_rms.init(m_exec, 1);
  m_disc_return.resize(n);
  m_obs.resize(b * m_obs_dim);
  m_actions.resize(b * m_act_dim);
  for (FBuf* buf : {&m_logp, &m_values, &m_rewards, &m_boot, &m_disc, &m_adv, &m_returns, &m_ep_ret}) buf->resize(b);
  m_done.resize(b);
  m_ep_len.resize(b);
  m_step_obs.resize(n * m_obs_dim);
  m_step_final.resize(n * m_obs_dim);
  m_next_value.resize(n);
  m_step_actions.resize(n * m_act_dim);
  if (m_ac.spec().squashed()) {
    const PolicySpec& ps = m_ac.spec();
    m_box_center.resize(m_act_dim);
    m_box_scale.resize(m_act_dim);
    m_step_env_actions.resize(n * m_act_dim);
    m_exec.copy_from_host(m_box_center.data(), ps.squash_center.data(), m_act_dim);
    m_exec.copy_from_host(m_box_scale.data(), ps.squash_scale.data(), m_act_dim);
  } else if (cfg.ppo.bounds_loss_coef > 0) {
    const EnvSpec& es = m_env.spec();
    const std::string why = bounds_loss_refusal(es, cfg.policy.squash);
    if (!why.empty()) throw std::invalid_argument("ppo.bounds_loss_coef: " + why);
    std::vector<float> center, scale;
    action_box(es, center, scale);
    m_box_center.resize(m_act_dim);
    m_box_scale.resize(m_act_dim);
    m_exec.copy_from_host(m_box_center.data(), center.data(), m_act_dim);
    m_exec.copy_from_host(m_box_scale.data(), scale.data(), m_act_dim);
  }
  m_perm_index.resize(static_cast<i64>(IndexPermutation::domain_of(static_cast<u64>(b))));
  m_obs_inv_std.resize(m_obs_dim);
  m_mb_obs.resize(mb * m_obs_dim);
  if (m_critic_dim > 0) {
    m_critic_rms.init(m_exec, m_critic_dim);
    m_cobs.resize(b * m_critic_dim);
    m_step_cobs.resize(n * m_critic_dim);
    m_step_cfinal.resize(n * m_critic_dim);
    m_mb_cobs.resize(mb * m_critic_dim);
    m_critic_inv_std.resize(m_critic_dim);
  }
  m_mb_actions.resize(mb * m_act_dim);
  for (FBuf* buf : {&m_mb_logp, &m_mb_adv, &m_mb_ret, &m_mb_val}) buf->resize(mb);
  m_host_block.resize(static_cast<size_t>(m_block.size()));
  m_seed = cfg.train.seed;
}

template <class Exec>
void Ppo<Exec>::set_communicator(Communicator& comm) {
  if (comm.size() == 1) return;  // alone: exactly the single-process code
  if (static_cast<i64>(comm.size()) * m_num_envs > (i64{1} << 32))
    throw std::invalid_argument("num_envs x processes exceeds the 32-bit env key");
  m_comm = &comm;
  m_world = comm.size();
  m_first_row = static_cast<u32>(comm.rank() * m_num_envs);
  if (m_cfg.ppo.normalize_advantages)
    m_job_adv_moments.resize(2 * static_cast<i64>(m_cfg.ppo.num_epochs) * m_cfg.ppo.num_minibatches);
}

template <class Exec>
void Ppo<Exec>::start(std::uint64_t seed) {
  if (m_num_launched > 0) throw std::logic_error("Ppo::start: launched iterations are not collected yet");
  m_seed = seed;
  const std::vector<float> init = m_ac.initial_params(seed, m_cfg.policy.init_log_std);
  m_exec.copy_from_host(m_params.data(), init.data(), m_ac.num_params());
  m_exec.fill(m_adam_m.data(), 0.0f, m_ac.num_params());
  m_exec.fill(m_adam_v.data(), 0.0f, m_ac.num_params());
  m_exec.fill(m_lr.data(), static_cast<float>(m_cfg.ppo.learning_rate), 1);
  m_exec.fill(m_disc_return.data(), 0.0f, m_num_envs);
  m_adam_step = 0;
  // Every process draws the same initial weights from the seed; rank 0's are the job's all the same.
  if (m_comm != nullptr) exec_broadcast(m_exec, *m_comm, m_params.data(), m_ac.num_params(), 0);
  m_obs_rms.init(m_exec, m_obs_dim);
  m_ret_rms.init(m_exec, 1);
  if (m_cfg.ppo.normalize_obs) update_moments(m_exec, m_obs_rms, m_env.obs(), m_num_envs, m_comm);
  if (m_critic_dim > 0) {
    m_critic_rms.init(m_exec, m_critic_dim);
    if (m_cfg.ppo.normalize_obs) update_moments(m_exec, m_critic_rms, m_env.critic_obs(), m_num_envs, m_comm);
  }
}

template <class Exec>
void Ppo<Exec>::normalize(const float* raw, float* out, i64 rows) {
  parallel_for(m_exec, rows * m_obs_dim,
               NormalizeObs{raw, m_obs_rms.mean.data(), m_obs_rms.var.data(), out, m_obs_dim,
                            static_cast<float>(m_cfg.ppo.clip_obs), m_cfg.ppo.normalize_obs});
}

template <class Exec>
void Ppo<Exec>::normalize_critic(const float* raw, float* out, i64 rows) {
  parallel_for(m_exec, rows * m_critic_dim,
               NormalizeObs{raw, m_critic_rms.mean.data(), m_critic_rms.var.data(), out, m_critic_dim,
                            static_cast<float>(m_cfg.ppo.clip_obs), m_cfg.ppo.normalize_obs});
}

template <class Exec>
const float* Ppo<Exec>::act(bool deterministic, std::uint32_t step_key) {
  normalize(m_env.obs(), m_step_obs.data(), m_num_envs);
  const float* head = m_ac.actor_forward(m_exec, m_params.data(), m_step_obs.data(), m_num_envs);
  const PolicySpec& ps = m_ac.spec();
  parallel_for(
      m_exec, m_num_envs,
      SampleAction{head, m_params.data() + m_ac.log_std_offset(), m_step_actions.data(), nullptr, ps.head_dim(),
                   ps.act_dim, ps.discrete, deterministic, policy_sample_seed(m_seed), step_key, m_first_row,
                   m_box_center.data(), m_box_scale.data(), ps.squashed() ? m_step_env_actions.data() : nullptr});
  return ps.squashed() ? m_step_env_actions.data() : m_step_actions.data();
}

template <class Exec>
void Ppo<Exec>::collect_rollout(std::int64_t iteration) {
  const i64 n = m_num_envs;
  const PolicySpec& ps = m_ac.spec();
  const float* params = m_params.data();
  // Asymmetric actor-critic: the critic reads the env's critic obs through its own normalizer; the
  // actor (and everything an evaluation or export needs) only ever sees obs.
  const bool asym = m_critic_dim > 0;
  const float* critic_in = asym ? m_step_cobs.data() : m_step_obs.data();
  const float* critic_final = asym ? m_step_cfinal.data() : m_step_final.data();
  for (i64 t = 0; t < m_num_steps; ++t) {
    const i64 row = t * n;
    m_exec.copy(m_obs.data() + row * m_obs_dim, m_env.obs(), n * m_obs_dim);
    normalize(m_env.obs(), m_step_obs.data(), n);
    if (asym) {
      m_exec.copy(m_cobs.data() + row * m_critic_dim, m_env.critic_obs(), n * m_critic_dim);
      normalize_critic(m_env.critic_obs(), m_step_cobs.data(), n);
    }
    const float* head = m_ac.actor_forward(m_exec, params, m_step_obs.data(), n);
    const float* value = m_ac.critic_forward(m_exec, params, critic_in, n);
    m_exec.copy(m_values.data() + row, value, n);
    const u32 step_key = static_cast<u32>((iteration - 1) * m_num_steps + t);
    parallel_for(m_exec, n,
                 SampleAction{head, params + m_ac.log_std_offset(), m_actions.data() + row * m_act_dim,
                              m_logp.data() + row, ps.head_dim(), ps.act_dim, ps.discrete, false, m_seed, step_key,
                              m_first_row, m_box_center.data(), m_box_scale.data(),
                              ps.squashed() ? m_step_env_actions.data() : nullptr});
    mark_phase(kPhasePolicy);
    m_env.step(ps.squashed() ? m_step_env_actions.data() : m_actions.data() + row * m_act_dim);
    mark_phase(kPhaseEnvStep);
    if (asym) normalize_critic(m_env.final_critic_obs(), m_step_cfinal.data(), n);
    else normalize(m_env.final_obs(), m_step_final.data(), n);
    const float* final_value = m_ac.critic_forward(m_exec, params, critic_final, n);
    parallel_for(m_exec, n,
                 PostStep{m_env.reward(), m_env.terminated(), m_env.truncated(), m_env.ep_return(), m_env.ep_length(),
                          final_value, m_disc_return.data(), m_rewards.data() + row, m_boot.data() + row,
                          m_disc.data() + row, m_done.data() + row, m_ep_ret.data() + row, m_ep_len.data() + row,
                          static_cast<float>(m_cfg.ppo.gamma)});
  }
  if (asym) normalize_critic(m_env.critic_obs(), m_step_cobs.data(), n);
  else normalize(m_env.obs(), m_step_obs.data(), n);
  const float* next_value = m_ac.critic_forward(m_exec, params, critic_in, n);
  m_exec.copy(m_next_value.data(), next_value, n);
  mark_phase(kPhasePolicy);
}

template <class Exec>
void Ppo<Exec>::compute_advantages() {
  if (m_cfg.ppo.normalize_reward) update_moments(m_exec, m_ret_rms, m_disc.data(), m_batch, m_comm);
  parallel_for(m_exec, m_batch,
               ScaleRewards{m_rewards.data(), m_boot.data(), m_ret_rms.var.data(), m_cfg.ppo.normalize_reward});
  parallel_for(m_exec, m_num_envs,
               GaeOneEnv<float>{m_rewards.data(), m_values.data(), m_done.data(), m_next_value.data(), m_adv.data(),
                                m_returns.data(), static_cast<int>(m_num_steps), m_num_envs,
                                static_cast<float>(m_cfg.ppo.gamma), static_cast<float>(m_cfg.ppo.gae_lambda)});
}

template <class Exec>
void Ppo<Exec>::permute_batch(std::int64_t iteration, int epoch) {
  const IndexPermutation perm(static_cast<u64>(m_batch), m_seed, static_cast<u32>(iteration), static_cast<u32>(epoch));
  parallel_for(m_exec, static_cast<i64>(perm.domain()), PermutationTable{perm, m_perm_index.data()});
  parallel_for(m_exec, m_batch, PermutationWalk{m_perm_index.data(), static_cast<u32>(m_batch)});
}

template <class Exec>
int Ppo<Exec>::update(std::int64_t iteration) {
  const auto& c = m_cfg.ppo;
  const PpoCoefs<float> coefs{static_cast<float>(c.clip_coef),         static_cast<float>(c.vf_coef),
                              static_cast<float>(c.ent_coef),          c.clip_value_loss,
                              c.normalize_advantages,                  static_cast<float>(c.bounds_loss_coef)};
  const i64 p = m_ac.num_params();
  const PolicySpec& ps = m_ac.spec();
  int epochs = 0;
  double* const skip_slot = m_block.data() + kNumPpoStats + 6 + 2 * static_cast<i64>(m_cfg.train.eval_episodes);
  // A job of several processes: one collective per minibatch (the gradient with the loss-term sums),
  // and one per update for the advantage moments of every minibatch, summed here ahead of the
  // epochs (the advantages do not change during the update, the permutations are known).
  JobMinibatch job{m_minibatch * m_world, nullptr};
  const u32* const order = m_perm_index.data();  // the epoch's minibatch order (permute_batch)
  if (m_comm != nullptr && c.normalize_advantages) {
    for (int epoch = 0; epoch < c.num_epochs; ++epoch) {
      permute_batch(iteration, epoch);
      for (int k = 0; k < c.num_minibatches; ++k) {
        double* out = m_job_adv_moments.data() + 2 * (static_cast<i64>(epoch) * c.num_minibatches + k);
        reduce_sum(m_exec, m_minibatch, PermutedValueOf{order + k * m_minibatch, m_adv.data(), false}, out);
        reduce_sum(m_exec, m_minibatch, PermutedValueOf{order + k * m_minibatch, m_adv.data(), true}, out + 1);
      }
    }
    exec_allreduce_sum(m_exec, *m_comm, m_job_adv_moments.data(), m_job_adv_moments.size());
  }
  // The normalizers do not change during the update (update_moments runs after it): their scales once.
  parallel_for(m_exec, m_obs_dim, ObsInvStd{m_obs_rms.var.data(), m_obs_inv_std.data()});
  if (m_critic_dim > 0) parallel_for(m_exec, m_critic_dim, ObsInvStd{m_critic_rms.var.data(), m_critic_inv_std.data()});
  for (int epoch = 0; epoch < c.num_epochs; ++epoch) {
    permute_batch(iteration, epoch);
    for (int k = 0; k < c.num_minibatches; ++k) {
      const u32* rows = order + k * m_minibatch;
      parallel_for(m_exec, m_minibatch,
                   GatherMinibatch{rows,
                                   m_obs.data(),
                                   m_actions.data(),
                                   m_logp.data(),
                                   m_adv.data(),
                                   m_returns.data(),
                                   m_values.data(),
                                   m_obs_rms.mean.data(),
                                   m_obs_inv_std.data(),
                                   m_mb_obs.data(),
                                   m_mb_actions.data(),
                                   m_mb_logp.data(),
                                   m_mb_adv.data(),
                                   m_mb_ret.data(),
                                   m_mb_val.data(),
                                   m_obs_dim,
                                   ps.act_dim,
                                   static_cast<float>(c.clip_obs),
                                   c.normalize_obs});
      if (m_critic_dim > 0)
        parallel_for(m_exec, m_minibatch,
                     GatherCriticObs{rows, m_cobs.data(), m_critic_rms.mean.data(), m_critic_inv_std.data(),
                                     m_mb_cobs.data(), m_critic_dim, static_cast<float>(c.clip_obs), c.normalize_obs});
      mark_phase(kPhaseGather);
      const MinibatchView<float> mb{m_mb_obs.data(),
                                    m_mb_actions.data(),
                                    m_mb_logp.data(),
                                    m_mb_adv.data(),
                                    m_mb_ret.data(),
                                    m_mb_val.data(),
                                    m_minibatch,
                                    m_critic_dim > 0 ? m_mb_cobs.data() : nullptr,
                                    m_seed,
                                    static_cast<u32>(m_adam_step),
                                    static_cast<u32>((m_first_row / static_cast<u32>(m_num_envs)) * m_minibatch),
                                    m_box_center.data(),
                                    m_box_scale.data()};
      if (m_comm == nullptr) {
        m_ac.loss_and_grad(m_exec, m_params.data(), mb, coefs, m_grads.data(), m_stat_sums.data());
      } else {  // several processes: the mean gradient and the summed loss terms of all, in one all-reduce
        if (c.normalize_advantages)
          job.adv_moments = m_job_adv_moments.data() + 2 * (static_cast<i64>(epoch) * c.num_minibatches + k);
        m_ac.loss_and_grad(m_exec, m_params.data(), mb, coefs, m_grads.data(), m_stat_sums.data(), &job);
        parallel_for(m_exec, kNumPpoStats, PackStatSums{m_grads.data(), m_stat_sums.data(), p});
        exec_allreduce_sum(m_exec, *m_comm, m_grads.data(), p + kNumPpoStats);
        parallel_for(m_exec, p, ScaleBy{m_grads.data(), 1.0f / static_cast<float>(m_world)});
        parallel_for(m_exec, kNumPpoStats, UnpackStatSums{m_stat_sums.data(), m_grads.data(), p});
      }
      parallel_for(m_exec, kNumPpoStats, Accumulate{m_block.data(), m_stat_sums.data()});
      mark_phase(kPhaseForwardBackward);
      if (c.lr_schedule == "adaptive_kl")
        parallel_for(m_exec, 1,
                     AdaptiveLr{m_lr.data(), m_stat_sums.data(), static_cast<double>(m_minibatch * m_world),
                                c.desired_kl});
      // The squared gradient norm: for clipping, and to skip a non-finite update (AdamStep).
      reduce_sum(m_exec, p, SquareOf<float>{m_grads.data()}, m_grad_sq.data());
      parallel_for(m_exec, 1, CountSkippedUpdates{m_grad_sq.data(), skip_slot, m_skip_run.data()});
      ++m_adam_step;
      const float b1 = 0.9f, b2 = 0.999f;
      const i64 clamp_begin = m_ac.log_std_offset(), clamp_end = m_log_std_bounded ? clamp_begin + m_act_dim : clamp_begin;
      parallel_for(
          m_exec, p,
          AdamStep<float>{m_params.data(), m_grads.data(), m_adam_m.data(), m_adam_v.data(), m_grad_sq.data(),
                          m_lr.data(), b1, b2, static_cast<float>(c.adam_eps), static_cast<float>(c.max_grad_norm),
                          static_cast<float>(1.0 - std::pow(0.9, static_cast<double>(m_adam_step))),
                          static_cast<float>(1.0 - std::pow(0.999, static_cast<double>(m_adam_step))), clamp_begin,
                          clamp_end, m_log_std_lo, m_log_std_hi});
      mark_phase(kPhaseAdam);
    }
    ++epochs;
    if (c.target_kl > 0) {  // one host read per epoch, only when early stopping is enabled
      std::vector<double> acc(kNumPpoStats);
      m_exec.copy_to_host(acc.data(), m_block.data(), kNumPpoStats);
      if (acc[kStatApproxKl] / static_cast<double>(m_minibatch * m_world * c.num_minibatches * epochs) > c.target_kl)
        break;
    }
  }
  return epochs;
}

template <class Exec>
void Ppo<Exec>::launch(std::int64_t iteration, std::int64_t num_iterations) {
  if (m_num_launched == 2) throw std::logic_error("Ppo::launch: two launched iterations are not collected yet");
  const auto& c = m_cfg.ppo;
  if (c.lr_schedule == "linear") {  // CleanRL: anneal from lr to 0 over the run
    const double frac = 1.0 - static_cast<double>(iteration - 1) / static_cast<double>(num_iterations);
    m_exec.fill(m_lr.data(), static_cast<float>(frac * c.learning_rate), 1);
  } else if (c.lr_schedule == "constant") {
    m_exec.fill(m_lr.data(), static_cast<float>(c.learning_rate), 1);
  }
  start_phases();
  // A policy resumed, loaded or started outside the log-std bounds acts inside them from its first rollout.
  if (m_log_std_bounded)
    parallel_for(m_exec, m_act_dim, ClampParams{m_params.data() + m_ac.log_std_offset(), m_log_std_lo, m_log_std_hi});
  collect_rollout(iteration);
  compute_advantages();
  m_exec.fill(m_block.data(), 0.0, m_block.size());
  double* ev = m_block.data() + kNumPpoStats;
  reduce_sum(m_exec, m_batch, ValueOf<float>{m_returns.data()}, ev + 0);
  reduce_sum(m_exec, m_batch, SquareOf<float>{m_returns.data()}, ev + 1);
  reduce_sum(m_exec, m_batch, ResidualOf{m_returns.data(), m_values.data(), false}, ev + 2);
  reduce_sum(m_exec, m_batch, ResidualOf{m_returns.data(), m_values.data(), true}, ev + 3);
  mark_phase(kPhaseAdvantages);
  const int epochs = update(iteration);
  if (c.normalize_obs) update_moments(m_exec, m_obs_rms, m_obs.data(), m_batch, m_comm);
  if (c.normalize_obs && m_critic_dim > 0) update_moments(m_exec, m_critic_rms, m_cobs.data(), m_batch, m_comm);
  mark_phase(kPhaseNormalizers);

  // The per-iteration statistics: one asynchronous transfer to the host, read by collect().
  const i64 k = m_cfg.train.eval_episodes;
  double* lr_slot = m_block.data() + kNumPpoStats + 4;
  parallel_for(m_exec, 1, StoreLr{lr_slot, m_lr.data()});
  select_last_flagged(m_exec, m_batch, m_done.data(), m_ep_ret.data(), m_ep_len.data(), k, lr_slot + 1, lr_slot + 2,
                      lr_slot + 2 + k);
  parallel_for(m_exec, 1, CopyScalar{lr_slot + 2 + 2 * k + 1, m_skip_run.data()});
  // The envs' non-finite resets after this rollout: summed on the executor where the env's counts
  // live there, else read now from the env (before the next launch steps it further).
  std::int64_t host_nonfinite = 0;
  if (const std::uint32_t* counts = m_env.nonfinite_counts())
    reduce_sum(m_exec, m_num_envs, ValueOf<std::uint32_t>{counts}, lr_slot + 2 + 2 * k + 2);
  else
    host_nonfinite = m_env.num_nonfinite_resets();
  const int slot = m_next_slot;
  m_next_slot ^= 1;
  m_exec.copy(m_readback[slot].target(m_block.size()), m_block.data(), m_block.size());
  m_readback[slot].start(m_exec, m_block.size());
  m_launched[m_num_launched++] = Launched{iteration, epochs, slot, host_nonfinite};
}

template <class Exec>
IterationStats Ppo<Exec>::collect() {
  if (m_num_launched == 0) throw std::logic_error("Ppo::collect: no launched iteration to collect");
  const Launched l = m_launched[0];
  m_launched[0] = m_launched[1];
  --m_num_launched;
  const auto& c = m_cfg.ppo;
  IterationStats st;
  st.iteration = l.iteration;
  st.epochs_run = l.epochs_run;
  const double* block = m_readback[l.slot].wait();
  std::copy(block, block + m_block.size(), m_host_block.begin());
  const i64 k = m_cfg.train.eval_episodes;
  const double* hb = m_host_block.data();
  const double* hl = hb + kNumPpoStats + 4;
  if (m_comm != nullptr) {
    merge_episodes(*m_comm, hl, k, st);
    m_comm->allreduce_sum(m_host_block.data() + kNumPpoStats, 4);  // explained-variance sums
  } else {
    st.num_finished = static_cast<std::int64_t>(hl[1]);
    const i64 kept = std::min<i64>(st.num_finished, k);
    for (i64 e = 0; e < kept; ++e) {
      st.finished_returns.push_back(static_cast<float>(hl[2 + e]));
      st.finished_lengths.push_back(static_cast<std::int32_t>(hl[2 + k + e]));
    }
  }
  // The loss sums are over every process's minibatches (summed per minibatch in update()).
  const double samples = static_cast<double>(m_minibatch) * m_world * c.num_minibatches * st.epochs_run;
  st.policy_loss = hb[kStatPolicyLoss] / samples;
  st.value_loss = hb[kStatValueLoss] / samples;
  st.entropy = hb[kStatEntropy] / samples;
  st.approx_kl = hb[kStatApproxKl] / samples;
  st.clip_frac = hb[kStatClipFrac] / samples;
  const double nb = static_cast<double>(m_batch) * m_world;
  const double* e = hb + kNumPpoStats;
  const double var_ret = e[1] / nb - (e[0] / nb) * (e[0] / nb);
  const double var_res = e[3] / nb - (e[2] / nb) * (e[2] / nb);
  st.explained_variance = var_ret > 0 ? 1.0 - var_res / var_ret : 0.0;
  st.learning_rate = hl[0];
  st.skipped_updates = static_cast<std::int64_t>(hl[2 + 2 * k]);
  st.consecutive_skipped = static_cast<std::int64_t>(hl[2 + 2 * k + 1]);
  st.nonfinite_resets = m_env.nonfinite_counts() ? static_cast<std::int64_t>(hl[2 + 2 * k + 2]) : l.host_nonfinite;
  return st;
}

template <class Exec>
std::vector<NamedArray> Ppo<Exec>::save() const {
  std::vector<NamedArray> out;
  auto f32 = [&](const char* name, const FBuf& b) {
    NamedArray a{name, std::vector<float>(static_cast<size_t>(b.size())), {}};
    m_exec.copy_to_host(a.f32.data(), b.data(), b.size());
    out.push_back(std::move(a));
  };
  f32("params", m_params);
  f32("adam_m", m_adam_m);
  f32("adam_v", m_adam_v);
  f32("learning_rate", m_lr);
  f32("obs_mean", m_obs_rms.mean);
  f32("obs_var", m_obs_rms.var);
  f32("ret_mean", m_ret_rms.mean);
  f32("ret_var", m_ret_rms.var);
  f32("disc_return", m_disc_return);
  out.push_back(NamedArray{"counts", {}, {m_obs_rms.count, m_ret_rms.count, static_cast<double>(m_adam_step)}});
  if (m_critic_dim > 0) {  // asymmetric: the critic's normalizer (training state; acting needs only obs_*)
    f32("critic_obs_mean", m_critic_rms.mean);
    f32("critic_obs_var", m_critic_rms.var);
    out.push_back(NamedArray{"critic_obs_count", {}, {m_critic_rms.count}});
  }
  return out;
}

template <class Exec>
void Ppo<Exec>::load(const std::vector<NamedArray>& arrays, LearnerLoad what) {
  if (m_num_launched > 0) throw std::logic_error("Ppo::load: launched iterations are not collected yet");
  auto find = [&](const char* name) -> const NamedArray& {
    for (const auto& a : arrays)
      if (a.name == name) return a;
    throw std::runtime_error(std::string("tensor '") + name + "' is missing");
  };
  auto f32 = [&](const char* name, FBuf& b) {
    const auto& a = find(name);
    if (static_cast<i64>(a.f32.size()) != b.size())
      throw std::runtime_error(std::string("tensor '") + name + "' has " + std::to_string(a.f32.size()) +
                               " values, expected " + std::to_string(b.size()));
    m_exec.copy_from_host(b.data(), a.f32.data(), b.size());
  };
  f32("params", m_params);
  f32("obs_mean", m_obs_rms.mean);
  f32("obs_var", m_obs_rms.var);
  if (what == LearnerLoad::kPolicy) return;
  f32("ret_mean", m_ret_rms.mean);
  f32("ret_var", m_ret_rms.var);
  const auto& counts = find("counts");
  if (counts.f64.size() != 3) throw std::runtime_error("tensor 'counts' must have 3 values");
  m_obs_rms.count = counts.f64[0];
  m_ret_rms.count = counts.f64[1];
  if (what == LearnerLoad::kAll) {
    f32("adam_m", m_adam_m);
    f32("adam_v", m_adam_v);
    f32("learning_rate", m_lr);
    f32("disc_return", m_disc_return);
    m_adam_step = static_cast<std::int64_t>(counts.f64[2]);
  }
  if (m_critic_dim > 0) {
    f32("critic_obs_mean", m_critic_rms.mean);
    f32("critic_obs_var", m_critic_rms.var);
    const auto& cc = find("critic_obs_count");
    if (cc.f64.size() != 1) throw std::runtime_error("tensor 'critic_obs_count' must have 1 value");
    m_critic_rms.count = cc.f64[0];
  }
}

// The host's one copy (rl/ppo_cpu.cpp), for the files that include this one. Not for nvcc.
#if !defined(__CUDACC__)
extern template class Ppo<CpuExecutor>;
#endif

}  // namespace rlt
