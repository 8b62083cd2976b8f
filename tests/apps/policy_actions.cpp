// Helper for onnx_export_test.py, which checks `rltrain export`'s ONNX models against the policy
// they came from (run by onnxruntime):
//   policy_actions CHECKPOINT rollout N OBS_OUT    N observations (float32, N x obs_dim, raw) seen by
//                                                  the checkpoint's env driven by its deterministic
//                                                  policy (40 envs, seed 7, autoreset)
//   policy_actions CHECKPOINT act OBS_IN ACT_OUT   Policy::act(obs, rows, deterministic) on the CPU,
//                                                  as rltrain eval --deterministic acts (float32,
//                                                  rows x act_dim)
//   ... act-noclip | act-nonorm OBS_IN ACT_OUT     the same with the normalizer's clip, or the whole
//                                                  normalizer, switched off (the test's controls)
// CHECKPOINT: a file or a run directory. Exit status: 0 ok, 1 an error (message on stderr), 2 bad usage.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/evaluate.h"
#include "apps/runtime.h"
#include "rl/checkpoint.h"

namespace {

std::vector<float> read_floats(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

void write_floats(const std::string& path, const float* v, size_t n) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(v), static_cast<std::streamsize>(n * sizeof(float)));
  if (!out) throw std::runtime_error(path + ": cannot write");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 5 ? argv[2] : "";
  if (mode != "rollout" && mode != "act" && mode != "act-noclip" && mode != "act-nonorm") {
    std::fprintf(stderr,
                 "usage: policy_actions CHECKPOINT rollout N OBS_OUT | CHECKPOINT act|act-noclip|act-nonorm OBS_IN "
                 "ACT_OUT\n");
    return 2;
  }
  try {
    const std::string path = rlt::resolve_checkpoint_path(argv[1]);
    const rlt::Checkpoint ckpt = rlt::read_checkpoint(path);
    rlt::Config cfg = ckpt.config;
    const rlt::Runtime rt("cpu", 1);
    if (mode == "rollout") {
      const long long n = std::stoll(argv[3]);
      cfg.env.num_envs = 40;
      auto env = rt.make_env(cfg);
      auto policy = rlt::make_checkpoint_policy(rt, cfg, ckpt, *env);
      env->reset(7);
      const int d = env->spec().observation.dim;
      std::vector<float> obs;
      for (std::uint32_t t = 0; static_cast<long long>(obs.size()) < n * d; ++t) {
        const size_t at = obs.size();
        obs.resize(at + static_cast<size_t>(env->num_envs() * d));
        rt.to_host(obs.data() + at, env->obs(), env->num_envs() * d);
        env->step(policy->act(env->obs(), env->num_envs(), true, t));
      }
      write_floats(argv[4], obs.data(), static_cast<size_t>(n * d));
    } else {
      const std::vector<float> obs = read_floats(argv[3]);
      cfg.env.num_envs = 1;
      auto env = rt.make_env(cfg);
      const int d = env->spec().observation.dim;
      const rlt::i64 rows = static_cast<rlt::i64>(obs.size()) / d;
      rlt::ObsNormalization norm = rlt::obs_normalization(cfg);
      if (mode == "act-noclip") norm.clip = 1e30f;
      if (mode == "act-nonorm") norm.enabled = false;
      auto policy = rt.make_policy(rlt::policy_spec_for(env->spec(), cfg.policy), norm,
                                   rlt::policy_sample_seed(cfg.train.seed), rows);
      rlt::restore_policy(ckpt, *policy);
      const float* act = policy->act(obs.data(), rows, true, 0);
      write_floats(argv[4], act, static_cast<size_t>(rows * policy->spec().act_dim));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "policy_actions: %s\n", e.what());
    return 1;
  }
  return 0;
}
