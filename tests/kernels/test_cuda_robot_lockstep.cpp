// Lockstep (STYLE.md 6) of the robot envs (envs/robot_env.h, every task of RLT_FOR_EACH_ROBOT_ENV):
// the CPU and the CUDA executor reset from the same seed, driven by the same actions, compared after
// every step; domain randomization, observation noise and pushes are switched on so that their
// draws are compared too. Label gpu: without a device every test skips with the reason.
//
// As in test_cuda_lockstep.cpp, after each comparison the CPU env takes over the CUDA env's whole
// state (save_state / load_state: physics rows, randomization rows, task states, counters), so every
// step starts from the same bits and the comparison measures one control step of the two builds,
// not the divergence of chaotic dynamics.
//
// Tolerances (|cuda - cpu| <= atol + rtol * |cpu|):
//   obs     rtol 1e-4, atol 1e-3: one control step is 2-5 substeps of articulated dynamics with
//           contacts; nvcc contracts a*b+c into FMAs (g++ here does not) and CUDA's sinf/cosf/sqrtf
//           differ from glibc's by an ulp or two. A contact (stiffness 1e5 N/m) turns a 1e-7 m
//           difference in penetration into 1e-2 N, which over a 0.05 s step moves a light body's
//           velocity by ~1e-4 m/s; velocities are O(1-10), hence 1e-3 absolute.
//   reward  rtol 1e-4, atol 2e-2: forward rewards are (x after - x before) / dt, and dt = 0.008 s
//           (hopper, walker2d) multiplies a 1e-5 m position difference (a few ulp of x ~ 10 m
//           after a run) by 125.
//   terminated, truncated, episode counters: exactly.
// Outliers: the one-step map is discontinuous where a contact starts or ends, a joint limit or a
// healthy bound is crossed, so a state within rounding of such a threshold lands on either side in
// the two builds (seen on the H200: a halfcheetah env at step 213 moved 0.006 rad apart in one
// step; humanoid, one contact-force observation 1.3x the tolerance). An env-step that misses any of
// the checks above counts as an outlier; at most kMaxOutlierFraction of the env-steps may (a
// systematic difference misses on most of them), and the test prints how many did and the first few.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "envs/all_envs.h"
#include "envs/registry.h"
#include "kernels/cuda_executor.h"
#include "kernels/device_buffer.h"
#include "sim/env_step.h"
#include "sim/philox.h"
#include "tests/kernels/gpu_test_util.h"

namespace rlt {
namespace {

using gpu_test::all_close;

constexpr double kObsRtol = 1e-4, kObsAtol = 1e-3;
constexpr double kRewardRtol = 1e-4, kRewardAtol = 2e-2;
constexpr int kSteps = 300;
constexpr double kMaxOutlierFraction = 1e-3;
constexpr i64 kNumEnvs = 257;  // two blocks of 256 threads, the second with a single env
constexpr std::uint64_t kSeed = 20240611;

std::vector<std::string> robot_names() {
  std::vector<std::string> names;
#define RLT_ROBOT_NAME(E) names.push_back(E::kName);
  RLT_FOR_EACH_ROBOT_ENV(RLT_ROBOT_NAME)
#undef RLT_ROBOT_NAME
  return names;
}

void make_actions(const EnvSpec& spec, int t, std::vector<float>& actions) {
  const int dim = spec.action.dim;
  for (i64 i = 0; i < kNumEnvs; ++i) {
    Philox rng(kSeed, RngStream::kAction, static_cast<u32>(i), static_cast<u32>(t));
    for (int k = 0; k < dim; k += 4) {
      float u[4];
      uniform4(rng, 0.0f, 1.0f, u, 4);
      for (int q = 0; q < 4 && k + q < dim; ++q) {
        float lo = spec.action.low[static_cast<size_t>(k + q)], hi = spec.action.high[static_cast<size_t>(k + q)];
        if (!std::isfinite(lo) || !std::isfinite(hi)) lo = -1.0f, hi = 1.0f;
        actions[static_cast<size_t>(i * dim + k + q)] = lo + (hi - lo) * u[q];
      }
    }
  }
}

template <class T>
std::vector<T> from_device(const CudaExecutor& exec, const T* p, i64 n) {
  std::vector<T> h(static_cast<size_t>(n));
  exec.copy_to_host(h.data(), p, n);
  return h;
}
template <class T>
std::vector<T> from_host(const T* p, i64 n) {
  return std::vector<T>(p, p + n);
}

std::vector<EnvCounters> counters_of(const std::vector<StateBlob>& blobs) {
  const StateBlob& b = find_state_blob(blobs, "counters");
  std::vector<EnvCounters> c(b.bytes.size() / sizeof(EnvCounters));
  std::memcpy(c.data(), b.bytes.data(), c.size() * sizeof(EnvCounters));
  return c;
}

void randomize(VecEnv& env) {
  for (const auto& [k, v] : std::vector<std::pair<const char*, double>>{{"dr_friction_min", 0.7},
                                                                        {"dr_friction_max", 1.3},
                                                                        {"dr_added_mass_min", -0.02},
                                                                        {"dr_added_mass_max", 1.0},
                                                                        {"dr_motor_strength_min", 0.9},
                                                                        {"dr_motor_strength_max", 1.1},
                                                                        {"dr_damping_min", 0.8},
                                                                        {"dr_damping_max", 1.2},
                                                                        {"obs_noise", 0.01},
                                                                        {"push_interval_s", 1.0},
                                                                        {"push_velocity", 0.3}})
    ASSERT_TRUE(env.set_param(k, v)) << k;
}

class CudaRobotLockstep : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaRobotLockstep, MatchesTheCpuEveryStep) {
  RLT_REQUIRE_GPU();
  const std::string name = GetParam();
  CpuExecutor cpu_exec(2);
  CudaExecutor cuda_exec;
  auto cpu = make_vec_env(name, kNumEnvs, cpu_exec);
  auto gpu = make_vec_env(name, kNumEnvs, cuda_exec);
  ASSERT_EQ(gpu->device(), Device::kCuda);
  randomize(*cpu);
  randomize(*gpu);
  const EnvSpec& spec = cpu->spec();
  const i64 obs_n = kNumEnvs * spec.observation.dim;
  const i64 cobs_n = kNumEnvs * spec.critic_obs_dim;
  const i64 act_n = kNumEnvs * spec.action.dim;

  cpu->reset(kSeed);
  gpu->reset(kSeed);
  ASSERT_TRUE(all_close("obs after reset", from_device(cuda_exec, gpu->obs(), obs_n).data(), cpu->obs(),
                        static_cast<size_t>(obs_n), kObsAtol, kObsRtol));
  cpu->load_state(gpu->save_state());

  std::vector<float> actions(static_cast<size_t>(act_n));
  DeviceBuffer<float> d_actions(act_n);
  i64 episodes_ended = 0, outliers = 0;
  std::string reported;  // the first few outliers
  const int od = spec.observation.dim, cd = spec.critic_obs_dim;
  for (int t = 0; t < kSteps; ++t) {
    SCOPED_TRACE(name + ", step " + std::to_string(t));
    make_actions(spec, t, actions);
    cuda_exec.copy_from_host(d_actions.data(), actions.data(), act_n);
    cpu->step(actions.data());
    gpu->step(d_actions.data());

    const auto term = from_device(cuda_exec, gpu->terminated(), kNumEnvs);
    const auto trunc = from_device(cuda_exec, gpu->truncated(), kNumEnvs);
    const auto reward = from_device(cuda_exec, gpu->reward(), kNumEnvs);
    const auto obs = from_device(cuda_exec, gpu->obs(), obs_n);
    const auto cobs = cobs_n > 0 ? from_device(cuda_exec, gpu->critic_obs(), cobs_n) : std::vector<float>();
    const auto final_obs = from_device(cuda_exec, gpu->final_obs(), obs_n);
    const auto gpu_state = gpu->save_state();
    const auto gc = counters_of(gpu_state), cc = counters_of(cpu->save_state());
    ASSERT_EQ(gc.size(), static_cast<size_t>(kNumEnvs));
    for (i64 i = 0; i < kNumEnvs; ++i) {
      const size_t e = static_cast<size_t>(i);
      const bool ended = term[e] || trunc[e];
      episodes_ended += ended ? 1 : 0;
      std::string why;
      if (term[e] != cpu->terminated()[i] || trunc[e] != cpu->truncated()[i]) why = "terminated/truncated differ";
      if (why.empty() && (gc[e].step != cc[e].step || gc[e].episode != cc[e].episode)) why = "episode counters differ";
      if (why.empty()) {
        ::testing::AssertionResult r = all_close("reward", &reward[e], cpu->reward() + i, 1, kRewardAtol, kRewardRtol);
        if (r) r = all_close("obs", obs.data() + i * od, cpu->obs() + i * od, static_cast<size_t>(od), kObsAtol, kObsRtol);
        if (r && cd > 0)
          r = all_close("critic_obs", cobs.data() + i * cd, cpu->critic_obs() + i * cd, static_cast<size_t>(cd), kObsAtol,
                        kObsRtol);
        if (r && ended)
          r = all_close("final_obs", final_obs.data() + i * od, cpu->final_obs() + i * od, static_cast<size_t>(od),
                        kObsAtol, kObsRtol);
        if (!r) why = r.message();
      }
      if (why.empty()) continue;
      if (++outliers <= 3) reported += "env " + std::to_string(i) + ", step " + std::to_string(t) + ": " + why + "\n";
    }
    ASSERT_EQ(gpu->num_nonfinite_resets(), cpu->num_nonfinite_resets());
    cpu->load_state(gpu_state);
  }
  const double env_steps = static_cast<double>(kSteps) * static_cast<double>(kNumEnvs);
  std::printf("[ lockstep ] %s: %d steps x %lld envs, %lld episodes ended, %lld outlier env-steps (%.2g)\n%s",
              name.c_str(), kSteps, static_cast<long long>(kNumEnvs), static_cast<long long>(episodes_ended),
              static_cast<long long>(outliers), static_cast<double>(outliers) / env_steps, reported.c_str());
  EXPECT_LE(static_cast<double>(outliers), kMaxOutlierFraction * env_steps) << reported;
}

// 1000 random-action steps of 2048 envs on the device (2 million env-steps, episodes ending and
// restarting): no non-finite state. (A control step of one env is a serial chain of substeps in
// one thread, ~10-20 ms on the H200 for the Gymnasium robots and more for the Go1 on rough
// terrain, so the step count sets the test's time.)
TEST_P(CudaRobotLockstep, RandomStepsStayFinite) {
  RLT_REQUIRE_GPU();
  constexpr i64 kEnvs = 2048;
  CudaExecutor exec;
  auto env = make_vec_env(GetParam(), kEnvs, exec);
  env->reset(kSeed);
  for (u32 t = 0; t < 1000; ++t) env->step(env->sample_actions(5, t));
  EXPECT_EQ(env->num_nonfinite_resets(), 0);
  const auto obs = from_device(exec, env->obs(), kEnvs * env->spec().observation.dim);
  for (float x : obs) ASSERT_TRUE(std::isfinite(x));
}

// The viewer's poses gathered on the device equal the CPU's for the same state.
TEST_P(CudaRobotLockstep, DrawPosesMatchTheCpu) {
  RLT_REQUIRE_GPU();
  CpuExecutor cpu_exec(1);
  CudaExecutor cuda_exec;
  auto cpu = make_vec_env(GetParam(), 5, cpu_exec);
  auto gpu = make_vec_env(GetParam(), 5, cuda_exec);
  gpu->reset(kSeed);
  cpu->reset(kSeed);
  cpu->load_state(gpu->save_state());
  const size_t ng = cpu->draw_geoms().size();
  std::vector<float> a(3 * ng * 12), b(3 * ng * 12);
  cpu->draw_poses(2, 3, a.data());
  gpu->draw_poses(2, 3, b.data());
  EXPECT_EQ(a, b);
  // The begin/end pair (pinned memory, asynchronous copy, event): two ranges, a replaced request,
  // and a step between request and wait that must not change what was captured.
  std::vector<float> c(ng * 12), d(2 * ng * 12);
  cpu->draw_poses(0, 1, c.data());
  cpu->draw_poses(3, 2, d.data());
  c.insert(c.end(), d.begin(), d.end());
  gpu->request_draw_poses(0, 5);
  gpu->request_draw_poses(std::vector<VecEnv::DrawRange>{{0, 1}, {3, 2}});
  gpu->step(gpu->sample_actions(kSeed, 0));
  const float* got = gpu->wait_draw_poses();
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(std::vector<float>(got, got + c.size()), c);
}

INSTANTIATE_TEST_SUITE_P(RobotEnvs, CudaRobotLockstep, ::testing::ValuesIn(robot_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace rlt
