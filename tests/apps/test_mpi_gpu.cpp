// `mpirun -np 2 rltrain train --device cuda` (label gpu): two processes on this machine's GPUs
// (two on one GPU where there is one), gradients averaged by NCCL on the executor's stream. Skips,
// with the reason, without mpirun, the MPI or CUDA build, a GPU, or where NCCL refuses (NCCL does
// not put two ranks of one communicator on one GPU: the run then goes through the host, and the
// test checks that run but skips the NCCL claim). tools/device-check.sh runs it with the gpu label.
#include <cmath>

#include "rl/checkpoint.h"
#include "tests/apps/mpi_util.h"

namespace rlt::cli_test {
namespace {

TEST(MpiGpu, TwoProcessesTrainOnCudaWithNccl) {
  REQUIRE_MPI();
  TempDir tmp;
  const std::string run = "$R train --config " + quote(cartpole_config()) +
                          " --device cuda --set env.num_envs=64 --iterations 3 --run-dir run";
  const CliResult r = run_mpi(2, run, tmp.path(), 180);
  if (r.exit_code == 2 && r.err.find("cuda requested but") != std::string::npos)
    GTEST_SKIP() << "no GPU answers: " << r.err.substr(0, r.err.find('\n'));
  ASSERT_EQ(r.exit_code, 0) << show(r);
  const Checkpoint c = read_checkpoint(tmp.path() + "/run/checkpoints/latest.safetensors");
  EXPECT_EQ(checkpoint_world_size(c), 2);
  for (float v : c.file.values<float>("learner/params")) ASSERT_TRUE(std::isfinite(v));
  if (r.err.find("allreduce: NCCL") == std::string::npos) {
    const size_t at = r.err.find("allreduce through the host");
    GTEST_SKIP() << "trained through the host; NCCL not used: "
                 << (at == std::string::npos ? r.err : r.err.substr(at, r.err.find('\n', at) - at));
  }
}

}  // namespace
}  // namespace rlt::cli_test
