// Memory before start (issues 18, 22): what a run will allocate, part by part, checked against the
// memory that is free before anything is allocated or written, so that a batch too large for the
// machine stops with one line (exit 2) instead of std::bad_alloc or the kernel's OOM killer.
//
// The parts come from the functions that sit beside the allocations they mirror: an env's
// `VecEnv::memory()` (sim/vec_env.h; made on a one-env probe batch), `physics_batch_memory`
// (envs/physics_batch.h), `ppo_memory` (rl/ppo.h: rollout storage and learner) and `policy_bytes`
// (rl/policy.h). tests/apps/test_memory_budget.cpp measures real allocations against them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "rl/config.h"
#include "sim/vec_env.h"

namespace rlt {

class Communicator;
class Runtime;

struct MemoryPart {
  std::string name;  // "envs", "rollout", "learner", ...
  std::int64_t bytes = 0;
  bool host = false;  // host memory even on CUDA (copies for checkpoints, results read back)
};

// What a run needs for a given number of envs.
struct MemoryNeed {
  std::vector<MemoryPart> parts;
  std::int64_t total() const;      // every part
  std::int64_t host_only() const;  // the parts in host memory even on CUDA
};
using MemoryNeedFn = std::function<MemoryNeed(std::int64_t num_envs)>;

// What this process may use. host: RAM, the lower of /proc/meminfo's MemAvailable and the
// cgroup's limit less its usage (v2 memory.max - memory.current up the hierarchy, v1
// memory.limit_in_bytes - memory.usage_in_bytes). device: when the runtime's envs or learner are on
// CUDA, cudaMemGetInfo's free bytes of its GPU; -1 on the CPU. In a job of several processes (mpirun) each process takes its
// share: RAM divided by the processes on this machine, GPU memory by those on its GPU.
// RLTRAIN_FREE_MEMORY_BYTES=N (a testing aid) replaces both figures with N (before the share).
struct FreeMemory {
  std::int64_t host = 0;
  std::int64_t device = -1;
};
FreeMemory free_memory(const Runtime& rt, const Communicator& comm);

// The safety margin: a run may use what is free less 10% of it and less 128 MiB (what the
// estimate leaves out: the code and libraries, thread stacks, the allocator's slack, the host
// copies of a robot model, the CUDA context and cuBLAS's workspace, other programs' growth).
std::int64_t usable_bytes(std::int64_t free_bytes);

// Whether the check runs: train.memory_check and no RLTRAIN_MEMORY_CHECK=0 in the environment.
bool memory_check_enabled(const Config& cfg);
bool memory_check_enabled();

// Throws ConfigError when need(num_envs) does not fit in `free` on this device:
//   "<what> = <num_envs> needs 212.4 GiB (envs 180.1 GiB, rollout 30.2 GiB, learner 2.1 GiB); 21.3 GiB of RAM
//    is available (19.0 GiB usable after the safety margin); <hint> <= 1003520 fits"
// what names the file and key (or the flag) that asked for num_envs, hint the key in the last clause.
void check_memory(const std::string& what, const std::string& hint, std::int64_t num_envs, const MemoryNeedFn& need,
                  const FreeMemory& free, bool cuda);

// The largest n in [0, limit] for which need(n) fits (0: not even one env); limit <= 2^40.
std::int64_t largest_fitting(const MemoryNeedFn& need, const FreeMemory& free, bool cuda, std::int64_t limit);

// "212.4 GiB", "3.1 MiB", "512 bytes".
std::string format_bytes(std::int64_t bytes);

// What the commands allocate, for n envs of cfg's env (whose per-env bytes are env):
// train: the envs, the rollout storage and the learner (on the CPU with the gemm's split-k scratch,
// rl/gemm.h), and the two host copies of the env state a checkpoint makes (save_state's blobs and
// the tensors written).
MemoryNeed train_memory(const Config& cfg, const EnvMemory& env, const EnvSpec& spec, std::int64_t num_envs, bool cpu);
// The same with the envs and the learner placed apart (issue 18): the envs on env_device, the
// rollout and learner on learner_device, and with placed (a PlacedEnv between them,
// sim/placed_env.h) its learner-side copies of the outputs (learner device) and its host staging.
// Each part is marked host or not by where it lives, so check_memory(..., cuda = either is kCuda)
// counts it against RAM or the GPU's memory.
MemoryNeed train_memory(const Config& cfg, const EnvMemory& env, const EnvSpec& spec, std::int64_t num_envs,
                        Device env_device, Device learner_device, bool placed);
// eval, the viewer: the envs (on a device: with their constraint workspace) and a policy acting on
// all of them.
MemoryNeed act_memory(const Config& cfg, const EnvMemory& env, const EnvSpec& spec, std::int64_t num_envs,
                      bool device);
// The same placed: the envs on env_device, the policy (and a PlacedEnv's copies) on learner_device.
MemoryNeed act_memory(const Config& cfg, const EnvMemory& env, const EnvSpec& spec, std::int64_t num_envs,
                      Device env_device, Device learner_device, bool placed);
// Whether rt uses a GPU at all (the `cuda` argument of check_memory for its needs).
bool uses_cuda(const Runtime& rt);

// What a batch of cfg's env allocates and its spec, from a one-env CPU probe (the sizes do not
// depend on num_envs or the executor; EnvMemory::device_per_slot is what a device adds per
// workspace slot, of which there are at most device_threads: Runtime::device_threads, -1 unknown).
// ConfigError for a bad env name or parameter.
struct EnvProbe {
  EnvMemory memory;
  EnvSpec spec;
};
EnvProbe probe_env(const Config& cfg, std::int64_t device_threads = -1);

// The check of `rltrain train` (and of each process of a job): cfg's envs, rollout and learner on
// rt's devices (the envs on rt.env_device(), the rest on rt.device()). what: where env.num_envs came from ("configs/x.toml: env.num_envs" or
// "--set env.num_envs").
void check_train_memory(const Config& cfg, const Runtime& rt, const Communicator& comm, const std::string& what);

}  // namespace rlt
