// The viewer's CUDA pose path (VecEnvT<Env, CudaExecutor>::request_draw_poses / wait_draw_poses,
// and draw_poses on them: kernel into device scratch, asynchronous copy into pinned memory, wait on
// its event) against its CPU twin, which writes
// straight into host memory: same seed, same actions, the same envs' poses. Label gpu; skipped,
// with the reason, where no GPU answers.
#include <gtest/gtest.h>

#include <vector>

#include "envs/registry.h"
#include "kernels/cuda_executor.h"
#include "tests/kernels/gpu_test_util.h"

namespace rlt {
namespace {

TEST(ViewerCuda, VisibleEnvPosesMatchTheCpu) {
  RLT_REQUIRE_GPU();
  for (const char* name : {"cartpole", "pendulum", "acrobot", "mountaincar_continuous"}) {
    SCOPED_TRACE(name);
    const i64 n = 300;
    CpuExecutor cpu_exec(1);
    CudaExecutor cuda_exec(0);
    auto cpu = make_vec_env(name, n, cpu_exec);
    auto gpu = make_vec_env(name, n, cuda_exec);
    cpu->reset(11);
    gpu->reset(11);
    const int act_dim = cpu->spec().action.dim;
    std::vector<float> actions(static_cast<size_t>(n * act_dim));
    for (std::uint32_t t = 0; t < 20; ++t) {  // the same random actions on both (drawn on the CPU)
      const float* a = cpu->sample_actions(5, t);
      std::copy(a, a + actions.size(), actions.begin());
      cpu->step(actions.data());
      float* dev = const_cast<float*>(gpu->sample_actions(5, t));  // executor-memory scratch for the upload
      cuda_exec.copy_from_host(dev, actions.data(), n * act_dim);
      gpu->step(dev);
    }
    const size_t per_env = cpu->draw_geoms().size() * 12;
    ASSERT_EQ(gpu->draw_geoms().size() * 12, per_env);
    // A visible range in the middle (first, count), twice: the pinned buffer is reused.
    for (const auto& [first, count] : {std::pair<i64, i64>{37, 150}, std::pair<i64, i64>{200, 100}}) {
      std::vector<float> ref(static_cast<size_t>(count) * per_env), got(ref.size(), -7.0f);
      cpu->draw_poses(first, count, ref.data());
      gpu->draw_poses(first, count, got.data());
      // 1e-4: 20 float steps of the env's dynamics (sin/cos differ by an ulp or so between the CPU's
      // libm and CUDA's) and the poses' own sin/cos.
      EXPECT_TRUE(gpu_test::all_close("poses", got.data(), ref.data(), ref.size(), 1e-4, 1e-4));
    }
    // The begin/end pair the frame loop uses: two ranges in one request, the first request replaced
    // by a second one, and a step queued between request and wait, which must not change what the
    // request captured (stream order: the gather and the copy run before the step).
    const std::vector<VecEnv::DrawRange> ranges{{250, 40}, {3, 20}};
    std::vector<float> ref;
    for (const auto& [first, count] : ranges) {
      std::vector<float> part(static_cast<size_t>(count) * per_env);
      cpu->draw_poses(first, count, part.data());
      ref.insert(ref.end(), part.begin(), part.end());
    }
    gpu->request_draw_poses(0, n);
    gpu->request_draw_poses(ranges);
    gpu->step(gpu->sample_actions(6, 0));
    const float* got = gpu->wait_draw_poses();
    ASSERT_NE(got, nullptr);
    EXPECT_TRUE(gpu_test::all_close("requested poses", got, ref.data(), ref.size(), 1e-4, 1e-4));
  }
}

}  // namespace
}  // namespace rlt
