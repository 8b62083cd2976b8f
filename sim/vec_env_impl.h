// VecEnvT<Env, Exec>: the VecEnv (sim/vec_env.h) of every env, on either executor. One class
// template and one per-env step/reset path (EnvKernel, below) serve classic-control envs and robot
// tasks alike; what a robot task simulates beyond its own State (an MJCF model, physics rows,
// domain randomization, ...) is the env's World, a component classic envs do not have.
// Instantiated by the env registry (envs/registry_impl.h) once per env and executor: a new env is
// its header and a line in envs/all_envs.h (a robot task also names the translation units that
// compile it, see envs/robot_env.h).
//
// ---- The Env contract (classic control; see envs/cartpole.h for a documented example) ----------
//   static constexpr const char* kName; kObsDim; kActDim; kDiscrete; kNumActions; kMaxEpisodeSteps
//   struct Params { ...; template <class V> void visit(V&& v); };   v(name, field, doc): [env] keys
//   struct State  { ... };                                            plain data, one env
//   static void spaces(const Params&, Space& obs, Space& act);       host
//   RLT_HD static void reset(const Params&, State&, Philox& rng);    (State value-initialized before)
//   RLT_HD static void step(const Params&, State&, const float* action, Philox& rng,
//                           float& reward, bool& terminated);        action as given (no clipping)
//   RLT_HD static void observe(const Params&, const State&, float* obs);
// Optional, SIMD lanes (sim/lanes.h; detected): an env that declares
//   static constexpr bool kStepsInLanes = true;
// has `template <class F> struct StateT` of F fields only (State = StateT<float>) and step/observe
// as templates over the float type F: step(const Params&, StateT<F>&, const F* action, Rng&,
// F& reward, MaskOf<F>& terminated), observe(const Params&, const StateT<F>&, F* obs). On the CPU
// executor kLanes envs then step at once (F = f32xL, Rng = NoRandom: such a step draws no random
// numbers); the CUDA executor and the batch's last envs run F = float, one env.
// Optional, for the viewer (detected, so envs without it still compile):
//   static std::vector<DrawGeom> draw_geoms(const Params&);                host
//   RLT_HD static void draw(const Params&, const State&, float* poses);  draw_geoms().size() x 12
// A robot task (an env with a kAsset: an MJCF model in envs/assets/) follows the task contract at
// the top of envs/robot_env.h instead: the same members, its functions taking a RobotCtx.
//
// ---- Worlds ------------------------------------------------------------------------------------
// EnvWorld<Env, Exec>::type is chosen by a trait: NoWorld (below) by default, RobotWorld<Task, Exec>
// for an env with a kAsset (envs/robot_env.h specializes the trait). A World has a host part, which
// owns the world's executor arrays, and a kernel part (plain data, RLT_HD) that EnvKernel calls for
// one env. The host part:
//   using Params;                            its own [env] params (visit(v)); none: NoWorldParams
//   using Kernel;                            the kernel part
//   World(Exec&, i64 num_envs);              allocates its per-env rows
//   Params& params();  void check_params() const;   (check: std::invalid_argument for a bad value)
//   void spaces(const Env::Params&, EnvSpec&) const;  observation, action (and critic_obs_dim)
//   void clear(Exec&);                       VecEnv::reset, before the first episodes start
//   Kernel kernel(const EnvOutputs<Exec>&);  the kernel part for one launch (action bounds from out)
//   ep_forward_speed(), critic_obs(), final_critic_obs()   executor arrays, or nullptr
//   draw_geoms(const Env::Params&);  gather_poses(exec, params, states, first, count, floats_per_env, out)
//   save(exec, blobs&) / load(exec, blobs)   its mutable state, for checkpoints
// The kernel part, for env i (Ctx: what the env's functions see of the world; empty for NoWorld):
//   Ctx ctx(i64 i)
//   step(params, ctx, i, counters, State&, action, Philox& rng, float& reward, bool& terminated)
//   observe(params, ctx, i, const State&, float* obs, Philox noise)
//   bool finite(ctx, i)                      the world's state is finite (D9)
//   end_episode(params, ctx, i, counters, finite, length)   an episode just ended (totals written)
//   reset(params, ctx, i, State&, Philox& rng, Philox randomize)   before observe; State is {}
//   float forward_position(params, ctx)      kept in EnvCounters::x0 at an episode's start
#pragma once

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/env_step.h"  // EnvCounters, finish_env_step, blob helpers
#include "sim/lanes.h"
#include "sim/philox.h"
#include "sim/vec_env.h"

namespace rlt {

// Uniform random actions: one Philox block gives four action components, so item g fills
// components [4g, 4g + 4) of the (num_envs x act_dim) array.
struct RandomActions {
  float* actions;
  i64 num_components;  // num_envs * act_dim
  int act_dim;
  bool discrete;
  int num_actions;
  const float* low;  // (act_dim) bounds, continuous only
  const float* high;
  u64 seed;
  u32 step;
  RLT_HD void operator()(i64 g) const {
    Philox rng(seed, RngStream::kBench, static_cast<u32>(g), step);
    const U32x4 r = rng.next4();
    for (int q = 0; q < 4; ++q) {
      const i64 c = g * 4 + q;
      if (c >= num_components) return;
      const int k = static_cast<int>(c % act_dim);
      const float u = u32_to_unit_float(r.v[q]);
      actions[c] = discrete ? static_cast<float>(static_cast<int>(u * num_actions)) : low[k] + u * (high[k] - low[k]);
    }
  }
};

// The per-env arrays behind VecEnv's outputs (sim/vec_env.h), on one executor.
template <class Exec>
struct EnvOutputs {
  template <class T>
  using Buffer = typename Exec::template Buffer<T>;
  Buffer<EnvCounters> counters;                // (num_envs) step/episode/return
  Buffer<float> obs, final_obs;                // (num_envs x obs_dim)
  Buffer<float> reward;                        // (num_envs)
  Buffer<std::uint8_t> terminated, truncated;  // (num_envs)
  Buffer<float> ep_return;                     // (num_envs) valid where done
  Buffer<std::int32_t> ep_length;              // (num_envs) valid where done
  Buffer<std::uint32_t> nonfinite;             // (num_envs) non-finite resets
  Buffer<float> random_actions;                // (num_envs x act_dim) sample_actions()
  Buffer<float> act_low, act_high;             // (act_dim) action bounds

  void resize(i64 num_envs, int obs_dim, int act_dim) {
    counters.resize(num_envs);
    obs.resize(num_envs * obs_dim);
    final_obs.resize(num_envs * obs_dim);
    reward.resize(num_envs);
    terminated.resize(num_envs);
    truncated.resize(num_envs);
    ep_return.resize(num_envs);
    ep_length.resize(num_envs);
    nonfinite.resize(num_envs);
    random_actions.resize(num_envs * act_dim);
    act_low.resize(act_dim);
    act_high.resize(act_dim);
  }
  // Every env at its first episode's start, no flags, no non-finite resets counted (VecEnv::reset).
  // Bytes resize() allocates per env, and once (the bounds).
  static i64 bytes_per_env(int obs_dim, int act_dim) {
    return sizeof(EnvCounters) + 2 * sizeof(float) * obs_dim + sizeof(float) + 2 * sizeof(std::uint8_t) +
           sizeof(float) + sizeof(std::int32_t) + sizeof(std::uint32_t) + sizeof(float) * act_dim;
  }
  static i64 fixed_bytes(int act_dim) { return 2 * sizeof(float) * act_dim; }

  void clear(Exec& exec, i64 num_envs) {
    exec.fill(counters.data(), EnvCounters{0, 0, 0.0f, 0}, num_envs);
    exec.fill(nonfinite.data(), std::uint32_t{0}, num_envs);
    exec.fill(terminated.data(), std::uint8_t{0}, num_envs);
    exec.fill(truncated.data(), std::uint8_t{0}, num_envs);
  }
  void upload_action_bounds(Exec& exec, const Space& act) {
    exec.copy_from_host(act_low.data(), act.low.data(), act.dim);
    exec.copy_from_host(act_high.data(), act.high.data(), act.dim);
  }
  // VecEnv::sample_actions: uniform over the declared action space.
  const float* sample_actions(Exec& exec, i64 num_envs, const Space& act, std::uint64_t seed, std::uint32_t step) {
    const i64 components = num_envs * act.dim;
    RandomActions f{random_actions.data(), components,      act.dim, act.discrete, act.num_actions,
                    act_low.data(),        act_high.data(), seed,    step};
    parallel_for(exec, (components + 3) / 4, f);
    return random_actions.data();
  }
  i64 num_nonfinite_resets(const Exec& exec, i64 num_envs) const {
    std::vector<std::uint32_t> h(static_cast<size_t>(num_envs));
    exec.copy_to_host(h.data(), nonfinite.data(), num_envs);
    i64 total = 0;
    for (auto v : h) total += v;
    return total;
  }
  StepOutputs step_outputs() {
    return StepOutputs{reward.data(),    terminated.data(), truncated.data(),
                       ep_return.data(), ep_length.data(),  nonfinite.data()};
  }
};

// ---- NoWorld: an env that is its State (classic control) ---------------------------------------

// Whether Env has the optional draw hook.
template <class Env, class = void>
struct EnvHasDraw : std::false_type {};
template <class Env>
struct EnvHasDraw<
    Env, std::void_t<decltype(Env::draw_geoms(std::declval<const typename Env::Params&>())), decltype(&Env::draw)>>
    : std::true_type {};

// Env first + k's geom poses into out + k * floats_per_env.
template <class Env>
struct DrawPosesOne {
  typename Env::Params params;
  const typename Env::State* states;
  i64 first;
  int floats_per_env;
  float* out;
  RLT_HD void operator()(i64 k) const { Env::draw(params, states[first + k], out + k * floats_per_env); }
};

// A world without params.
struct NoWorldParams {
  template <class V>
  void visit(V&&) {}
};

// The kernel part of NoWorld: the Env's own functions, nothing around them.
template <class Env>
struct NoWorldKernel {
  using Params = typename Env::Params;
  using State = typename Env::State;
  struct Ctx {};
  RLT_HD Ctx ctx(i64) const { return Ctx{}; }
  RLT_HD void step(const Params& p, const Ctx&, i64, const EnvCounters&, State& s, const float* action, Philox& rng,
                   float& reward, bool& terminated) const {
    Env::step(p, s, action, rng, reward, terminated);
  }
  RLT_HD void observe(const Params& p, const Ctx&, i64, const State& s, float* obs, Philox) const {
    Env::observe(p, s, obs);
  }
  RLT_HD bool finite(const Ctx&, i64) const { return true; }
  RLT_HD void end_episode(const Params&, const Ctx&, i64, const EnvCounters&, bool, std::int32_t) const {}
  RLT_HD void reset(const Params& p, const Ctx&, i64, State& s, Philox& rng, Philox) const { Env::reset(p, s, rng); }
  RLT_HD float forward_position(const Params&, const Ctx&) const { return 0.0f; }
};

template <class Env, class Exec>
class NoWorld {
 public:
  using Params = NoWorldParams;
  using Kernel = NoWorldKernel<Env>;

  NoWorld(Exec&, i64) {}
  EnvMemory memory() const { return {}; }  // nothing beyond the env's State
  Params& params() { return m_params; }
  const Params& params() const { return m_params; }
  void check_params() const {}
  void spaces(const typename Env::Params& p, EnvSpec& spec) const { Env::spaces(p, spec.observation, spec.action); }
  void clear(Exec&) {}
  Kernel kernel(const EnvOutputs<Exec>&) const { return Kernel{}; }

  const float* ep_forward_speed() const { return nullptr; }
  const float* tracking() const { return nullptr; }
  const float* critic_obs() const { return nullptr; }
  const float* final_critic_obs() const { return nullptr; }

  // Drawing (viewer/): the env's draw hook when it has one, else nothing to draw.
  std::vector<DrawGeom> draw_geoms(const typename Env::Params& p) const {
    if constexpr (EnvHasDraw<Env>::value) return Env::draw_geoms(p);
    else return {};
  }
  void gather_poses(const Exec& exec, const typename Env::Params& p, const typename Env::State* states, i64 first,
                    i64 count, int floats_per_env, float* out) const {
    if constexpr (EnvHasDraw<Env>::value)
      parallel_for(exec, count, DrawPosesOne<Env>{p, states, first, floats_per_env, out});
  }

  void save(const Exec&, std::vector<StateBlob>&) const {}
  void load(const Exec&, const std::vector<StateBlob>&) {}

 private:
  Params m_params;
};

// The world of Env on Exec: NoWorld unless a specialization says otherwise (envs/robot_env.h: an
// env with a kAsset gets a RobotWorld).
template <class Env, class Exec, class = void>
struct EnvWorld {
  using type = NoWorld<Env, Exec>;
};

// Whether Env steps in SIMD lanes (the contract above: kStepsInLanes).
template <class Env, class = void>
struct EnvStepsInLanes : std::false_type {};
template <class Env>
struct EnvStepsInLanes<Env, std::void_t<decltype(Env::kStepsInLanes)>> : std::bool_constant<Env::kStepsInLanes> {};

// ---- The per-env step and reset, single source for both executors ------------------------------

// One env's step with auto-reset, its reset and restart: the bodies the functors below run per env.
template <class Env, class WorldKernel>
struct EnvKernel {
  using Params = typename Env::Params;
  using State = typename Env::State;
  using Ctx = typename WorldKernel::Ctx;
  Params params;
  WorldKernel world;
  std::uint64_t seed;
  int max_steps;
  State* states;          // (num_envs)
  EnvCounters* counters;  // (num_envs)
  const float* actions;   // (num_envs x kActDim) step only
  float* obs;             // (num_envs x kObsDim)
  float* final_obs;       // (num_envs x kObsDim)
  StepOutputs out;
  u32 first_env = 0;  // global index of env 0 (VecEnv::set_first_env): keys the random streams

  // Env i's control step: step, observe, non-finite check and time limit (finish_env_step), and when
  // the episode ended its final observation and the next episode's start.
  RLT_HD void step(i64 i) const {
    State s = states[i];
    EnvCounters c = counters[i];
    const Ctx ctx = world.ctx(i);
    Philox rng(seed, RngStream::kEnvStep, first_env + static_cast<u32>(i), c.episode, static_cast<u32>(c.step));
    float r = 0.0f;
    bool term = false;
    world.step(params, ctx, i, c, s, actions + i * Env::kActDim, rng, r, term);
    c.step += 1;
    float* o = obs + i * Env::kObsDim;
    world.observe(params, ctx, i, s, o, rng);
    const bool finite = all_finite(o, Env::kObsDim) && is_finite(r) && world.finite(ctx, i);
    if (finish_env_step(out, i, max_steps, finite, r, term, c)) {  // D9, truncation, totals
      world.end_episode(params, ctx, i, c, finite, out.ep_length[i]);
      keep_final_obs(final_obs + i * Env::kObsDim, o, Env::kObsDim, finite);
      start_episode(i, ctx, c, s);
    }
    states[i] = s;
    counters[i] = c;
  }

#if defined(RLT_LANES)
  // Envs [i0, i0 + kLanes) stepped in SIMD lanes (sim/lanes.h), each exactly as step(i) steps it:
  // the env's step and observe over lane vectors (F = f32xL), finish_env_step's rules lane by lane,
  // the outputs, states and counters stored; then each env whose episode ended is finished on its
  // own (end_episode_of). For an env with no World (NoWorld) that steps in lanes (EnvStepsInLanes).
  void step_lanes(i64 i0) const {
    using F = f32xL;
    using M = i32xL;
    typedef std::uint8_t u8xL __attribute__((vector_size(kLanes)));
    typename Env::template StateT<F> s;
    static_assert(sizeof(s) == sizeof(State) * kLanes && sizeof(State) % sizeof(float) == 0,
                  "StateT<F> must be State's float fields, each an F");
    constexpr int kStateFloats = sizeof(State) / sizeof(float);
    load_rows(reinterpret_cast<F*>(&s), reinterpret_cast<const float*>(states + i0), kStateFloats);
    F action[Env::kActDim];
    load_rows(action, actions + i0 * Env::kActDim, Env::kActDim);
    M count[4];  // EnvCounters as words: step, episode, ret (float bits), x0
    std::int32_t words[4 * kLanes];  // (memcpy: EnvCounters' float is not read as an int in place)
    static_assert(sizeof(words) == sizeof(EnvCounters) * kLanes, "EnvCounters: four 32-bit words");
    std::memcpy(words, counters + i0, sizeof words);
    load_rows(count, words, 4);
    F r;
    M term;
    NoRandom rng;
    Env::step(params, s, action, rng, r, term);
    const M step = count[0] + 1;
    F o[Env::kObsDim];
    Env::observe(params, s, o);
    M finite = is_finite(r);
    for (int k = 0; k < Env::kObsDim; ++k) finite = finite && is_finite(o[k]);
    // finish_env_step: a non-finite step gets reward 0 and ends as terminal; truncation; the return.
    r = finite ? r : 0.0f;
    term = term || !finite;
    const M trunc = !term && step >= max_steps;
    F ret;
    std::memcpy(&ret, &count[2], sizeof ret);
    ret += r;
    count[0] = step;
    std::memcpy(&count[2], &ret, sizeof ret);
    std::memcpy(out.reward + i0, &r, sizeof r);
    const u8xL term8 = __builtin_convertvector(term & 1, u8xL), trunc8 = __builtin_convertvector(trunc & 1, u8xL);
    std::memcpy(out.terminated + i0, &term8, kLanes);
    std::memcpy(out.truncated + i0, &trunc8, kLanes);
    store_rows(obs + i0 * Env::kObsDim, o, Env::kObsDim);
    store_rows(reinterpret_cast<float*>(states + i0), reinterpret_cast<const F*>(&s), kStateFloats);
    store_rows(words, count, 4);
    std::memcpy(counters + i0, words, sizeof words);
    if (any(!finite))
      for (int l = 0; l < kLanes; ++l) out.nonfinite[i0 + l] += !finite[l];
    const M done = term || trunc;
    if (any(done))
      for (int l = 0; l < kLanes; ++l)
        if (done[l]) end_episode_of(i0 + l, finite[l] != 0);
  }

  // Env i's episode ended at the step just stored (obs, state, counters): its totals and final
  // observation, and the next episode's start, as step(i) does after finish_env_step.
  void end_episode_of(i64 i, bool finite) const {
    EnvCounters c = counters[i];
    close_episode(out, i, c);
    keep_final_obs(final_obs + i * Env::kObsDim, obs + i * Env::kObsDim, Env::kObsDim, finite);
    State s;
    start_episode(i, world.ctx(i), c, s);
    states[i] = s;
    counters[i] = c;
  }
#endif

  // Starts episode c.episode of env i: its state from Philox (seed, kEnvReset, env, episode), the
  // world's randomization from sub-key 1 and observation noise from sub-key 2; notes where it starts.
  RLT_HD void start_episode(i64 i, const Ctx& ctx, EnvCounters& c, State& s) const {
    const u32 env = first_env + static_cast<u32>(i);
    Philox rng(seed, RngStream::kEnvReset, env, c.episode);
    s = State{};
    world.reset(params, ctx, i, s, rng, Philox(seed, RngStream::kEnvReset, env, c.episode, 1u));
    world.observe(params, ctx, i, s, obs + i * Env::kObsDim, Philox(seed, RngStream::kEnvReset, env, c.episode, 2u));
    c.x0 = world.forward_position(params, ctx);
  }

  // Env i from the start of its episode c.episode (VecEnv::reset).
  RLT_HD void reset(i64 i) const { begin_episode(i, 0); }

  // Env i's next episode, its current one dropped unfinished (VecEnv::reset_one): nothing of the
  // step outputs is written.
  RLT_HD void restart(i64 i) const { begin_episode(i, 1); }

  // Env i at the start of episode (its counter + skip), step and return zeroed.
  RLT_HD void begin_episode(i64 i, u32 skip) const {
    EnvCounters c = counters[i];
    c.episode += skip;
    c.step = 0;
    c.ret = 0.0f;
    State s;
    start_episode(i, world.ctx(i), c, s);
    states[i] = s;
    counters[i] = c;
  }
};

template <class Kernel>
struct StepOne {
  Kernel k;
  RLT_HD void operator()(i64 i) const { k.step(i); }
};
// StepOne with kLanes envs at once where the executor has lanes (parallel_for_lanes).
template <class Kernel>
struct StepLanes {
  Kernel k;
  RLT_HD void operator()(i64 i) const { k.step(i); }
#if defined(RLT_LANES)
  void lanes(i64 i) const { k.step_lanes(i); }
#endif
};
template <class Kernel>
struct ResetOne {
  Kernel k;
  RLT_HD void operator()(i64 i) const { k.reset(i); }
};
// Restarts env first + k (VecEnv::reset_one launches it over one item).
template <class Kernel>
struct RestartOne {
  Kernel k;
  i64 first;
  RLT_HD void operator()(i64 j) const { k.restart(first + j); }
};

// ---- VecEnvT -----------------------------------------------------------------------------------

template <class Env, class Exec>
class VecEnvT final : public VecEnv {
 public:
  using Params = typename Env::Params;
  using State = typename Env::State;
  using World = typename EnvWorld<Env, Exec>::type;
  using Kernel = EnvKernel<Env, typename World::Kernel>;
  static_assert(std::is_trivially_copyable<State>::value, "env state must be plain data");
  static_assert(Env::kObsDim > 0 && Env::kActDim > 0, "env dimensions");
  // Steps in SIMD lanes: an env that can (EnvStepsInLanes), no World, the CPU executor.
  static constexpr bool kStepsInLanes =
      EnvStepsInLanes<Env>::value && std::is_same<World, NoWorld<Env, Exec>>::value && Exec::kDevice == Device::kCpu;
  // An env with a World (a robot: physics substeps) costs tens of microseconds a step, a classic
  // env tens of nanoseconds (parallel_for's Items).
  static constexpr Items kStepCost = std::is_same<World, NoWorld<Env, Exec>>::value ? Items::kCheap : Items::kCostly;

  VecEnvT(Exec exec, i64 num_envs)
      : m_exec(std::move(exec)), m_num_envs(checked_num_envs(num_envs)), m_world(m_exec, num_envs) {
    m_spec.name = Env::kName;
    m_spec.max_episode_steps = m_max_steps;
    m_world.spaces(m_params, m_spec);
    m_states.resize(num_envs);
    m_out.resize(num_envs, Env::kObsDim, Env::kActDim);
    upload_action_bounds();
  }

  const EnvSpec& spec() const override { return m_spec; }
  i64 num_envs() const override { return m_num_envs; }
  Device device() const override { return Exec::kDevice; }
  EnvMemory memory() const override {
    EnvMemory m = m_world.memory();
    m.per_env += static_cast<i64>(sizeof(State)) + EnvOutputs<Exec>::bytes_per_env(Env::kObsDim, Env::kActDim);
    m.fixed += EnvOutputs<Exec>::fixed_bytes(Env::kActDim);
    if constexpr (Exec::kDevice == Device::kCuda) m.device_slots = m_exec.max_threads();
    return m;
  }

  // Sets max_episode_steps, a key of Env::Params or of the world's params. A value the env or world
  // rejects (std::invalid_argument) is not kept.
  bool set_param(const std::string& name, double value) override {
    if (name == "max_episode_steps") {
      if (value < 1 || value != std::floor(value)) throw std::invalid_argument("a positive integer");
      m_max_steps = static_cast<int>(value);
      m_spec.max_episode_steps = m_max_steps;
      return true;
    }
    bool found = false;
    auto set = [&](const char* n, auto& field, const char*, const ParamRange& range = kAnyValue) {
      if (name == n) {
        if (!range.contains(value)) throw std::invalid_argument(range.expect);
        field = static_cast<std::remove_reference_t<decltype(field)>>(value);
        found = true;
      }
    };
    const Params old_params = m_params;
    const typename World::Params old_world = m_world.params();
    m_params.visit(set);
    m_world.params().visit(set);
    if (!found) return false;
    try {
      m_world.check_params();
      m_world.spaces(m_params, m_spec);
    } catch (...) {
      m_params = old_params, m_world.params() = old_world;
      throw;
    }
    upload_action_bounds();
    return true;
  }

  std::vector<ParamInfo> params() const override {
    std::vector<ParamInfo> out{
        {"max_episode_steps", static_cast<double>(m_max_steps), "episode length before truncation"}};
    auto get = [&](const char* n, auto& field, const char* doc, const ParamRange& = kAnyValue) {
      out.push_back({n, static_cast<double>(field), doc});
    };
    auto p = m_params;
    p.visit(get);
    auto w = m_world.params();
    w.visit(get);
    return out;
  }

  void reset(std::uint64_t seed) override {
    m_seed = seed;
    m_out.clear(m_exec, m_num_envs);
    m_world.clear(m_exec);
    parallel_for(m_exec, m_num_envs, ResetOne<Kernel>{kernel(nullptr)}, kStepCost);
  }

  void set_first_env(i64 first) override {
    if (first < 0 || first + m_num_envs > (i64{1} << 32))
      throw std::out_of_range("set_first_env: envs [" + std::to_string(first) + ", " +
                              std::to_string(first + m_num_envs) + ") outside the 32-bit env key");
    m_first_env = static_cast<u32>(first);
  }

  void step(const float* actions) override {
#if defined(RLT_LANES)
    if constexpr (kStepsInLanes) {
      if (m_lanes) return parallel_for_lanes(m_exec, m_num_envs, StepLanes<Kernel>{kernel(actions)});
    }
#endif
    parallel_for(m_exec, m_num_envs, StepOne<Kernel>{kernel(actions)}, kStepCost);
  }

  void reset_one(i64 env) override {
    if (env < 0 || env >= m_num_envs)
      throw std::out_of_range("reset_one: env " + std::to_string(env) + " outside [0, " + std::to_string(m_num_envs) +
                              ")");
    parallel_for(m_exec, 1, RestartOne<Kernel>{kernel(nullptr), env});
  }

  const float* sample_actions(std::uint64_t seed, std::uint32_t step) override {
    return m_out.sample_actions(m_exec, m_num_envs, m_spec.action, seed, step);
  }
  const float* obs() const override { return m_out.obs.data(); }
  const float* final_obs() const override { return m_out.final_obs.data(); }
  const float* reward() const override { return m_out.reward.data(); }
  const std::uint8_t* terminated() const override { return m_out.terminated.data(); }
  const std::uint8_t* truncated() const override { return m_out.truncated.data(); }
  const float* ep_return() const override { return m_out.ep_return.data(); }
  const std::int32_t* ep_length() const override { return m_out.ep_length.data(); }
  const float* ep_forward_speed() const override { return m_world.ep_forward_speed(); }
  const float* tracking() const override { return m_world.tracking(); }
  const float* critic_obs() const override { return m_world.critic_obs(); }
  const float* final_critic_obs() const override { return m_world.final_critic_obs(); }
  i64 num_nonfinite_resets() const override { return m_out.num_nonfinite_resets(m_exec, m_num_envs); }
  const std::uint32_t* nonfinite_counts() const override { return m_out.nonfinite.data(); }

  std::vector<DrawGeom> draw_geoms() const override { return m_world.draw_geoms(m_params); }

  // Only the envs of the requested ranges are posed and copied (sim/vec_env.h): one gather per
  // range into Exec::Readback's target (CPU: host memory; CUDA: device scratch), then start() (CUDA:
  // one asynchronous copy into pinned memory and an event); wait_draw_poses() waits on that event.
  using VecEnv::request_draw_poses;
  void request_draw_poses(const std::vector<DrawRange>& ranges) const override {
    const i64 total = draw_range_total(ranges, m_num_envs);
    if (m_num_draw_geoms < 0) m_num_draw_geoms = static_cast<int>(draw_geoms().size());
    const int per_env = 12 * m_num_draw_geoms;
    m_draw_requested = per_env > 0;
    if (!m_draw_requested) return;
    float* out = m_draw_readback.target(total * per_env);
    for (const auto& [first, count] : ranges) {
      if (count > 0) m_world.gather_poses(m_exec, m_params, m_states.data(), first, count, per_env, out);
      out += count * per_env;
    }
    m_draw_readback.start(m_exec, total * per_env);
  }
  const float* wait_draw_poses() const override { return m_draw_requested ? m_draw_readback.wait() : nullptr; }

  std::vector<StateBlob> save_state() const override {
    std::vector<StateBlob> out{buffer_blob<State>(m_exec, "states", m_states),
                               buffer_blob<EnvCounters>(m_exec, "counters", m_out.counters),
                               buffer_blob<float>(m_exec, "obs", m_out.obs)};
    m_world.save(m_exec, out);
    out.push_back(buffer_blob<std::uint32_t>(m_exec, "nonfinite", m_out.nonfinite));
    out.push_back(u64_state_blob("seed", m_seed));
    return out;
  }

  void load_state(const std::vector<StateBlob>& blobs) override {
    buffer_unblob<State>(m_exec, find_state_blob(blobs, "states"), m_states);
    buffer_unblob<EnvCounters>(m_exec, find_state_blob(blobs, "counters"), m_out.counters);
    buffer_unblob<float>(m_exec, find_state_blob(blobs, "obs"), m_out.obs);
    m_world.load(m_exec, blobs);
    buffer_unblob<std::uint32_t>(m_exec, find_state_blob(blobs, "nonfinite"), m_out.nonfinite);
    m_seed = u64_from_state_blob(find_state_blob(blobs, "seed"));
  }

  // Direct access for tests and tools (executor memory), e.g. to set a state by hand.
  Exec& executor() { return m_exec; }
  const Params& env_params() const { return m_params; }
  State* states() { return m_states.data(); }
  EnvCounters* counters() { return m_out.counters.data(); }
  World& world() { return m_world; }
  const World& world() const { return m_world; }
  // Whether step() runs kLanes envs at once where it can (default); off: one env per call, as the
  // CUDA executor does (tests compare the two).
  void use_lanes(bool on) { m_lanes = on; }

 private:
  static i64 checked_num_envs(i64 n) {
    if (n <= 0) throw std::invalid_argument("num_envs must be positive");
    return n;
  }

  // The per-env functors' data for this call (actions: step's, else null).
  Kernel kernel(const float* actions) {
    return Kernel{m_params,
                  m_world.kernel(m_out),
                  m_seed,
                  m_max_steps,
                  m_states.data(),
                  m_out.counters.data(),
                  actions,
                  m_out.obs.data(),
                  m_out.final_obs.data(),
                  m_out.step_outputs(),
                  m_first_env};
  }

  void upload_action_bounds() { m_out.upload_action_bounds(m_exec, m_spec.action); }

  Exec m_exec;
  i64 m_num_envs;
  EnvSpec m_spec;
  int m_max_steps = Env::kMaxEpisodeSteps;
  std::uint64_t m_seed = 0;
  u32 m_first_env = 0;  // set_first_env
  Params m_params;
  World m_world;                                   // what the env simulates besides its State
  typename Exec::template Buffer<State> m_states;  // (num_envs) env state
  EnvOutputs<Exec> m_out;  // counters, obs, final_obs, reward, flags, episode totals, random actions
  // Drawing scratch (the pose requests are const: filled on demand, hold no simulation state).
  mutable int m_num_draw_geoms = -1;                                // draw_geoms().size(), cached
  mutable typename Exec::template Readback<float> m_draw_readback;  // the requested envs' poses
  mutable bool m_draw_requested = false;
  bool m_lanes = true;  // use_lanes
};

}  // namespace rlt
