// Asymmetric actor-critic (issue 5 item 4): the critic reads VecEnv::critic_obs() through its own
// normalizer, the actor reads obs(); truncated episodes bootstrap from final_critic_obs(); the
// critic normalizer rides in checkpoints; privileged information makes the value function better.
//
// The test double HiddenBias (a VecEnv on the CPU executor) is a task whose return is dominated by
// a per-episode hidden sign h = +-1 that only the critic sees:
//   obs        [x, t/T]      x ~ U(-1, 1) redrawn every step, t the step in the episode
//   critic_obs [x, t/T, h]
//   action     a in R (Gaussian), reward 0.5 h - (a - x)^2, truncated after T = 16 steps.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "rl/checkpoint.h"
#include "rl/gemm.h"
#include "rl/ppo.h"
#include "rl/ppo_impl.h"
#include "sim/philox.h"
#include "tests/temp_dir.h"

namespace rlt {
namespace {

class HiddenBias final : public VecEnv {
 public:
  static constexpr int kT = 16;

  HiddenBias(i64 num_envs, bool asymmetric) : m_n(num_envs), m_asym(asymmetric) {
    m_spec.name = "hidden_bias";
    m_spec.observation = Space{2, false, 0, {-1.0f, 0.0f}, {1.0f, 1.0f}};
    m_spec.action = Space{1, false, 0, {-2.0f}, {2.0f}};
    m_spec.max_episode_steps = kT;
    m_spec.critic_obs_dim = asymmetric ? 3 : 0;
    const size_t n = static_cast<size_t>(num_envs);
    m_h.resize(n), m_x.resize(n), m_t.resize(n), m_episode.resize(n), m_ret.resize(n);
    m_obs.resize(2 * n), m_final_obs.resize(2 * n), m_cobs.resize(3 * n), m_final_cobs.resize(3 * n);
    m_reward.resize(n), m_ep_return.resize(n), m_term.resize(n), m_trunc.resize(n), m_ep_len.resize(n);
    m_zero_actions.assign(n, 0.0f);
  }

  const EnvSpec& spec() const override { return m_spec; }
  i64 num_envs() const override { return m_n; }
  Device device() const override { return Device::kCpu; }
  // The vectors above, per env (the members' sizes in the constructor).
  EnvMemory memory() const override { return {0, 4 * 16 + 4 * 2 + 4 + 2}; }
  bool set_param(const std::string&, double) override { return false; }
  std::vector<ParamInfo> params() const override { return {}; }

  void reset(std::uint64_t seed) override {
    m_seed = seed;
    for (i64 i = 0; i < m_n; ++i) {
      m_episode[i] = 0;
      start_episode(i);
      observe(i, m_obs.data(), m_cobs.data());
    }
  }

  void reset_one(i64) override { throw std::logic_error("HiddenBias::reset_one: not used by these tests"); }
  void step(const float* actions) override {
    // The log the tests compare against: the critic obs the learner saw, and what ended episodes.
    log_cobs.insert(log_cobs.end(), m_cobs.begin(), m_cobs.end());
    for (i64 i = 0; i < m_n; ++i) {
      const float a = actions[i];
      const float r = 0.5f * m_h[i] - action_weight * (a - m_x[i]) * (a - m_x[i]);
      m_reward[i] = r;
      m_ret[i] += r;
      m_t[i] += 1;
      Philox rng(m_seed, RngStream::kEnvStep, static_cast<u32>(i), m_episode[i], static_cast<u32>(m_t[i]));
      m_x[i] = -1.0f + 2.0f * u32_to_unit_float(rng.next4().v[0]);
      m_term[i] = 0;
      m_trunc[i] = m_t[i] >= kT;
      observe(i, m_obs.data(), m_cobs.data());
      if (m_trunc[i]) {
        observe(i, m_final_obs.data(), m_final_cobs.data());
        m_ep_return[i] = m_ret[i];
        m_ep_len[i] = m_t[i];
        m_episode[i] += 1;
        start_episode(i);
        observe(i, m_obs.data(), m_cobs.data());
      }
    }
    log_final_cobs.insert(log_final_cobs.end(), m_final_cobs.begin(), m_final_cobs.end());
    log_trunc.insert(log_trunc.end(), m_trunc.begin(), m_trunc.end());
  }

  const float* sample_actions(std::uint64_t, std::uint32_t) override { return m_zero_actions.data(); }
  const float* obs() const override { return m_obs.data(); }
  const float* final_obs() const override { return m_final_obs.data(); }
  const float* reward() const override { return m_reward.data(); }
  const std::uint8_t* terminated() const override { return m_term.data(); }
  const std::uint8_t* truncated() const override { return m_trunc.data(); }
  const float* ep_return() const override { return m_ep_return.data(); }
  const std::int32_t* ep_length() const override { return m_ep_len.data(); }
  const float* critic_obs() const override { return m_asym ? m_cobs.data() : nullptr; }
  const float* final_critic_obs() const override { return m_asym ? m_final_cobs.data() : nullptr; }
  i64 num_nonfinite_resets() const override { return 0; }

  std::vector<StateBlob> save_state() const override {
    return {
        blob("h", m_h),     blob("x", m_x),     blob("t", m_t),       blob("episode", m_episode),
        blob("ret", m_ret), blob("obs", m_obs), blob("cobs", m_cobs), blob("seed", std::vector<std::uint64_t>{m_seed})};
  }
  void load_state(const std::vector<StateBlob>& blobs) override {
    std::vector<std::uint64_t> seed(1);
    unblob(blobs, "h", m_h), unblob(blobs, "x", m_x), unblob(blobs, "t", m_t), unblob(blobs, "episode", m_episode);
    unblob(blobs, "ret", m_ret), unblob(blobs, "obs", m_obs), unblob(blobs, "cobs", m_cobs),
        unblob(blobs, "seed", seed);
    m_seed = seed[0];
  }

  float hidden(i64 i) const { return m_h[static_cast<size_t>(i)]; }

  float action_weight = 1.0f;  // 0: the reward does not depend on the action (no policy gradient to the means)

  std::vector<float> log_cobs, log_final_cobs;  // (steps x num_envs x 3)
  std::vector<std::uint8_t> log_trunc;          // (steps x num_envs)

 private:
  void start_episode(i64 i) {
    Philox rng(m_seed, RngStream::kEnvReset, static_cast<u32>(i), m_episode[i]);
    const U32x4 r = rng.next4();
    m_h[i] = (r.v[0] & 1u) ? 1.0f : -1.0f;
    m_x[i] = -1.0f + 2.0f * u32_to_unit_float(r.v[1]);
    m_t[i] = 0;
    m_ret[i] = 0.0f;
  }
  void observe(i64 i, float* obs, float* cobs) const {
    const float tf = static_cast<float>(m_t[i]) / kT;
    obs[2 * i] = m_x[i], obs[2 * i + 1] = tf;
    cobs[3 * i] = m_x[i], cobs[3 * i + 1] = tf, cobs[3 * i + 2] = m_h[i];
  }
  template <class T>
  static StateBlob blob(const char* name, const std::vector<T>& v) {
    StateBlob b{name, std::vector<std::uint8_t>(v.size() * sizeof(T))};
    std::memcpy(b.bytes.data(), v.data(), b.bytes.size());
    return b;
  }
  template <class T>
  static void unblob(const std::vector<StateBlob>& blobs, const char* name, std::vector<T>& v) {
    for (const auto& b : blobs)
      if (b.name == name) {
        if (b.bytes.size() != v.size() * sizeof(T)) throw std::runtime_error(std::string("size of ") + name);
        std::memcpy(v.data(), b.bytes.data(), b.bytes.size());
        return;
      }
    throw std::runtime_error(std::string("missing ") + name);
  }

  i64 m_n;
  bool m_asym;
  EnvSpec m_spec;
  std::uint64_t m_seed = 0;
  std::vector<float> m_h, m_x, m_ret, m_obs, m_final_obs, m_cobs, m_final_cobs, m_reward, m_ep_return, m_zero_actions;
  std::vector<std::int32_t> m_t, m_ep_len;
  std::vector<std::uint32_t> m_episode;
  std::vector<std::uint8_t> m_term, m_trunc;
};

Config small_config() {
  Config c;
  c.env.name = "hidden_bias";
  c.env.num_envs = 16;
  c.policy.hidden = {32, 32};
  c.ppo.num_steps = 32;
  c.ppo.num_minibatches = 4;
  c.ppo.learning_rate = 3e-3;
  c.ppo.lr_schedule = "constant";
  c.ppo.gamma = 0.95;
  c.train.eval_episodes = 16;
  c.train.seed = 7;
  return c;
}

const NamedArray& find_array(const std::vector<NamedArray>& arrays, const std::string& name) {
  for (const auto& a : arrays)
    if (a.name == name) return a;
  throw std::runtime_error("no array " + name);
}

// ---- the critic's input -------------------------------------------------------------------------

// ActorCritic in double: the loss gradient with a critic obs of another length than obs matches
// central finite differences, the critic's parameters respond to critic_obs and not to obs, and
// the actor's respond to obs and not to critic_obs.
TEST(AsymmetricActorCritic, CriticReadsCriticObsGradientsMatchFiniteDifferences) {
  CpuExecutor exec(2);
  PolicySpec spec;
  spec.obs_dim = 3;
  spec.act_dim = 2;
  spec.hidden = {6, 5};
  spec.critic_obs_dim = 4;
  const i64 rows = 11;
  ActorCritic<double, CpuExecutor> ac(spec, rows, exec);
  EXPECT_EQ(ac.num_params(), (3 + 1) * 6 + 7 * 5 + 6 * 2 + 2 + (4 + 1) * 6 + 7 * 5 + 6 * 1);
  std::vector<double> params = ac.initial_params(5, -0.2);
  Philox rng(11, RngStream::kBench, 0, 0);
  auto uni = [&](double lo, double hi) { return lo + (hi - lo) * u32_to_unit_float(rng.next4().v[0]); };
  for (auto& p : params) p += uni(-0.3, 0.3);
  std::vector<double> obs(rows * 3), cobs(rows * 4), action(rows * 2), old_logp(rows), adv(rows), ret(rows),
      old_value(rows);
  for (auto& x : obs) x = uni(-1.5, 1.5);
  for (auto& x : cobs) x = uni(-1.5, 1.5);
  for (auto& x : action) x = uni(-1, 1);
  for (i64 i = 0; i < rows; ++i)
    adv[i] = uni(-2, 2), ret[i] = uni(-1, 1), old_value[i] = uni(-1, 1), old_logp[i] = uni(-3, -1);
  const PpoCoefs<double> coefs{0.2, 0.5, 0.01, false, true};
  auto loss = [&](const std::vector<double>& p, const std::vector<double>& o, const std::vector<double>& co,
                  std::vector<double>* grad) {
    MinibatchView<double> mb{o.data(),         action.data(), old_logp.data(), adv.data(), ret.data(),
                             old_value.data(), rows,          co.data()};
    std::vector<double> g(static_cast<size_t>(ac.num_params())), sums(kNumPpoStats);
    ac.loss_and_grad(exec, p.data(), mb, coefs, g.data(), sums.data());
    if (grad) *grad = g;
    return (sums[kStatPolicyLoss] + coefs.vf_coef * sums[kStatValueLoss] - coefs.ent_coef * sums[kStatEntropy]) /
           static_cast<double>(rows);
  };
  std::vector<double> grad;
  loss(params, obs, cobs, &grad);
  double worst = 0;
  for (i64 i = 0; i < ac.num_params(); ++i) {
    std::vector<double> pp = params, pm = params;
    pp[i] += 1e-6, pm[i] -= 1e-6;
    const double fd = (loss(pp, obs, cobs, nullptr) - loss(pm, obs, cobs, nullptr)) / 2e-6;
    worst = std::max(worst, std::abs(grad[i] - fd) / (1e-7 + 1e-5 * std::abs(fd)));
  }
  EXPECT_LE(worst, 1.0);

  // The value is the critic MLP of critic_obs (the 4-wide input: obs would not even fit).
  const double* v = ac.critic_forward(exec, params.data(), cobs.data(), rows);
  const std::vector<double> v0(v, v + rows);
  // Other critic obs: the critic's gradient changes, the actor's does not; other obs: the reverse.
  std::vector<double> cobs2 = cobs, obs2 = obs, g_c, g_o;
  for (auto& x : cobs2) x += 0.3;
  for (auto& x : obs2) x -= 0.3;
  loss(params, obs, cobs2, &g_c);
  loss(params, obs2, cobs, &g_o);
  double actor_diff_c = 0, critic_diff_c = 0, actor_diff_o = 0, critic_diff_o = 0;
  for (i64 i = 0; i < ac.num_params(); ++i) {
    const bool critic = i >= ac.critic_offset();
    (critic ? critic_diff_c : actor_diff_c) += std::abs(g_c[i] - grad[i]);
    (critic ? critic_diff_o : actor_diff_o) += std::abs(g_o[i] - grad[i]);
  }
  EXPECT_GT(critic_diff_c, 1e-3);
  EXPECT_EQ(actor_diff_c, 0.0);
  EXPECT_GT(actor_diff_o, 1e-3);
  EXPECT_EQ(critic_diff_o, 0.0);
  // Missing critic obs in an asymmetric minibatch is a programming error, reported.
  MinibatchView<double> no_cobs{obs.data(),       action.data(), old_logp.data(), adv.data(), ret.data(),
                                old_value.data(), rows};
  std::vector<double> g(static_cast<size_t>(ac.num_params())), sums(kNumPpoStats);
  EXPECT_THROW(ac.loss_and_grad(exec, params.data(), no_cobs, coefs, g.data(), sums.data()), std::invalid_argument);
  v = ac.critic_forward(exec, params.data(), cobs.data(), rows);
  for (i64 i = 0; i < rows; ++i) EXPECT_EQ(v[i], v0[i]);  // deterministic, and obs plays no part
}

// The learner: the values stored in a rollout are V(normalized critic obs) with the parameters and
// critic normalizer the rollout started with, and a truncated step bootstraps from
// gamma V(final critic obs) -- not from the critic obs after the auto-reset (another hidden h).
TEST(AsymmetricActorCritic, RolloutValuesAndTruncationBootstrapUseCriticObs) {
  CpuExecutor exec(2);
  Config cfg = small_config();
  HiddenBias env(cfg.env.num_envs, true);
  env.reset(cfg.train.seed);
  Ppo<CpuExecutor> ppo(cfg, env, exec);
  ppo.start(cfg.train.seed);
  ASSERT_EQ(ppo.policy_spec().critic_obs_dim, 3);
  ASSERT_EQ(ppo.policy_spec().obs_dim, 2);
  // Train a little so the critic depends on h (at init it barely does).
  for (int it = 1; it <= 5; ++it) ppo.iterate(it, 100);
  const std::vector<NamedArray> before = ppo.save();
  const auto& params = find_array(before, "params").f32;
  const auto& mean = find_array(before, "critic_obs_mean").f32;
  const auto& var = find_array(before, "critic_obs_var").f32;
  ASSERT_EQ(mean.size(), 3u);
  env.log_cobs.clear(), env.log_final_cobs.clear(), env.log_trunc.clear();
  ppo.iterate(6, 100);

  const i64 n = cfg.env.num_envs, steps = cfg.ppo.num_steps, rows = n * steps;
  ASSERT_EQ(static_cast<i64>(env.log_cobs.size()), rows * 3);
  ActorCritic<float, CpuExecutor> ac(ppo.policy_spec(), rows, exec);
  auto values_of = [&](const std::vector<float>& raw) {
    std::vector<float> normed(raw.size());
    parallel_for(exec, static_cast<i64>(raw.size()),
                 NormalizeObs{raw.data(), mean.data(), var.data(), normed.data(), 3,
                              static_cast<float>(cfg.ppo.clip_obs), true});
    const float* v = ac.critic_forward(exec, params.data(), normed.data(), static_cast<i64>(raw.size() / 3));
    return std::vector<float>(v, v + raw.size() / 3);
  };
  const std::vector<float> v_ref = values_of(env.log_cobs);
  const std::vector<float> v_final = values_of(env.log_final_cobs);
  // The critic obs right after the step (post-reset where the episode ended): the next step's input.
  std::vector<float> after(env.log_cobs.begin() + n * 3, env.log_cobs.end());
  after.resize(static_cast<size_t>(rows * 3), 0.0f);
  const std::vector<float> v_after = values_of(after);
  const float* values = ppo.rollout_values();
  const float* boot = ppo.rollout_bootstrap();
  const float gamma = static_cast<float>(cfg.ppo.gamma);
  double worst_v = 0, worst_b = 0, min_gap_wrong = 1e9;
  int truncations = 0;
  for (i64 k = 0; k < rows; ++k) {
    worst_v = std::max(worst_v, static_cast<double>(std::abs(values[k] - v_ref[k])) / (1e-6 + std::abs(v_ref[k])));
    if (env.log_trunc[k]) {
      ++truncations;
      worst_b = std::max(worst_b,
                         static_cast<double>(std::abs(boot[k] - gamma * v_final[k])) / (1e-6 + std::abs(v_final[k])));
      if (k + n < rows)
        min_gap_wrong = std::min(min_gap_wrong, static_cast<double>(std::abs(boot[k] - gamma * v_after[k])));
    } else {
      EXPECT_EQ(boot[k], 0.0f) << "row " << k;
    }
  }
  // Same functors and GEMM on other row counts: float rounding only.
  EXPECT_LT(worst_v, 1e-4);
  EXPECT_EQ(truncations, 2 * n);  // T = 16 divides 32 steps: every env truncates twice
  EXPECT_LT(worst_b, 1e-4);
  // The test means something: the post-reset critic obs (new h) would give other bootstraps.
  int differ = 0;
  for (i64 k = 0; k + n < rows; ++k)
    if (env.log_trunc[k] && std::abs(boot[k] - gamma * v_after[k]) > 1e-3f) ++differ;
  EXPECT_GT(differ, n / 4) << "smallest gap " << min_gap_wrong;
}

TEST(AsymmetricActorCritic, RejectsAnEnvWithoutCriticObs) {
  // An env that declares critic_obs_dim but returns no critic obs.
  class Broken final : public VecEnv {
   public:
    Broken() : inner(4, false) { s = inner.spec(), s.critic_obs_dim = 3; }
    const EnvSpec& spec() const override { return s; }
    i64 num_envs() const override { return inner.num_envs(); }
    Device device() const override { return Device::kCpu; }
    EnvMemory memory() const override { return inner.memory(); }
    bool set_param(const std::string&, double) override { return false; }
    std::vector<ParamInfo> params() const override { return {}; }
    void reset(std::uint64_t seed) override { inner.reset(seed); }
    void step(const float* a) override { inner.step(a); }
    void reset_one(i64 i) override { inner.reset_one(i); }
    const float* sample_actions(std::uint64_t x, std::uint32_t y) override { return inner.sample_actions(x, y); }
    const float* obs() const override { return inner.obs(); }
    const float* final_obs() const override { return inner.final_obs(); }
    const float* reward() const override { return inner.reward(); }
    const std::uint8_t* terminated() const override { return inner.terminated(); }
    const std::uint8_t* truncated() const override { return inner.truncated(); }
    const float* ep_return() const override { return inner.ep_return(); }
    const std::int32_t* ep_length() const override { return inner.ep_length(); }
    i64 num_nonfinite_resets() const override { return 0; }
    std::vector<StateBlob> save_state() const override { return {}; }
    void load_state(const std::vector<StateBlob>&) override {}
    HiddenBias inner;
    EnvSpec s;
  } env;
  CpuExecutor exec(1);
  Config cfg = small_config();
  cfg.env.num_envs = 4;
  EXPECT_THROW(Ppo<CpuExecutor>(cfg, env, exec), std::invalid_argument);
}

// ---- the bounds loss in the update ---------------------------------------------------------------

// ppo.bounds_loss_coef reaches the update: two learners alike but for it, started from a policy whose
// mean lies far past the action box (output bias 10 in [-2, 2]) on a task whose reward ignores the
// action (as for a mean the env's clamp hides: no policy gradient pulls it back). With the bounds
// loss the mean comes back towards the box; without it, it stays where it was.
TEST(BoundsLoss, TheUpdatePullsAMeanPastTheBoxBack) {
  CpuExecutor exec(2);
  auto bias_after = [&](double coef) {
    Config cfg = small_config();
    cfg.ppo.bounds_loss_coef = coef;
    HiddenBias env(cfg.env.num_envs, false);
    env.action_weight = 0.0f;
    env.reset(cfg.train.seed);
    Ppo<CpuExecutor> ppo(cfg, env, exec);
    ppo.start(cfg.train.seed);
    std::vector<NamedArray> arrays = ppo.save();
    const i64 bias = ActorCriticLayout(ppo.policy_spec()).log_std_offset - 1;  // the mean's output bias
    for (auto& a : arrays)
      if (a.name == "params") a.f32[static_cast<size_t>(bias)] = 10.0f;
    ppo.load(arrays, LearnerLoad::kAll);
    for (int it = 1; it <= 2; ++it) ppo.iterate(it, 100);
    return find_array(ppo.save(), "params").f32[static_cast<size_t>(bias)];
  };
  const float plain = bias_after(0.0), bounded = bias_after(0.1);
  std::printf("output bias after 2 iterations: %.4f without the bounds loss, %.4f with it\n", plain, bounded);
  EXPECT_NEAR(plain, 10.0f, 0.03f);
  EXPECT_LT(bounded, 10.0f - 0.05f);
}

// ---- log-std bounds -------------------------------------------------------------------------------

// policy.max_log_std holds the log std that an entropy bonus grows (on a task whose reward ignores the
// action, nothing else moves it): without the bound it rises past it, with it it ends exactly on it.
TEST(LogStdBounds, AnEntropyBonusStopsAtTheUpperBound) {
  CpuExecutor exec(2);
  auto log_std_after = [&](double max_log_std) {
    Config cfg = small_config();
    cfg.ppo.ent_coef = 0.5;
    cfg.policy.max_log_std = max_log_std;
    HiddenBias env(cfg.env.num_envs, false);
    env.action_weight = 0.0f;
    env.reset(cfg.train.seed);
    Ppo<CpuExecutor> ppo(cfg, env, exec);
    ppo.start(cfg.train.seed);
    for (int it = 1; it <= 3; ++it) ppo.iterate(it, 100);
    const i64 k = ActorCriticLayout(ppo.policy_spec()).log_std_offset;
    return find_array(ppo.save(), "params").f32[static_cast<size_t>(k)];
  };
  const float free = log_std_after(INFINITY), bounded = log_std_after(0.05);
  std::printf("log std after 3 iterations: %.4f unbounded, %.4f under max_log_std = 0.05\n", free, bounded);
  EXPECT_GT(free, 0.1f);
  EXPECT_EQ(bounded, 0.05f);
}

// A policy loaded below policy.min_log_std acts at the bound from its first rollout (a resumed run
// with a bound added): one epoch of one minibatch, so the update's only loss evaluation sees the
// parameters the rollout acted with. Its entropy is the Gaussian's at log std -1, and the rollout's
// log-probs are the update's (approx_kl 0, no clipping); sampled at -3 they would not be.
TEST(LogStdBounds, ALoadedPolicyIsClampedBeforeItsFirstRollout) {
  CpuExecutor exec(2);
  auto entropy_of_first_iteration = [&](double min_log_std) {
    Config cfg = small_config();
    cfg.ppo.num_epochs = 1;
    cfg.ppo.num_minibatches = 1;
    cfg.policy.min_log_std = min_log_std;
    HiddenBias env(cfg.env.num_envs, false);
    env.reset(cfg.train.seed);
    Ppo<CpuExecutor> ppo(cfg, env, exec);
    ppo.start(cfg.train.seed);
    std::vector<NamedArray> arrays = ppo.save();
    const i64 k = ActorCriticLayout(ppo.policy_spec()).log_std_offset;
    for (auto& a : arrays)
      if (a.name == "params") a.f32[static_cast<size_t>(k)] = -3.0f;
    ppo.load(arrays, LearnerLoad::kAll);
    const IterationStats st = ppo.iterate(1, 100);
    EXPECT_GE(find_array(ppo.save(), "params").f32[static_cast<size_t>(k)], static_cast<float>(min_log_std));
    EXPECT_LT(st.approx_kl, 1e-6);
    EXPECT_EQ(st.clip_frac, 0.0);
    return st.entropy;
  };
  const double gaussian = 0.5 * std::log(2 * M_PI * M_E);  // a unit Gaussian's entropy
  EXPECT_NEAR(entropy_of_first_iteration(-1.0), gaussian - 1.0, 1e-5);
  EXPECT_NEAR(entropy_of_first_iteration(-INFINITY), gaussian - 3.0, 1e-5);
}

// Only a Gaussian has a log std: a bound with discrete actions is refused, naming the key.
TEST(LogStdBounds, DiscreteActionsRefuseABound) {
  EnvSpec spec;
  spec.name = "cartpole";
  spec.action = Space{1, true, 2, {}, {}};
  PolicyConfig p;
  EXPECT_EQ(log_std_bounds_refusal(spec, p), "");
  p.max_log_std = 0.5;
  EXPECT_EQ(log_std_bounds_refusal(spec, p), "policy.max_log_std: env 'cartpole' has discrete actions (its policy has no log std)");
  p.max_log_std = INFINITY;
  p.min_log_std = -2;
  EXPECT_NE(log_std_bounds_refusal(spec, p).find("policy.min_log_std"), std::string::npos);
  spec.action = Space{1, false, 0, {-1.0f}, {1.0f}};
  EXPECT_EQ(log_std_bounds_refusal(spec, p), "");
}

// ---- launch and collect ---------------------------------------------------------------------------

// Two iterations launched before either is collected (the trainer's lagged readback) give each its
// own statistics, equal to those of launching and collecting one at a time; a third launch and a
// collect with nothing launched are refused.
TEST(PpoLaunch, TwoInFlightGiveTheSameStatisticsAsOneAtATime) {
  CpuExecutor exec(2);
  const Config cfg = small_config();
  HiddenBias env_a(cfg.env.num_envs, true), env_b(cfg.env.num_envs, true);
  env_a.reset(cfg.train.seed);
  env_b.reset(cfg.train.seed);
  Ppo<CpuExecutor> a(cfg, env_a, exec), b(cfg, env_b, exec);
  a.start(cfg.train.seed);
  b.start(cfg.train.seed);
  EXPECT_EQ(a.stats_lag(), 0);  // the CPU: launch does the work
  EXPECT_THROW(a.collect(), std::logic_error);
  std::vector<IterationStats> one_by_one, lagged;
  for (int it = 1; it <= 4; ++it) one_by_one.push_back(a.iterate(it, 10));
  b.launch(1, 10);
  for (int it = 2; it <= 4; ++it) {
    b.launch(it, 10);
    if (it == 2) {
      EXPECT_THROW(b.launch(3, 10), std::logic_error);  // two are already waiting
    }
    lagged.push_back(b.collect());
  }
  lagged.push_back(b.collect());
  EXPECT_THROW(b.collect(), std::logic_error);
  ASSERT_EQ(lagged.size(), one_by_one.size());
  for (size_t k = 0; k < lagged.size(); ++k) {
    SCOPED_TRACE(k);
    EXPECT_EQ(lagged[k].iteration, static_cast<std::int64_t>(k + 1));
    EXPECT_EQ(lagged[k].iteration, one_by_one[k].iteration);
    EXPECT_EQ(lagged[k].policy_loss, one_by_one[k].policy_loss);
    EXPECT_EQ(lagged[k].value_loss, one_by_one[k].value_loss);
    EXPECT_EQ(lagged[k].explained_variance, one_by_one[k].explained_variance);
    EXPECT_EQ(lagged[k].learning_rate, one_by_one[k].learning_rate);
    EXPECT_EQ(lagged[k].num_finished, one_by_one[k].num_finished);
    EXPECT_EQ(lagged[k].finished_returns, one_by_one[k].finished_returns);
    EXPECT_EQ(lagged[k].nonfinite_resets, one_by_one[k].nonfinite_resets);
  }
  EXPECT_GT(one_by_one.back().num_finished + one_by_one.front().num_finished, 0);  // something to compare
}

// ---- checkpoints --------------------------------------------------------------------------------

TEST(AsymmetricActorCritic, CheckpointRoundTripContinuesBitForBit) {
  CpuExecutor exec(2);
  test::TempDir dir("rlt_asym");
  Config cfg = small_config();
  HiddenBias env(cfg.env.num_envs, true);
  env.reset(cfg.train.seed);
  Ppo<CpuExecutor> ppo(cfg, env, exec);
  ppo.start(cfg.train.seed);
  for (int it = 1; it <= 3; ++it) ppo.iterate(it, 10);
  TrainProgress progress;
  progress.iteration = 3;
  progress.env_steps = 3 * ppo.batch_size();  // a checkpoint's counters must agree (rl/checkpoint.cpp)
  save_checkpoint(dir / "ck.safetensors", cfg, ppo, env, progress);

  const Checkpoint ck = read_checkpoint(dir / "ck.safetensors");
  EXPECT_EQ(ck.file.meta("critic_obs_dim"), "3");
  bool has_mean = false;
  for (const auto& t : ck.file.tensors) has_mean = has_mean || t.name == "learner/critic_obs_mean";
  EXPECT_TRUE(has_mean);

  // Resume: the next iteration and the whole learner state are identical.
  HiddenBias env2(cfg.env.num_envs, true);
  env2.reset(999);
  Ppo<CpuExecutor> ppo2(cfg, env2, exec);  // as the trainer resumes: no start(), the checkpoint's state
  TrainProgress p2;
  restore_checkpoint(ck, ppo2, LearnerLoad::kAll, &env2, &p2);
  const IterationStats a = ppo.iterate(4, 10), b = ppo2.iterate(4, 10);
  EXPECT_EQ(a.policy_loss, b.policy_loss);
  EXPECT_EQ(a.value_loss, b.value_loss);
  EXPECT_EQ(a.explained_variance, b.explained_variance);
  const auto sa = ppo.save(), sb = ppo2.save();
  ASSERT_EQ(sa.size(), sb.size());
  for (size_t k = 0; k < sa.size(); ++k) {
    EXPECT_EQ(sa[k].name, sb[k].name);
    EXPECT_EQ(sa[k].f32, sb[k].f32) << sa[k].name;
    EXPECT_EQ(sa[k].f64, sb[k].f64) << sa[k].name;
  }

  // Acting needs only the actor and its normalizer: a policy-only restore works on another
  // number of envs (eval's case) and takes the checkpoint's weights.
  HiddenBias env3(3, true);
  env3.reset(cfg.train.seed);
  Config cfg3 = cfg;
  cfg3.env.num_envs = 3;
  cfg3.ppo.num_steps = 1;
  cfg3.ppo.num_minibatches = 1;
  Ppo<CpuExecutor> actor(cfg3, env3, exec);
  restore_checkpoint(ck, actor, LearnerLoad::kPolicy, nullptr, nullptr);
  std::vector<float> p_file;
  for (const auto& t : ck.file.tensors)
    if (t.name == "learner/params") p_file = tensor_values<float>(t, "ck");
  EXPECT_EQ(find_array(actor.save(), "params").f32, p_file);
  EXPECT_NE(actor.act(true, 0), nullptr);

  // A symmetric learner (another env shape) refuses the checkpoint, naming critic_obs_dim.
  HiddenBias sym_env(cfg.env.num_envs, false);
  sym_env.reset(1);
  Ppo<CpuExecutor> sym(cfg, sym_env, exec);
  try {
    restore_checkpoint(ck, sym, LearnerLoad::kAll, &sym_env, nullptr);
    FAIL() << "expected CheckpointError";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("critic_obs_dim"), std::string::npos) << e.what();
  }

  // Malformed integer metadata: one CheckpointError naming the file and the key.
  for (const char* key : {"obs_dim", "head_dim", "critic_obs_dim"}) {
    Checkpoint bad = ck;
    bad.file.metadata[key] = "3abc";
    try {
      restore_checkpoint(bad, sym, LearnerLoad::kAll, &sym_env, nullptr);
      FAIL() << "expected CheckpointError for " << key;
    } catch (const CheckpointError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(std::string("\"") + key + "\""), std::string::npos) << what;
      EXPECT_NE(what.find(bad.file.source), std::string::npos) << what;
    }
  }
}

// ---- learning -----------------------------------------------------------------------------------

// Same env, same seed, same config: the critic that sees h explains the returns far better
// (explained variance averaged over the last iterations), and the policy still learns a = x.
TEST(AsymmetricActorCritic, PrivilegedInformationImprovesTheValueFunction) {
  CpuExecutor exec(2);
  Config cfg = small_config();
  const int iterations = 40;
  struct Result {
    double ev = 0, first_return = 0, last_return = 0;
  };
  auto run = [&](bool asym) {
    HiddenBias env(cfg.env.num_envs, asym);
    env.reset(cfg.train.seed);
    Ppo<CpuExecutor> ppo(cfg, env, exec);
    ppo.start(cfg.train.seed);
    Result r;
    int counted = 0;
    for (int it = 1; it <= iterations; ++it) {
      const IterationStats st = ppo.iterate(it, iterations);
      // Mean return minus the h part (the hidden sign averages out; the action part is what
      // the policy controls).
      const double mean_ret = st.finished_returns.empty()
                                  ? 0.0
                                  : std::accumulate(st.finished_returns.begin(), st.finished_returns.end(), 0.0) /
                                        static_cast<double>(st.finished_returns.size());
      if (it >= 2 && it <= 4) r.first_return += mean_ret / 3;
      if (it > iterations - 10) r.ev += st.explained_variance, ++counted, r.last_return += mean_ret;
    }
    r.ev /= counted;
    r.last_return /= counted;
    return r;
  };
  const Result sym = run(false), asym = run(true);
  std::printf("[ measured ] explained variance over the last 10 of %d iterations: symmetric %.3f, asymmetric %.3f\n",
              iterations, sym.ev, asym.ev);
  std::printf("[ measured ] mean return (iterations 2-4 -> last 10): symmetric %.2f -> %.2f, asymmetric %.2f -> %.2f\n",
              sym.first_return, sym.last_return, asym.first_return, asym.last_return);
  EXPECT_GT(asym.ev, 0.8);
  EXPECT_GT(asym.ev, sym.ev + 0.3);
  EXPECT_GT(asym.last_return, asym.first_return);
}

}  // namespace
}  // namespace rlt
