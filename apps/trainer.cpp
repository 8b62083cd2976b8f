#include "apps/trainer.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/evaluate.h"  // resolve_checkpoint_path
#include "apps/memory_budget.h"
#include "apps/runtime.h"
#include "apps/tensorboard.h"
#include "rl/checkpoint.h"
#include "rl/distributed.h"
#include "rl/files.h"
#include "sim/mjcf.h"

namespace fs = std::filesystem;

namespace rlt {
namespace {

using Clock = std::chrono::steady_clock;

// SIGINT, SIGTERM, SIGHUP during training: the loop stops at the end of the current iteration,
// writes a checkpoint and the summary, and rltrain exits with kExitInterrupted. A second signal
// more than kRepeatWindowMs after the first takes its default action, so a stuck run can still be
// stopped; one sooner is the same request delivered twice (`timeout` and a terminal's Ctrl-C signal
// the process and then its whole process group) and is ignored. Installed for the loop; the previous
// handlers come back after it, unless a signal stopped the run and the caller is the CLI
// (TrainOptions::keep_stop_handler): then the handler stays until rltrain exits, so that the repeat,
// which can arrive after the checkpoint is written (50 ms later, a short run is done), is still
// ignored rather than killing the process (exit 143 instead of 3).
constexpr std::int64_t kRepeatWindowMs = 2000;
volatile std::sig_atomic_t g_stop_signal = 0;
std::atomic<std::int64_t> g_first_signal_ms{0};
static_assert(std::atomic<std::int64_t>::is_always_lock_free, "the signal handler needs a lock-free clock slot");

std::int64_t monotonic_ms() {  // clock_gettime is async-signal-safe
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

extern "C" void on_stop_signal(int sig) {
  const std::int64_t now = monotonic_ms();
  if (g_stop_signal == 0) {
    g_first_signal_ms.store(now);
    g_stop_signal = sig;
  } else if (now - g_first_signal_ms.load() > kRepeatWindowMs) {
    ::signal(sig, SIG_DFL);
    ::raise(sig);
  }
}

class StopSignals {
 public:
  explicit StopSignals(bool keep_after_stop) : m_keep_after_stop(keep_after_stop) {
    g_stop_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigfillset(&sa.sa_mask);  // one handler at a time
    sa.sa_flags = 0;
    for (int k = 0; k < 3; ++k) ::sigaction(kSignals[k], &sa, &m_old[k]);
  }
  ~StopSignals() {
    if (m_keep_after_stop && g_stop_signal != 0) return;  // the CLI, stopped: keep ignoring the repeat
    for (int k = 0; k < 3; ++k) ::sigaction(kSignals[k], &m_old[k], nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  int caught() const { return g_stop_signal; }

 private:
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction m_old[3];
  bool m_keep_after_stop;
};

const char* signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
}

// Removes what an interrupted write left behind (write_text_atomic's and the checkpoint writer's
// `<file>.tmp.<pid>`) in the run directory and its checkpoints/; returns how many.
int remove_stray_temp_files(const fs::path& dir) {
  int removed = 0;
  for (const fs::path& d : {dir, dir / "checkpoints"}) {
    std::error_code ec;
    if (!fs::is_directory(d, ec)) continue;
    for (const auto& e : fs::directory_iterator(d, ec)) {
      const std::string name = e.path().filename().string();
      if (e.is_regular_file() && name.find(".tmp.") != std::string::npos && fs::remove(e.path(), ec)) ++removed;
    }
  }
  return removed;
}

// metrics.csv's columns, in order; TensorBoard shows each as the scalar <group>/<column>.
struct MetricColumn {
  const char* name;
  const char* group;
  bool integer;  // written without a fraction
};
constexpr MetricColumn kMetricColumns[] = {
    {"iteration", "progress", true},      {"env_steps", "progress", true},
    {"wall_seconds", "progress", false},  {"mean_return", "episode", false},
    {"mean_length", "episode", false},    {"episodes", "episode", true},
    {"policy_loss", "loss", false},       {"value_loss", "loss", false},
    {"entropy", "loss", false},           {"approx_kl", "ppo", false},
    {"clip_frac", "ppo", false},          {"explained_variance", "ppo", false},
    {"learning_rate", "ppo", false},      {"env_steps_per_second", "perf", false},
    {"nonfinite_resets", "health", true}, {"skipped_updates", "health", true}};
constexpr size_t kNumMetrics = sizeof kMetricColumns / sizeof kMetricColumns[0];

std::string metrics_header() {
  std::string h;
  for (const auto& c : kMetricColumns) h += (h.empty() ? "" : ",") + std::string(c.name);
  return h;
}

std::vector<std::string> metric_tags() {
  std::vector<std::string> tags;
  for (const auto& c : kMetricColumns) tags.push_back(std::string(c.group) + "/" + c.name);
  return tags;
}

std::string fmt(double v) {
  if (std::isnan(v)) return "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// One iteration's metrics, in kMetricColumns order. nonfinite_resets: envs reset for a non-finite
// state so far (VecEnv::num_nonfinite_resets); skipped_updates: minibatch updates skipped for a
// non-finite loss or gradient so far.
std::vector<double> metric_values(const IterationStats& st, const TrainProgress& p, double sps,
                                  std::int64_t nonfinite) {
  return {static_cast<double>(st.iteration),
          static_cast<double>(st.env_steps),
          p.wall_seconds,
          p.mean_return(),
          p.mean_length(),
          static_cast<double>(p.episodes),
          st.policy_loss,
          st.value_loss,
          st.entropy,
          st.approx_kl,
          st.clip_frac,
          st.explained_variance,
          st.learning_rate,
          sps,
          static_cast<double>(nonfinite),
          static_cast<double>(p.skipped_updates)};
}

std::string metrics_row(const std::vector<double>& values) {
  std::string row;
  for (size_t k = 0; k < kNumMetrics; ++k) {
    if (k > 0) row += ',';
    row += kMetricColumns[k].integer ? std::to_string(static_cast<long long>(values[k])) : fmt(values[k]);
  }
  return row;
}

std::string default_run_dir(const Config& cfg) {
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return "runs/" + cfg.env.name + "-s" + std::to_string(cfg.train.seed) + "-" + stamp;
}

std::string human(double v) {
  char buf[32];
  if (v >= 1e9) std::snprintf(buf, sizeof buf, "%.2fG", v / 1e9);
  else if (v >= 1e6) std::snprintf(buf, sizeof buf, "%.2fM", v / 1e6);
  else if (v >= 1e3) std::snprintf(buf, sizeof buf, "%.1fk", v / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

// Keeps the metrics rows up to `iteration` (the checkpoint's): a resumed run recomputes the rest
// identically, so nothing is lost.
void trim_metrics(const std::string& path, std::int64_t iteration) {
  std::ifstream in(path);
  if (!in) return;
  std::string line, kept, pad;
  bool header = true;
  while (std::getline(in, line)) {
    if (header) {
      // A run written before columns were added: the new header, and empty cells in its old rows.
      const std::string now = metrics_header();
      if (line != now && now.compare(0, line.size() + 1, line + ",") == 0) {
        for (size_t i = line.size(); i < now.size(); ++i) pad += now[i] == ',' ? "," : "";
        line = now;
      }
      kept += line + "\n";
      header = false;
      continue;
    }
    if (line.empty()) continue;
    if (std::stoll(line.substr(0, line.find(','))) <= iteration) kept += line + pad + "\n";
  }
  write_text_atomic(path, kept);
}

// The resolved config of a run (TrainOptions over the config file or the run being resumed), checked
// train.init_from's checkpoint (a file, or a run directory's latest), errors naming the key.
Checkpoint read_init_checkpoint(const Config& cfg) {
  const std::string key = cfg.source + ": train.init_from: ";
  try {
    return read_checkpoint(resolve_checkpoint_path(cfg.train.init_from));
  } catch (const CheckpointError& e) {
    throw CheckpointError(key + e.what());
  }
}

// Loads a checkpoint's model (weights; observation, critic and return normalizers with their
// counts: LearnerLoad::kModel) into the learner; a checkpoint of
// another observation or action size, or another network, is refused naming the key, the file and
// the tensor.
void init_policy_from(const Config& cfg, const Checkpoint& ckpt, Learner& learner) {
  try {
    // Same shapes, another function: refused too (the shapes cannot tell).
    if (ckpt.config.policy.activation != cfg.policy.activation)
      throw CheckpointError(ckpt.file.source + ": its policy.activation is \"" + ckpt.config.policy.activation +
                            "\", this run's is \"" + cfg.policy.activation + "\"");
    if (ckpt.config.policy.squash != cfg.policy.squash)
      throw CheckpointError(ckpt.file.source + ": its policy.squash is \"" + ckpt.config.policy.squash +
                            "\", this run's is \"" + cfg.policy.squash + "\"");
    restore_checkpoint(ckpt, learner, LearnerLoad::kModel, nullptr, nullptr);
  } catch (const CheckpointError& e) {
    throw CheckpointError(cfg.source + ": train.init_from: " + e.what());
  }
}

// before anything is written. ckpt_path: the checkpoint to resume from (empty when starting).
Config resolve_train_config(const TrainOptions& opts, std::string& ckpt_path) {
  Config cfg;
  if (!opts.resume_dir.empty()) {
    const std::string saved = (fs::path(opts.resume_dir) / "config.toml").string();
    ckpt_path = (fs::path(opts.resume_dir) / "checkpoints" / "latest.safetensors").string();
    if (!fs::exists(saved)) throw ConfigError(opts.resume_dir + ": not a run directory (no config.toml)");
    if (!fs::exists(ckpt_path)) throw CheckpointError(ckpt_path + ": missing (no checkpoint to resume from)");
    cfg = load_config(saved);
  } else {
    cfg = load_config(opts.config_path);
  }
  const Config before_overrides = cfg;
  bool env_checked = false;
  // policy.squash, the log-std bounds and ppo.bounds_loss_coef are checked against the env's action space with it
  const auto env_bound = [](const std::string& o) {
    for (const char* key : {"env.", "policy.squash", "policy.min_log_std", "policy.max_log_std", "ppo.bounds_loss_coef"})
      if (o.rfind(key, 0) == 0) return true;
    return false;
  };
  for (const auto& o : opts.overrides) {
    // An env name or parameter is checked against the env right away, so a bad one is blamed
    // on the --set that introduced it rather than on the config file; and the file's own [env]
    // first, so that its bad value is not blamed on a --set.
    if (env_bound(o) && !env_checked) {
      check_env_config(cfg);
      env_checked = true;
    }
    apply_override(cfg, o);
    if (env_bound(o)) {
      Config probe = cfg;
      probe.source = "--set " + o;
      check_env_config(probe);
    }
  }
  if (!opts.resume_dir.empty()) {
    // A resumed run keeps its network's function: another activation or squash would load the same
    // weights and silently compute something else (another width or depth fails the checkpoint's
    // shape check instead, naming the tensor).
    const Config& saved = before_overrides;
    const auto keep = [&](const char* key, const std::string& now, const std::string& was) {
      if (now != was)
        throw ConfigError("--resume " + opts.resume_dir + ": " + key + ": the run's policy has \"" + was +
                          "\"; a resumed run keeps its network (start a new run, with train.init_from for its "
                          "weights where the shapes and functions agree)");
    };
    keep("policy.activation", cfg.policy.activation, saved.policy.activation);
    keep("policy.squash", cfg.policy.squash, saved.policy.squash);
  }
  if (opts.seed) cfg.train.seed = *opts.seed;
  // Checked before validate(): a bad flag is the flag's fault, not the config file's. --device
  // places env and learner alike (the config's env_device and learner_device give way to it).
  if (!opts.device.empty()) {
    check_device_flag("--device", opts.device);
    cfg.train.device = opts.device;
    cfg.train.env_device.clear();
    cfg.train.learner_device.clear();
  }
  if (!opts.env_device.empty()) {
    check_device_flag("--env-device", opts.env_device);
    cfg.train.env_device = opts.env_device;
  }
  if (!opts.learner_device.empty()) {
    check_device_flag("--learner-device", opts.learner_device);
    cfg.train.learner_device = opts.learner_device;
  }
  validate(cfg);
  return cfg;
}

// "cuda", or "env cpu, learner cuda" when placed apart (" (copies)" when forced on one device).
std::string placement_text(const Runtime& rt) {
  if (!rt.placed()) return device_name(rt.device());
  return std::string("env ") + device_name(rt.env_device()) + ", learner " + device_name(rt.device()) +
         (rt.env_device() == rt.device() ? " (through the placement copies)" : "");
}

// The run's placement, naming the flag that set a device (else the config key) in errors.
Placement train_placement(const Config& cfg, const TrainOptions& opts) {
  Placement p = config_placement(cfg);
  if (!opts.env_device.empty()) p.env_from = "--env-device";
  else if (!opts.device.empty()) p.env_from = "--device";
  if (!opts.learner_device.empty()) p.learner_from = "--learner-device";
  else if (!opts.device.empty()) p.learner_from = "--device";
  p.force_copies = opts.placement_copies;
  return p;
}

bool holds_run(const fs::path& dir) { return fs::exists(dir / "config.toml") || fs::exists(dir / "metrics.csv"); }

// The run directory with its config written and metrics.csv open for appending (header when new).
bool has_checkpoint(const fs::path& dir) { return fs::exists(dir / "checkpoints" / "latest.safetensors"); }

// A new run may not take a directory that holds one; with --restart it may, when that run left no
// checkpoint (killed before its first): its files are removed first.
void claim_run_dir(const fs::path& dir, bool restart) {
  if (!holds_run(dir)) return;
  if (!restart)
    throw ConfigError(dir.string() + ": already holds a run; use --resume " + dir.string() +
                      (has_checkpoint(dir) ? "" : " (it has no checkpoint: --restart starts it over)") +
                      " or another --run-dir");
  if (has_checkpoint(dir))
    throw ConfigError(dir.string() + ": --restart: the run there has a checkpoint; continue it with --resume " +
                      dir.string() + " (or choose another --run-dir)");
}

std::ofstream open_run_dir(const fs::path& dir, const Config& cfg, bool resuming, bool restart,
                           std::int64_t iteration) {
  const fs::path metrics_path = dir / "metrics.csv";
  remove_stray_temp_files(dir);
  if (!resuming) {
    claim_run_dir(dir, restart);
    if (restart)
      for (const char* f : {"config.toml", "metrics.csv", "summary.json"}) fs::remove(dir / f);
    std::error_code ec;
    fs::create_directories(dir / "checkpoints", ec);
    if (ec) throw ConfigError(dir.string() + ": cannot create (" + ec.message() + ")");
  }
  write_text_atomic((dir / "config.toml").string(), to_toml(cfg));
  if (resuming) trim_metrics(metrics_path.string(), iteration);
  const bool new_metrics = !fs::exists(metrics_path);
  std::ofstream metrics(metrics_path, std::ios::app);
  if (!metrics) throw ConfigError(metrics_path.string() + ": cannot write");
  if (new_metrics) metrics << metrics_header() << "\n" << std::flush;
  return metrics;
}

// The progress line: on a terminal rewritten in place, else one line every 2 s (and the last).
class ProgressPrinter {
 public:
  ProgressPrinter(bool quiet, std::int64_t num_iterations)
      : m_quiet(quiet), m_tty(!quiet && ::isatty(STDERR_FILENO)), m_num_iterations(num_iterations) {}
  void print(std::int64_t it, std::int64_t first, std::int64_t last, const TrainProgress& progress, double sps,
             double elapsed, bool final_it, std::int64_t nonfinite) {
    const auto now = Clock::now();
    if (m_quiet || !(m_tty || final_it || now - m_last > std::chrono::seconds(2))) return;
    const double eta = elapsed / static_cast<double>(it - first + 1) * static_cast<double>(last - it);
    char line[320];
    int len =
        std::snprintf(line, sizeof line, "it %lld/%lld  steps %s  return %.1f  len %.0f  %s steps/s  %.1fs  ETA %.0fs",
                      static_cast<long long>(it), static_cast<long long>(m_num_iterations),
                      human(static_cast<double>(progress.env_steps)).c_str(), progress.mean_return(),
                      progress.mean_length(), human(sps).c_str(), progress.wall_seconds, eta);
    // Non-finite events are shown as soon as there are any (metrics.csv and summary.json count them too).
    if (nonfinite > 0 && len > 0 && len < static_cast<int>(sizeof line))
      len += std::snprintf(line + len, sizeof line - static_cast<size_t>(len), "  nonfinite resets %lld",
                           static_cast<long long>(nonfinite));
    if (progress.skipped_updates > 0 && len > 0 && len < static_cast<int>(sizeof line))
      std::snprintf(line + len, sizeof line - static_cast<size_t>(len), "  skipped updates %lld",
                    static_cast<long long>(progress.skipped_updates));
    if (m_tty) std::fprintf(stderr, "\r%-100s%s", line, final_it ? "\n" : "");
    else std::fprintf(stderr, "%s\n", line);
    m_last = now;
  }

 private:
  bool m_quiet, m_tty;
  std::int64_t m_num_iterations;
  Clock::time_point m_last = Clock::now();
};

void write_summary(const fs::path& dir, const Config& cfg, const Runtime& rt, const TrainProgress& progress,
                   const TrainResult& result, std::int64_t num_iterations, int processes) {
  nlohmann::json s;
  s["env"] = cfg.env.name;
  s["final_mean_return"] =
      std::isnan(result.final_mean_return) ? nlohmann::json(nullptr) : nlohmann::json(result.final_mean_return);
  s["final_mean_length"] =
      std::isnan(progress.mean_length()) ? nlohmann::json(nullptr) : nlohmann::json(progress.mean_length());
  s["episodes"] = progress.episodes;
  s["env_steps"] = result.env_steps;
  s["iterations"] = result.iterations;
  s["wall_seconds"] = result.wall_seconds;
  s["env_steps_per_second"] =
      result.wall_seconds > 0 ? static_cast<double>(result.env_steps) / result.wall_seconds : 0.0;
  s["device"] = device_name(rt.device());  // the learner's
  s["env_device"] = device_name(rt.env_device());
  s["threads"] = rt.cpu_threads();
  s["gemm_precision"] = cfg.ppo.gemm_precision;  // what the policy's GEMMs rounded their inputs to
  s["processes"] = processes;  // ranks of the job (mpirun -np), each with config's num_envs envs
  s["seed"] = cfg.train.seed;
  s["reached_target"] = result.reached_target;
  s["finished"] = result.reached_target || progress.iteration >= num_iterations;
  s["stopped_by"] = result.diverged      ? nlohmann::json("divergence")
                    : result.stop_signal ? nlohmann::json(signal_name(result.stop_signal))
                                         : nlohmann::json(nullptr);
  s["nonfinite_resets"] = result.nonfinite_resets;
  s["skipped_updates"] = progress.skipped_updates;
  s["checkpoint"] = (dir / "checkpoints" / "latest.safetensors").string();
  write_text_atomic((dir / "summary.json").string(), s.dump(2) + "\n");
}

// The facts every process of a job must share, as "key = value" lines (rl/distributed.h
// first_disagreement names the first that differs).
std::string job_fingerprint(const Config& cfg, const Runtime& rt, const VecEnv& env, const Learner& learner,
                            const Checkpoint* ckpt) {
  std::string f = toml_fingerprint_lines(to_toml(cfg));
  f += std::string("device (resolved) = ") + device_name(rt.device()) + "\n";
  f += std::string("env device (resolved) = ") + device_name(rt.env_device()) + "\n";
  const EnvSpec& spec = env.spec();
  f += "env spec = " + spec.name + " obs " + std::to_string(spec.observation.dim) + " act " +
       std::to_string(spec.action.dim) + (spec.action.discrete ? " discrete" : " continuous") + " critic obs " +
       std::to_string(spec.critic_obs_dim) + "\n";
  std::string params;
  for (const auto& p : env.params()) params += p.name + "=" + fmt(p.value) + ";";
  f += "env parameters (hash) = " + fnv1a_hex(params.data(), params.size()) + "\n";
  std::string geoms;  // the env's model as drawn: a robot asset that differs between machines shows here
  for (const DrawGeom& g : env.draw_geoms()) {
    geoms += std::to_string(g.type);
    for (float v : g.size) geoms += "," + fmt(v);
    geoms += ";";
  }
  f += "env model (hash) = " + fnv1a_hex(geoms.data(), geoms.size()) + "\n";
  f += "policy parameter count = " + std::to_string(learner.num_params()) + "\n";
  if (ckpt != nullptr) {
    std::string crcs;
    for (const auto& [k, v] : ckpt->file.metadata)
      if (k.rfind("crc32:", 0) == 0) crcs += v;
    f += "checkpoint (hash) = " + fnv1a_hex(crcs.data(), crcs.size()) + "\n";
  }
  return f;
}

// rltrain's exit code for an exception (as apps/rltrain.cpp maps them).
int exit_code_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const ConfigError&) {
    return 2;
  } catch (const CheckpointError&) {
    return 2;
  } catch (const MjcfError&) {
    return 2;
  } catch (const IoError&) {
    return kExitIo;
  } catch (const std::bad_alloc&) {
    return kExitIo;
  } catch (...) {
    return 1;
  }
}

// Before the first collective of a job: every process says whether it got ready (or the error it
// met) and what it runs. Any error, or any difference, stops every process with one line: printed by
// the lowest rank that failed (or rank 0 for a difference), the others exit with the same code
// silently (JobStopped). A process alone just rethrows its error.
void agree_to_start(Communicator& comm, const std::exception_ptr& error, const std::string& fingerprint) {
  if (comm.size() == 1) {
    if (error) std::rethrow_exception(error);
    return;
  }
  std::string mine = "ok\n" + fingerprint;
  if (error) {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      mine = "error " + std::to_string(exit_code_of(error)) + "\n" + e.what();
    } catch (...) {
      mine = "error 1\nunknown error";
    }
  }
  const std::vector<std::string> all = comm.allgather(mine);
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].rfind("error ", 0) != 0) continue;
    const size_t nl = all[r].find('\n');
    const int code = std::stoi(all[r].substr(6, nl - 6));
    const std::string what = all[r].substr(nl + 1);
    const bool print = static_cast<int>(r) == comm.rank();
    throw JobStopped(code, (r == 0 ? "" : "rank " + std::to_string(r) + ": ") + what, print);
  }
  std::vector<std::string> prints;
  for (const std::string& a : all) prints.push_back(a.substr(3));
  const std::string diff = first_disagreement(prints);
  if (!diff.empty())
    throw JobStopped(2, "the processes of the job differ: " + diff + "; start them all the same way", comm.rank() == 0);
}

}  // namespace

void check_run_dir_free(const TrainOptions& opts) {
  if (opts.resume_dir.empty() && !opts.run_dir.empty()) claim_run_dir(fs::path(opts.run_dir), opts.restart);
}

void print_train_result(const TrainResult& r) {
  std::printf("run dir %s: %lld env steps in %.2f s, ", r.run_dir.c_str(), static_cast<long long>(r.env_steps),
              r.wall_seconds);
  if (std::isfinite(r.final_mean_return))
    std::printf("mean return %.2f over the last episodes%s\n", r.final_mean_return,
                r.reached_target ? " (target reached)" : "");
  else
    std::printf("no episode has finished yet\n");  // the mean over none is NaN
}

TrainResult train(const TrainOptions& opts) {
  // A job of several processes (mpirun -np N, rl/distributed.h): each owns cfg's num_envs envs
  // (envs [rank x num_envs, ...) of the job's), the learners average their gradients, and rank 0
  // alone writes the run directory. One process: comm is SingleProcess and nothing below changes.
  Communicator& comm = world();
  const int world_size = comm.size(), rank = comm.rank();
  const bool lead = rank == 0;  // writes the run directory and prints

  // 1. Everything that can be wrong with the input is checked before anything is written (and,
  // in a job, before the first collective: every process learns of any one's error).
  const bool resuming = !opts.resume_dir.empty();
  std::string ckpt_path;
  Config cfg;
  std::unique_ptr<Runtime> rt_ptr;
  std::unique_ptr<VecEnv> env;
  std::unique_ptr<Learner> learner;
  std::optional<Checkpoint> ckpt;
  std::optional<Checkpoint> init_policy;  // train.init_from's checkpoint, until it is loaded
  std::string fingerprint;
  std::exception_ptr error;
  TrainProgress progress;
  try {
    if (opts.restart && resuming) throw ConfigError("--restart starts a new run: not with --resume");
    cfg = resolve_train_config(opts, ckpt_path);
    rt_ptr = std::make_unique<Runtime>(train_placement(cfg, opts), threads_per_rank(cfg.train.threads, comm),
                                       comm.local_rank());
    // Memory: what the envs, rollout and learner will take, against what is free, before any of it
    // is allocated (each process of a job checks its own share).
    std::string num_envs_key = cfg.source + ": env.num_envs";
    for (const auto& o : opts.overrides)
      if (o.rfind("env.num_envs", 0) == 0) num_envs_key = "--set env.num_envs";
    check_train_memory(cfg, *rt_ptr, comm, num_envs_key);
    env = rt_ptr->make_env(cfg);
    if (world_size > 1) env->set_first_env(static_cast<i64>(rank) * env->num_envs());
    env->reset(cfg.train.seed);
    learner = rt_ptr->make_learner(cfg, *env);
    learner->set_communicator(comm);
    if (resuming) {
      ckpt = read_checkpoint(ckpt_path);
      check_resumable(*ckpt);  // before its (absent) world_size could send a job to one process
      const int saved = checkpoint_world_size(*ckpt);
      if (saved != world_size)
        throw CheckpointError(ckpt_path + ": metadata \"world_size\": the run was trained by " + std::to_string(saved) +
                              (saved == 1 ? " process" : " processes") + ", this call has " +
                              std::to_string(world_size) + "; resume it with " +
                              (saved == 1 ? "one process (no mpirun)" : "mpirun -np " + std::to_string(saved)));
      restore_checkpoint(checkpoint_for_rank(*ckpt, rank), *learner, LearnerLoad::kAll, env.get(), &progress);
    } else {
      // train.init_from: read and tried on the learner here, so that a bad file stops the run before
      // its directory is claimed; loaded for good after start() below.
      if (!cfg.train.init_from.empty()) {
        init_policy = read_init_checkpoint(cfg);
        init_policy_from(cfg, *init_policy, *learner);
      }
      if (lead) claim_run_dir(fs::path(opts.run_dir.empty() ? default_run_dir(cfg) : opts.run_dir), opts.restart);
    }
    if (world_size > 1) fingerprint = job_fingerprint(cfg, *rt_ptr, *env, *learner, ckpt ? &*ckpt : nullptr);
  } catch (...) {
    error = std::current_exception();
  }
  agree_to_start(comm, error, fingerprint);
  ckpt.reset();  // restored: its copy of the env state is not kept through the run
  Runtime& rt = *rt_ptr;
  // GPUs: NCCL averages device buffers where it can (all processes agree), else the host does.
  std::string allreduce_note;
  if (world_size > 1 && rt.device() == Device::kCuda) {
    const std::string why = comm.enable_device_allreduce(rt.gpu());
    allreduce_note = why.empty() ? "allreduce: NCCL" : "allreduce through the host (" + why + ")";
  }
  if (!resuming) learner->start(cfg.train.seed);  // collective in a job (normalizer moments, weights)
  if (init_policy) {
    init_policy_from(cfg, *init_policy, *learner);  // every process reads the same file: the job agrees
    init_policy.reset();
  }
  // A job's iteration takes batch env steps on every process; train.total_env_steps counts them all.
  const std::int64_t batch = learner->batch_size() * world_size;
  const std::int64_t num_iterations = (cfg.train.total_env_steps + batch - 1) / batch;

  // 2. The run directory (rank 0's).
  TrainResult result;
  result.run_dir = resuming ? opts.resume_dir : (opts.run_dir.empty() ? default_run_dir(cfg) : opts.run_dir);
  const fs::path dir(result.run_dir);
  std::ofstream metrics;
  std::optional<TensorBoardWriter> tensorboard;
  if (lead) {
    metrics = open_run_dir(dir, cfg, resuming, opts.restart, progress.iteration);
    // TensorBoard: a new event file per call; a resumed run's starts where the checkpoint left off.
    tensorboard.emplace(dir.string(), resuming ? progress.env_steps : -1);
    tensorboard->add_text(progress.env_steps, "config", "```toml\n" + to_toml(cfg) + "```\n");
  }
  const std::vector<std::string> tags = metric_tags();
  const bool quiet = opts.quiet || !lead;
  if (!quiet) {
    if (!rt.note().empty()) std::fprintf(stderr, "%s\n", rt.note().c_str());
    if (!allreduce_note.empty()) std::fprintf(stderr, "%s\n", allreduce_note.c_str());
    std::string procs;
    if (world_size > 1) procs = std::to_string(world_size) + " processes x ";
    std::fprintf(
        stderr,
        "rltrain train: env %s, %s%lld envs, device %s (%d threads%s), gemm %s, %lld iterations of %lld steps, run dir "
        "%s%s\n",
        cfg.env.name.c_str(), procs.c_str(), static_cast<long long>(env->num_envs()), placement_text(rt).c_str(),
        rt.cpu_threads(), world_size > 1 ? " each" : "", gemm_precision_name(gemm_precision_of(cfg)),
        static_cast<long long>(num_iterations),
        static_cast<long long>(batch), result.run_dir.c_str(), resuming ? " (resumed)" : "");
  }

  // 3. The loop: iterate, record, checkpoint, report; stop at the end or at the target.
  const auto t0 = Clock::now();
  const double wall_before = progress.wall_seconds;
  ProgressPrinter printer(quiet, num_iterations);
  const std::int64_t first = progress.iteration + 1;
  const std::int64_t last =
      opts.max_iterations > 0 ? std::min(num_iterations, progress.iteration + opts.max_iterations) : num_iterations;
  auto last_save = Clock::now();
  std::int64_t saved_iteration = progress.iteration;
  // Collective in a job: every process's env state goes to rank 0, which writes the file.
  auto checkpoint = [&](std::int64_t it) {
    last_save = Clock::now();
    saved_iteration = it;
    std::vector<std::string> others;
    if (world_size > 1) {
      others = comm.gather(pack_process_state(*learner, *env));
      if (lead) others.erase(others.begin());  // rank 0's own state is learner's and env's
    }
    if (!lead) return;
    const std::string latest = (dir / "checkpoints" / "latest.safetensors").string();
    save_checkpoint(latest, cfg, *learner, *env, progress, others);
    if (cfg.train.checkpoint_every > 0 && it % cfg.train.checkpoint_every == 0) {
      char name[64];
      std::snprintf(name, sizeof name, "iter_%06lld.safetensors", static_cast<long long>(it));
      save_checkpoint((dir / "checkpoints" / name).string(), cfg, *learner, *env, progress, others);
    }
  };
  const StopSignals signals(opts.keep_stop_handler);
  const double save_seconds = cfg.train.checkpoint_minutes * 60.0;
  // A write that fails (disk full, a file-size limit) stops the run with what to do next.
  const auto io_hint = [&]() {
    return fs::exists(dir / "checkpoints" / "latest.safetensors")
               ? "; the checkpoint of iteration " + std::to_string(saved_iteration) +
                     " is kept: free space, then --resume " + result.run_dir
               : std::string("; no checkpoint yet: free space, then start over with --restart");
  };
  // An iteration's statistics are read one iteration late where launching only queues the work
  // (train.stats_readback, Learner::launch): iteration it is queued before it - 1's statistics are
  // read, so the host never waits on the device inside the loop. A checkpoint, the last iteration,
  // the target, a stop signal and divergence first read what is pending: what they see and save is
  // iteration it, as with "sync".
  const bool lagged =
      cfg.train.stats_readback == "lagged" || (cfg.train.stats_readback == "auto" && learner->stats_lag() > 0);
  int pending = 0;                  // launched iterations whose statistics are not read yet
  IterationStats latest;            // the last read
  auto read_at = Clock::now();      // when the statistics before them were read (for steps/s)
  double sps = 0;
  // Reads the oldest pending iteration's statistics into the progress, metrics.csv and TensorBoard.
  // Collective in a job (the learner merges episodes; the non-finite resets of all envs are summed).
  const auto read_stats = [&]() {
    IterationStats st = learner->collect();
    --pending;
    const auto now = Clock::now();
    sps = static_cast<double>(batch) / std::max(1e-9, std::chrono::duration<double>(now - read_at).count());
    read_at = now;
    progress.iteration = st.iteration;
    progress.env_steps += batch;
    st.env_steps = progress.env_steps;
    for (size_t k = 0; k < st.finished_returns.size(); ++k)
      progress.add_episode(st.finished_returns[k], st.finished_lengths[k],
                           static_cast<size_t>(cfg.train.eval_episodes));
    // Episodes beyond the window were counted on the device but not copied.
    progress.episodes += st.num_finished - static_cast<std::int64_t>(st.finished_returns.size());
    progress.wall_seconds = wall_before + std::chrono::duration<double>(now - t0).count();
    progress.skipped_updates += st.skipped_updates;
    double nonfinite = static_cast<double>(st.nonfinite_resets);
    if (world_size > 1) comm.allreduce_sum(&nonfinite, 1);
    result.nonfinite_resets = static_cast<std::int64_t>(nonfinite);
    const std::vector<double> values = metric_values(st, progress, sps, result.nonfinite_resets);
    if (lead) {
      metrics << metrics_row(values) << "\n" << std::flush;
      if (!metrics)
        throw IoError((dir / "metrics.csv").string() + ": write failed (disk full or a file-size limit?)" + io_hint());
      try {
        tensorboard->add_scalars(progress.env_steps, tags, values);
      } catch (const IoError& e) {
        throw IoError(e.what() + std::string(" (disk full or a file-size limit?)") + io_hint());
      }
    }
    latest = std::move(st);
  };
  // Divergence: this many non-finite updates in a row stop the run, keeping the last checkpoint
  // (written before the run of skips began, or earlier) and writing no new one.
  const auto diverged = [&]() {
    return cfg.train.max_skipped_updates > 0 && latest.consecutive_skipped >= cfg.train.max_skipped_updates;
  };
  const auto reached = [&]() {
    return cfg.train.stop_at_target &&
           progress.recent_returns.size() >= static_cast<size_t>(cfg.train.eval_episodes) &&
           progress.mean_return() >= cfg.train.target_return;
  };
  for (std::int64_t it = first; it <= last; ++it) {
    learner->launch(it, num_iterations);
    ++pending;
    const bool fresh = pending > 1 || !lagged;
    if (fresh) read_stats();  // it - 1's when lagged, else it's
    // What differs between the processes of a job, agreed on so that all take the same branches
    // below: a stop signal on any, rank 0's clock for a timed checkpoint.
    double shared[2] = {0, 0};
    if (world_size > 1) {
      shared[0] = signals.caught();
      shared[1] = lead && save_seconds > 0 &&
                  std::chrono::duration<double>(Clock::now() - last_save).count() >= save_seconds;
      comm.allreduce_sum(shared, 2);
    }
    result.stop_signal = world_size > 1 ? (shared[0] > 0 ? (signals.caught() ? signals.caught() : SIGTERM) : 0)
                                        : signals.caught();
    const bool due = world_size > 1 ? shared[1] > 0
                                    : save_seconds > 0 &&
                                          std::chrono::duration<double>(Clock::now() - last_save).count() >= save_seconds;
    const bool every = cfg.train.checkpoint_every > 0 && it % cfg.train.checkpoint_every == 0;
    // What it - 1's statistics decided stays decided after it's are read (it's window may dip below
    // the target again, or its update be finite again): the run stops one iteration later than with
    // "sync", never more.
    const bool was_diverged = pending > 0 && diverged(), was_reached = pending > 0 && reached();
    const std::int64_t skip_run = latest.consecutive_skipped;
    if (pending > 0 && (it == last || every || due || result.stop_signal || was_diverged || was_reached)) read_stats();
    if (pending > 0) {  // lagged, nothing to decide: it - 1 was read
      if (fresh)
        printer.print(progress.iteration, first, last, progress, sps,
                      std::chrono::duration<double>(Clock::now() - t0).count(), false, result.nonfinite_resets);
      continue;
    }
    // Iteration it is read.
    if (was_diverged || diverged()) {
      result.diverged = true;
      if (!lead) break;
      printer.print(it, first, last, progress, sps, std::chrono::duration<double>(Clock::now() - t0).count(), true,
                    result.nonfinite_resets);
      std::fprintf(stderr,
                   "rltrain train: diverged: %lld updates in a row had a non-finite loss or gradient (iteration %lld, "
                   "train.max_skipped_updates = %d); stopped, %s\n",
                   static_cast<long long>(std::max(skip_run, latest.consecutive_skipped)), static_cast<long long>(it),
                   cfg.train.max_skipped_updates,
                   fs::exists(dir / "checkpoints" / "latest.safetensors")
                       ? ("keeping the last checkpoint (iteration " + std::to_string(saved_iteration) + ")").c_str()
                       : "before its first checkpoint (start over with --restart)");
      break;
    }
    const bool is_reached = was_reached || reached();
    const bool final_it = it == last || is_reached || result.stop_signal;
    if (every || final_it || due) {
      const auto before = Clock::now();
      checkpoint(it);
      read_at += Clock::now() - before;  // the next steps/s leaves the checkpoint out
    }
    printer.print(it, first, last, progress, sps, std::chrono::duration<double>(Clock::now() - t0).count(), final_it,
                  result.nonfinite_resets);
    if (is_reached) {
      result.reached_target = true;
      break;
    }
    if (result.stop_signal) {
      if (!lead) break;
      std::fprintf(stderr,
                   "rltrain train: stopped by %s after iteration %lld; checkpoint written, continue with "
                   "rltrain train --resume %s\n",
                   signal_name(result.stop_signal), static_cast<long long>(it), result.run_dir.c_str());
      break;
    }
  }
  if (first > last) checkpoint(progress.iteration);  // nothing left to run: still leave a checkpoint

  // 4. Summary.
  result.final_mean_return = progress.mean_return();
  result.env_steps = progress.env_steps;
  result.iterations = progress.iteration;
  result.wall_seconds = progress.wall_seconds;
  if (lead) write_summary(dir, cfg, rt, progress, result, num_iterations, world_size);
  return result;
}

}  // namespace rlt
