// Actor-critic over one flat parameter buffer (DESIGN.md D6):
//   [ actor MLP (obs -> logits or mean) | log_std (continuous only) | critic MLP (critic input -> value) ]
// Separate actor and critic trunks. Asymmetric actor-critic: when spec.critic_obs_dim > 0 the
// critic reads its own (privileged) observation of that length instead of the actor's.
// loss_and_grad() computes the PPO loss gradient for a
// minibatch, single source: runs on any executor, in float (training) or double (gradient tests).
#pragma once

#include <cmath>
#include <vector>

#include <Eigen/QR>

#include "rl/mlp.h"
#include "rl/ppo_math.h"

namespace rlt {

struct PolicySpec {
  int obs_dim = 0;
  int act_dim = 0;  // action vector length (1 for discrete)
  bool discrete = false;
  int num_actions = 0;  // discrete only
  std::vector<int> hidden;
  Activation act = Activation::kTanh;
  int critic_obs_dim = 0;  // > 0: the critic reads a privileged observation of this length
  // policy.squash = "tanh" (continuous only): the env gets center + scale * tanh(u) for the Gaussian's
  // sample u (center, scale: the action box's middle and half-width, act_dim each), and the entropy
  // bonus carries tanh's log-Jacobian (brax's NormalTanhDistribution). Empty: u itself.
  std::vector<float> squash_center, squash_scale;
  bool squashed() const { return !squash_scale.empty(); }
  int head_dim() const { return discrete ? num_actions : act_dim; }
  bool asymmetric() const { return critic_obs_dim > 0; }
  int critic_in_dim() const { return asymmetric() ? critic_obs_dim : obs_dim; }
};

// Views of one minibatch, rows contiguous, in executor memory.
template <class T>
struct MinibatchView {
  const T* obs;        // (rows x obs_dim), already normalized
  const T* action;     // (rows x act_dim)
  const T* old_logp;   // (rows)
  const T* advantage;  // (rows)
  const T* ret;        // (rows)
  const T* old_value;  // (rows)
  i64 rows;
  const T* critic_obs = nullptr;  // (rows x critic_obs_dim), normalized; asymmetric only (else obs)
  // A tanh-squashed policy's entropy sample (PpoLossGrad) is keyed by these: one key per minibatch
  // update, one row index per sample of the job.
  u64 squash_seed = 0;
  u32 squash_key = 0;
  u32 squash_first_row = 0;
  // The action box (act_dim: middle, half-width) for the bounds loss (PpoCoefs::bounds_coef > 0).
  const float* box_center = nullptr;
  const float* box_scale = nullptr;
};

// A minibatch that is one process's share of a job's (rl/distributed.h; every process holds one of
// the same size): advantages are normalized by the moments of all processes' minibatches together,
// as one process holding them all would. The caller sums and all-reduces those moments (Ppo does it
// for every minibatch of an update in one collective).
struct JobMinibatch {
  i64 rows = 0;                         // rows of all processes' minibatches together
  const double* adv_moments = nullptr;  // (2) their advantages' sum and sum of squares (executor memory)
};

// Where each part of the flat parameter buffer lives:
//   [ actor MLP | log_std (continuous only) | critic MLP ]
// ActorCritic (training) and Policy (rl/policy.h, acting) read the same buffer through it.
struct ActorCriticLayout {
  MlpShape actor, critic;
  i64 log_std_offset = 0, critic_offset = 0, num_params = 0;
  explicit ActorCriticLayout(const PolicySpec& spec)
      : actor{spec.obs_dim, spec.hidden, spec.head_dim(), spec.act},
        critic{spec.critic_in_dim(), spec.hidden, 1, spec.act} {
    log_std_offset = actor.num_params();
    critic_offset = log_std_offset + (spec.discrete ? 0 : spec.act_dim);
    num_params = critic_offset + critic.num_params();
  }
};

template <class T>
struct SquareOf {
  const T* x;
  RLT_HD double operator()(i64 i) const { return static_cast<double>(x[i]) * static_cast<double>(x[i]); }
};
template <class T>
struct ValueOf {
  const T* x;
  RLT_HD double operator()(i64 i) const { return static_cast<double>(x[i]); }
};
template <class T>
struct StridedValueOf {
  const T* x;
  int stride;
  int offset;
  RLT_HD double operator()(i64 i) const { return static_cast<double>(x[i * stride + offset]); }
};

// Bytes an ActorCritic<T> for max_rows rows allocates (its constructor): the two MLPs' scratch,
// the head, value and log-std gradients per row, the loss terms per row, a column of ones and the
// advantage moments. The parameters are the owner's (Ppo's flat buffer).
inline i64 actor_critic_scratch_bytes(const PolicySpec& spec, i64 max_rows, i64 scalar_bytes) {
  const ActorCriticLayout layout(spec);
  const i64 per_row = spec.head_dim() + 1 + (spec.discrete ? 0 : spec.act_dim) + kNumPpoStats + 1;
  return mlp_scratch_bytes(layout.actor, max_rows, scalar_bytes) +
         mlp_scratch_bytes(layout.critic, max_rows, scalar_bytes) + per_row * max_rows * scalar_bytes +
         (spec.discrete ? scalar_bytes : 0) + 2 * static_cast<i64>(sizeof(double));
}

template <class T, class Exec>
class ActorCritic {
 public:
  using Buf = typename Exec::template Buffer<T>;

  ActorCritic(const PolicySpec& spec, i64 max_rows, const Exec& exec) : m_spec(spec) {
    if (spec.discrete && spec.num_actions > 16)
      throw std::invalid_argument("discrete heads support at most 16 actions");
    const ActorCriticLayout layout(spec);
    m_log_std_offset = layout.log_std_offset;
    m_critic_offset = layout.critic_offset;
    m_num_params = layout.num_params;
    m_actor = Mlp<T, Exec>(layout.actor, 0, max_rows, exec);
    m_critic = Mlp<T, Exec>(layout.critic, m_critic_offset, max_rows, exec);
    m_d_head.resize(max_rows * spec.head_dim());
    m_d_value.resize(max_rows);
    m_d_log_std_rows.resize(spec.discrete ? 1 : max_rows * spec.act_dim);
    m_stats.resize(max_rows * kNumPpoStats);
    m_adv_moments.resize(2);
    m_ones.resize(max_rows);
    parallel_for(exec, max_rows, FillValue<T>{m_ones.data(), T(1)});
  }

  const PolicySpec& spec() const { return m_spec; }
  i64 num_params() const { return m_num_params; }
  i64 log_std_offset() const { return m_log_std_offset; }
  i64 critic_offset() const { return m_critic_offset; }
  i64 max_rows() const { return m_actor.max_rows(); }

  // Initial parameters on the host (CleanRL's scheme): orthogonal weights with gain sqrt(2) in
  // hidden layers, 0.01 on the actor output, 1 on the critic output; zero biases; log_std =
  // init_log_std. Orthogonal matrices come from QR of Philox normals, so init is seeded.
  std::vector<T> initial_params(u64 seed, double init_log_std) const {
    std::vector<T> p(static_cast<size_t>(m_num_params), T(0));
    u32 counter = 0;
    auto init_mlp = [&](const MlpShape& s, i64 offset, double out_gain) {
      for (int l = 0; l < s.num_layers(); ++l) {
        const int ni = s.layer_in(l), no = s.layer_out(l);
        const double gain = l + 1 < s.num_layers() ? std::sqrt(2.0) : out_gain;
        const int big = ni > no ? ni : no;
        Eigen::MatrixXd g(big, big);
        Philox rng(seed, RngStream::kPolicyInit, counter++, 0);
        for (int r = 0; r < big; ++r)
          for (int c = 0; c < big; c += 2) {
            const U32x4 w = rng.next4();
            float z0, z1;
            box_muller(w.v[0], w.v[1], z0, z1);
            g(r, c) = z0;
            if (c + 1 < big) g(r, c + 1) = z1;
          }
        Eigen::HouseholderQR<Eigen::MatrixXd> qr(g);
        Eigen::MatrixXd q = qr.householderQ();
        // Sign fix so the distribution is uniform (Mezzadri 2007).
        const Eigen::MatrixXd rm = qr.matrixQR().template triangularView<Eigen::Upper>();
        for (int c = 0; c < big; ++c)
          if (rm(c, c) < 0) q.col(c) *= -1.0;
        T* w = p.data() + offset + s.weight_offset(l);
        for (int r = 0; r < ni; ++r)
          for (int c = 0; c < no; ++c) w[r * no + c] = static_cast<T>(gain * q(r, c));
      }
    };
    init_mlp(m_actor.shape(), 0, 0.01);
    init_mlp(m_critic.shape(), m_critic_offset, 1.0);
    if (!m_spec.discrete)
      for (int k = 0; k < m_spec.act_dim; ++k)
        p[static_cast<size_t>(m_log_std_offset + k)] = static_cast<T>(init_log_std);
    return p;
  }

  // (rows x head_dim) logits or means.
  const T* actor_forward(const Exec& exec, const T* params, const T* obs, i64 rows) {
    return m_actor.forward(exec, params, obs, rows);
  }
  // (rows) values; obs is the critic's input: (rows x critic_in_dim()).
  const T* critic_forward(const Exec& exec, const T* params, const T* obs, i64 rows) {
    return m_critic.forward(exec, params, obs, rows);
  }

  // Gradient of the minibatch PPO loss into grads (every entry overwritten) and the minibatch
  // sums of the loss terms into stat_sums[kNumPpoStats] (executor memory). With job (this
  // minibatch is one process's share), advantages are normalized by job->adv_moments over job->rows.
  void loss_and_grad(const Exec& exec, const T* params, const MinibatchView<T>& mb, const PpoCoefs<T>& coefs, T* grads,
                     double* stat_sums, const JobMinibatch* job = nullptr) {
    const i64 rows = mb.rows;
    const T* head = m_actor.forward(exec, params, mb.obs, rows);
    if (m_spec.asymmetric() && mb.critic_obs == nullptr)
      throw std::invalid_argument("asymmetric actor-critic: the minibatch has no critic observations");
    const T* value = m_critic.forward(exec, params, m_spec.asymmetric() ? mb.critic_obs : mb.obs, rows);
    if (job != nullptr && coefs.normalize_advantages && job->adv_moments == nullptr)
      throw std::invalid_argument("loss_and_grad: a job's minibatch needs the job's advantage moments");
    if (coefs.normalize_advantages && job == nullptr) {
      reduce_sum(exec, rows, ValueOf<T>{mb.advantage}, m_adv_moments.data());
      reduce_sum(exec, rows, SquareOf<T>{mb.advantage}, m_adv_moments.data() + 1);
    }
    PpoLossGrad<T> f{head,
                     params + m_log_std_offset,
                     value,
                     mb.action,
                     mb.old_logp,
                     mb.advantage,
                     mb.ret,
                     mb.old_value,
                     job != nullptr ? job->adv_moments : m_adv_moments.data(),
                     m_d_head.data(),
                     m_d_value.data(),
                     m_d_log_std_rows.data(),
                     m_stats.data(),
                     m_spec.head_dim(),
                     m_spec.act_dim,
                     m_spec.discrete,
                     rows,
                     coefs,
                     job != nullptr ? job->rows : 0,
                     m_spec.squashed(),
                     mb.squash_seed,
                     mb.squash_key,
                     mb.squash_first_row,
                     mb.box_center,
                     mb.box_scale};
    if (coefs.bounds_coef > T(0) && (m_spec.discrete || m_spec.squashed() || mb.box_center == nullptr))
      throw std::invalid_argument("loss_and_grad: the bounds loss needs a Gaussian policy and the action box");
    parallel_for(exec, rows, f);
    m_actor.backward(exec, params, m_d_head.data(), grads);
    m_critic.backward(exec, params, m_d_value.data(), grads);
    if (!m_spec.discrete)
      gemm(exec, true, false, 1, m_spec.act_dim, rows, T(1), m_ones.data(), m_d_log_std_rows.data(), T(0),
           grads + m_log_std_offset);
    for (int s = 0; s < kNumPpoStats; ++s)
      reduce_sum(exec, rows, StridedValueOf<T>{m_stats.data(), kNumPpoStats, s}, stat_sums + s);
  }

 private:
  PolicySpec m_spec;
  i64 m_log_std_offset = 0, m_critic_offset = 0, m_num_params = 0;
  Mlp<T, Exec> m_actor, m_critic;
  Buf m_d_head, m_d_value, m_d_log_std_rows, m_stats, m_ones;
  typename Exec::template Buffer<double> m_adv_moments;
};

// The host's one copy of each (rl/ppo_cpu.cpp; double: the gradient checks). Not for nvcc.
#if !defined(__CUDACC__)
extern template class ActorCritic<float, CpuExecutor>;
extern template class ActorCritic<double, CpuExecutor>;
#endif

}  // namespace rlt
