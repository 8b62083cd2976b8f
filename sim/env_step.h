// Pieces of VecEnvT's per-env step (sim/vec_env_impl.h) that stand on their own: the per-env
// counters, the end-of-step bookkeeping (non-finite check D9, time-limit truncation, episode totals)
// and the checkpoint blob helpers. RLT_HD and plain data, so both executors run them.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/common.h"
#include "sim/vec_env.h"

namespace rlt {

// Per-env bookkeeping that is the same for every env type.
struct EnvCounters {
  std::int32_t step;      // steps taken in the current episode
  std::uint32_t episode;  // episodes started by this env (keys its random stream)
  float ret;              // return accumulated in the current episode
  float x0;               // robot tasks with a forward_position: its value at the episode's start
};
static_assert(sizeof(EnvCounters) == 16, "EnvCounters crosses the host/device boundary");

RLT_HD RLT_INLINE bool all_finite(const float* x, int n) {
  bool ok = true;
  for (int k = 0; k < n; ++k) ok = ok && is_finite(x[k]);
  return ok;
}

// The per-env outputs of VecEnv::step (sim/vec_env.h), one entry per env.
struct StepOutputs {
  float* reward;
  std::uint8_t* terminated;
  std::uint8_t* truncated;
  float* ep_return;
  std::int32_t* ep_length;
  std::uint32_t* nonfinite;
};

// Env i's episode has ended (c counts its steps and return): ep_return/ep_length get its totals and
// c is advanced to the next episode (step 0, return 0).
RLT_HD RLT_INLINE void close_episode(const StepOutputs& out, i64 i, EnvCounters& c) {
  out.ep_return[i] = c.ret;
  out.ep_length[i] = c.step;
  c.episode += 1;
  c.step = 0;
  c.ret = 0.0f;
}

// Env i has taken its step (c.step already counts it) with reward r and terminal flag term;
// `finite` says whether its state, observation and reward are finite. Writes reward/terminated/
// truncated; a non-finite step is counted, gets reward 0 and ends as terminal (D9: no bootstrap from
// garbage). Returns true when the episode ended: ep_return/ep_length hold its totals and c is
// advanced to the next episode (step 0, return 0), which the caller then resets and observes.
RLT_HD RLT_INLINE bool finish_env_step(const StepOutputs& out, i64 i, int max_steps, bool finite, float r, bool term,
                                       EnvCounters& c) {
  if (!finite) {
    out.nonfinite[i] += 1;
    r = 0.0f;
    term = true;
  }
  const bool trunc = !term && c.step >= max_steps;
  c.ret += r;
  out.reward[i] = r;
  out.terminated[i] = term;
  out.truncated[i] = trunc;
  if (!(term || trunc)) return false;
  close_episode(out, i, c);
  return true;
}

// final_obs of an ended episode: the observation, or zeros when it was not finite.
RLT_HD RLT_INLINE void keep_final_obs(float* dst, const float* src, int n, bool finite) {
  for (int k = 0; k < n; ++k) dst[k] = finite ? src[k] : 0.0f;
}

// Checkpoint blobs of executor buffers (VecEnv::save_state / load_state).
template <class T, class Exec>
StateBlob buffer_blob(const Exec& exec, const char* name, const typename Exec::template Buffer<T>& buf) {
  StateBlob b{name, std::vector<std::uint8_t>(sizeof(T) * static_cast<size_t>(buf.size()))};
  exec.copy_to_host(reinterpret_cast<T*>(b.bytes.data()), buf.data(), buf.size());
  return b;
}
template <class T, class Exec>
void buffer_unblob(const Exec& exec, const StateBlob& b, typename Exec::template Buffer<T>& buf) {
  if (b.bytes.size() != sizeof(T) * static_cast<size_t>(buf.size()))
    throw std::runtime_error(
        "env state '" + b.name + "' has " + std::to_string(b.bytes.size()) + " bytes, expected " +
        std::to_string(sizeof(T) * buf.size()) +
        " (another env or num_envs, or a checkpoint of an older rltrain with another row layout?)");
  exec.copy_from_host(buf.data(), reinterpret_cast<const T*>(b.bytes.data()), buf.size());
}
inline const StateBlob& find_state_blob(const std::vector<StateBlob>& blobs, const char* name) {
  for (const auto& b : blobs)
    if (b.name == name) return b;
  throw std::runtime_error(std::string("env state '") + name + "' is missing");
}
inline StateBlob u64_state_blob(const char* name, std::uint64_t v) {
  StateBlob b{name, std::vector<std::uint8_t>(sizeof(v))};
  std::memcpy(b.bytes.data(), &v, sizeof(v));
  return b;
}
inline std::uint64_t u64_from_state_blob(const StateBlob& b) {
  std::uint64_t v = 0;
  if (b.bytes.size() != sizeof(v)) throw std::runtime_error("env state '" + b.name + "' has the wrong size");
  std::memcpy(&v, b.bytes.data(), sizeof(v));
  return v;
}

}  // namespace rlt
