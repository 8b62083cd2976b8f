#include "apps/trainer.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/runtime.h"
#include "apps/tensorboard.h"
#include "rl/checkpoint.h"
#include "rl/files.h"

namespace fs = std::filesystem;

namespace rlt {
namespace {

using Clock = std::chrono::steady_clock;

// metrics.csv's columns, in order; TensorBoard shows each as the scalar <group>/<column>.
struct MetricColumn {
  const char* name;
  const char* group;
  bool integer;  // written without a fraction
};
constexpr MetricColumn kMetricColumns[] = {
    {"iteration", "progress", true},     {"env_steps", "progress", true},
    {"wall_seconds", "progress", false}, {"mean_return", "episode", false},
    {"mean_length", "episode", false},   {"episodes", "episode", true},
    {"policy_loss", "loss", false},      {"value_loss", "loss", false},
    {"entropy", "loss", false},          {"approx_kl", "ppo", false},
    {"clip_frac", "ppo", false},         {"explained_variance", "ppo", false},
    {"learning_rate", "ppo", false},     {"env_steps_per_second", "perf", false}};
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

// One iteration's metrics, in kMetricColumns order.
std::vector<double> metric_values(const IterationStats& st, const TrainProgress& p, double sps) {
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
          sps};
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
  std::string line, kept;
  bool header = true;
  while (std::getline(in, line)) {
    if (header) {
      kept += line + "\n";
      header = false;
      continue;
    }
    if (line.empty()) continue;
    if (std::stoll(line.substr(0, line.find(','))) <= iteration) kept += line + "\n";
  }
  write_text_atomic(path, kept);
}

// The resolved config of a run (TrainOptions over the config file or the run being resumed), checked
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
  for (const auto& o : opts.overrides) {
    apply_override(cfg, o);
    // An env name or parameter is checked against the env right away, so a bad one is blamed
    // on the --set that introduced it rather than on the config file.
    if (o.rfind("env.", 0) == 0) {
      Config probe = cfg;
      probe.source = "--set " + o;
      check_env_config(probe);
    }
  }
  if (opts.seed) cfg.train.seed = *opts.seed;
  if (!opts.device.empty()) {
    // Checked before validate(): a bad --device is the flag's fault, not the config file's.
    if (opts.device != "auto" && opts.device != "cpu" && opts.device != "cuda")
      throw ConfigError("--device: expected one of auto, cpu, cuda, got \"" + opts.device + "\"");
    cfg.train.device = opts.device;
  }
  validate(cfg);
  return cfg;
}

bool holds_run(const fs::path& dir) { return fs::exists(dir / "config.toml") || fs::exists(dir / "metrics.csv"); }

// The run directory with its config written and metrics.csv open for appending (header when new).
std::ofstream open_run_dir(const fs::path& dir, const Config& cfg, bool resuming, std::int64_t iteration) {
  const fs::path metrics_path = dir / "metrics.csv";
  if (!resuming) {
    if (holds_run(dir))
      throw ConfigError(dir.string() + ": already holds a run; use --resume " + dir.string() + " or another --run-dir");
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
             double elapsed, bool final_it) {
    const auto now = Clock::now();
    if (m_quiet || !(m_tty || final_it || now - m_last > std::chrono::seconds(2))) return;
    const double eta = elapsed / static_cast<double>(it - first + 1) * static_cast<double>(last - it);
    char line[256];
    std::snprintf(line, sizeof line, "it %lld/%lld  steps %s  return %.1f  len %.0f  %s steps/s  %.1fs  ETA %.0fs",
                  static_cast<long long>(it), static_cast<long long>(m_num_iterations),
                  human(static_cast<double>(progress.env_steps)).c_str(), progress.mean_return(),
                  progress.mean_length(), human(sps).c_str(), progress.wall_seconds, eta);
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
                   const TrainResult& result, std::int64_t num_iterations) {
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
  s["device"] = device_name(rt.device());
  s["threads"] = rt.cpu_threads();
  s["seed"] = cfg.train.seed;
  s["reached_target"] = result.reached_target;
  s["finished"] = result.reached_target || progress.iteration >= num_iterations;
  s["checkpoint"] = (dir / "checkpoints" / "latest.safetensors").string();
  write_text_atomic((dir / "summary.json").string(), s.dump(2) + "\n");
}

}  // namespace

void check_run_dir_free(const TrainOptions& opts) {
  if (opts.resume_dir.empty() && !opts.run_dir.empty() && holds_run(fs::path(opts.run_dir)))
    throw ConfigError(opts.run_dir + ": already holds a run; use --resume " + opts.run_dir + " or another --run-dir");
}

void print_train_result(const TrainResult& r) {
  std::printf("run dir %s: %lld env steps in %.2f s, mean return %.2f over the last episodes%s\n", r.run_dir.c_str(),
              static_cast<long long>(r.env_steps), r.wall_seconds, r.final_mean_return,
              r.reached_target ? " (target reached)" : "");
}

TrainResult train(const TrainOptions& opts) {
  // 1. Everything that can be wrong with the input is checked before anything is written.
  const bool resuming = !opts.resume_dir.empty();
  std::string ckpt_path;
  const Config cfg = resolve_train_config(opts, ckpt_path);
  Runtime rt(cfg.train.device, cfg.train.threads, opts.device.empty() ? cfg.source : "");
  auto env = rt.make_env(cfg);
  env->reset(cfg.train.seed);
  auto learner = rt.make_learner(cfg, *env);
  TrainProgress progress;
  if (resuming) {
    const Checkpoint ckpt = read_checkpoint(ckpt_path);
    restore_checkpoint(ckpt, *learner, false, env.get(), &progress);
  } else {
    learner->start(cfg.train.seed);
  }
  const std::int64_t batch = learner->batch_size();
  const std::int64_t num_iterations = (cfg.train.total_env_steps + batch - 1) / batch;

  // 2. The run directory.
  TrainResult result;
  result.run_dir = resuming ? opts.resume_dir : (opts.run_dir.empty() ? default_run_dir(cfg) : opts.run_dir);
  const fs::path dir(result.run_dir);
  std::ofstream metrics = open_run_dir(dir, cfg, resuming, progress.iteration);
  // TensorBoard: a new event file per call; a resumed run's starts where the checkpoint left off.
  TensorBoardWriter tensorboard(dir.string(), resuming ? progress.env_steps : -1);
  tensorboard.add_text(progress.env_steps, "config", "```toml\n" + to_toml(cfg) + "```\n");
  const std::vector<std::string> tags = metric_tags();
  if (!opts.quiet) {
    if (!rt.note().empty()) std::fprintf(stderr, "%s\n", rt.note().c_str());
    std::fprintf(
        stderr,
        "rltrain train: env %s, %lld envs, device %s (%d threads), %lld iterations of %lld steps, run dir %s%s\n",
        cfg.env.name.c_str(), static_cast<long long>(env->num_envs()), device_name(rt.device()), rt.cpu_threads(),
        static_cast<long long>(num_iterations), static_cast<long long>(batch), result.run_dir.c_str(),
        resuming ? " (resumed)" : "");
  }

  // 3. The loop: iterate, record, checkpoint, report; stop at the end or at the target.
  const auto t0 = Clock::now();
  const double wall_before = progress.wall_seconds;
  ProgressPrinter printer(opts.quiet, num_iterations);
  const std::int64_t first = progress.iteration + 1;
  const std::int64_t last =
      opts.max_iterations > 0 ? std::min(num_iterations, progress.iteration + opts.max_iterations) : num_iterations;
  auto checkpoint = [&](std::int64_t it) {
    const std::string latest = (dir / "checkpoints" / "latest.safetensors").string();
    save_checkpoint(latest, cfg, *learner, *env, progress);
    if (cfg.train.checkpoint_every > 0 && it % cfg.train.checkpoint_every == 0) {
      char name[64];
      std::snprintf(name, sizeof name, "iter_%06lld.safetensors", static_cast<long long>(it));
      save_checkpoint((dir / "checkpoints" / name).string(), cfg, *learner, *env, progress);
    }
  };
  for (std::int64_t it = first; it <= last; ++it) {
    const auto it_start = Clock::now();
    IterationStats st = learner->iterate(it, num_iterations);
    const double it_seconds = std::chrono::duration<double>(Clock::now() - it_start).count();
    progress.iteration = it;
    progress.env_steps += batch;
    st.env_steps = progress.env_steps;
    for (size_t k = 0; k < st.finished_returns.size(); ++k)
      progress.add_episode(st.finished_returns[k], st.finished_lengths[k],
                           static_cast<size_t>(cfg.train.eval_episodes));
    // Episodes beyond the window were counted on the device but not copied.
    progress.episodes += st.num_finished - static_cast<std::int64_t>(st.finished_returns.size());
    progress.wall_seconds = wall_before + std::chrono::duration<double>(Clock::now() - t0).count();
    const double sps = static_cast<double>(batch) / it_seconds;
    const std::vector<double> values = metric_values(st, progress, sps);
    metrics << metrics_row(values) << "\n" << std::flush;
    tensorboard.add_scalars(progress.env_steps, tags, values);
    const bool reached = cfg.train.stop_at_target &&
                         progress.recent_returns.size() >= static_cast<size_t>(cfg.train.eval_episodes) &&
                         progress.mean_return() >= cfg.train.target_return;
    const bool final_it = it == last || reached;
    if ((cfg.train.checkpoint_every > 0 && it % cfg.train.checkpoint_every == 0) || final_it) checkpoint(it);
    printer.print(it, first, last, progress, sps, std::chrono::duration<double>(Clock::now() - t0).count(), final_it);
    if (reached) {
      result.reached_target = true;
      break;
    }
  }
  if (first > last) checkpoint(progress.iteration);  // nothing left to run: still leave a checkpoint

  // 4. Summary.
  result.final_mean_return = progress.mean_return();
  result.env_steps = progress.env_steps;
  result.iterations = progress.iteration;
  result.wall_seconds = progress.wall_seconds;
  write_summary(dir, cfg, rt, progress, result, num_iterations);
  return result;
}

}  // namespace rlt
