// Every loss term's gradient against central finite differences, in double (DESIGN.md D6).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "rl/actor_critic.h"
#include "rl/gemm.h"

namespace rlt {
namespace {

struct Case {
  bool discrete;
  PpoCoefs<double> coefs;
  Activation act;
  const char* what;
  bool squash = false;  // a tanh-squashed Gaussian (the entropy's log-Jacobian sample)
  bool bounds = false;  // a narrow action box, so that most means lie past its soft limit (bounds loss)
};

class GradientCheck : public ::testing::TestWithParam<Case> {};

TEST_P(GradientCheck, MatchesFiniteDifferences) {
  const Case& c = GetParam();
  CpuExecutor exec(2);
  PolicySpec spec;
  spec.obs_dim = 5;
  spec.discrete = c.discrete;
  spec.act_dim = c.discrete ? 1 : 3;
  spec.num_actions = c.discrete ? 4 : 0;
  spec.hidden = {7, 6};
  spec.act = c.act;
  if (c.squash) spec.squash_center = {0.0f, 0.5f, -1.0f}, spec.squash_scale = {1.0f, 0.25f, 2.0f};
  const i64 rows = 13;
  ActorCritic<double, CpuExecutor> ac(spec, rows, exec);
  std::vector<double> params = ac.initial_params(3, -0.3);
  Philox rng(9, RngStream::kBench, 0, 0);
  auto uni = [&](double lo, double hi) { return lo + (hi - lo) * u32_to_unit_float(rng.next4().v[0]); };
  // Perturb so the output layers are not nearly zero (the init uses gain 0.01 on the actor).
  for (auto& p : params) p += uni(-0.3, 0.3);
  std::vector<double> obs(rows * spec.obs_dim), action(rows * spec.act_dim), old_logp(rows), adv(rows), ret(rows),
      old_value(rows);
  for (auto& x : obs) x = uni(-1.5, 1.5);
  for (i64 i = 0; i < rows; ++i) {
    if (c.discrete) action[i] = static_cast<double>(i % spec.num_actions);
    else
      for (int k = 0; k < spec.act_dim; ++k) action[i * spec.act_dim + k] = uni(-1, 1);
    adv[i] = uni(-2, 2);
    ret[i] = uni(-1, 1);
  }
  // old log-probs and values near the current ones so some ratios clip and some don't.
  {
    std::vector<double> g(static_cast<size_t>(ac.num_params()));
    std::vector<double> sums(kNumPpoStats);
    const double* head = ac.actor_forward(exec, params.data(), obs.data(), rows);
    const double* val = ac.critic_forward(exec, params.data(), obs.data(), rows);
    for (i64 i = 0; i < rows; ++i) {
      double lp, ent;
      if (c.discrete)
        categorical<double>(head + i * spec.num_actions, spec.num_actions, static_cast<int>(action[i]), lp, ent,
                            nullptr, nullptr);
      else
        gaussian<double>(head + i * spec.act_dim, params.data() + ac.log_std_offset(), action.data() + i * spec.act_dim,
                         spec.act_dim, lp, ent, nullptr, nullptr);
      old_logp[i] = lp + uni(-0.4, 0.4);
      old_value[i] = val[i] + uni(-0.4, 0.4);
    }
  }
  MinibatchView<double> mb{obs.data(), action.data(), old_logp.data(), adv.data(), ret.data(), old_value.data(), rows};
  mb.squash_seed = 17, mb.squash_key = 5, mb.squash_first_row = 3;
  const std::vector<float> box_center = {0.0f, 0.05f, -0.1f}, box_scale = {0.02f, 0.05f, 0.1f};
  if (c.bounds) mb.box_center = box_center.data(), mb.box_scale = box_scale.data();
  int beyond = 0;  // rows x dims past the soft limit, at the checked parameters
  // The bounds loss has no stat of its own: recomputed here from the means.
  auto bounds_sum = [&](const std::vector<double>& p, bool count) {
    if (!c.bounds) return 0.0;
    const double* head = ac.actor_forward(exec, p.data(), obs.data(), rows);
    double sum = 0;
    for (i64 i = 0; i < rows; ++i)
      for (int k = 0; k < spec.act_dim; ++k) {
        const double d = (head[i * spec.act_dim + k] - box_center[static_cast<size_t>(k)]) / box_scale[static_cast<size_t>(k)];
        const double excess = std::abs(d) - kBoundsSoftLimit;
        if (excess > 0) sum += excess * excess, beyond += count ? 1 : 0;
      }
    return sum;
  };
  auto loss = [&](const std::vector<double>& p, std::vector<double>* grad) {
    std::vector<double> g(static_cast<size_t>(ac.num_params()));
    std::vector<double> sums(kNumPpoStats);
    ac.loss_and_grad(exec, p.data(), mb, c.coefs, g.data(), sums.data());
    if (grad) *grad = g;
    return (sums[kStatPolicyLoss] + c.coefs.vf_coef * sums[kStatValueLoss] - c.coefs.ent_coef * sums[kStatEntropy] +
            c.coefs.bounds_coef * bounds_sum(p, grad != nullptr)) /
           static_cast<double>(rows);
  };
  std::vector<double> grad;
  loss(params, &grad);
  const double eps = 1e-6;
  int checked = 0, nonzero = 0;
  double worst = 0;
  i64 worst_i = -1;
  for (i64 i = 0; i < ac.num_params(); ++i) {
    std::vector<double> pp = params, pm = params;
    pp[i] += eps;
    pm[i] -= eps;
    const double fd = (loss(pp, nullptr) - loss(pm, nullptr)) / (2 * eps);
    // Central differences in double: truncation O(eps^2) and rounding ~1e-10 relative.
    const double err = std::abs(grad[i] - fd) / (1e-7 + 1e-5 * std::abs(fd));
    if (err > worst) worst = err, worst_i = i;
    ++checked;
    if (std::abs(fd) > 1e-8) ++nonzero;
  }
  EXPECT_LE(worst, 1.0) << c.what << ": worst parameter " << worst_i << " analytic " << grad[worst_i];
  EXPECT_GT(nonzero, checked / 4) << c.what << ": the term must touch most parameters";
  if (c.bounds) {
    EXPECT_GT(beyond, rows * spec.act_dim / 4) << c.what << ": most means must lie past the soft limit";
    EXPECT_LT(beyond, rows * spec.act_dim) << c.what << ": some means must lie inside it";
  }
}

PpoCoefs<double> coefs(double vf, double ent, bool clip_v, bool norm_adv, double bounds = 0) {
  return PpoCoefs<double>{0.2, vf, ent, clip_v, norm_adv, bounds};
}

INSTANTIATE_TEST_SUITE_P(
    LossTerms, GradientCheck,
    ::testing::Values(Case{true, coefs(0, 0, false, false), Activation::kTanh, "discrete clipped surrogate"},
                      Case{true, coefs(0, 0, false, true), Activation::kElu, "discrete surrogate, normalized adv"},
                      Case{true, coefs(0, 0.5, false, false), Activation::kTanh, "discrete surrogate + entropy"},
                      Case{true, coefs(1, 0, false, false), Activation::kRelu, "value loss"},
                      Case{true, coefs(1, 0, true, false), Activation::kTanh, "clipped value loss"},
                      Case{false, coefs(0, 0, false, false), Activation::kTanh, "gaussian clipped surrogate"},
                      Case{false, coefs(0, 0.3, false, true), Activation::kElu, "gaussian surrogate + entropy"},
                      Case{false, coefs(0.5, 0.01, true, true), Activation::kTanh, "gaussian full loss"},
                      Case{false, coefs(0, 0.3, false, true), Activation::kElu, "tanh-squashed surrogate + entropy",
                           true},
                      Case{false, coefs(0, 1, false, false), Activation::kTanh, "tanh-squashed entropy", true},
                      Case{false, coefs(0.5, 0.05, true, true), Activation::kTanh, "tanh-squashed full loss",
                           true},
                      Case{false, coefs(0, 0, false, false, 0.7), Activation::kElu, "bounds loss alone", false, true},
                      Case{false, coefs(0.5, 0.01, true, true, 0.05), Activation::kTanh, "gaussian full loss + bounds",
                           false, true}));

// A one-action linear actor (mean = w . obs + b) and its minibatch: every row's obs is (1, 0) and its
// action, old log-prob, advantage, return and old value 0, so the mean is the first weight plus the
// bias (params[0] and params[2]: actor layer 0 holds 2 weights, then 1 bias).
struct LinearActorBatch {
  PolicySpec spec;
  std::vector<double> obs, zero;
  explicit LinearActorBatch(i64 rows) : obs(static_cast<size_t>(rows * 2), 0.0), zero(static_cast<size_t>(rows), 0.0) {
    spec.obs_dim = 2;
    spec.act_dim = 1;
    spec.hidden = {};
    for (i64 i = 0; i < rows; ++i) obs[static_cast<size_t>(2 * i)] = 1.0;
  }
  MinibatchView<double> view() const {
    const i64 rows = static_cast<i64>(zero.size());
    return MinibatchView<double>{obs.data(), zero.data(), zero.data(), zero.data(), zero.data(), zero.data(), rows};
  }
};

// The squashed entropy (brax's: the Gaussian's plus log|tanh'| at one reparameterized sample) is
// what keeps a mean out of saturation: the bonus falls as the mean leaves 0 and its gradient points
// back, where the Gaussian's own entropy does not see the mean at all.
TEST(SquashedEntropy, PullsSaturatedMeansBack) {
  CpuExecutor exec(1);
  const i64 rows = 256;
  LinearActorBatch batch(rows);
  PolicySpec spec = batch.spec;
  spec.squash_center = {0.0f};
  spec.squash_scale = {1.0f};
  ActorCritic<double, CpuExecutor> ac(spec, rows, exec);
  std::vector<double> params = ac.initial_params(1, -1.0);
  const MinibatchView<double> mb = batch.view();
  const PpoCoefs<double> only_entropy{0.2, 0.0, 1.0, false, false};
  double last_entropy = 1e300;
  for (double mean : {0.0, 1.0, 2.0, 4.0}) {
    params[0] = mean, params[2] = 0.0;  // weight of obs[0]; the bias (actor layer 0: 2 weights, then 1 bias)
    std::vector<double> g(static_cast<size_t>(ac.num_params())), sums(kNumPpoStats);
    ac.loss_and_grad(exec, params.data(), mb, only_entropy, g.data(), sums.data());
    const double entropy = sums[kStatEntropy] / rows;
    EXPECT_LT(entropy, last_entropy) << "mean " << mean;
    last_entropy = entropy;
    if (mean > 0) {
      EXPECT_GT(g[0], 0.0) << "mean " << mean << ": descent must lower the mean";
    }
  }
  spec.squash_center.clear(), spec.squash_scale.clear();  // the plain Gaussian: no pull
  ActorCritic<double, CpuExecutor> plain(spec, rows, exec);
  std::vector<double> g(static_cast<size_t>(plain.num_params())), sums(kNumPpoStats);
  params[0] = 4.0;
  plain.loss_and_grad(exec, params.data(), mb, only_entropy, g.data(), sums.data());
  EXPECT_EQ(g[0], 0.0);
}

// The bounds loss (rl_games'): a Gaussian mean past 1.1 half-widths of the action box is pulled back,
// in proportion to how far; a mean inside that soft limit feels nothing. Without it nothing in the
// loss sees a mean the env's clamp hides (the Gaussian's own entropy does not depend on the mean).
TEST(BoundsLoss, PullsMeansBackToTheBox) {
  CpuExecutor exec(1);
  const i64 rows = 8;
  LinearActorBatch batch(rows);
  PolicySpec spec = batch.spec;
  ActorCritic<double, CpuExecutor> ac(spec, rows, exec);
  std::vector<double> params = ac.initial_params(1, -1.0);
  MinibatchView<double> mb = batch.view();
  const std::vector<float> center = {1.0f}, scale = {2.0f};  // the box [-1, 3]; soft limit [-1.2, 3.2]
  mb.box_center = center.data(), mb.box_scale = scale.data();
  const PpoCoefs<double> only_bounds{0.2, 0.0, 0.0, false, false, 0.5};
  auto mean_gradient = [&](double mean) {
    params[0] = mean, params[2] = 0.0;
    std::vector<double> g(static_cast<size_t>(ac.num_params())), sums(kNumPpoStats);
    ac.loss_and_grad(exec, params.data(), mb, only_bounds, g.data(), sums.data());
    return g[2];  // d loss / d bias = d loss / d mean
  };
  for (double inside : {-1.19, 1.0, 3.0, 3.19}) EXPECT_EQ(mean_gradient(inside), 0.0) << "mean " << inside;
  // past the limit: 0.5 * 2 * (|d| - 1.1) / scale, d = (mean - 1) / 2
  EXPECT_NEAR(mean_gradient(5.0), 0.5 * 2 * (2.0 - 1.1) / 2, 1e-12);
  EXPECT_NEAR(mean_gradient(-21.0), -0.5 * 2 * (11.0 - 1.1) / 2, 1e-12);
  EXPECT_GT(mean_gradient(41.0), mean_gradient(5.0));
  // The squashed policy refuses it: its entropy term already keeps means in check.
  spec.squash_center = {1.0f}, spec.squash_scale = {2.0f};
  ActorCritic<double, CpuExecutor> squashed(spec, rows, exec);
  std::vector<double> g(static_cast<size_t>(squashed.num_params())), sums(kNumPpoStats);
  EXPECT_THROW(squashed.loss_and_grad(exec, params.data(), mb, only_bounds, g.data(), sums.data()),
               std::invalid_argument);
}

}  // namespace
}  // namespace rlt
