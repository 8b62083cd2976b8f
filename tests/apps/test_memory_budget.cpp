// The memory check before start (apps/memory_budget.h): the estimate against what a batch of envs
// and a learner really allocate, "the largest num_envs that fits", the message, the free figure.
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include <vector>

#include "apps/memory_budget.h"
#include "apps/runtime.h"
#include "envs/registry.h"
#include "rl/distributed.h"
#include "rl/ppo.h"
#include "sim/cpu_executor.h"
#include "sim/placed_env.h"

namespace rlt {
namespace {

// Bytes the allocator has handed out and not taken back (every arena, mmapped blocks included).
std::int64_t allocated_bytes() {
  const struct mallinfo2 m = mallinfo2();
  return static_cast<std::int64_t>(m.uordblks + m.hblkhd);
}

class ScopedEnvVar {
 public:
  ScopedEnvVar(const char* name, const std::string& value) : m_name(name) { ::setenv(name, value.c_str(), 1); }
  ~ScopedEnvVar() { ::unsetenv(m_name); }

 private:
  const char* m_name;
};

Config small_config(const std::string& env, std::int64_t num_envs, int num_steps) {
  Config cfg;
  cfg.source = "test.toml";
  cfg.env.name = env;
  cfg.env.num_envs = num_envs;
  cfg.ppo.num_steps = num_steps;
  cfg.policy.hidden = {64, 64};
  return cfg;
}

struct Measured {
  std::int64_t envs, total;  // real bytes: the batch alone, the batch + learner after one iteration
};

// What a batch of cfg's env and a Ppo over it really allocate (after one iteration, so that
// scratch grown on first use counts too). On a thread of its own: the CPU gemm's scratch is per
// thread and kept, so a second measurement on one thread would not see it again.
Measured measure(const Config& cfg, const CpuExecutor& exec) {
  Measured m{};
  std::thread([&] {
    const std::int64_t before = allocated_bytes();
    std::unique_ptr<VecEnv> env = make_vec_env(cfg.env.name, cfg.env.num_envs, exec);
    m.envs = allocated_bytes() - before;
    env->reset(1);
    auto learner = std::make_unique<Ppo<CpuExecutor>>(cfg, *env, exec);
    learner->start(1);
    learner->iterate(1, 2);
    m.total = allocated_bytes() - before;
  }).join();
  return m;
}

// What the allocator adds to the bytes asked for: a header per block, and a page per block it
// maps (the ~60 buffers of an env batch and a learner).
constexpr std::int64_t kAllocatorSlack = 64 * 4096;

// The estimate (envs + rollout + learner) covers what is really allocated, and is close to it:
// compared over the difference of two batch sizes (which cancels the fixed host parts, the parsed
// model, that the safety margin covers), it is at least what was allocated (less the allocator's
// rounding) and at most 2% above it.
// Whether mallinfo2 sees this process's allocations (a sanitizer's allocator replaces glibc's and
// reports nothing to it).
std::vector<char>* volatile g_escape;  // allocator_reports' block must really be allocated
bool allocator_reports() {
  const std::int64_t before = allocated_bytes();
  std::vector<char> block(std::size_t{1} << 20, 1);
  g_escape = &block;
  return allocated_bytes() - before >= static_cast<std::int64_t>(block.size());
}

void expect_estimate_close(const std::string& name, std::int64_t n, int num_steps) {
  SCOPED_TRACE(name);
  if (!allocator_reports()) GTEST_SKIP() << "mallinfo2 does not see allocations here (a sanitizer's allocator)";
  const CpuExecutor exec(2);
  const Config small = small_config(name, 16, num_steps), big = small_config(name, n, num_steps);
  const EnvProbe probe = probe_env(big);
  const MemoryNeed est_small = train_memory(small, probe.memory, probe.spec, 16, true);
  const MemoryNeed est_big = train_memory(big, probe.memory, probe.spec, n, true);
  const auto device = [](const MemoryNeed& m) { return m.total() - m.host_only(); };  // no checkpoint copies
  const Measured real_small = measure(small, exec), real_big = measure(big, exec);
  const std::int64_t est_env = est_big.parts[0].bytes - est_small.parts[0].bytes;
  const std::int64_t real_env = real_big.envs - real_small.envs;
  const std::int64_t est_all = device(est_big) - device(est_small), real_all = real_big.total - real_small.total;
  std::printf(
      "%s, %lld envs x %d steps: estimate %lld bytes (envs %lld), allocated %lld (envs %lld); per env: "
      "estimate %.1f, allocated %.1f (envs %.1f, %.1f); model and other fixed parts: %lld bytes\n",
      name.c_str(), static_cast<long long>(n), num_steps, static_cast<long long>(device(est_big)),
      static_cast<long long>(est_big.parts[0].bytes), static_cast<long long>(real_big.total),
      static_cast<long long>(real_big.envs), static_cast<double>(est_all) / (n - 16),
      static_cast<double>(real_all) / (n - 16), static_cast<double>(est_env) / (n - 16),
      static_cast<double>(real_env) / (n - 16), static_cast<long long>(real_small.total - device(est_small)));
  EXPECT_GE(est_env + kAllocatorSlack, real_env);
  EXPECT_LE(est_env, real_env + real_env / 50);
  EXPECT_GE(est_all + kAllocatorSlack, real_all);
  EXPECT_LE(est_all, real_all + real_all / 50);
  // The whole: the fixed parts the estimate leaves to the safety margin (the parsed model) are small.
  EXPECT_LE(real_big.total, device(est_big) + kAllocatorSlack + (std::int64_t{4} << 20));
}

// Placement (issue 18): what a PlacedEnv allocates beside its env (the learner-side copies, the
// host staging, the env-side actions) is placement_memory's, counted as if the env had every
// optional output: at least what is allocated, and above it by no more than the outputs CartPole
// lacks (tracking, forward speed: once on the learner side and twice in staging).
TEST(MemoryEstimate, PlacementMatchesWhatIsAllocated) {
  if (!allocator_reports()) GTEST_SKIP() << "mallinfo2 does not see allocations here (a sanitizer's allocator)";
  const CpuExecutor exec(1);
  const std::int64_t n = 16384;
  std::unique_ptr<VecEnv> env = make_vec_env("cartpole", n, exec);
  const EnvSpec spec = env->spec();
  const std::int64_t before = allocated_bytes();
  PlacedEnv<CpuExecutor, CpuExecutor> placed(std::move(env), exec, exec);
  const std::int64_t real = allocated_bytes() - before;
  const PlacementMemory est = placement_memory(spec, n);
  const std::int64_t lacking = 3 * n * 4 * (kTrackingFloats + 1);
  std::printf("cartpole placement, %lld envs: estimate %lld bytes (learner %lld, host %lld), allocated %lld\n",
              static_cast<long long>(n), static_cast<long long>(est.learner + est.host),
              static_cast<long long>(est.learner), static_cast<long long>(est.host), static_cast<long long>(real));
  EXPECT_GE(est.learner + est.host + kAllocatorSlack, real);
  EXPECT_LE(est.learner + est.host - lacking, real + real / 50);
}

TEST(MemoryEstimate, CartpoleMatchesWhatIsAllocated) { expect_estimate_close("cartpole", 16384, 32); }
TEST(MemoryEstimate, AntMatchesWhatIsAllocated) { expect_estimate_close("ant", 2048, 8); }
// Asymmetric actor-critic: critic observations in the rollout and the minibatches.
TEST(MemoryEstimate, QuadrupedMatchesWhatIsAllocated) { expect_estimate_close("quadruped", 1024, 8); }

TEST(MemoryEstimate, BytesPerEnvComeFromTheBatchLayout) {
  const CpuExecutor exec(1);
  const EnvMemory cart = make_vec_env("cartpole", 1, exec)->memory();
  EXPECT_EQ(cart.per_env, 16 /*State*/ + 16 /*counters*/ + 2 * 4 * 4 /*obs, final*/ + 4 + 2 + 4 + 4 + 4 + 4 /*act*/);
  const EnvMemory ant = make_vec_env("ant", 1, exec)->memory();
  const EnvMemory bigger = make_vec_env("ant", 7, exec)->memory();  // the same whatever the batch
  EXPECT_EQ(ant.per_env, bigger.per_env);
  EXPECT_EQ(ant.fixed, bigger.fixed);
  EXPECT_GT(ant.per_env, 1000);  // a physics row: state, kinematics, contacts
  // The constraint rows (for every possible contact) are a workspace per thread on the CPU, not per
  // env (sim/dynamics.h, BatchRows): the Ant stays within the 16 KB per env that the GPU issue asks.
  EXPECT_LE(ant.per_env, 16 * 1024);
  // A device keeps a workspace per resident thread (a launch's threads run at once, each stepping its
  // envs in turn: sim/dynamics.h, BatchRows): counted apart, added for a CUDA run whatever executor
  // the probe ran on, one slot per env up to the device's resident threads.
  EXPECT_GT(ant.device_per_slot, ant.per_env);
  EXPECT_EQ(ant.bytes(10, true) - ant.bytes(10, false), 10 * ant.device_per_slot);  // slots unknown: per env
  EXPECT_EQ(cart.device_per_slot, 0);
  EnvMemory capped = ant;
  capped.device_slots = 270336;  // an H200: 132 SMs x 2048 threads
  EXPECT_EQ(capped.bytes(1000, true), ant.bytes(1000, true));  // fewer envs than threads: one slot each
  EXPECT_EQ(capped.bytes(1 << 20, true) - capped.bytes(1 << 20, false), 270336 * ant.device_per_slot);
  EXPECT_EQ(capped.bytes(1 << 20, false), ant.bytes(1 << 20, false));  // the CPU keeps none
  // bench's bytes per env at a million envs: the rows plus a quarter of a slot, rounded up
  EXPECT_EQ(capped.per_env_at(1 << 20, true),
            (ant.per_env * (1 << 20) + 270336 * ant.device_per_slot + (1 << 20) - 1) / (1 << 20));
  EXPECT_EQ(capped.per_env_at(1 << 20, false), ant.per_env);
}

// A need linear in n against a fake free figure: the margin is 10% + 128 MiB, the answer exact.
TEST(MemoryFits, LargestNumEnvsIsExact) {
  const std::int64_t free_bytes = std::int64_t{4} << 30;
  const std::int64_t usable = free_bytes - free_bytes / 10 - (std::int64_t{128} << 20);
  EXPECT_EQ(usable_bytes(free_bytes), usable);
  EXPECT_EQ(usable_bytes(100), 0);
  const MemoryNeedFn need = [](std::int64_t n) { return MemoryNeed{{{"envs", 1000 + 4096 * n}}}; };
  const FreeMemory free{free_bytes, -1};
  const std::int64_t best = (usable - 1000) / 4096;
  EXPECT_EQ(largest_fitting(need, free, false, std::int64_t{1} << 40), best);
  EXPECT_EQ(largest_fitting(need, free, false, 10), 10);  // capped by the limit
  EXPECT_NO_THROW(check_memory("x.toml: env.num_envs", "num_envs", best, need, free, false));
  EXPECT_THROW(check_memory("x.toml: env.num_envs", "num_envs", best + 1, need, free, false), ConfigError);

  // On CUDA the device parts go against the GPU's free memory, the host parts against RAM.
  const MemoryNeedFn split = [](std::int64_t n) { return MemoryNeed{{{"envs", 100 * n}, {"copies", 10 * n, true}}}; };
  const FreeMemory gpu{free_bytes, free_bytes};
  EXPECT_EQ(largest_fitting(split, gpu, true, std::int64_t{1} << 40), usable / 100);
  EXPECT_EQ(largest_fitting(split, gpu, false, std::int64_t{1} << 40), usable / 110);
}

TEST(MemoryFits, MessageNamesTheKeyThePartsAndWhatFits) {
  const Config cfg = small_config("cartpole", 1000000, 128);
  const EnvProbe probe = probe_env(cfg);
  const MemoryNeedFn need = [&](std::int64_t n) { return train_memory(cfg, probe.memory, probe.spec, n, true); };
  const FreeMemory free{std::int64_t{1} << 30, -1};
  const std::int64_t best = largest_fitting(need, free, false, cfg.env.num_envs);
  ASSERT_GT(best, 0);
  EXPECT_LE(need(best).total(), usable_bytes(free.host));
  EXPECT_GT(need(best + 1).total(), usable_bytes(free.host));
  try {
    check_memory("configs/x.toml: env.num_envs", "num_envs", cfg.env.num_envs, need, free, false);
    FAIL() << "a million CartPoles with 128 steps do not fit in 1 GiB";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    const std::string total = format_bytes(need(cfg.env.num_envs).total());
    for (const std::string& part :
         {"configs/x.toml: env.num_envs = 1000000 needs " + total + " (envs ", std::string(", rollout "),
          std::string(", learner "), std::string(", checkpoint copies "), std::string("); 1.0 GiB of RAM is available"),
          "num_envs <= " + std::to_string(best) + " fits", std::string("train.memory_check = false")})
      EXPECT_NE(msg.find(part), std::string::npos) << "\"" << part << "\" not in: " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos);
  }
  // Nothing fits: the message says so.
  try {
    check_memory("x", "num_envs", 5, need, FreeMemory{1000, -1}, false);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("not even num_envs = 1 fits: at one env the "), std::string::npos)
        << e.what();
  }
  // A rollout too long for any count: the message names what sizes it, not only the count.
  Config long_cfg = cfg;
  long_cfg.ppo.num_steps = 1 << 30;
  long_cfg.ppo.num_minibatches = 1;
  const MemoryNeedFn long_need = [&](std::int64_t n) { return train_memory(long_cfg, probe.memory, probe.spec, n, true); };
  try {
    check_memory("x", "num_envs", 5, long_need, free, false);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("ppo.num_steps"), std::string::npos) << e.what();
  }
}

TEST(MemoryFree, FakeFigureAndRealFigure) {
  const Runtime rt("cpu", 1);
  {
    const ScopedEnvVar fake("RLTRAIN_FREE_MEMORY_BYTES", "123456789");
    EXPECT_EQ(free_memory(rt, world()).host, 123456789);
    EXPECT_EQ(free_memory(rt, world()).device, -1);
  }
  {
    const ScopedEnvVar fake("RLTRAIN_FREE_MEMORY_BYTES", "lots");
    EXPECT_THROW(free_memory(rt, world()), ConfigError);
  }
  const std::int64_t real = free_memory(rt, world()).host;
  EXPECT_GT(real, std::int64_t{16} << 20);  // this machine has some memory free
  EXPECT_LT(real, std::int64_t{1} << 50);   // and it was read, not left unlimited
  Config cfg;
  EXPECT_TRUE(memory_check_enabled(cfg));
  cfg.train.memory_check = false;
  EXPECT_FALSE(memory_check_enabled(cfg));
  const ScopedEnvVar off("RLTRAIN_MEMORY_CHECK", "0");
  EXPECT_FALSE(memory_check_enabled());
}

}  // namespace
}  // namespace rlt
