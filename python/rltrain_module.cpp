// rltrain._core: the Python extension module (nanobind), a thin layer over apps/ (DESIGN.md D11).
// The pure-Python package (python/rltrain/) builds the Gymnasium vector env, train() and
// load_policy() on these three things:
//   VecEnv   a VecEnv (sim/vec_env.h) made by the Runtime (apps/runtime.h) from a Config, so bad
//            arguments fail with the CLI's messages; its batch buffers as zero-copy views (numpy on
//            the CPU, DLPack-capable ndarrays on CUDA) that keep the env alive
//   Policy   a checkpoint's Policy (rl/policy.h) through make_checkpoint_policy (apps/evaluate.h)
//   train    apps/trainer.h's train() with the GIL released
// Errors: ConfigError, CheckpointError, MjcfError (ValueError) and IoError (OSError) carry the C++
// message unchanged; std::invalid_argument is ValueError, std::out_of_range IndexError.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "apps/evaluate.h"
#include "apps/runtime.h"
#include "apps/trainer.h"
#include "envs/registry.h"
#include "rl/checkpoint.h"
#include "rl/config.h"
#include "rl/files.h"
#include "sim/mjcf.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using rlt::i64;

// A zero-copy view of `shape` elements at `data` in executor memory, kept alive by `owner`: a numpy
// array on the CPU, a DLPack-capable nanobind ndarray on CUDA. Writable, because DLPack consumers
// (torch.from_dlpack) refuse read-only buffers; nothing reads these buffers back into the env.
template <class T>
nb::object view(const T* data, std::initializer_list<size_t> shape, nb::handle owner, rlt::Device device) {
  T* p = const_cast<T*>(data);
  if (device == rlt::Device::kCpu) return nb::cast(nb::ndarray<nb::numpy, T>(p, shape, owner));
  return nb::cast(nb::ndarray<T>(p, shape, owner, {}, nb::dtype<T>(), nb::device::cuda::value, 0));
}

// Flags are 0/1 bytes: viewed as bool, as Gymnasium's terminations and truncations are.
nb::object flag_view(const std::uint8_t* data, i64 n, nb::handle owner, rlt::Device device) {
  return view(reinterpret_cast<const bool*>(data), {static_cast<size_t>(n)}, owner, device);
}

int dlpack_device(rlt::Device d) { return d == rlt::Device::kCuda ? nb::device::cuda::value : nb::device::cpu::value; }

// An array handed in (numpy, or any DLPack producer: torch on the CPU or CUDA) must sit on the
// executor's device, hold `rows` rows of `cols` floats, and be C-contiguous (nanobind converts
// numpy dtypes and layouts; DLPack producers must match).
using FloatIn = nb::ndarray<const float, nb::c_contig>;
void check_input(const FloatIn& a, const char* what, i64 rows, i64 cols, rlt::Device device) {
  if (a.device_type() != dlpack_device(device))
    throw std::invalid_argument(std::string(what) + ": expected an array on the " + rlt::device_name(device) +
                                " device (the env's), got one on another device");
  std::string shape;
  for (size_t k = 0; k < a.ndim(); ++k) shape += (k ? ", " : "") + std::to_string(a.shape(k));
  const bool ok = a.ndim() >= 1 && a.ndim() <= 2 && static_cast<i64>(a.shape(0)) == rows &&
                  static_cast<i64>(a.size()) == rows * cols;
  if (!ok)
    throw std::invalid_argument(std::string(what) + ": expected shape (" + std::to_string(rows) + ", " +
                                std::to_string(cols) + "), got (" + shape + ")");
}

class PyVecEnv {
 public:
  // The env as `rltrain train` makes it from a config whose [env] and [train] hold these values
  // (source "make_vec" in messages).
  PyVecEnv(const std::string& name, i64 num_envs, const std::string& device, int num_threads,
           const std::map<std::string, double>& params) {
    rlt::Config cfg;
    cfg.source = "make_vec";
    cfg.env.name = name;
    cfg.env.num_envs = num_envs;
    cfg.env.params = params;
    cfg.train.device = device;
    cfg.train.threads = num_threads;
    rlt::validate(cfg);
    m_rt = std::make_unique<rlt::Runtime>(device, num_threads, cfg.source);
    m_env = m_rt->make_env(cfg);
  }

  rlt::VecEnv& env() const {
    if (m_closed) throw std::runtime_error("the env is closed");
    return *m_env;
  }
  const rlt::Runtime& runtime() const { return *m_rt; }
  // Refuses further use; the buffers live on until the last view of them is gone (the views own
  // this object), so a view read after close() never reads freed memory.
  void close() { m_closed = true; }
  bool closed() const { return m_closed; }

 private:
  std::unique_ptr<rlt::Runtime> m_rt;
  std::unique_ptr<rlt::VecEnv> m_env;  // destroyed before the Runtime that owns its executor
  bool m_closed = false;
};

class PyPolicy {
 public:
  PyPolicy(const std::string& checkpoint, const std::string& device, int num_threads)
      : m_path(rlt::resolve_checkpoint_path(checkpoint)), m_ckpt(rlt::read_checkpoint(m_path)) {
    m_rt = std::make_unique<rlt::Runtime>(device, num_threads, "load_policy");
    rlt::Config cfg = m_ckpt.config;
    cfg.env.num_envs = 1;
    m_spec = m_rt->make_env(cfg)->spec();
    grow(1);
  }

  const rlt::EnvSpec& spec() const { return m_spec; }
  const std::string& path() const { return m_path; }
  const rlt::Config& config() const { return m_ckpt.config; }
  rlt::Device device() const { return m_rt->device(); }

  // Policy::act on rows observations; the result (executor memory) is valid until the next call.
  const float* act(const float* obs, i64 rows, bool deterministic, std::uint32_t step) {
    if (rows > m_policy->max_rows()) grow(rows);
    return m_policy->act(obs, rows, deterministic, step);
  }

 private:
  // Sampled actions are keyed by row, so a larger batch gets a policy sized for it rather than chunks.
  void grow(i64 rows) { m_policy = rlt::make_checkpoint_policy(*m_rt, m_ckpt.config, m_ckpt, m_spec, rows); }

  std::string m_path;
  rlt::Checkpoint m_ckpt;
  std::unique_ptr<rlt::Runtime> m_rt;
  rlt::EnvSpec m_spec;
  std::unique_ptr<rlt::Policy> m_policy;
};

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "rltrain's C++ core (nanobind); use the rltrain package, not this module";
  nb::exception<rlt::ConfigError>(m, "ConfigError", PyExc_ValueError);
  nb::exception<rlt::CheckpointError>(m, "CheckpointError", PyExc_ValueError);
  nb::exception<rlt::MjcfError>(m, "MjcfError", PyExc_ValueError);
  nb::exception<rlt::IoError>(m, "IoError", PyExc_OSError);

  m.def("env_names", &rlt::env_names, "Names of every registered env (rltrain envs --names)");

  // sim/spaces.h and apps/trainer.h's result, read-only.
  nb::class_<rlt::Space>(m, "Space")
      .def_ro("dim", &rlt::Space::dim)
      .def_ro("discrete", &rlt::Space::discrete)
      .def_ro("num_actions", &rlt::Space::num_actions)
      .def_ro("low", &rlt::Space::low)
      .def_ro("high", &rlt::Space::high)
      .def("__repr__", &rlt::Space::describe);
  nb::class_<rlt::EnvSpec>(m, "EnvSpec")
      .def_ro("name", &rlt::EnvSpec::name)
      .def_ro("observation", &rlt::EnvSpec::observation)
      .def_ro("action", &rlt::EnvSpec::action)
      .def_ro("max_episode_steps", &rlt::EnvSpec::max_episode_steps)
      .def_ro("critic_obs_dim", &rlt::EnvSpec::critic_obs_dim);
  nb::class_<rlt::TrainResult>(m, "TrainResult", "What rltrain.train returns (apps/trainer.h)")
      .def_ro("run_dir", &rlt::TrainResult::run_dir)
      .def_ro("final_mean_return", &rlt::TrainResult::final_mean_return)
      .def_ro("env_steps", &rlt::TrainResult::env_steps)
      .def_ro("iterations", &rlt::TrainResult::iterations)
      .def_ro("wall_seconds", &rlt::TrainResult::wall_seconds)
      .def_ro("reached_target", &rlt::TrainResult::reached_target)
      .def_ro("stop_signal", &rlt::TrainResult::stop_signal)
      .def_ro("diverged", &rlt::TrainResult::diverged)
      .def_ro("nonfinite_resets", &rlt::TrainResult::nonfinite_resets);

  nb::class_<PyVecEnv>(m, "VecEnv")
      .def(nb::init<const std::string&, i64, const std::string&, int, const std::map<std::string, double>&>(),
           "name"_a, "num_envs"_a, "device"_a, "num_threads"_a, "params"_a)
      .def_prop_ro("spec", [](const PyVecEnv& e) { return e.env().spec(); })
      .def_prop_ro("num_envs", [](const PyVecEnv& e) { return e.env().num_envs(); })
      .def_prop_ro("device", [](const PyVecEnv& e) { return std::string(rlt::device_name(e.env().device())); })
      .def_prop_ro("device_note", [](const PyVecEnv& e) { return e.runtime().note(); })
      .def_prop_ro("num_threads", [](const PyVecEnv& e) { return e.runtime().cpu_threads(); })
      .def("params",
           [](const PyVecEnv& e) {
             std::vector<nb::tuple> out;
             for (const auto& p : e.env().params()) out.push_back(nb::make_tuple(p.name, p.value, p.doc));
             return out;
           })
      .def(
          "reset", [](PyVecEnv& e, std::uint64_t seed) { e.env().reset(seed); }, "seed"_a,
          nb::call_guard<nb::gil_scoped_release>())
      .def(
          "step",
          [](PyVecEnv& e, const FloatIn& actions) {
            rlt::VecEnv& env = e.env();
            check_input(actions, "step: actions", env.num_envs(), env.spec().action.dim, env.device());
            nb::gil_scoped_release released;
            env.step(actions.data());
          },
          "actions"_a)
      .def(
          "reset_one", [](PyVecEnv& e, i64 i) { e.env().reset_one(i); }, "env"_a)
      .def(
          "sample_actions",
          [](nb::handle self, std::uint64_t seed, std::uint32_t step) {
            rlt::VecEnv& env = nb::cast<PyVecEnv&>(self).env();
            const float* a;
            {
              nb::gil_scoped_release released;
              a = env.sample_actions(seed, step);
            }
            return view(a, {static_cast<size_t>(env.num_envs()), static_cast<size_t>(env.spec().action.dim)}, self,
                        env.device());
          },
          "seed"_a, "step"_a)
      .def("num_nonfinite_resets", [](const PyVecEnv& e) { return e.env().num_nonfinite_resets(); })
      .def("close", &PyVecEnv::close)
      .def_prop_ro("closed", &PyVecEnv::closed)
      // Views of the batch buffers (valid, and changing, until the env is closed; the Python layer
      // documents them as valid until the next step). address(): the obs buffer's address.
      .def("views",
           [](nb::handle self) {
             const rlt::VecEnv& env = nb::cast<const PyVecEnv&>(self).env();
             const auto n = static_cast<size_t>(env.num_envs());
             const auto od = static_cast<size_t>(env.spec().observation.dim);
             const auto cd = static_cast<size_t>(env.spec().critic_obs_dim);
             const rlt::Device dev = env.device();
             nb::dict v;
             v["obs"] = view(env.obs(), {n, od}, self, dev);
             v["final_obs"] = view(env.final_obs(), {n, od}, self, dev);
             v["reward"] = view(env.reward(), {n}, self, dev);
             v["terminated"] = flag_view(env.terminated(), env.num_envs(), self, dev);
             v["truncated"] = flag_view(env.truncated(), env.num_envs(), self, dev);
             v["ep_return"] = view(env.ep_return(), {n}, self, dev);
             v["ep_length"] = view(env.ep_length(), {n}, self, dev);
             if (env.ep_forward_speed()) v["ep_forward_speed"] = view(env.ep_forward_speed(), {n}, self, dev);
             if (env.critic_obs()) {
               v["critic_obs"] = view(env.critic_obs(), {n, cd}, self, dev);
               v["final_critic_obs"] = view(env.final_critic_obs(), {n, cd}, self, dev);
             }
             return v;
           })
      .def("obs_address",
           [](const PyVecEnv& e) { return reinterpret_cast<std::uintptr_t>(static_cast<const void*>(e.env().obs())); });

  nb::class_<PyPolicy>(m, "Policy")
      .def(nb::init<const std::string&, const std::string&, int>(), "checkpoint"_a, "device"_a, "num_threads"_a)
      .def_prop_ro("spec", [](const PyPolicy& p) { return p.spec(); })
      .def_prop_ro("path", &PyPolicy::path)
      .def_prop_ro("device", [](const PyPolicy& p) { return std::string(rlt::device_name(p.device())); })
      .def_prop_ro("config_toml", [](const PyPolicy& p) { return rlt::to_toml(p.config()); })
      .def(
          "act",
          [](nb::handle self, const FloatIn& obs, bool deterministic, std::uint32_t step) {
            PyPolicy& p = nb::cast<PyPolicy&>(self);
            const i64 rows = obs.ndim() >= 1 ? static_cast<i64>(obs.shape(0)) : 0;
            check_input(obs, "policy: obs", rows, p.spec().observation.dim, p.device());
            if (rows < 1) throw std::invalid_argument("policy: obs: expected at least one row, got none");
            const float* out;
            {
              nb::gil_scoped_release released;
              out = p.act(obs.data(), rows, deterministic, step);
            }
            return view(out, {static_cast<size_t>(rows), static_cast<size_t>(p.spec().action.dim)}, self, p.device());
          },
          "obs"_a, "deterministic"_a, "step"_a);

  m.def(
      "train",
      [](const std::optional<std::string>& config, const std::vector<std::string>& overrides,
         const std::optional<std::string>& run_dir, const std::optional<std::string>& resume,
         std::optional<std::uint64_t> seed, const std::optional<std::string>& device, std::int64_t iterations,
         bool restart, bool quiet) {
        rlt::TrainOptions o;
        o.config_path = config.value_or("");
        o.overrides = overrides;
        o.run_dir = run_dir.value_or("");
        o.resume_dir = resume.value_or("");
        o.seed = seed;
        o.device = device.value_or("");
        o.max_iterations = iterations;
        o.restart = restart;
        o.quiet = quiet;
        nb::gil_scoped_release released;
        return rlt::train(o);
      },
      "config"_a.none(), "overrides"_a, "run_dir"_a.none(), "resume"_a.none(), "seed"_a.none(), "device"_a.none(),
      "iterations"_a, "restart"_a, "quiet"_a);
}
