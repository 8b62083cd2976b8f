// Data-parallel training over several processes (DESIGN.md D10): one process (rank) per device,
// each owning its envs; gradients averaged on the flat parameter buffer once per minibatch, the
// normalizers' and episodes' statistics merged. This is the whole interface the learner and the
// trainer see:
//   SingleProcess      size 1, every collective a no-op: the default, and what a process started
//                      without mpirun gets (the learner then runs exactly the code it ran before).
//   make_mpi_communicator  MPI_COMM_WORLD (rl/distributed_mpi.cpp, only with -DRLTRAIN_MPI=ON).
// Collectives on host memory; exec_allreduce_sum / exec_broadcast take executor memory (the CPU
// executor's is host memory; another executor's is staged through the host).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "sim/common.h"
#include "sim/cpu_executor.h"

namespace rlt {

// A collective that failed or timed out (a rank died or hangs): the job cannot continue.
class DistributedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An error that stops every process of a job together (they all learned of it in one
// collective): the CLI exits with exit_code, and only the process with print set says why, so that
// the job stops with one line.
class JobStopped : public std::runtime_error {
 public:
  JobStopped(int exit_code, const std::string& what, bool print)
      : std::runtime_error(what), m_code(exit_code), m_print(print) {}
  int exit_code() const { return m_code; }
  bool print() const { return m_print; }

 private:
  int m_code;
  bool m_print;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual int local_rank() const = 0;  // rank among the processes on this machine (picks the GPU)
  virtual int local_size() const = 0;  // processes on this machine (shares out the CPU cores)

  // Element-wise sums over all ranks, in place (host memory).
  virtual void allreduce_sum(float* x, i64 n) = 0;
  virtual void allreduce_sum(double* x, i64 n) = 0;
  // x <- the mean of x over all ranks (host memory): the gradient average.
  void allreduce_mean(float* x, i64 n);
  // Rank root's bytes to every rank.
  virtual void broadcast(void* data, i64 bytes, int root) = 0;
  virtual void barrier() = 0;
  // Every rank's string, in rank order, on every rank.
  virtual std::vector<std::string> allgather(const std::string& mine) = 0;
  // Every rank's string on rank 0 (others get an empty vector).
  virtual std::vector<std::string> gather(const std::string& mine) = 0;

  // Device memory (NCCL, built with CUDA, MPI and NCCL): set up for this process's GPU `device`
  // (collective: every process of the job calls it, after choosing its GPU). Returns "" when the
  // device allreduce is ready, else why not (executor memory then goes through the host).
  virtual std::string enable_device_allreduce(int device) {
    (void)device;
    return "this rltrain was built without NCCL";
  }
  virtual bool has_device_allreduce() const { return false; }
  // In place on device memory, queued on `stream` (a cudaStream_t) after the work queued there.
  virtual void device_allreduce_sum(float* x, i64 n, void* stream);
  virtual void device_allreduce_sum(double* x, i64 n, void* stream);
  virtual void device_allreduce_mean(float* x, i64 n, void* stream);

  // Wall seconds spent in collectives so far (allreduce included), and in allreduce alone. A device
  // allreduce is queued on a stream and counts the time it ran on the device (from the end of the
  // work queued before it, so waiting for the other ranks is included, as in MPI's) once it has
  // run: read these after synchronizing the stream, else they wait for the queued calls to finish.
  double collective_seconds() {
    settle_device_seconds();
    return m_collective_seconds;
  }
  double allreduce_seconds() {
    settle_device_seconds();
    return m_allreduce_seconds;
  }
  i64 allreduce_calls() const { return m_allreduce_calls; }

 protected:
  // Adds the device time of the queued device allreduces to the counters (waits for them).
  virtual void settle_device_seconds() {}

  double m_collective_seconds = 0, m_allreduce_seconds = 0;
  i64 m_allreduce_calls = 0;
};

class SingleProcess final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  void allreduce_sum(float*, i64) override {}
  void allreduce_sum(double*, i64) override {}
  void broadcast(void*, i64, int) override {}
  void barrier() override {}
  std::vector<std::string> allgather(const std::string& mine) override { return {mine}; }
  std::vector<std::string> gather(const std::string& mine) override { return {mine}; }
};

// Whether this build has the MPI communicator, and whether this process was started by an MPI
// launcher (mpirun/mpiexec/srun set OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK).
bool mpi_built();
bool launched_by_mpi();

// The process's communicator: SingleProcess until init_world() makes it MPI's.
Communicator& world();
// With MPI built: initializes MPI when launched by an MPI launcher or when force is set
// (`rltrain bench --mpi` alone is then a job of one rank). Without MPI built, launched by mpirun:
// ConfigError saying how to build it. timeout_seconds: how long a collective may wait for the
// other ranks before the job is stopped (a dead or hung rank). Finalized by finalize_world().
void init_world(bool force, double timeout_seconds);
void finalize_world();
// Stops every rank of the job at once (MPI_Abort), after printing message; exits when size is 1.
[[noreturn]] void abort_world(const std::string& message, int exit_code);

// CPU threads for one rank when the user asked for `requested` (0: share this machine's cores
// among its ranks, at least one each).
int threads_per_rank(int requested, const Communicator& comm);

// The facts every rank must agree on before training, as "key = value" lines (key: what a user
// changes to fix it). Returns "" when all ranks' lines match, else one line naming the first
// difference: "rank 1 disagrees with rank 0 on train.seed: 2 (rank 0: 1)".
std::string first_disagreement(const std::vector<std::string>& per_rank_lines);
// The config as "section.key = value" lines (from its TOML), for the fingerprint.
std::string toml_fingerprint_lines(const std::string& toml);
// FNV-1a 64 of bytes, as 16 hex digits.
std::string fnv1a_hex(const void* data, size_t bytes);

// Executor-memory collectives: the CPU executor's memory is the host's; another executor's (CUDA)
// goes to NCCL on the executor's stream when the communicator has it, else through the host.
template <class Exec, class T>
void exec_allreduce_sum(const Exec& exec, Communicator& comm, T* x, i64 n) {
  if (comm.size() == 1 || n <= 0) return;
  if constexpr (std::is_same_v<Exec, CpuExecutor>) {
    (void)exec;
    comm.allreduce_sum(x, n);
  } else if (comm.has_device_allreduce()) {
    comm.device_allreduce_sum(x, n, static_cast<void*>(exec.stream()));
  } else {
    std::vector<T> h(static_cast<size_t>(n));
    exec.copy_to_host(h.data(), x, n);
    comm.allreduce_sum(h.data(), n);
    exec.copy_from_host(x, h.data(), n);
  }
}

template <class Exec>
void exec_allreduce_mean(const Exec& exec, Communicator& comm, float* x, i64 n) {
  if (comm.size() == 1 || n <= 0) return;
  if constexpr (std::is_same_v<Exec, CpuExecutor>) {
    (void)exec;
    comm.allreduce_mean(x, n);
  } else if (comm.has_device_allreduce()) {
    comm.device_allreduce_mean(x, n, static_cast<void*>(exec.stream()));
  } else {
    std::vector<float> h(static_cast<size_t>(n));
    exec.copy_to_host(h.data(), x, n);
    comm.allreduce_mean(h.data(), n);
    exec.copy_from_host(x, h.data(), n);
  }
}

template <class Exec, class T>
void exec_broadcast(const Exec& exec, Communicator& comm, T* x, i64 n, int root) {
  if (comm.size() == 1 || n <= 0) return;
  if constexpr (std::is_same_v<Exec, CpuExecutor>) {
    (void)exec;
    comm.broadcast(x, n * static_cast<i64>(sizeof(T)), root);
  } else {
    std::vector<T> h(static_cast<size_t>(n));
    exec.copy_to_host(h.data(), x, n);
    comm.broadcast(h.data(), n * static_cast<i64>(sizeof(T)), root);
    exec.copy_from_host(x, h.data(), n);
  }
}

}  // namespace rlt
