// The elementwise math of PPO, single source (DESIGN.md D1, D6): action distributions, the
// per-sample loss and its gradient, GAE, Adam, observation normalization. Every functor here is
// run by parallel_for over rows (or elements) on either executor.
#pragma once

#include "rl/ops.h"

namespace rlt {

constexpr double kLog2Pi = 1.8378770664093453;

// ---- distributions ---------------------------------------------------------------------------

// Categorical over logits[0..n): log-prob of action a, entropy, and (optionally) the gradients
// of both with respect to the logits.
template <class T>
RLT_HD RLT_INLINE void categorical(const T* logits, int n, int a, T& logp, T& entropy, T* dlogp, T* dentropy) {
  T mx = logits[0];
  for (int j = 1; j < n; ++j) mx = logits[j] > mx ? logits[j] : mx;
  T sum = 0;
  for (int j = 0; j < n; ++j) sum += m_exp(logits[j] - mx);
  const T lse = mx + m_log(sum);
  logp = logits[a] - lse;
  T h = 0;
  for (int j = 0; j < n; ++j) {
    const T lp = logits[j] - lse;
    h -= m_exp(lp) * lp;
  }
  entropy = h;
  if (dlogp != nullptr) {
    for (int j = 0; j < n; ++j) {
      const T lp = logits[j] - lse, p = m_exp(lp);
      dlogp[j] = (j == a ? T(1) : T(0)) - p;
      dentropy[j] = -p * (lp + h);
    }
  }
}

// Diagonal Gaussian with state-independent log-std: log-prob of action x, entropy, and the
// gradients of the log-prob with respect to the mean and the log-std (dentropy/dlogstd = 1).
template <class T>
RLT_HD RLT_INLINE void gaussian(const T* mean, const T* log_std, const T* x, int n, T& logp, T& entropy, T* dlogp_dmean,
                                T* dlogp_dlogstd) {
  T lp = 0, h = 0;
  for (int k = 0; k < n; ++k) {
    const T inv_var = m_exp(T(-2) * log_std[k]);
    const T d = x[k] - mean[k];
    lp += T(-0.5) * d * d * inv_var - log_std[k] - T(0.5 * kLog2Pi);
    h += T(0.5 + 0.5 * kLog2Pi) + log_std[k];
    if (dlogp_dmean != nullptr) {
      dlogp_dmean[k] = d * inv_var;
      dlogp_dlogstd[k] = d * d * inv_var - T(1);
    }
  }
  logp = lp;
  entropy = h;
}

// log |d tanh(x)/dx| = log(1 - tanh(x)^2), without the cancellation near saturation:
// 2 (log 2 - |x| - log(1 + e^{-2|x|})). Its derivative is -2 tanh(x).
RLT_HD RLT_INLINE float tanh_log_jacobian(float x) {
  const float a = fabsf(x);
  return 2.0f * (0.69314718f - a - log1pf(expf(-2.0f * a)));
}
RLT_HD RLT_INLINE double tanh_log_jacobian(double x) {
  const double a = ::fabs(x);
  return 2.0 * (0.69314718055994530942 - a - ::log1p(::exp(-2.0 * a)));
}

// The Philox stream of the squashed policy's entropy sample (PpoLossGrad), after sim/philox.h's.
constexpr RngStream kSquashEntropyStream = static_cast<RngStream>(7);

// ---- rollout: sample actions from the policy head ----------------------------------------------

// For row i: draws an action (or takes the mode when deterministic) and its log-prob.
// Random draws are keyed by (seed, kAction, env, step): the same on every executor.
struct SampleAction {
  const float* head;     // (rows x head_dim) logits or means
  const float* log_std;  // (act_dim), continuous only
  float* action;         // (rows x act_dim)
  float* logp;           // (rows), may be null
  int head_dim;
  int act_dim;
  bool discrete;
  bool deterministic;
  u64 seed;
  u32 step;  // global step counter of the rollout (keys the stream)
  u32 first_row = 0;  // global index of row 0 (one of several processes' envs, rl/distributed.h): keys the stream
  // A tanh-squashed policy (PolicySpec::squashed()): squashed[k] = squash_center[k] + squash_scale[k] *
  // tanh(action[k]), what the env gets; action keeps the Gaussian's sample (the PPO ratio's). Null: none.
  const float* squash_center = nullptr;
  const float* squash_scale = nullptr;
  float* squashed = nullptr;  // (rows x act_dim)

  RLT_HD void operator()(i64 i) const {
    const float* h = head + i * head_dim;
    Philox rng(seed, RngStream::kAction, first_row + static_cast<u32>(i), step);
    if (discrete) {
      int a = 0;
      if (deterministic) {
        for (int j = 1; j < head_dim; ++j) a = h[j] > h[a] ? j : a;
      } else {  // Gumbel-max: argmax(logit - log(-log u))
        float best = -INFINITY;
        for (int j = 0; j < head_dim; j += 4) {
          const U32x4 r = rng.next4();
          for (int k = 0; k < 4 && j + k < head_dim; ++k) {
            const float g = h[j + k] - logf(-logf(u32_to_open_unit_float(r.v[k]) * 0.99999994f));
            if (g > best) best = g, a = j + k;
          }
        }
      }
      action[i] = static_cast<float>(a);
      if (logp != nullptr) {
        float lp, ent;
        categorical<float>(h, head_dim, a, lp, ent, nullptr, nullptr);
        logp[i] = lp;
      }
      return;
    }
    float* x = action + i * act_dim;
    for (int k = 0; k < act_dim; k += 4) {
      const U32x4 r = rng.next4();
      float z[4];
      box_muller(r.v[0], r.v[1], z[0], z[1]);
      box_muller(r.v[2], r.v[3], z[2], z[3]);
      for (int q = 0; q < 4 && k + q < act_dim; ++q)
        x[k + q] = deterministic ? h[k + q] : h[k + q] + expf(log_std[k + q]) * z[q];
    }
    if (logp != nullptr) {
      float lp, ent;
      gaussian<float>(h, log_std, x, act_dim, lp, ent, nullptr, nullptr);
      logp[i] = lp;
    }
    if (squashed != nullptr) {
      float* y = squashed + i * act_dim;
      for (int k = 0; k < act_dim; ++k) y[k] = squash_center[k] + squash_scale[k] * tanhf(x[k]);
    }
  }
};

// ---- the PPO loss, one sample -------------------------------------------------------------------

enum PpoStat : int { kStatPolicyLoss = 0, kStatValueLoss, kStatEntropy, kStatApproxKl, kStatClipFrac, kNumPpoStats };

template <class T>
struct PpoCoefs {
  T clip_coef;
  T vf_coef;
  T ent_coef;
  bool clip_value_loss;
  bool normalize_advantages;
  // rl_games' bounds loss on a Gaussian's means (ppo.bounds_loss_coef; continuous, squash none):
  // bounds_coef * sum_k max(|m_k - center_k| / scale_k - kBoundsSoftLimit, 0)^2 per row, mean over rows,
  // with the action box's middle and half-width from PpoLossGrad::box_center/box_scale.
  T bounds_coef = T(0);
};

// How far past the action box's edge (in half-widths) a Gaussian mean goes before the bounds loss
// pulls it back: rl_games' soft bound of 1.1 on a [-1, 1] box.
constexpr double kBoundsSoftLimit = 1.1;

// For minibatch row i: the loss terms (into stats, rows x kNumPpoStats, unscaled per-sample
// values) and the gradient of the minibatch-mean total loss
//   L = mean(pg) + vf_coef * mean(v_loss) - ent_coef * mean(entropy) [+ bounds_coef * mean(bounds)]
// with respect to the head row, the value, and (continuous) the log-std (per row, summed later).
template <class T>
struct PpoLossGrad {
  const T* head;              // (rows x head_dim)
  const T* log_std;           // (act_dim) continuous only
  const T* value;             // (rows)
  const T* action;            // (rows x act_dim)
  const T* old_logp;          // (rows)
  const T* advantage;         // (rows) raw advantages
  const T* ret;               // (rows) returns (targets)
  const T* old_value;         // (rows)
  const double* adv_moments;  // [sum, sum of squares] of the minibatch advantages (device)
  T* d_head;                  // (rows x head_dim)
  T* d_value;                 // (rows)
  T* d_log_std_rows;          // (rows x act_dim) continuous only
  T* stats;                   // (rows x kNumPpoStats)
  int head_dim;
  int act_dim;
  bool discrete;
  i64 rows;
  PpoCoefs<T> c;
  i64 moment_rows = 0;  // rows that adv_moments sums over (0: rows; more when summed over several processes)
  // A tanh-squashed policy: the entropy is the Gaussian's plus E[log |d tanh(x)/dx|], estimated at one
  // reparameterized sample x = mean + std eps per row (brax's NormalTanhDistribution.entropy), eps from
  // Philox (squash_seed, kSquashEntropyStream, squash_first_row + i, squash_key), so the gradient pulls
  // saturated means back. The ratio needs no Jacobian: it is the same for the old and new policy.
  bool squash = false;
  u64 squash_seed = 0;
  u32 squash_key = 0;
  u32 squash_first_row = 0;
  // The action box (act_dim: middle, half-width) of the bounds loss (c.bounds_coef > 0, Gaussian only).
  const float* box_center = nullptr;
  const float* box_scale = nullptr;

  RLT_HD void operator()(i64 i) const {
    const T inv_rows = T(1) / static_cast<T>(rows);
    T adv = advantage[i];
    if (c.normalize_advantages) {
      const i64 mr = moment_rows > 0 ? moment_rows : rows;
      const double mean = adv_moments[0] / static_cast<double>(mr);
      const double var = mr > 1 ? (adv_moments[1] - mean * adv_moments[0]) / static_cast<double>(mr - 1) : 0.0;
      adv = static_cast<T>((static_cast<double>(adv) - mean) / (sqrt(var > 0.0 ? var : 0.0) + 1e-8));
    }
    const T* h = head + i * head_dim;
    T* dh = d_head + i * head_dim;
    T logp, ent;
    // Policy term.
    T dlogp_local[16], dent_local[16];  // head_dim <= 16 for discrete heads (checked on the host)
    if (discrete) {
      const int a = static_cast<int>(action[i]);
      categorical<T>(h, head_dim, a, logp, ent, dlogp_local, dent_local);
    } else {
      gaussian<T>(h, log_std, action + i * act_dim, act_dim, logp, ent, dh, d_log_std_rows + i * act_dim);
    }
    const T log_ratio = logp - old_logp[i];
    const T ratio = m_exp(log_ratio);
    const T surr1 = ratio * adv;
    const T clipped = clamp(ratio, T(1) - c.clip_coef, T(1) + c.clip_coef);
    const T surr2 = clipped * adv;
    const T pg = surr1 < surr2 ? -surr1 : -surr2;
    // d(-min(surr1, surr2))/dlogp: the unclipped branch carries the gradient; the clipped one
    // is constant in theta.
    const T dpg_dlogp = surr1 <= surr2 ? -adv * ratio : T(0);
    const T gp = dpg_dlogp * inv_rows;    // scale of dlogp in dL
    const T ge = -c.ent_coef * inv_rows;  // scale of dentropy in dL
    if (discrete) {
      for (int j = 0; j < head_dim; ++j) dh[j] = gp * dlogp_local[j] + ge * dent_local[j];
    } else if (!squash) {
      T* dls = d_log_std_rows + i * act_dim;
      for (int k = 0; k < act_dim; ++k) {
        dh[k] = gp * dh[k];
        dls[k] = gp * dls[k] + ge;  // dentropy/dlogstd = 1
      }
      if (c.bounds_coef > T(0)) {
        // A mean the env clamps away has no policy gradient to bring it back (every sample lands on
        // the bound): this pulls it to the soft limit, without touching means inside it.
        for (int k = 0; k < act_dim; ++k) {
          const T inv_scale = T(1) / static_cast<T>(box_scale[k]);
          const T d = (h[k] - static_cast<T>(box_center[k])) * inv_scale;
          const T excess = (d < T(0) ? -d : d) - static_cast<T>(kBoundsSoftLimit);
          if (excess > T(0)) dh[k] += c.bounds_coef * inv_rows * T(2) * excess * (d < T(0) ? -inv_scale : inv_scale);
        }
      }
    } else {
      T* dls = d_log_std_rows + i * act_dim;
      const T* ls = log_std;
      Philox rng(squash_seed, kSquashEntropyStream, squash_first_row + static_cast<u32>(i), squash_key);
      for (int k = 0; k < act_dim; k += 4) {
        const U32x4 r = rng.next4();
        float z[4];
        box_muller(r.v[0], r.v[1], z[0], z[1]);
        box_muller(r.v[2], r.v[3], z[2], z[3]);
        for (int q = 0; q < 4 && k + q < act_dim; ++q) {
          const int j = k + q;
          const T sd = m_exp(ls[j]), e = static_cast<T>(z[q]);
          const T x = h[j] + sd * e;
          ent += tanh_log_jacobian(x);
          const T dj = T(-2) * m_tanh(x);  // d log|tanh'(x)| / dx
          dh[j] = gp * dh[j] + ge * dj;
          dls[j] = gp * dls[j] + ge * (T(1) + dj * sd * e);
        }
      }
    }
    // Value term: 0.5 * (v - R)^2, optionally clipped around the old value.
    const T v = value[i], r = ret[i];
    const T d_unclipped = v - r;
    T vloss = T(0.5) * d_unclipped * d_unclipped;
    T dv = d_unclipped;
    if (c.clip_value_loss) {
      const T delta = v - old_value[i];
      const T vc = old_value[i] + clamp(delta, -c.clip_coef, c.clip_coef);
      const T d_clipped = vc - r;
      const T lc = T(0.5) * d_clipped * d_clipped;
      if (lc > vloss) {
        vloss = lc;
        const bool inside = delta > -c.clip_coef && delta < c.clip_coef;
        dv = inside ? d_clipped : T(0);
      }
    }
    d_value[i] = c.vf_coef * dv * inv_rows;
    T* st = stats + i * kNumPpoStats;
    st[kStatPolicyLoss] = pg;
    st[kStatValueLoss] = vloss;
    st[kStatEntropy] = ent;
    st[kStatApproxKl] = (ratio - T(1)) - log_ratio;
    const T dev = ratio - T(1);
    st[kStatClipFrac] = (dev > c.clip_coef || dev < -c.clip_coef) ? T(1) : T(0);
  }
};

// ---- GAE ----------------------------------------------------------------------------------------

// GAE(lambda) for one env over a rollout laid out (num_steps x num_envs). done[t] marks that
// step t ended an episode (terminated or truncated); truncated steps have their bootstrap value
// already folded into reward. next_value is V(obs after the last step).
template <class T>
struct GaeOneEnv {
  const T* reward;
  const T* value;
  const std::uint8_t* done;
  const T* next_value;  // (num_envs)
  T* advantage;
  T* ret;
  int num_steps;
  i64 num_envs;
  T gamma;
  T lambda;
  RLT_HD void operator()(i64 e) const {
    T last = 0;
    T next_v = next_value[e];
    for (int t = num_steps - 1; t >= 0; --t) {
      const i64 k = static_cast<i64>(t) * num_envs + e;
      const T nonterminal = done[k] ? T(0) : T(1);
      const T delta = reward[k] + gamma * next_v * nonterminal - value[k];
      last = delta + gamma * lambda * nonterminal * last;
      advantage[k] = last;
      ret[k] = last + value[k];
      next_v = value[k];
    }
  }
};

// ---- Adam ---------------------------------------------------------------------------------------

// One Adam step on the flat buffer, with the global gradient-norm clip folded in: grad_sq is
// the device sum of squared gradients, lr lives in device memory (the adaptive-KL schedule
// changes it without a host round trip).
template <class T>
struct AdamStep {
  T* params;
  const T* grads;
  T* m;
  T* v;
  const double* grad_sq;  // device scalar: sum of squared gradients
  const T* lr;            // device scalar
  T beta1, beta2, eps, max_grad_norm;
  T bias1, bias2;  // 1 - beta^t, computed on the host from the step count
  // Parameters [clamp_begin, clamp_end) are projected into [clamp_lo, clamp_hi] after the step (the
  // log std under policy.min_log_std / max_log_std; an empty range when unbounded).
  i64 clamp_begin = 0, clamp_end = 0;
  T clamp_lo = T(0), clamp_hi = T(0);
  RLT_HD void operator()(i64 i) const {
    // A non-finite gradient (a NaN or an infinity anywhere makes the sum of squares one) skips the
    // step: parameters and moments stay as they were (CountSkippedUpdates counts it).
    if (!(*grad_sq - *grad_sq == 0.0)) return;
    T g = grads[i];
    if (max_grad_norm > T(0)) {
      const T norm = static_cast<T>(sqrt(*grad_sq));
      if (norm > max_grad_norm) g *= max_grad_norm / (norm + T(1e-6));
    }
    const T mi = beta1 * m[i] + (T(1) - beta1) * g;
    const T vi = beta2 * v[i] + (T(1) - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    const T mhat = mi / bias1, vhat = vi / bias2;
    T p = params[i] - *lr * mhat / (m_sqrt(vhat) + eps);
    if (i >= clamp_begin && i < clamp_end) p = clamp(p, clamp_lo, clamp_hi);
    params[i] = p;
  }
};

// Projects params[begin + i] into [lo, hi] (the log std under policy.min_log_std / max_log_std, before
// a rollout: a resumed or loaded policy may lie outside). NaN stays NaN.
struct ClampParams {
  float* params;
  float lo, hi;
  RLT_HD void operator()(i64 i) const { params[i] = clamp(params[i], lo, hi); }
};

// After a minibatch's gradient: counts a skipped (non-finite) update into the iteration's block slot
// and the run of consecutive skipped updates (reset by a finite one). One thread.
struct CountSkippedUpdates {
  const double* grad_sq;  // device scalar: sum of squared gradients
  double* skipped;        // the iteration's count
  double* consecutive;    // persistent
  RLT_HD void operator()(i64) const {
    if (*grad_sq - *grad_sq == 0.0) {
      *consecutive = 0.0;
    } else {
      *skipped += 1.0;
      *consecutive += 1.0;
    }
  }
};

// ---- observation normalization -----------------------------------------------------------------

// One normalized observation component: clip((x - mean) * inv_std, +-clip) with
// inv_std = 1 / sqrt(var + eps), or x when normalization is off. The rollout (NormalizeObs) and the
// update's minibatch gathers (rl/ppo_impl.h, with inv_std computed once per update by ObsInvStd) all
// compute it so, so both see the same bits (the first epoch's PPO ratio is exactly 1).
RLT_HD RLT_INLINE float obs_inv_std(float var) { return 1.0f / sqrtf(var + 1e-8f); }
RLT_HD RLT_INLINE float normalize_obs_scaled(float x, float mean, float inv_std, float clip, bool enabled) {
  return enabled ? clamp((x - mean) * inv_std, -clip, clip) : x;
}
RLT_HD RLT_INLINE float normalize_obs_value(float x, float mean, float var, float clip, bool enabled) {
  return normalize_obs_scaled(x, mean, obs_inv_std(var), clip, enabled);
}

// inv_std[k] = obs_inv_std(var[k]): a normalizer's per-dimension scale, for the passes that
// normalize many rows with the same statistics.
struct ObsInvStd {
  const float* var;
  float* inv_std;
  RLT_HD void operator()(i64 k) const { inv_std[k] = obs_inv_std(var[k]); }
};

// out = normalize_obs_value(x), elementwise over (rows x dim).
struct NormalizeObs {
  const float* x;
  const float* mean;
  const float* var;
  float* out;
  int dim;
  float clip;
  bool enabled;
  RLT_HD void operator()(i64 idx) const {
    const int k = static_cast<int>(idx % dim);
    out[idx] = normalize_obs_value(x[idx], mean[k], var[k], clip, enabled);
  }
};

}  // namespace rlt
