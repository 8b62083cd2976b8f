// Policy: what acting needs of a trained actor-critic, and nothing more (DESIGN.md D6, D11): the
// actor MLP with its log-std, read from the flat parameter buffer (ActorCriticLayout), and the
// running observation normalizer. `rltrain eval`, the viewer and `rltrain bench` act through it;
// Ppo<Exec> (rl/ppo.h) trains the parameters and normalizer it reads, and a checkpoint's
// learner/params, learner/obs_mean and learner/obs_var are exactly a Policy's state.
//
// Single source: acting is NormalizeObs -> the actor's forward pass -> SampleAction, the same
// functors (rl/ppo_math.h, rl/mlp.h) as the learner's rollout, run by the executor's parallel_for
// and gemm. PolicyT<Exec> is instantiated in rl/ppo_cpu.cpp and rl/ppo_cuda.cu.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "rl/actor_critic.h"
#include "rl/ppo.h"  // NamedArray

namespace rlt {

// How observations are normalized before the actor sees them (the trainer's ppo.normalize_obs and
// ppo.clip_obs).
struct ObsNormalization {
  bool enabled = true;
  float clip = 10.0f;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual const PolicySpec& spec() const = 0;
  virtual Device device() const = 0;
  // Most observation rows one act() call takes.
  virtual i64 max_rows() const = 0;
  // Actions for `rows` raw observations (executor memory, rows x obs_dim): the distribution's mode
  // when deterministic, else a sample from the Philox stream keyed (sample seed, row, step_key).
  // Returns executor memory (rows x act_dim; discrete: the action index), valid until the next call.
  virtual const float* act(const float* obs, i64 rows, bool deterministic, std::uint32_t step_key) = 0;
  // Restores params (the whole actor-critic buffer), obs_mean and obs_var; std::runtime_error
  // naming the array on a missing one or a size mismatch. Other arrays are ignored.
  virtual void load(const std::vector<NamedArray>& arrays) = 0;
};

// Bytes a PolicyT for max_rows rows allocates in executor memory (its constructor): the actor's
// scratch, the parameters, the normalizer, the normalized observations and the actions (a squashed
// policy's samples and action box besides).
inline i64 policy_bytes(const PolicySpec& spec, i64 max_rows) {
  const ActorCriticLayout layout(spec);
  return mlp_scratch_bytes(layout.actor, max_rows, sizeof(float)) +
         static_cast<i64>(sizeof(float)) *
             (layout.num_params + 2 * static_cast<i64>(spec.obs_dim) + max_rows * (spec.obs_dim + spec.act_dim) +
              (spec.squashed() ? (max_rows + 2) * static_cast<i64>(spec.act_dim) : 0));
}

template <class Exec>
class PolicyT final : public Policy {
 public:
  using FBuf = typename Exec::template Buffer<float>;

  // sample_seed keys the sampled actions (the learner acts with train.seed ^ 0x5EED: policy_sample_seed).
  PolicyT(const PolicySpec& spec, const ObsNormalization& norm, std::uint64_t sample_seed, i64 max_rows,
          const Exec& exec)
      : m_spec(spec), m_layout(spec), m_norm(norm), m_seed(sample_seed), m_exec(exec) {
    if (max_rows < 1) throw std::invalid_argument("Policy: max_rows must be positive");
    m_actor = Mlp<float, Exec>(m_layout.actor, 0, max_rows, m_exec);
    m_params.resize(m_layout.num_params);
    m_obs_mean.resize(spec.obs_dim);
    m_obs_var.resize(spec.obs_dim);
    m_exec.fill(m_params.data(), 0.0f, m_layout.num_params);
    m_exec.fill(m_obs_mean.data(), 0.0f, spec.obs_dim);
    m_exec.fill(m_obs_var.data(), 1.0f, spec.obs_dim);
    m_norm_obs.resize(max_rows * spec.obs_dim);
    m_actions.resize(max_rows * spec.act_dim);
    if (spec.squashed()) {
      m_raw.resize(max_rows * spec.act_dim);
      m_squash_center.resize(spec.act_dim);
      m_squash_scale.resize(spec.act_dim);
      m_exec.copy_from_host(m_squash_center.data(), spec.squash_center.data(), spec.act_dim);
      m_exec.copy_from_host(m_squash_scale.data(), spec.squash_scale.data(), spec.act_dim);
    }
  }

  const PolicySpec& spec() const override { return m_spec; }
  Device device() const override { return Exec::kDevice; }
  i64 max_rows() const override { return m_actor.max_rows(); }

  const float* act(const float* obs, i64 rows, bool deterministic, std::uint32_t step_key) override {
    parallel_for(m_exec, rows * m_spec.obs_dim,
                 NormalizeObs{obs, m_obs_mean.data(), m_obs_var.data(), m_norm_obs.data(), m_spec.obs_dim, m_norm.clip,
                              m_norm.enabled});
    const float* head = m_actor.forward(m_exec, m_params.data(), m_norm_obs.data(), rows);
    const bool sq = m_spec.squashed();
    parallel_for(m_exec, rows,
                 SampleAction{head, m_params.data() + m_layout.log_std_offset, sq ? m_raw.data() : m_actions.data(),
                              nullptr, m_spec.head_dim(), m_spec.act_dim, m_spec.discrete, deterministic, m_seed,
                              step_key, 0, m_squash_center.data(), m_squash_scale.data(),
                              sq ? m_actions.data() : nullptr});
    return m_actions.data();
  }

  void load(const std::vector<NamedArray>& arrays) override {
    auto copy = [&](const char* name, FBuf& b) {
      for (const auto& a : arrays) {
        if (a.name != name) continue;
        if (static_cast<i64>(a.f32.size()) != b.size())
          throw std::runtime_error(std::string("tensor '") + name + "' has " + std::to_string(a.f32.size()) +
                                   " values, expected " + std::to_string(b.size()));
        m_exec.copy_from_host(b.data(), a.f32.data(), b.size());
        return;
      }
      throw std::runtime_error(std::string("tensor '") + name + "' is missing");
    };
    copy("params", m_params);
    copy("obs_mean", m_obs_mean);
    copy("obs_var", m_obs_var);
  }

 private:
  PolicySpec m_spec;
  ActorCriticLayout m_layout;
  ObsNormalization m_norm;
  std::uint64_t m_seed;
  Exec m_exec;
  Mlp<float, Exec> m_actor;
  FBuf m_params;               // (num_params) the whole actor-critic buffer; the actor and log_std are read
  FBuf m_obs_mean, m_obs_var;  // (obs_dim) running observation moments
  FBuf m_norm_obs;             // (max_rows x obs_dim) scratch
  FBuf m_actions;              // (max_rows x act_dim) act()'s result
  FBuf m_raw;                  // (max_rows x act_dim) a squashed policy's Gaussian samples (scratch)
  FBuf m_squash_center, m_squash_scale;  // (act_dim) a squashed policy's action box (PolicySpec)
};

class CpuExecutor;
// PolicyT<CpuExecutor> (rl/ppo_cpu.cpp); the CUDA twin is make_cuda_policy (rl/ppo_cuda.h).
std::unique_ptr<Policy> make_cpu_policy(const PolicySpec& spec, const ObsNormalization& norm, std::uint64_t sample_seed,
                                        i64 max_rows, const CpuExecutor& exec);

// The stream a run's sampled actions come from: the learner's (Ppo::act) for train.seed.
inline std::uint64_t policy_sample_seed(std::uint64_t train_seed) { return train_seed ^ 0x5EEDu; }

}  // namespace rlt
