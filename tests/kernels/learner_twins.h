// The learner's single-source pieces run the same way on either executor, for the CPU-vs-CUDA
// twin tests (STYLE.md 5): each run_* uploads host inputs through the executor, runs the functor
// (or the ActorCritic update) exactly as rl/ppo_impl.h does, and returns host arrays. The CPU
// instantiations are compiled by g++ with the production flags in the test .cpp files; the CUDA
// ones by nvcc in learner_twins.cu (explicit instantiations, declared extern below), so the host
// test code never needs nvcc.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cuda_executor.h"
#include "rl/ppo_impl.h"  // update_moments, and through it ActorCritic and the PPO functors

namespace rlt {
namespace twins {

template <class T, class Exec>
typename Exec::template Buffer<T> upload(const Exec& exec, const std::vector<T>& h) {
  typename Exec::template Buffer<T> d(static_cast<i64>(h.size()));
  exec.copy_from_host(d.data(), h.data(), static_cast<i64>(h.size()));
  return d;
}

template <class T, class Exec>
std::vector<T> download(const Exec& exec, const T* d, i64 n) {
  std::vector<T> h(static_cast<size_t>(n));
  exec.copy_to_host(h.data(), d, n);
  return h;
}

// ---- GAE ----------------------------------------------------------------------------------------

struct GaeCase {
  std::vector<float> reward, value;  // (num_steps x num_envs)
  std::vector<std::uint8_t> done;    // (num_steps x num_envs)
  std::vector<float> next_value;     // (num_envs)
  int num_steps = 0;
  i64 num_envs = 0;
  float gamma = 0.99f, lambda = 0.95f;
};
struct GaeResult {
  std::vector<float> adv, ret;
};

template <class Exec>
GaeResult run_gae(const Exec& exec, const GaeCase& c) {
  auto reward = upload(exec, c.reward), value = upload(exec, c.value), next_value = upload(exec, c.next_value);
  auto done = upload(exec, c.done);
  const i64 n = static_cast<i64>(c.reward.size());
  typename Exec::template Buffer<float> adv(n), ret(n);
  parallel_for(exec, c.num_envs,
               GaeOneEnv<float>{reward.data(), value.data(), done.data(), next_value.data(), adv.data(), ret.data(),
                                c.num_steps, c.num_envs, c.gamma, c.lambda});
  return {download(exec, adv.data(), n), download(exec, ret.data(), n)};
}

// ---- Adam ---------------------------------------------------------------------------------------

struct AdamState {
  std::vector<float> params, m, v;
};
struct AdamHyper {
  float lr = 3e-4f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-5f, max_grad_norm = 0.5f;
  std::int64_t step = 1;  // Adam's t (1-based): the bias corrections are computed from it as in Ppo
  // AdamStep's projection (the log std's bounds): parameters [clamp_begin, clamp_end) into [lo, hi]
  i64 clamp_begin = 0, clamp_end = 0;
  float clamp_lo = 0.0f, clamp_hi = 0.0f;
};

// One Adam step as Ppo::update takes it: the squared gradient norm by reduce_sum on the executor,
// then AdamStep with the clip folded in. Returns the squared norm; s is updated.
template <class Exec>
double run_adam(const Exec& exec, const std::vector<float>& grads, const AdamHyper& h, AdamState& s) {
  const i64 p = static_cast<i64>(grads.size());
  auto g = upload(exec, grads), params = upload(exec, s.params), m = upload(exec, s.m), v = upload(exec, s.v);
  auto lr = upload(exec, std::vector<float>{h.lr});
  typename Exec::template Buffer<double> grad_sq(1);
  reduce_sum(exec, p, SquareOf<float>{g.data()}, grad_sq.data());
  parallel_for(
      exec, p,
      AdamStep<float>{params.data(), g.data(), m.data(), v.data(), grad_sq.data(), lr.data(), h.beta1, h.beta2, h.eps,
                      h.max_grad_norm, static_cast<float>(1.0 - std::pow(0.9, static_cast<double>(h.step))),
                      static_cast<float>(1.0 - std::pow(0.999, static_cast<double>(h.step))), h.clamp_begin,
                      h.clamp_end, h.clamp_lo, h.clamp_hi});
  s.params = download(exec, params.data(), p);
  s.m = download(exec, m.data(), p);
  s.v = download(exec, v.data(), p);
  return download(exec, grad_sq.data(), 1)[0];
}

// ---- running moments (observation normalizer) -----------------------------------------------------

struct MomentsResult {
  std::vector<float> mean, var;
  double count = 0;
};

// update_moments over each batch (rows x dim, row-major) in turn, from the initial state.
template <class Exec>
MomentsResult run_moments(const Exec& exec, int dim, const std::vector<std::vector<float>>& batches) {
  RunningMoments<Exec> m;
  m.init(exec, dim);
  for (const auto& b : batches) {
    auto x = upload(exec, b);
    update_moments(exec, m, x.data(), static_cast<i64>(b.size()) / dim);
  }
  return {download(exec, m.mean.data(), dim), download(exec, m.var.data(), dim), m.count};
}

// ---- select_last_flagged --------------------------------------------------------------------------

struct SelectResult {
  double count = 0;
  std::vector<double> a, b;  // max(k, 1) slots, pre-filled with `sentinel`
};

template <class Exec>
SelectResult run_select_last_flagged(const Exec& exec, const std::vector<std::uint8_t>& flags,
                                     const std::vector<float>& a, const std::vector<std::int32_t>& b, i64 k,
                                     double sentinel) {
  const i64 n = static_cast<i64>(flags.size()), slots = k > 0 ? k : 1;
  auto df = upload(exec, flags);
  auto da = upload(exec, a);
  auto db = upload(exec, b);
  const std::vector<double> fill(static_cast<size_t>(slots), sentinel);
  auto count = upload(exec, std::vector<double>{sentinel});
  auto out_a = upload(exec, fill), out_b = upload(exec, fill);
  select_last_flagged(exec, n, df.data(), da.data(), db.data(), k, count.data(), out_a.data(), out_b.data());
  return {download(exec, count.data(), 1)[0], download(exec, out_a.data(), slots), download(exec, out_b.data(), slots)};
}

// ---- SampleAction and NormalizeObs ----------------------------------------------------------------

struct SampleCase {
  std::vector<float> head;     // (rows x head_dim)
  std::vector<float> log_std;  // (act_dim), continuous only (one unused entry otherwise)
  i64 rows = 0;
  int head_dim = 0, act_dim = 0;
  bool discrete = false, deterministic = true;
  u64 seed = 0;
  u32 step = 0;
};
struct SampleResult {
  std::vector<float> action, logp;
};

template <class Exec>
SampleResult run_sample_action(const Exec& exec, const SampleCase& c) {
  auto head = upload(exec, c.head), log_std = upload(exec, c.log_std);
  typename Exec::template Buffer<float> action(c.rows * c.act_dim), logp(c.rows);
  parallel_for(exec, c.rows,
               SampleAction{head.data(), log_std.data(), action.data(), logp.data(), c.head_dim, c.act_dim, c.discrete,
                            c.deterministic, c.seed, c.step});
  return {download(exec, action.data(), c.rows * c.act_dim), download(exec, logp.data(), c.rows)};
}

template <class Exec>
std::vector<float> run_normalize_obs(const Exec& exec, const std::vector<float>& x, const std::vector<float>& mean,
                                     const std::vector<float>& var, float clip, bool enabled) {
  const int dim = static_cast<int>(mean.size());
  auto dx = upload(exec, x), dm = upload(exec, mean), dv = upload(exec, var);
  typename Exec::template Buffer<float> out(static_cast<i64>(x.size()));
  parallel_for(exec, static_cast<i64>(x.size()),
               NormalizeObs{dx.data(), dm.data(), dv.data(), out.data(), dim, clip, enabled});
  return download(exec, out.data(), static_cast<i64>(x.size()));
}

// ---- one PPO minibatch update: ActorCritic::loss_and_grad, then one Adam step ------------------------

struct MinibatchHost {
  std::vector<float> obs, action, old_logp, advantage, ret, old_value;
  i64 rows = 0;
};
struct UpdateResult {
  std::vector<float> grads;       // (num_params) gradient of the minibatch loss
  std::vector<double> stat_sums;  // (kNumPpoStats)
  double grad_sq = 0;             // squared gradient norm (reduce_sum)
  AdamState after;                // params and Adam state after the step
};

template <class Exec>
UpdateResult run_update(const Exec& exec, const PolicySpec& spec, const MinibatchHost& mb, const PpoCoefs<float>& coefs,
                        const AdamHyper& h, const AdamState& before) {
  ActorCritic<float, Exec> ac(spec, mb.rows, exec);
  const i64 p = ac.num_params();
  auto params = upload(exec, before.params), m = upload(exec, before.m), v = upload(exec, before.v);
  auto obs = upload(exec, mb.obs), action = upload(exec, mb.action), old_logp = upload(exec, mb.old_logp);
  auto adv = upload(exec, mb.advantage), ret = upload(exec, mb.ret), old_value = upload(exec, mb.old_value);
  auto lr = upload(exec, std::vector<float>{h.lr});
  typename Exec::template Buffer<float> grads(p);
  typename Exec::template Buffer<double> stat_sums(kNumPpoStats), grad_sq(1);
  const MinibatchView<float> view{obs.data(), action.data(),    old_logp.data(), adv.data(),
                                  ret.data(), old_value.data(), mb.rows};
  ac.loss_and_grad(exec, params.data(), view, coefs, grads.data(), stat_sums.data());
  UpdateResult r;
  r.grads = download(exec, grads.data(), p);
  r.stat_sums = download(exec, stat_sums.data(), kNumPpoStats);
  reduce_sum(exec, p, SquareOf<float>{grads.data()}, grad_sq.data());
  parallel_for(
      exec, p,
      AdamStep<float>{params.data(), grads.data(), m.data(), v.data(), grad_sq.data(), lr.data(), h.beta1, h.beta2,
                      h.eps, h.max_grad_norm, static_cast<float>(1.0 - std::pow(0.9, static_cast<double>(h.step))),
                      static_cast<float>(1.0 - std::pow(0.999, static_cast<double>(h.step)))});
  r.grad_sq = download(exec, grad_sq.data(), 1)[0];
  r.after.params = download(exec, params.data(), p);
  r.after.m = download(exec, m.data(), p);
  r.after.v = download(exec, v.data(), p);
  return r;
}

}  // namespace twins

#if !defined(__CUDACC__)
// The CUDA instantiations live in tests/kernels/learner_twins.cu (nvcc); host code only calls them.
namespace twins {
extern template GaeResult run_gae<CudaExecutor>(const CudaExecutor&, const GaeCase&);
extern template double run_adam<CudaExecutor>(const CudaExecutor&, const std::vector<float>&, const AdamHyper&,
                                              AdamState&);
extern template MomentsResult run_moments<CudaExecutor>(const CudaExecutor&, int,
                                                        const std::vector<std::vector<float>>&);
extern template SelectResult run_select_last_flagged<CudaExecutor>(const CudaExecutor&,
                                                                   const std::vector<std::uint8_t>&,
                                                                   const std::vector<float>&,
                                                                   const std::vector<std::int32_t>&, i64, double);
extern template SampleResult run_sample_action<CudaExecutor>(const CudaExecutor&, const SampleCase&);
extern template std::vector<float> run_normalize_obs<CudaExecutor>(const CudaExecutor&, const std::vector<float>&,
                                                                   const std::vector<float>&, const std::vector<float>&,
                                                                   float, bool);
extern template UpdateResult run_update<CudaExecutor>(const CudaExecutor&, const PolicySpec&, const MinibatchHost&,
                                                      const PpoCoefs<float>&, const AdamHyper&, const AdamState&);
}  // namespace twins
#endif

}  // namespace rlt
