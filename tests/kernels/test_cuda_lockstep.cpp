// Lockstep (STYLE.md 6): every registered env on the CPU executor and on the CUDA executor, reset
// from the same seed and driven by the same actions for 1000 steps, compared after every step.
//
// Tolerances (|cuda - cpu| <= kAtol + kRtol * |cpu|):
//   kRtol 1e-5  the two builds round differently: nvcc contracts a*b+c into FMAs (g++ in ISO mode
//               does not), and CUDA's sinf/cosf are within 2 ulp where glibc's are within 1. One
//               step of any env amounts to a few ulp (6e-8 each), far below 1e-5.
//   kAtol 5e-5  a component near zero (sin of an angle near 0, a velocity that changes sign) keeps
//               the absolute rounding error of the larger terms it was computed from: velocities
//               reach 9*pi ~ 28 (acrobot), whose ulp is 1.9e-6, and RK4 combines ~4 stages of
//               them; 5e-5 is ~25 ulp at that magnitude.
//   terminated, truncated, episode step and episode counters: exactly.
// Chaotic dynamics (a falling pole, acrobot) amplify a 1-ulp difference exponentially over an
// episode, so a free-running comparison would measure the Lyapunov exponent, not the backends.
// After each comparison the CPU env therefore takes over the CUDA env's full state (save_state /
// load_state, which also checks that the state bytes are device-agnostic): every one of the 1000
// steps starts from the same state on both sides, including the auto-resets.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "envs/all_envs.h"
#include "envs/registry.h"
#include "kernels/cuda_executor.h"
#include "kernels/device_buffer.h"
#include "sim/philox.h"
#include "sim/vec_env_impl.h"  // EnvCounters
#include "tests/kernels/gpu_test_util.h"

namespace rlt {
namespace {

using gpu_test::all_close;

constexpr double kRtol = 1e-5;
constexpr double kAtol = 5e-5;
constexpr int kSteps = 1000;
constexpr i64 kNumEnvs = 257;  // two blocks of 256 threads, the second with a single env
constexpr std::uint64_t kSeed = 20240611;

// Seeded actions inside the action space: discrete indices, or uniform in [low, high] ([-1, 1]
// where a bound is infinite).
void make_actions(const EnvSpec& spec, int t, std::vector<float>& actions) {
  const int dim = spec.action.dim;
  for (i64 i = 0; i < kNumEnvs; ++i) {
    Philox rng(kSeed, RngStream::kAction, static_cast<u32>(i), static_cast<u32>(t));
    U32x4 r = rng.next4();
    for (int k = 0; k < dim; ++k) {
      if (k % 4 == 0 && k > 0) r = rng.next4();
      const float u = u32_to_unit_float(r.v[k % 4]);
      float& a = actions[static_cast<size_t>(i * dim + k)];
      if (spec.action.discrete) {
        a = static_cast<float>(static_cast<int>(u * static_cast<float>(spec.action.num_actions)));
      } else {
        float lo = spec.action.low[static_cast<size_t>(k)], hi = spec.action.high[static_cast<size_t>(k)];
        if (!std::isfinite(lo) || !std::isfinite(hi)) lo = -1.0f, hi = 1.0f;
        a = lo + (hi - lo) * u;
      }
    }
  }
}

template <class T>
std::vector<T> from_host(const T* p, i64 n) {
  return std::vector<T>(p, p + n);
}
template <class T>
std::vector<T> from_device(const CudaExecutor& exec, const T* p, i64 n) {
  std::vector<T> h(static_cast<size_t>(n));
  exec.copy_to_host(h.data(), p, n);
  return h;
}

const StateBlob& find_blob(const std::vector<StateBlob>& blobs, const char* name) {
  for (const auto& b : blobs)
    if (b.name == name) return b;
  throw std::runtime_error(std::string("no state blob ") + name);
}

std::vector<EnvCounters> counters_of(const std::vector<StateBlob>& blobs) {
  const StateBlob& b = find_blob(blobs, "counters");
  std::vector<EnvCounters> c(b.bytes.size() / sizeof(EnvCounters));
  std::memcpy(c.data(), b.bytes.data(), c.size() * sizeof(EnvCounters));
  return c;
}

class CudaLockstep : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaLockstep, MatchesTheCpuEveryStepFor1000Steps) {
  RLT_REQUIRE_GPU();
  const std::string name = GetParam();
  CpuExecutor cpu_exec(2);
  CudaExecutor cuda_exec;
  auto cpu = make_vec_env(name, kNumEnvs, cpu_exec);
  auto gpu = make_vec_env(name, kNumEnvs, cuda_exec);
  ASSERT_EQ(gpu->device(), Device::kCuda);
  const EnvSpec& spec = cpu->spec();
  const i64 obs_n = kNumEnvs * spec.observation.dim;
  const i64 act_n = kNumEnvs * spec.action.dim;

  cpu->reset(kSeed);
  gpu->reset(kSeed);
  ASSERT_TRUE(all_close("obs after reset", from_device(cuda_exec, gpu->obs(), obs_n).data(), cpu->obs(),
                        static_cast<size_t>(obs_n), kAtol, kRtol));
  cpu->load_state(gpu->save_state());  // reset draws agree to an ulp (FMA); start from the same bits

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
                          static_cast<size_t>(kNumEnvs), kAtol, kRtol));
    ASSERT_TRUE(all_close("obs", from_device(cuda_exec, gpu->obs(), obs_n).data(), cpu->obs(),
                          static_cast<size_t>(obs_n), kAtol, kRtol));

    // Where an episode ended: the final observation, its return and length.
    const auto final_obs = from_device(cuda_exec, gpu->final_obs(), obs_n);
    const auto ep_return = from_device(cuda_exec, gpu->ep_return(), kNumEnvs);
    const auto ep_length = from_device(cuda_exec, gpu->ep_length(), kNumEnvs);
    const int od = spec.observation.dim;
    for (i64 i = 0; i < kNumEnvs; ++i) {
      if (!term[static_cast<size_t>(i)] && !trunc[static_cast<size_t>(i)]) continue;
      ++episodes_ended;
      ASSERT_TRUE(all_close("final_obs of env " + std::to_string(i), final_obs.data() + i * od,
                            cpu->final_obs() + i * od, static_cast<size_t>(od), kAtol, kRtol));
      ASSERT_TRUE(all_close("ep_return of env " + std::to_string(i), &ep_return[static_cast<size_t>(i)],
                            cpu->ep_return() + i, 1, kAtol, kRtol));
      ASSERT_EQ(ep_length[static_cast<size_t>(i)], cpu->ep_length()[i]) << "ep_length of env " << i;
    }

    // Counters: step and episode exactly (they key the random streams), return within tolerance.
    const auto gpu_state = gpu->save_state();
    const auto gc = counters_of(gpu_state), cc = counters_of(cpu->save_state());
    ASSERT_EQ(gc.size(), cc.size());
    for (size_t i = 0; i < gc.size(); ++i) {
      ASSERT_EQ(gc[i].step, cc[i].step) << "episode step of env " << i;
      ASSERT_EQ(gc[i].episode, cc[i].episode) << "episode index of env " << i;
      ASSERT_TRUE(all_close("running return of env " + std::to_string(i), &gc[i].ret, &cc[i].ret, 1, kAtol, kRtol));
    }
    ASSERT_EQ(gpu->num_nonfinite_resets(), cpu->num_nonfinite_resets());

    cpu->load_state(gpu_state);  // the next step starts from the same state on both sides
  }
  // The test must have seen auto-resets, or it did not cover them.
  EXPECT_GT(episodes_ended, 0) << "no episode ended in " << kSteps << " steps of " << kNumEnvs << " envs";
}

// The classic-control envs, at the tolerances above; the robot envs (envs/robot_env.h) have their
// own lockstep test with the physics' tolerances (test_cuda_robot_lockstep.cpp).
std::vector<std::string> classic_env_names() {
  std::vector<std::string> names;
#define RLT_CLASSIC_NAME(E) names.push_back(E::kName);
  RLT_FOR_EACH_ENV(RLT_CLASSIC_NAME)
#undef RLT_CLASSIC_NAME
  return names;
}

INSTANTIATE_TEST_SUITE_P(ClassicEnvs, CudaLockstep, ::testing::ValuesIn(classic_env_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(CudaEnvs, RegistryHasEveryEnvAndRejectsUnknown) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  for (const std::string& name : env_names()) {
    auto env = make_vec_env(name, 3, exec);
    EXPECT_EQ(env->spec().name, name);
    EXPECT_EQ(env->num_envs(), 3);
    EXPECT_EQ(env->device(), Device::kCuda);
  }
  EXPECT_THROW(make_vec_env("no_such_env", 3, exec), std::invalid_argument);
}

// VecEnv::reset_one on the CUDA executor, every env (robot tasks too): one launch over one env
// restarts it as on the CPU, from the same state, and leaves the other envs' observations and
// counters bit for bit. Tolerance for the restarted env's observation: kRobotTol, as a robot's reset
// runs its kinematics (and observation noise) in float, which nvcc contracts into FMAs.
TEST(CudaEnvs, ResetOneMatchesTheCpuAndTouchesNoOtherEnv) {
  RLT_REQUIRE_GPU();
  constexpr double kRobotTol = 1e-4;
  constexpr i64 n = 6, target = 4;
  for (const std::string& name : env_names()) {
    SCOPED_TRACE(name);
    CpuExecutor cpu_exec(1);
    CudaExecutor cuda_exec;
    auto cpu = make_vec_env(name, n, cpu_exec);
    auto gpu = make_vec_env(name, n, cuda_exec);
    const int od = cpu->spec().observation.dim, ad = cpu->spec().action.dim;
    gpu->reset(kSeed);
    cpu->load_state(gpu->save_state());
    DeviceBuffer<float> d_actions(n * ad);
    for (std::uint32_t t = 0; t < 5; ++t) {  // the same actions on both (drawn on the CPU)
      const float* a = cpu->sample_actions(3, t);
      cuda_exec.copy_from_host(d_actions.data(), a, n * ad);
      cpu->step(a);
      gpu->step(d_actions.data());
      cpu->load_state(gpu->save_state());
    }
    const auto obs_before = from_device(cuda_exec, gpu->obs(), n * od);
    const auto counters_before = counters_of(gpu->save_state());
    gpu->reset_one(target);
    cpu->reset_one(target);
    const auto obs = from_device(cuda_exec, gpu->obs(), n * od);
    const auto counters = counters_of(gpu->save_state());
    for (i64 i = 0; i < n; ++i) {
      const size_t r = static_cast<size_t>(i * od);
      if (i == target) {
        EXPECT_TRUE(
            all_close("restarted obs", obs.data() + r, cpu->obs() + r, static_cast<size_t>(od), kRobotTol, kRobotTol));
        EXPECT_EQ(counters[static_cast<size_t>(i)].episode, counters_before[static_cast<size_t>(i)].episode + 1);
        EXPECT_EQ(counters[static_cast<size_t>(i)].step, 0);
      } else {
        EXPECT_EQ(0, std::memcmp(obs.data() + r, obs_before.data() + r, sizeof(float) * static_cast<size_t>(od)))
            << "obs of env " << i;
        EXPECT_EQ(0, std::memcmp(&counters[static_cast<size_t>(i)], &counters_before[static_cast<size_t>(i)],
                                 sizeof(EnvCounters)))
            << "counters of env " << i;
      }
    }
    EXPECT_THROW(gpu->reset_one(n), std::out_of_range);
  }
}

}  // namespace
}  // namespace rlt
