// Communicator over MPI_COMM_WORLD (rl/distributed.h). Compiled only with -DRLTRAIN_MPI=ON.
#include "rl/distributed_mpi.h"

#include <mpi.h>
#ifdef RLTRAIN_NCCL
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>
#endif

#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <type_traits>

namespace rlt {
namespace {

using Clock = std::chrono::steady_clock;

#ifdef RLTRAIN_NCCL
// NCCL, opened when a job first wants it rather than linked: the library is large (~200 MB) and
// absent from machines that only run single-process GPU work, which must still start.
struct NcclApi {
  ncclResult_t (*get_unique_id)(ncclUniqueId*) = nullptr;
  ncclResult_t (*comm_init_rank)(ncclComm_t*, int, ncclUniqueId, int) = nullptr;
  ncclResult_t (*comm_destroy)(ncclComm_t) = nullptr;
  ncclResult_t (*all_reduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                             cudaStream_t) = nullptr;
  const char* (*error_string)(ncclResult_t) = nullptr;
  std::string why;  // empty when loaded

  static const NcclApi& get() {
    static const NcclApi api = load();
    return api;
  }
  static NcclApi load() {
    NcclApi a;
    void* lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL);
    if (lib == nullptr) lib = dlopen("libnccl.so", RTLD_NOW | RTLD_GLOBAL);
    if (lib == nullptr) {
      a.why = std::string("cannot open libnccl.so.2 (") + dlerror() + ")";
      return a;
    }
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (fn == nullptr && a.why.empty()) a.why = std::string("libnccl has no ") + name;
    };
    sym(a.get_unique_id, "ncclGetUniqueId");
    sym(a.comm_init_rank, "ncclCommInitRank");
    sym(a.comm_destroy, "ncclCommDestroy");
    sym(a.all_reduce, "ncclAllReduce");
    sym(a.error_string, "ncclGetErrorString");
    return a;
  }
};
#endif

double now_seconds() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(double timeout_seconds) : m_timeout(timeout_seconds) {
    int provided = 0;
    // Only the main thread calls MPI; the watchdog never does (it ends the process instead).
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m_size);
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m_rank, MPI_INFO_NULL, &m_local),
          "MPI_Comm_split_type");
    MPI_Comm_set_errhandler(m_local, MPI_ERRORS_RETURN);
    MPI_Comm_rank(m_local, &m_local_rank);
    MPI_Comm_size(m_local, &m_local_size);
    if (m_timeout > 0) m_watchdog = std::thread([this] { watch(); });
  }

  ~MpiCommunicator() override { stop_watchdog(); }

  void finalize() {
    stop_watchdog();
#ifdef RLTRAIN_NCCL
    if (m_nccl != nullptr) NcclApi::get().comm_destroy(m_nccl);
    m_nccl = nullptr;
    for (std::vector<EventPair>* events : {&m_queued_events, &m_free_events})
      for (const EventPair& e : *events) cudaEventDestroy(e.start), cudaEventDestroy(e.stop);
    m_queued_events.clear(), m_free_events.clear();
#endif
    MPI_Comm_free(&m_local);
    MPI_Finalize();
  }

  int rank() const override { return m_rank; }
  int size() const override { return m_size; }
  int local_rank() const override { return m_local_rank; }
  int local_size() const override { return m_local_size; }

  void allreduce_sum(float* x, i64 n) override { allreduce(x, n, MPI_FLOAT); }
  void allreduce_sum(double* x, i64 n) override { allreduce(x, n, MPI_DOUBLE); }

  void broadcast(void* data, i64 bytes, int root) override {
    Timed t(*this, "MPI_Bcast", Counted::kCollective);
    auto* p = static_cast<char*>(data);
    for (i64 off = 0; off < bytes; off += INT_MAX) {
      const int count = static_cast<int>(std::min<i64>(INT_MAX, bytes - off));
      check(MPI_Bcast(p + off, count, MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
    }
  }

  void barrier() override {
    Timed t(*this, "MPI_Barrier", Counted::kCollective);
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  }

  std::vector<std::string> allgather(const std::string& mine) override {
    Timed t(*this, "MPI_Allgatherv", Counted::kCollective);
    std::vector<int> lens(static_cast<size_t>(m_size)), offs(static_cast<size_t>(m_size));
    const int len = checked_int(static_cast<i64>(mine.size()), "MPI_Allgather");
    check(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
    i64 total = 0;
    for (int r = 0; r < m_size; ++r) offs[static_cast<size_t>(r)] = checked_int(total, "MPI_Allgatherv"), total += lens[static_cast<size_t>(r)];
    std::string all(static_cast<size_t>(total), '\0');
    check(MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offs.data(), MPI_CHAR, MPI_COMM_WORLD),
          "MPI_Allgatherv");
    std::vector<std::string> out;
    for (int r = 0; r < m_size; ++r)
      out.push_back(all.substr(static_cast<size_t>(offs[static_cast<size_t>(r)]), static_cast<size_t>(lens[static_cast<size_t>(r)])));
    return out;
  }

  std::vector<std::string> gather(const std::string& mine) override {
    Timed t(*this, "MPI_Gatherv", Counted::kCollective);
    std::vector<int> lens(static_cast<size_t>(m_size)), offs(static_cast<size_t>(m_size));
    const int len = checked_int(static_cast<i64>(mine.size()), "MPI_Gather");
    check(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
    i64 total = 0;
    if (m_rank == 0)
      for (int r = 0; r < m_size; ++r) offs[static_cast<size_t>(r)] = checked_int(total, "MPI_Gatherv"), total += lens[static_cast<size_t>(r)];
    std::string all(static_cast<size_t>(total), '\0');
    check(MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offs.data(), MPI_CHAR, 0, MPI_COMM_WORLD),
          "MPI_Gatherv");
    std::vector<std::string> out;
    if (m_rank == 0)
      for (int r = 0; r < m_size; ++r)
        out.push_back(all.substr(static_cast<size_t>(offs[static_cast<size_t>(r)]), static_cast<size_t>(lens[static_cast<size_t>(r)])));
    return out;
  }

#ifdef RLTRAIN_NCCL
  // NCCL's communicator bootstrapped over MPI: rank 0's unique id broadcast, one GPU per process.
  // Every process learns whether all succeeded (NCCL refuses, e.g., two processes on one GPU).
  std::string enable_device_allreduce(int device) override {
    const NcclApi& nccl = NcclApi::get();
    std::string why = nccl.why;
    if (why.empty() && cudaSetDevice(device) != cudaSuccess) why = "cudaSetDevice(" + std::to_string(device) + ") failed";
    ncclUniqueId id{};
    if (why.empty() && m_rank == 0 && nccl.get_unique_id(&id) != ncclSuccess) why = "ncclGetUniqueId failed";
    // Every process learns whether all can go on before any enters ncclCommInitRank (which waits
    // for all of them).
    double failed = why.empty() ? 0.0 : 1.0;
    allreduce_sum(&failed, 1);
    broadcast(&id, sizeof id, 0);
    ncclComm_t comm = nullptr;
    if (failed == 0) {
      const ncclResult_t r = nccl.comm_init_rank(&comm, m_size, id, m_rank);
      if (r != ncclSuccess) why = std::string("ncclCommInitRank: ") + nccl.error_string(r), comm = nullptr;
      failed = why.empty() ? 0.0 : 1.0;
      allreduce_sum(&failed, 1);
    }
    if (failed > 0) {
      if (comm != nullptr) nccl.comm_destroy(comm);
      return "NCCL " + std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) + " on GPU " +
             std::to_string(device) + ": " + (why.empty() ? "another process's setup failed" : why);
    }
    m_nccl = comm;
    return "";
  }
  bool has_device_allreduce() const override { return m_nccl != nullptr; }
  void device_allreduce_sum(float* x, i64 n, void* stream) override { nccl(x, n, ncclFloat, ncclSum, stream); }
  void device_allreduce_sum(double* x, i64 n, void* stream) override { nccl(x, n, ncclDouble, ncclSum, stream); }
  void device_allreduce_mean(float* x, i64 n, void* stream) override { nccl(x, n, ncclFloat, ncclAvg, stream); }
#endif

 private:
#ifdef RLTRAIN_NCCL
  // Queued on the executor's stream, between two events: what is counted is the time between
  // them on the device (the allreduce from the moment the work before it is done, waiting for the
  // other ranks included), added once the call has run (settle_device_seconds), not the host's
  // time to queue it.
  void nccl(void* x, i64 n, ncclDataType_t type, ncclRedOp_t op, void* stream) {
    const auto s = static_cast<cudaStream_t>(stream);
    const EventPair e = take_events();
    Timed t(*this, "ncclAllReduce", Counted::kByDevice);
    cuda_check(cudaEventRecord(e.start, s), "cudaEventRecord");
    const NcclApi& nccl = NcclApi::get();
    const ncclResult_t r = nccl.all_reduce(x, x, static_cast<size_t>(n), type, op, m_nccl, s);
    if (r != ncclSuccess)
      throw DistributedError("rank " + std::to_string(m_rank) + ": ncclAllReduce failed: " + nccl.error_string(r) +
                             " (another rank of the job died?)");
    cuda_check(cudaEventRecord(e.stop, s), "cudaEventRecord");
    m_queued_events.push_back(e);
  }

  struct EventPair {
    cudaEvent_t start = nullptr, stop = nullptr;
  };
  // A pair for the next call: a used one, or two new events. A run that never reads the counters
  // (training) settles them every kMaxQueued calls, when they have long run.
  EventPair take_events() {
    constexpr size_t kMaxQueued = 1024;
    if (m_queued_events.size() >= kMaxQueued) settle_device_seconds();
    if (!m_free_events.empty()) {
      const EventPair e = m_free_events.back();
      m_free_events.pop_back();
      return e;
    }
    EventPair e;
    cuda_check(cudaEventCreate(&e.start), "cudaEventCreate");
    if (cudaEventCreate(&e.stop) != cudaSuccess) {
      cudaEventDestroy(e.start);
      cuda_check(cudaErrorMemoryAllocation, "cudaEventCreate");
    }
    return e;
  }

  void settle_device_seconds() override {
    for (const EventPair& e : m_queued_events) {
      cuda_check(cudaEventSynchronize(e.stop), "cudaEventSynchronize");
      float ms = 0;
      cuda_check(cudaEventElapsedTime(&ms, e.start, e.stop), "cudaEventElapsedTime");
      m_allreduce_seconds += 1e-3 * ms;
      m_collective_seconds += 1e-3 * ms;
      m_free_events.push_back(e);
    }
    m_queued_events.clear();
  }

  void cuda_check(cudaError_t rc, const char* what) const {
    if (rc != cudaSuccess)
      throw DistributedError("rank " + std::to_string(m_rank) + ": " + what + " failed: " + cudaGetErrorString(rc));
  }

  ncclComm_t m_nccl = nullptr;
  std::vector<EventPair> m_queued_events;  // around the device allreduces not yet counted, oldest first
  std::vector<EventPair> m_free_events;    // counted, for reuse
#endif

  // What a collective's seconds count towards: collectives, collectives and allreduce, or (a device
  // allreduce, queued) neither here: its device time is added by settle_device_seconds.
  enum class Counted { kCollective, kAllreduce, kByDevice };

  // Marks a collective in progress (for the watchdog) and adds its wall time to the counters.
  struct Timed {
    MpiCommunicator& c;
    double t0;
    Counted counted;
    Timed(MpiCommunicator& comm, const char* what, Counted how) : c(comm), t0(now_seconds()), counted(how) {
      c.m_what.store(what);
      c.m_since.store(t0);
    }
    ~Timed() {
      c.m_since.store(-1.0);
      const double dt = now_seconds() - t0;
      if (counted != Counted::kByDevice) c.m_collective_seconds += dt;
      if (counted == Counted::kAllreduce) c.m_allreduce_seconds += dt;
      if (counted != Counted::kCollective) ++c.m_allreduce_calls;
    }
  };

  void allreduce(void* x, i64 n, MPI_Datatype type) {
    Timed t(*this, "MPI_Allreduce", Counted::kAllreduce);
    int size = 0;
    MPI_Type_size(type, &size);
    auto* p = static_cast<char*>(x);
    for (i64 off = 0; off < n; off += INT_MAX) {
      const int count = static_cast<int>(std::min<i64>(INT_MAX, n - off));
      check(MPI_Allreduce(MPI_IN_PLACE, p + off * size, count, type, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    }
  }

  int checked_int(i64 v, const char* what) const {
    if (v > INT_MAX)
      throw DistributedError("rank " + std::to_string(m_rank) + ": " + what + ": " + std::to_string(v) +
                             " bytes is more than one MPI call carries");
    return static_cast<int>(v);
  }

  void check(int rc, const char* what) const {
    if (rc == MPI_SUCCESS) return;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw DistributedError("rank " + std::to_string(m_rank) + ": " + what + " failed: " + std::string(msg, len) +
                           " (another rank of the job died?)");
  }

  // A collective waiting past the timeout: a rank died without the launcher noticing, or hangs.
  // Ends this process (the launcher then stops the job); the run's last checkpoint was written
  // atomically and stays readable.
  void watch() {
    std::unique_lock<std::mutex> lock(m_mutex);
    while (!m_stop) {
      m_cv.wait_for(lock, std::chrono::milliseconds(250));
      const double since = m_since.load();
      if (m_stop || since < 0 || now_seconds() - since < m_timeout) continue;
      std::fprintf(stderr,
                   "rltrain: error: rank %d: no answer from the other ranks for %.0f s in %s: a rank died or hangs; "
                   "stopping the job (the last checkpoint is kept; continue with --resume)\n",
                   m_rank, m_timeout, m_what.load());
      std::fflush(stderr);
      std::_Exit(6);
    }
  }

  void stop_watchdog() {
    if (!m_watchdog.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_stop = true;
    }
    m_cv.notify_all();
    m_watchdog.join();
  }

  int m_rank = 0, m_size = 1, m_local_rank = 0, m_local_size = 1;
  MPI_Comm m_local = MPI_COMM_NULL;
  double m_timeout;
  std::atomic<double> m_since{-1.0};
  std::atomic<const char*> m_what{""};
  std::thread m_watchdog;
  std::mutex m_mutex;
  std::condition_variable m_cv;
  bool m_stop = false;
};

MpiCommunicator* g_mpi = nullptr;

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator(double timeout_seconds) {
  auto c = std::make_unique<MpiCommunicator>(timeout_seconds);
  g_mpi = c.get();
  return c;
}

void mpi_finalize() {
  if (g_mpi) g_mpi->finalize();
  g_mpi = nullptr;
}

void mpi_abort(int exit_code) {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

}  // namespace rlt
