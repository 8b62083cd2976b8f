#include "rl/distributed.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "rl/config.h"
#include "rl/distributed_mpi.h"

namespace rlt {

void Communicator::allreduce_mean(float* x, i64 n) {
  allreduce_sum(x, n);
  const float inv = 1.0f / static_cast<float>(size());
  for (i64 i = 0; i < n; ++i) x[i] *= inv;
}

void Communicator::device_allreduce_sum(float*, i64, void*) {
  throw DistributedError("device allreduce without NCCL (enable_device_allreduce said why)");
}
void Communicator::device_allreduce_sum(double*, i64, void*) {
  throw DistributedError("device allreduce without NCCL (enable_device_allreduce said why)");
}
void Communicator::device_allreduce_mean(float*, i64, void*) {
  throw DistributedError("device allreduce without NCCL (enable_device_allreduce said why)");
}

namespace {

SingleProcess g_single;
std::unique_ptr<Communicator> g_world;

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0';
}

}  // namespace

bool mpi_built() {
#ifdef RLTRAIN_MPI
  return true;
#else
  return false;
#endif
}

bool launched_by_mpi() {
  return env_set("OMPI_COMM_WORLD_SIZE") || env_set("PMI_SIZE") || env_set("PMIX_RANK") ||
         env_set("MV2_COMM_WORLD_SIZE");
}

Communicator& world() { return g_world ? *g_world : g_single; }

void init_world(bool force, double timeout_seconds) {
  if (g_world) return;
  if (!force && !launched_by_mpi()) return;
#ifdef RLTRAIN_MPI
  g_world = make_mpi_communicator(timeout_seconds);
#else
  (void)timeout_seconds;
  // One line per rank would be N copies of the same words: only the launcher's first rank says it.
  const char* r = std::getenv("OMPI_COMM_WORLD_RANK");
  const bool first = r == nullptr || std::string(r) == "0";
  throw ConfigError(std::string(force ? "--mpi" : "started by mpirun") +
                    ": this rltrain was built without MPI; install Open MPI (tools/setup.sh: openmpi-bin "
                    "libopenmpi-dev) and configure with -DRLTRAIN_MPI=ON" +
                    (first ? "" : " [rank " + std::string(r) + "]"));
#endif
}

void finalize_world() {
#ifdef RLTRAIN_MPI
  if (g_world) mpi_finalize();
#endif
  g_world.reset();
}

void abort_world(const std::string& message, int exit_code) {
  if (!message.empty()) std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
#ifdef RLTRAIN_MPI
  if (g_world) mpi_abort(exit_code);
#endif
  std::_Exit(exit_code);
}

int threads_per_rank(int requested, const Communicator& comm) {
  if (requested > 0 || comm.size() == 1) return requested;
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, cores / std::max(1, comm.local_size()));
}

std::string first_disagreement(const std::vector<std::string>& per_rank_lines) {
  auto split = [](const std::string& s) {
    std::vector<std::string> lines;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
  };
  auto key_of = [](const std::string& line) { return line.substr(0, line.find(" = ")); };
  auto value_of = [](const std::string& line) {
    const size_t eq = line.find(" = ");
    return eq == std::string::npos ? std::string("(absent)") : line.substr(eq + 3);
  };
  if (per_rank_lines.empty()) return "";
  const std::vector<std::string> ref = split(per_rank_lines[0]);
  for (size_t r = 1; r < per_rank_lines.size(); ++r) {
    const std::vector<std::string> mine = split(per_rank_lines[r]);
    const size_t n = std::max(ref.size(), mine.size());
    for (size_t k = 0; k < n; ++k) {
      const std::string a = k < ref.size() ? ref[k] : "", b = k < mine.size() ? mine[k] : "";
      if (a == b) continue;
      const std::string key = key_of(b.empty() ? a : b);
      // Same key, other value; or one rank has a key the other lacks (a line only on one side).
      const std::string vb = b.empty() || key_of(b) != key ? "(absent)" : value_of(b);
      const std::string va = a.empty() || key_of(a) != key ? "(absent)" : value_of(a);
      return "rank " + std::to_string(r) + " disagrees with rank 0 on " + key + ": " + vb + " (rank 0: " + va + ")";
    }
  }
  return "";
}

std::string toml_fingerprint_lines(const std::string& toml) {
  std::istringstream in(toml);
  std::string section, out;
  for (std::string line; std::getline(in, line);) {
    const size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos || line[b] == '#') continue;
    line = line.substr(b);
    if (line[0] == '[') {
      section = line.substr(1, line.find(']') - 1);
      continue;
    }
    // A trailing comment (a '#' outside a quoted string) is not part of the value.
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '"' && (i == 0 || line[i - 1] != '\\')) quoted = !quoted;
      if (line[i] == '#' && !quoted) {
        line = line.substr(0, line.find_last_not_of(" \t", i - 1) + 1);
        break;
      }
    }
    out += (section.empty() ? "" : section + ".") + line + "\n";
  }
  return out;
}

std::string fnv1a_hex(const void* data, size_t bytes) {
  std::uint64_t h = 1469598103934665603ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace rlt
