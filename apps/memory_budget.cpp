#include "apps/memory_budget.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include "apps/runtime.h"
#include "envs/registry.h"
#include "kernels/device.h"
#include "rl/distributed.h"
#include "rl/gemm.h"
#include "rl/policy.h"
#include "rl/ppo.h"
#include "sim/placed_env.h"

namespace rlt {
namespace {

constexpr std::int64_t kUnlimited = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMaxCountedEnvs = std::int64_t{1} << 40;

// The first number in a file ("max" or a missing file: kUnlimited).
std::int64_t read_number(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word == "max") return kUnlimited;
  try {
    return static_cast<std::int64_t>(std::stoull(word));
  } catch (const std::exception&) {
    return kUnlimited;
  }
}

// /proc/meminfo's MemAvailable in bytes (kUnlimited when absent).
std::int64_t mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return kib * 1024;
  }
  return kUnlimited;
}

// What a cgroup and every group above it still allow: the lowest limit less usage, kUnlimited without
// a limit. root: the hierarchy's mount, path: the group's path in /proc/self/cgroup. (In a container
// the path may not exist under the mount; the walk then reaches the mount's root, the container's.)
std::int64_t cgroup_room(const std::string& root, std::string path, const char* limit_file, const char* usage_file) {
  std::int64_t room = kUnlimited;
  for (;;) {
    const std::string dir = root + path;
    const std::int64_t limit = read_number(dir + "/" + limit_file);
    if (limit < (std::int64_t{1} << 60))  // v1 writes "no limit" as a huge number, v2 as "max"
      room = std::min(room, limit - std::min(limit, read_number(dir + "/" + usage_file)));
    if (path.empty() || path == "/") return room;
    path = path.substr(0, path.rfind('/'));
  }
}

// What the cgroups this process is in still allow: v2 (memory.max - memory.current) and v1
// (memory.limit_in_bytes - memory.usage_in_bytes), kUnlimited without a limit.
std::int64_t cgroup_room() {
  std::int64_t room = kUnlimited;
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = "," + line.substr(a + 1, b - a - 1) + ",", path = line.substr(b + 1);
    if (line.rfind("0::", 0) == 0)
      room = std::min(room, cgroup_room("/sys/fs/cgroup", path, "memory.max", "memory.current"));
    else if (controllers.find(",memory,") != std::string::npos)
      room =
          std::min(room, cgroup_room("/sys/fs/cgroup/memory", path, "memory.limit_in_bytes", "memory.usage_in_bytes"));
  }
  return room;
}

// RLTRAIN_FREE_MEMORY_BYTES, or -1 when unset.
std::int64_t fake_free_memory() {
  const char* v = std::getenv("RLTRAIN_FREE_MEMORY_BYTES");
  if (v == nullptr || *v == '\0') return -1;
  try {
    size_t used = 0;
    const long long n = std::stoll(v, &used);
    if (used == std::string(v).size() && n >= 0) return n;
  } catch (const std::exception&) {}
  throw ConfigError(std::string("RLTRAIN_FREE_MEMORY_BYTES: expected a number of bytes, got \"") + v + "\"");
}

bool fits(const MemoryNeed& need, const FreeMemory& free, bool cuda) {
  if (!cuda) return need.total() <= usable_bytes(free.host);
  return need.total() - need.host_only() <= usable_bytes(free.device) && need.host_only() <= usable_bytes(free.host);
}

}  // namespace

std::int64_t MemoryNeed::total() const {
  std::int64_t t = 0;
  for (const MemoryPart& p : parts) t += p.bytes;
  return t;
}

std::int64_t MemoryNeed::host_only() const {
  std::int64_t t = 0;
  for (const MemoryPart& p : parts) t += p.host ? p.bytes : 0;
  return t;
}

FreeMemory free_memory(const Runtime& rt, const Communicator& comm) {
  FreeMemory f;
  const std::int64_t fake = fake_free_memory();
  f.host = fake >= 0 ? fake : std::min(mem_available(), cgroup_room());
  if (f.host != kUnlimited) f.host /= std::max(1, comm.local_size());
  if (uses_cuda(rt)) {
    std::int64_t free_b = 0, total_b = 0;
    if (fake >= 0) free_b = fake;
    else if (!cuda_memory_info(rt.gpu(), &free_b, &total_b)) free_b = kUnlimited;  // cannot tell: no check
    // The processes of this machine on this GPU (local rank r takes GPU r modulo the GPUs seen).
    const int gpus = std::max(1, probe_cuda().device_count);
    int sharing = 0;
    for (int r = 0; r < comm.local_size(); ++r) sharing += r % gpus == rt.gpu() ? 1 : 0;
    f.device = free_b == kUnlimited ? free_b : free_b / std::max(1, sharing);
  }
  return f;
}

std::int64_t usable_bytes(std::int64_t free_bytes) {
  if (free_bytes == kUnlimited) return kUnlimited;
  return std::max<std::int64_t>(0, free_bytes - free_bytes / 10 - (std::int64_t{128} << 20));
}

bool memory_check_enabled() {
  const char* v = std::getenv("RLTRAIN_MEMORY_CHECK");
  return v == nullptr || std::string(v) != "0";
}

bool memory_check_enabled(const Config& cfg) { return cfg.train.memory_check && memory_check_enabled(); }

std::string format_bytes(std::int64_t bytes) {
  char buf[48];
  const double b = static_cast<double>(bytes);
  if (b >= 1024.0 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.1f GiB", b / (1024.0 * 1024 * 1024));
  else if (b >= 1024.0 * 1024) std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1024.0 * 1024));
  else if (b >= 1024.0) std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  else std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(bytes));
  return buf;
}

std::int64_t largest_fitting(const MemoryNeedFn& need, const FreeMemory& free, bool cuda, std::int64_t limit) {
  std::int64_t lo = 0, hi = limit;  // need(lo) fits (or lo is 0); the answer is in [lo, hi]
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(need(mid), free, cuda)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

void check_memory(const std::string& what, const std::string& hint, std::int64_t num_envs, const MemoryNeedFn& need,
                  const FreeMemory& free, bool cuda) {
  // Past 2^40 envs the byte counts could overflow; that many never fit anyway.
  const std::int64_t counted = std::min(num_envs, kMaxCountedEnvs);
  const MemoryNeed asked = need(counted);
  if (fits(asked, free, cuda)) return;
  // On CUDA the GPU's part is named unless only the host part is short.
  const bool host_short = !cuda || asked.host_only() > usable_bytes(free.host);
  const bool device_short = cuda && asked.total() - asked.host_only() > usable_bytes(free.device);
  const bool show_device = device_short || !host_short;
  const std::int64_t bytes = !cuda         ? asked.total()
                             : show_device ? asked.total() - asked.host_only()
                                           : asked.host_only();
  const std::int64_t avail = show_device && cuda ? free.device : free.host;
  std::string parts;
  for (const MemoryPart& p : asked.parts)
    if (!cuda || p.host != show_device) parts += (parts.empty() ? "" : ", ") + p.name + " " + format_bytes(p.bytes);
  const std::int64_t best = largest_fitting(need, free, cuda, counted - 1);
  std::ostringstream msg;
  msg << what << " = " << num_envs << " needs " << (counted < num_envs ? "more than " : "") << format_bytes(bytes)
      << (cuda ? show_device ? " of GPU memory" : " of RAM" : "") << " (" << parts << "); " << format_bytes(avail)
      << (cuda && show_device ? " of GPU memory" : " of RAM") << " is available (" << format_bytes(usable_bytes(avail))
      << " usable after the safety margin); ";
  if (best > 0) msg << hint << " <= " << best << " fits";
  else {
    // Not the count, then: name the part that is too large at one env, and what sizes it.
    const MemoryNeed one = need(1);
    const MemoryPart* big = nullptr;
    for (const MemoryPart& p : one.parts)
      if (big == nullptr || p.bytes > big->bytes) big = &p;
    const std::string sized_by = big == nullptr                 ? ""
                                 : big->name == "rollout"       ? " (ppo.num_steps)"
                                 : big->name == "learner"       ? " (policy.hidden, ppo.num_steps / ppo.num_minibatches)"
                                                                : "";
    msg << "not even " << hint << " = 1 fits";
    if (big != nullptr) msg << ": at one env the " << big->name << " alone needs " << format_bytes(big->bytes) << sized_by;
  }
  msg << " (train.memory_check = false or RLTRAIN_MEMORY_CHECK=0 skips this check)";
  throw ConfigError(msg.str());
}

MemoryNeed train_memory(const Config& cfg, const EnvMemory& env, const EnvSpec& spec, std::int64_t num_envs, bool cpu) {
  const Device d = cpu ? Device::kCpu : Device::kCuda;
  return train_memory(cfg, env, spec, num_envs, d, d, false);
}

MemoryNeed train_memory(const Config& cfg, const EnvMemory& env, const EnvSpec& spec, std::int64_t num_envs,
                        Device env_device, Device learner_device, bool placed) {
  // host marks RAM beside a GPU (with no GPU everything is RAM and host keeps its old meaning: the
  // host copies a device run would make too).
  const bool cuda = env_device == Device::kCuda || learner_device == Device::kCuda;
  const bool env_host = cuda && env_device == Device::kCpu, learner_host = cuda && learner_device == Device::kCpu;
  const PolicySpec policy = policy_spec_for(spec, cfg.policy);
  PpoMemory ppo = ppo_memory(policy, cfg, num_envs);
  if (learner_device == Device::kCpu) {  // the CPU gemm's split-k scratch for the largest weight gradient of a minibatch
    const std::int64_t mb = num_envs * cfg.ppo.num_steps / cfg.ppo.num_minibatches;
    const ActorCriticLayout layout(policy);
    std::int64_t scratch = 0;
    for (const MlpShape* mlp : {&layout.actor, &layout.critic})
      for (int l = 0; l < mlp->num_layers(); ++l)
        scratch = std::max(scratch, gemm_scratch_bytes(mlp->layer_in(l), mlp->layer_out(l), mb, sizeof(float)));
    ppo.learner += scratch;
    // Below fp32, also the rounded copies of A and B of the largest gemm (rl/gemm.h): a layer's
    // forward and input gradient over the rollout step's or the minibatch's rows, its weight gradient.
    const GemmPrecision precision = gemm_precision_of(cfg);
    const std::int64_t rows = std::max(num_envs, mb);
    std::int64_t rounding = 0;
    for (const MlpShape* mlp : {&layout.actor, &layout.critic})
      for (int l = 0; l < mlp->num_layers(); ++l) {
        const std::int64_t ni = mlp->layer_in(l), no = mlp->layer_out(l);
        rounding = std::max({rounding, gemm_rounding_bytes(rows, no, ni, precision),
                             gemm_rounding_bytes(rows, ni, no, precision), gemm_rounding_bytes(ni, no, mb, precision)});
      }
    ppo.learner += rounding;
  }
  // (a checkpoint copies the envs' state, not the device's constraint workspace)
  MemoryNeed need{{{"envs", env.bytes(num_envs, env_device == Device::kCuda), env_host},
                   {"rollout", ppo.rollout, learner_host},
                   {"learner", ppo.learner, learner_host},
                   {"checkpoint copies", 2 * env.bytes(num_envs, false), true}}};
  if (placed) {
    const PlacementMemory p = placement_memory(spec, num_envs);
    need.parts.push_back({"env outputs on the learner's device", p.learner, learner_host});
    need.parts.push_back({"placement staging", p.host, true});
  }
  return need;
}

MemoryNeed act_memory(const Config& cfg, const EnvMemory& env, const EnvSpec& spec, std::int64_t num_envs,
                      bool device) {
  return {{{"envs", env.bytes(num_envs, device)},
           {"policy", policy_bytes(policy_spec_for(spec, cfg.policy), num_envs)}}};
}

MemoryNeed act_memory(const Config& cfg, const EnvMemory& env, const EnvSpec& spec, std::int64_t num_envs,
                      Device env_device, Device learner_device, bool placed) {
  const bool cuda = env_device == Device::kCuda || learner_device == Device::kCuda;
  const bool env_host = cuda && env_device == Device::kCpu, learner_host = cuda && learner_device == Device::kCpu;
  MemoryNeed need{{{"envs", env.bytes(num_envs, env_device == Device::kCuda), env_host},
                   {"policy", policy_bytes(policy_spec_for(spec, cfg.policy), num_envs), learner_host}}};
  if (placed) {
    const PlacementMemory p = placement_memory(spec, num_envs);
    need.parts.push_back({"env outputs on the learner's device", p.learner, learner_host});
    need.parts.push_back({"placement staging", p.host, true});
  }
  return need;
}

bool uses_cuda(const Runtime& rt) { return rt.device() == Device::kCuda || rt.env_device() == Device::kCuda; }

EnvProbe probe_env(const Config& cfg, std::int64_t device_threads) {
  const EnvCheck c = check_env_config(cfg);
  EnvProbe p{c.env->memory(), c.env->spec()};
  p.memory.device_slots = device_threads;
  return p;
}

void check_train_memory(const Config& cfg, const Runtime& rt, const Communicator& comm, const std::string& what) {
  if (!memory_check_enabled(cfg)) return;
  const EnvProbe probe = probe_env(cfg, rt.device_threads());
  check_memory(
      what, "num_envs", cfg.env.num_envs,
      [&](std::int64_t n) {
        return train_memory(cfg, probe.memory, probe.spec, n, rt.env_device(), rt.device(), rt.placed());
      },
      free_memory(rt, comm), uses_cuda(rt));
}

}  // namespace rlt
