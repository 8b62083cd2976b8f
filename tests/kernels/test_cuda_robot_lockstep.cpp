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
//   terminated, truncated, episode counters: exactly (a healthy bound crossed within the tolerance
//           of the state would fail the test: 257 envs x 300 steps make that unlikely, and a
//           failure names the env and step).
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
                                                                        {"dr_added_mass_min", -0.5},
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
  i64 episodes_ended = 0;
  for (int t = 0; t < kSteps; ++t) {
    SCOPED_TRACE(name + ", step " + std::to_string(t));
    make_actions(spec, t, actions);
    cuda_exec.copy_from_host(d_actions.data(), actions.data(), act_n);
    cpu->step(actions.data());
    gpu->step(d_actions.data());

    const auto term = from_device(cuda_exec, gpu->terminated(), kNumEnvs);
    const auto trunc = from_device(cuda_exec, gpu->truncated(), kNumEnvs);
    ASSERT_EQ(term, from_host(cpu->terminated(), kNumEnvs)) << "terminated flags differ";
    ASSERT_EQ(trunc, from_host(cpu->truncated(), kNumEnvs)) << "truncated flags differ";
    ASSERT_TRUE(all_close("reward", from_device(cuda_exec, gpu->reward(), kNumEnvs).data(), cpu->reward(),
                          static_cast<size_t>(kNumEnvs), kRewardAtol, kRewardRtol));
    ASSERT_TRUE(all_close("obs", from_device(cuda_exec, gpu->obs(), obs_n).data(), cpu->obs(),
                          static_cast<size_t>(obs_n), kObsAtol, kObsRtol));
    if (cobs_n > 0) {
      ASSERT_TRUE(all_close("critic_obs", from_device(cuda_exec, gpu->critic_obs(), cobs_n).data(), cpu->critic_obs(),
                            static_cast<size_t>(cobs_n), kObsAtol, kObsRtol));
    }
    const auto final_obs = from_device(cuda_exec, gpu->final_obs(), obs_n);
    const int od = spec.observation.dim;
    for (i64 i = 0; i < kNumEnvs; ++i) {
      if (!term[static_cast<size_t>(i)] && !trunc[static_cast<size_t>(i)]) continue;
      ++episodes_ended;
      ASSERT_TRUE(all_close("final_obs of env " + std::to_string(i), final_obs.data() + i * od,
                            cpu->final_obs() + i * od, static_cast<size_t>(od), kObsAtol, kObsRtol));
    }
    const auto gpu_state = gpu->save_state();
    const auto gc = counters_of(gpu_state), cc = counters_of(cpu->save_state());
    for (size_t i = 0; i < gc.size(); ++i) {
      ASSERT_EQ(gc[i].step, cc[i].step) << "episode step of env " << i;
      ASSERT_EQ(gc[i].episode, cc[i].episode) << "episode index of env " << i;
    }
    ASSERT_EQ(gpu->num_nonfinite_resets(), cpu->num_nonfinite_resets());
    cpu->load_state(gpu_state);
  }
  std::printf("[ lockstep ] %s: %d steps x %lld envs, %lld episodes ended\n", name.c_str(), kSteps,
              static_cast<long long>(kNumEnvs), static_cast<long long>(episodes_ended));
}

// 10^4 random-action steps on the device: no non-finite state.
TEST_P(CudaRobotLockstep, TenThousandRandomStepsStayFinite) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  auto env = make_vec_env(GetParam(), 64, exec);
  env->reset(kSeed);
  for (u32 t = 0; t < 10000; ++t) env->step(env->sample_actions(5, t));
  EXPECT_EQ(env->num_nonfinite_resets(), 0);
  const auto obs = from_device(exec, env->obs(), 64 * env->spec().observation.dim);
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
