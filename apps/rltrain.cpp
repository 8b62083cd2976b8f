// rltrain: one binary, subcommands train | eval | export | bench | envs | rollout | inspect | view (DESIGN.md D8).
// Exit codes: 0 success, 2 bad input (config, flag, checkpoint, MJCF model, a run too large for free
// memory: apps/memory_budget.h), 1 anything else.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <iostream>
#include <memory>
#include <new>
#include <sstream>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "apps/bench.h"
#include "apps/evaluate.h"
#include "apps/export.h"
#include "apps/inspect.h"
#include "apps/rollout.h"
#include "apps/runtime.h"
#include "apps/trainer.h"
#include "envs/registry.h"
#include "rl/checkpoint.h"
#include "rl/distributed.h"
#include "rl/files.h"
#include "sim/mjcf.h"
#include "viewer/viewer.h"  // ViewOptions (plain C++); run_view only with RLTRAIN_WITH_VIEWER
#if defined(RLTRAIN_WITH_VIEWER)
#include "apps/view.h"
#endif

namespace {

std::vector<std::int64_t> parse_int_list(const std::string& text, const std::string& flag) {
  std::vector<std::int64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      const long long v = std::stoll(item, &used);
      if (used != item.size() || v < 1) throw std::invalid_argument(item);
      out.push_back(v);
    } catch (const std::exception&) {
      throw rlt::ConfigError(flag + ": expected a comma-separated list of positive integers, got \"" + text + "\"");
    }
  }
  if (out.empty()) throw rlt::ConfigError(flag + ": expected a comma-separated list of positive integers, got \"\"");
  return out;
}

int list_envs(bool names_only) {
  rlt::CpuExecutor exec(1);
  for (const auto& name : rlt::env_names()) {
    if (names_only) {
      std::printf("%s\n", name.c_str());
      continue;
    }
    std::unique_ptr<rlt::VecEnv> env;
    try {
      env = rlt::make_vec_env(name, 1, exec);
    } catch (const std::exception& e) {  // a robot task whose asset does not load in this build
      std::printf("%s\n  unavailable: %s\n", name.c_str(), e.what());
      continue;
    }
    const auto& s = env->spec();
    std::printf("%s\n  observation: %s\n  action:      %s\n  max_episode_steps: %d\n  params:", name.c_str(),
                s.observation.describe().c_str(), s.action.describe().c_str(), s.max_episode_steps);
    for (const auto& p : env->params()) std::printf(" %s=%g", p.name.c_str(), p.value);
    std::printf("\n");
  }
  return 0;
}

// One subcommand: its CLI options (registered on the app) and what runs when it is chosen.
struct Command {
  CLI::App* sub = nullptr;
  std::function<int()> run;
};

#if !defined(RLTRAIN_WITH_VIEWER)
[[noreturn]] void no_viewer(const char* what) {
  throw rlt::ConfigError(std::string(what) +
                         ": this rltrain was built without the viewer (install libglfw3-dev and libimgui-dev, "
                         "e.g. with tools/setup.sh, and reconfigure with -DRLTRAIN_VIEWER=AUTO or ON)");
}
#endif

// Several processes (mpirun, rl/distributed.h): set by the subcommands' flags, read by main before
// the command runs.
bool g_force_mpi = false;      // bench --mpi
double g_mpi_timeout = 300.0;  // --mpi-timeout

// An integer option's value within [lo, hi]. CLI11 (2.1) saturates a number beyond its type's range
// (99999999999999999999 became INT64_MAX: a run that never ends) instead of refusing it; this
// check reads the text itself, before CLI11 converts it.
template <class T>
CLI::Validator integer_in(T lo, T hi = std::numeric_limits<T>::max()) {
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        const char* s = text.c_str();
        char* end = nullptr;
        errno = 0;
        long double v = 0;
        if (text.find('-') != std::string::npos) v = static_cast<long double>(std::strtoll(s, &end, 10));
        else v = static_cast<long double>(std::strtoull(s, &end, 10));
        if (text.empty() || end == s || *end != '\0') return "expected an integer in " + range + ", got \"" + text + "\"";
        if (errno == ERANGE || v < static_cast<long double>(lo) || v > static_cast<long double>(hi))
          return "expected an integer in " + range + ", got " + text;
        return std::string();
      },
      "INT in " + range);
}
// Worker threads a CPU pool may have (train.threads, --threads): more is a typo, not a machine.
constexpr int kMaxThreads = 1024;

void add_mpi_timeout(CLI::App* sub) {
  sub->add_option("--mpi-timeout", g_mpi_timeout,
                  "Under mpirun: seconds a collective may wait for the other processes before the job is stopped "
                  "(a dead or hung process; 0: wait forever)")
      ->check(CLI::NonNegativeNumber);
}

Command add_train(CLI::App& app) {
  struct Opts {
    rlt::TrainOptions train;
    std::uint64_t seed = 0;
    bool view = false;
    std::int64_t view_every = 10;
    rlt::ViewOptions view_opts;
  };
  auto o = std::make_shared<Opts>();
  auto* t = app.add_subcommand("train", "Train PPO on a config; writes a run directory");
  auto* t_config = t->add_option("--config", o->train.config_path, "Config TOML (e.g. configs/cartpole.toml)");
  t->add_option("--set", o->train.overrides, "Override a config key: section.key=value (repeatable)")->take_all();
  t->add_option("--device", o->train.device,
                "auto | cpu | cuda, envs and learner alike (default: the config's train.device)");
  t->add_option("--env-device", o->train.env_device,
                "auto | cpu | cuda: where the envs step (default: --device, else train.env_device)");
  t->add_option("--learner-device", o->train.learner_device,
                "auto | cpu | cuda: where the learner runs (default: --device, else train.learner_device)");
  t->add_flag("--placement-copies", o->train.placement_copies,
              "Step the envs through the cross-device copies even on the learner's device (tests, measurement)");
  auto* t_seed = t->add_option("--seed", o->seed, "Seed (overrides train.seed)")->check(integer_in<std::uint64_t>(0));
  t->add_option("--run-dir", o->train.run_dir, "Run directory (default runs/<env>-s<seed>-<time>)");
  auto* t_resume = t->add_option("--resume", o->train.resume_dir, "Continue the run in this directory exactly");
  t->add_option("--iterations", o->train.max_iterations,
                "Stop after this many iterations in this call (0: run to the end)")
      ->check(integer_in<std::int64_t>(0));
  t->add_flag("--quiet", o->train.quiet, "No progress output");
  auto* t_restart = t->add_flag("--restart", o->train.restart,
                                "Start over in --run-dir when the run there stopped before its first checkpoint");
  t_config->excludes(t_resume);
  t_restart->excludes(t_resume);
  add_mpi_timeout(t);
  auto* view_flag = t->add_flag(
      "--view", o->view, "Watch the run live: a viewer window plays the latest checkpoint on its own small CPU batch");
  t->add_option(
       "--view-every", o->view_every,
       "With --view and train.checkpoint_every = 0: write the checkpoint the viewer reloads every N iterations")
      ->needs(view_flag)
      ->check(integer_in<std::int64_t>(1));
  t->add_option("--view-envs", o->view_opts.num_envs, "With --view: envs in the viewer's batch (default 16)")
      ->needs(view_flag)
      ->check(integer_in<std::int64_t>(1));
  t->add_option("--view-out", o->view_opts.out_dir, "With --view: headless, write the viewer's frames here as PNGs")
      ->needs(view_flag);
  t->add_option("--view-frames", o->view_opts.frames, "With --view: frames to show (headless: to write)")
      ->needs(view_flag)
      ->check(integer_in<std::int64_t>(1));
  return {t, [o, t_seed]() {
#if !defined(RLTRAIN_WITH_VIEWER)
            if (o->view) no_viewer("rltrain train --view");
#endif
            if (o->train.config_path.empty() && o->train.resume_dir.empty())
              throw rlt::ConfigError("rltrain train: --config FILE or --resume RUN_DIR is required");
            if (*t_seed) o->train.seed = o->seed;
            o->train.keep_stop_handler = true;  // rltrain exits right after a signal's stop
#if defined(RLTRAIN_WITH_VIEWER)
            if (o->view) {
              if (rlt::world().size() > 1) throw rlt::ConfigError("--view: not under mpirun (one process only)");
              o->view_opts.headless = !o->view_opts.out_dir.empty();
              if (o->view_opts.headless) o->view_opts.width = 480, o->view_opts.height = 270;
              return rlt::run_train_with_view(o->train, o->view_opts, o->view_every);
            }
#endif
            const rlt::TrainResult r = rlt::train(o->train);
            if (rlt::world().rank() == 0) rlt::print_train_result(r);
            return r.diverged ? rlt::kExitDiverged : r.stop_signal ? rlt::kExitInterrupted : 0;
          }};
}

Command add_view(CLI::App& app) {
  struct Opts {
    rlt::ViewOptions view;
    bool no_shadows = false;
  };
  auto o = std::make_shared<Opts>();
  rlt::ViewOptions& view = o->view;
  auto* v = app.add_subcommand("view", "Watch envs (or an MJCF model) in a window, or render frames headless");
  auto* v_config = v->add_option("--config", view.config_path, "Config TOML: the env and its parameters");
  v->add_option("--set", view.overrides, "Override a config key: section.key=value (repeatable)")->take_all();
  v->add_option("--checkpoint", view.checkpoint, "Play this policy (checkpoint file or run directory)");
  auto* v_model =
      v->add_option("--model", view.model_path, "An MJCF model (e.g. envs/assets/ant.xml) instead of an env");
  v->add_option("--num-envs", view.num_envs, "Envs in the batch (default 64, or the config's when smaller)")
      ->check(integer_in<std::int64_t>(1));
  v->add_option("--device", view.device, "auto | cpu | cuda");
  v->add_option("--threads", view.threads, "CPU threads (0: one per core)")->check(integer_in(0, kMaxThreads));
  v->add_option("--seed", view.seed, "Seed of the env resets (as rltrain eval's)")->check(integer_in<std::uint64_t>(0));
  v->add_option("--control", view.control, "policy | random | zero (default: policy with --checkpoint, else random)");
  v->add_flag("--deterministic", view.deterministic, "Play the policy's mode instead of sampling");
  v->add_option("--speed", view.speed, "Env steps per frame (fractions accumulate; 0 pauses)");
  v->add_option("--control-dt", view.control_dt, "With --model: seconds per control step");
  v->add_flag("--headless", view.headless,
              "No window: render offscreen (--frames N with --out DIR and/or --video FILE)");
  v->add_option("--frames", view.frames, "Frames to render (headless: required; window: close after N)")
      ->check(integer_in<std::int64_t>(0));
  v->add_option("--out", view.out_dir,
                "Write frame_NNNNNN.png here (headless: the scene; window: the window with its panel)");
  v->add_option("--video", view.video_path, "Headless: also encode the frames as an MP4 (needs ffmpeg)");
  v->add_flag("--frame-info", view.frame_info,
              "Headless: frame_NNNNNN.json beside each PNG (camera matrix, env origins, obs)");
  v->add_option("--returns", view.returns_path,
                "Write each env's first finished episode return (JSON) and print their mean");
  v->add_option("--width", view.width, "Window / image width in pixels")->check(integer_in(1, 16384));
  v->add_option("--height", view.height, "Window / image height in pixels")->check(integer_in(1, 16384));
  v->add_flag("--no-shadows", o->no_shadows, "Turn the shadow map off");
  v->add_option("--follow", view.follow, "The camera follows this env")->check(integer_in<std::int64_t>(-1));
  v->add_option("--yaw", view.yaw, "Initial camera yaw (rad; -1.571 looks along +y)");
  v->add_option("--pitch", view.pitch, "Initial camera pitch above the horizon (rad)");
  v->add_option("--zoom", view.zoom, "Initial zoom (>1: closer than the automatic framing)");
  v_model->excludes(v_config);
  return {v, [o]() -> int {
#if !defined(RLTRAIN_WITH_VIEWER)
            no_viewer("rltrain view");
#else
            o->view.shadows = !o->no_shadows;
            return rlt::run_view(o->view);
#endif
          }};
}

Command add_eval(CLI::App& app) {
  auto eval = std::make_shared<rlt::EvalOptions>();
  auto* e = app.add_subcommand("eval", "Evaluate a checkpoint: mean and std return");
  e->add_option("--checkpoint", eval->checkpoint, "Checkpoint file or run directory")->required();
  e->add_option("--episodes", eval->episodes, "Episodes to play")->check(integer_in<std::int64_t>(1));
  e->add_flag("--deterministic", eval->deterministic, "Play the distribution's mode instead of sampling");
  e->add_option("--config", eval->config_path,
                "Evaluate on this config's env (the checkpoint's env with other parameters, or see --other-env; the "
                "policy stays the checkpoint's)");
  e->add_flag("--other-env", eval->other_env,
              "With --config: evaluate on its env even where the checkpoint was trained on another one with the "
              "same observation and action sizes (a flat-terrain policy on rough terrain)");
  e->add_option("--seed", eval->seed, "Seed of the evaluation episodes")->check(integer_in<std::uint64_t>(0));
  e->add_option("--device", eval->device, "auto | cpu | cuda, envs and policy alike");
  e->add_option("--env-device", eval->env_device, "auto | cpu | cuda: where the envs step (default: --device)");
  e->add_option("--learner-device", eval->learner_device, "auto | cpu | cuda: where the policy acts (default: --device)");
  e->add_option("--settle-steps", eval->settle_steps,
                "Joystick tasks: the settled tracking figures count the steps this many control steps after a "
                "command change (default 50: 1 s)")
      ->check(integer_in<std::int64_t>(0));
  return {e, [eval]() {
            const rlt::EvalResult r = rlt::evaluate(*eval);
            std::printf("%s: %lld episodes (%s, %s): mean return %.3f, std %.3f, mean length %.1f", r.env.c_str(),
                        static_cast<long long>(r.returns.size()), eval->deterministic ? "deterministic" : "sampled",
                        r.env_device == r.device ? r.device.c_str() : ("env " + r.env_device + ", policy " + r.device).c_str(),
                        r.mean_return, r.std_return, r.mean_length);
            if (!r.forward_speeds.empty()) std::printf(", mean forward speed %.3f m/s", r.mean_forward_speed);
            if (r.has_tracking)
              std::printf("; tracking RMS error: planar velocity %.3f m/s, yaw rate %.3f rad/s (%lld steps); falls %lld of %lld",
                          r.tracking_lin_rms, r.tracking_yaw_rms, static_cast<long long>(r.tracking_steps),
                          static_cast<long long>(r.falls), static_cast<long long>(r.returns.size()));
            if (r.has_tracking)
              std::printf("; settled (%lld+ steps after a command change): planar velocity %.3f m/s, yaw rate %.3f "
                          "rad/s (%lld steps)",
                          static_cast<long long>(eval->settle_steps), r.settled_lin_rms, r.settled_yaw_rms,
                          static_cast<long long>(r.settled_steps));
            std::printf("\n");
            return 0;
          }};
}

Command add_export(CLI::App& app) {
  auto opts = std::make_shared<rlt::ExportOptions>();
  auto* x = app.add_subcommand(
      "export", "Write a checkpoint's deterministic policy as an ONNX model, or its policy file (--format policy)");
  x->add_option("--checkpoint", opts->checkpoint, "Checkpoint file or run directory")->required();
  x->add_option("--out", opts->out,
                "The file to write: onnx, input obs [N, obs_dim] and output action [N, act_dim]; policy, a "
                ".safetensors that eval, view, export and train.init_from take")
      ->required();
  x->add_option("--format", opts->format,
                "onnx (default) | policy: the weights and normalizers without the optimizer and env state "
                "(165 KB for the Go1 against its 1024-env checkpoint's 16.5 MB; not for --resume)");
  return {x, [opts]() {
            const rlt::ExportResult r = rlt::export_checkpoint(*opts);
            if (opts->format == "policy")
              std::printf("%s: %s policy file (obs %d -> action %d) written to %s\n", r.checkpoint.c_str(),
                          r.env.c_str(), r.obs_dim, r.act_dim, opts->out.c_str());
            else
              std::printf("%s: %s policy (obs %d -> action %d, %s) written to %s\n", r.checkpoint.c_str(),
                          r.env.c_str(), r.obs_dim, r.act_dim,
                          r.discrete ? "argmax of the logits" : "the Gaussian's mean", opts->out.c_str());
            return 0;
          }};
}

Command add_envs(CLI::App& app) {
  auto names_only = std::make_shared<bool>(false);
  auto* l = app.add_subcommand("envs", "List environments with their spaces and parameters");
  l->add_flag("--names", *names_only, "Names only, one per line");
  return {l, [names_only]() { return list_envs(*names_only); }};
}

Command add_bench(CLI::App& app) {
  struct Opts {
    rlt::BenchOptions bench;
    std::string env = "cartpole", sizes = "1,256,4096,65536";
    bool no_ppo = false;
  };
  auto o = std::make_shared<Opts>();
  rlt::BenchOptions& bench = o->bench;
  auto* b = app.add_subcommand("bench", "Measure env steps/s, with policy inference, and PPO samples/s");
  auto* b_env = b->add_option("--env", o->env, "Env name, a comma-separated list, or 'all'");
  auto* b_sizes = b->add_option("--num-envs", o->sizes, "Comma-separated batch sizes");
  b->add_option("--steps", bench.steps, "Steps per env per measurement (default: about 16M env steps)")
      ->check(integer_in<std::int64_t>(0));
  b->add_option("--device", bench.device, "auto | cpu | cuda, envs and learner alike");
  b->add_option("--env-device", bench.env_device, "auto | cpu | cuda: where the envs step (default: --device)");
  b->add_option("--learner-device", bench.learner_device,
                "auto | cpu | cuda: where the policy and learner run (default: --device)");
  b->add_flag("--placement-copies", bench.placement_copies,
              "Step the envs through the cross-device copies even on the learner's device (their cost on one device)");
  b->add_option("--threads", bench.threads, "CPU threads (0: one per core)")->check(integer_in(0, kMaxThreads));
  b->add_option("--json", bench.json_path, "Write the results as JSON");
  b->add_option("--config-dir", bench.config_dir, "Where <env>.toml PPO settings are read from");
  auto* b_no_ppo = b->add_flag("--no-ppo", o->no_ppo, "Skip the full PPO iteration measurement");
  b->add_flag("--phases", bench.phases,
              "Also print where the PPO iterations' CPU time goes: env step, policy, advantages, minibatch gather, "
              "forward+backward, Adam, normalizers (CPU learner)")
      ->excludes(b_no_ppo);
  b->add_option("--gemm-precision", bench.gemm_precision,
                "The PPO rows' GEMM precision, fp32 | tf32 | bf16 | fp16 (default: each <env>.toml's "
                "ppo.gemm_precision)")
      ->check(CLI::IsMember({"fp32", "tf32", "bf16", "fp16"}));
  auto* b_mpi = b->add_flag("--mpi", g_force_mpi,
                            "PPO samples/s per process and for the job, and the time in allreduce per iteration "
                            "(implied under mpirun; alone: a job of one process)");
  add_mpi_timeout(b);
  auto* b_model = b->add_option("--model", bench.model_path,
                                "MJCF model: measure physics and control steps/s with random controls instead of envs");
  b->add_option("--control-dt", bench.control_dt,
                "With --model: seconds per control step (a whole number of physics steps)");
  auto* b_lanes = b->add_flag("--lanes", bench.lanes,
                              "With --model: step 8 envs at once in SIMD lanes, constraint rows and solve in slots "
                              "(CPU; MuJoCo Playground's scenes; docs/ARCHITECTURE.md)");
  b_lanes->needs(b_model);
  b_model->excludes(b_env);
  b_model->excludes(b_mpi);
  return {b, [o, b_sizes]() {
            rlt::BenchOptions& bench = o->bench;
            if (!bench.model_path.empty()) {
              bench.num_envs =
                  parse_int_list(b_sizes->count() ? o->sizes : std::string("1,64,1024,16384"), "--num-envs");
              return rlt::run_model_bench(bench);
            }
            bench.num_envs = parse_int_list(o->sizes, "--num-envs");
            if (o->env == "all") bench.envs = rlt::env_names();
            else {
              std::stringstream ss(o->env);
              std::string item;
              while (std::getline(ss, item, ','))
                if (!rlt::env_exists(item))
                  throw rlt::ConfigError("--env: unknown env '" + item + "' (see rltrain envs)");
                else bench.envs.push_back(item);
            }
            bench.ppo = !o->no_ppo;
            if (g_force_mpi || rlt::world().size() > 1) {
              if (!b_sizes->count()) bench.num_envs = {256};
              return rlt::run_mpi_bench(bench);
            }
            return rlt::run_bench(bench);
          }};
}

Command add_rollout(CLI::App& app) {
  auto cmd = std::make_shared<rlt::RolloutCommand>();
  rlt::RolloutOptions& run = cmd->run;
  auto* r = app.add_subcommand("rollout", "Step one env of an MJCF model on the CPU and write its trajectory as CSV");
  r->add_option("--model", run.model_path, "MJCF file (e.g. envs/assets/ant.xml)")->required();
  r->add_option("--steps", run.steps, "Control steps")->required()->check(integer_in<std::int64_t>(0));
  r->add_option("--key", cmd->keys,
                "Start from this keyframe (qpos, qvel, time; its ctrl is held with --ctrl zero); qpos0: the "
                "model's qpos0 at rest. Repeat for a run from each start (--out then needs {key})")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  r->add_option("--ctrl", cmd->ctrls,
                "zero (hold the keyframe's ctrl, or 0) | random (uniform in ctrlrange each control step); "
                "zero,random: a run with each (--out then needs {ctrl})")
      ->delimiter(',')
      ->check(CLI::IsMember({"zero", "random"}));
  r->add_option("--seed", run.seed, "Seed of the random controls")->check(integer_in<std::uint64_t>(0));
  r->add_option("--mocap", run.mocap,
                "CSV of mocap body poses, one row per control step held during it (the last row after the "
                "file ends); header: any of the columns mocap_<body>_x,_y,_z,_qw,_qx,_qy,_qz that the output has");
  r->add_option("--timestep", run.timestep, "Physics step in seconds (default: the model's)")
      ->check(CLI::PositiveNumber);
  r->add_option("--substeps", run.substeps, "Physics steps per control step")->check(integer_in(1, 1 << 20));
  r->add_option("--out", cmd->out,
                "CSV file (default: stdout); {key} and {ctrl} in the name become each run's start and mode");
  r->add_option("--inspect", cmd->inspect,
                "Also write rltrain inspect's JSON at each start to this file ({key} as in --out), from the same "
                "compile");
  r->add_option("--fields", cmd->fields, "With --inspect: only these arrays of its \"model\" (comma-separated)")
      ->delimiter(',');
  return {r, [cmd]() { return rlt::run_rollout(*cmd); }};
}

Command add_inspect(CLI::App& app) {
  auto inspect = std::make_shared<rlt::InspectOptions>();
  auto* i = app.add_subcommand("inspect",
                               "Print an MJCF model as rltrain compiles it, and one forward pass at a state, as JSON");
  i->add_option("--model", inspect->model_path, "MJCF file (e.g. envs/assets/ant.xml)")->required();
  i->add_option("--key", inspect->key, "The forward pass at this keyframe (qpos, qvel, ctrl); default: qpos0 at rest");
  i->add_option("--out", inspect->out_path, "JSON file (default: stdout)");
  i->add_option("--fields", inspect->fields,
                "Only these arrays of \"model\" (comma-separated; default: all, e.g. a robot's meshes)")
      ->delimiter(',');
  return {i, [inspect]() { return rlt::run_inspect(*inspect); }};
}

// Runs the chosen command; bad input (config, flag, checkpoint, model) is exit code 2.
// A process of a job of several (mpirun) names its rank in its error lines, and, when it failed
// alone (g_job_wide_exit false), main stops the whole job rather than leave the others waiting.
bool g_job_wide_exit = true;
std::string rank_prefix() {
  return rlt::world().size() > 1 ? "rank " + std::to_string(rlt::world().rank()) + ": " : "";
}

int run_guarded(const std::function<int()>& run) {
  try {
    return run();
  } catch (const rlt::JobStopped& err) {  // every process of the job stops on it; one says why
    if (err.print()) std::fprintf(stderr, "rltrain: error: %s\n", err.what());
    return err.exit_code();
  } catch (const rlt::ConfigError& err) {
    std::fprintf(stderr, "rltrain: error: %s%s\n", rank_prefix().c_str(), err.what());
    return 2;
  } catch (const rlt::MjcfError& err) {
    std::fprintf(stderr, "rltrain: error: %s%s\n", rank_prefix().c_str(), err.what());
    return 2;
  } catch (const rlt::CheckpointError& err) {
    std::fprintf(stderr, "rltrain: error: %s%s\n", rank_prefix().c_str(), err.what());
    return 2;
  } catch (const rlt::IoError& err) {
    std::fprintf(stderr, "rltrain: error: %s%s\n", rank_prefix().c_str(), err.what());
    return rlt::kExitIo;
  } catch (const rlt::DistributedError& err) {  // a collective failed: another process died
    std::fprintf(stderr, "rltrain: error: %s\n", err.what());
    return rlt::kExitJob;
  } catch (const std::length_error&) {  // a size beyond what a container can hold: memory, as below
    std::fprintf(stderr, "rltrain: error: out of memory (fewer envs, a smaller model or policy, or more memory)\n");
    return rlt::kExitIo;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "rltrain: error: out of memory (fewer envs, a smaller model or policy, or more memory)\n");
    return rlt::kExitIo;
  } catch (const std::exception& err) {
    std::fprintf(stderr, "rltrain: error: %s%s\n", rank_prefix().c_str(), err.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rltrain: GPU-accelerated RL environments and PPO (CPU and CUDA backends)"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Help for every subcommand");
  const Command commands[] = {add_train(app), add_view(app),  add_eval(app),    add_export(app),
                              add_envs(app),  add_bench(app), add_rollout(app), add_inspect(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& err) {
    if (err.get_exit_code() == 0) return app.exit(err);  // --help
    std::fprintf(stderr, "rltrain: error: %s (see rltrain --help)\n", err.what());
    return 2;
  }
  // Under mpirun (or bench --mpi): MPI, before anything else runs. Error lines of a job name the
  // process's rank.
  const int init_code = run_guarded([] {
    rlt::init_world(g_force_mpi, g_mpi_timeout);
    return 0;
  });
  if (init_code != 0) return init_code;
  struct Finalize {
    ~Finalize() { rlt::finalize_world(); }
  } finalize;
  for (const Command& c : commands) {
    if (!*c.sub) continue;
    int code = 0;
    if (rlt::world().size() > 1) {
      g_job_wide_exit = false;
      code = run_guarded([&] {
        try {
          const int rc = c.run();
          g_job_wide_exit = true;  // every process ran to the same end
          return rc;
        } catch (const rlt::JobStopped&) {
          g_job_wide_exit = true;
          throw;
        }
      });
      // A process that failed alone stops the others at once, rather than leaving them waiting.
      if (!g_job_wide_exit) rlt::abort_world("", code != 0 ? code : 1);
    } else {
      code = run_guarded(c.run);
    }
    // Output nobody could receive (a full disk, a closed pipe) is a failure, not a success.
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      std::fprintf(stderr, "rltrain: error: cannot write to standard output (%s)\n", std::strerror(errno));
      return code != 0 ? code : rlt::kExitIo;
    }
    return code;
  }
  return 0;
}
