#include "rl/checkpoint.h"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>

namespace rlt {

namespace {

// An integer metadata value of checkpoint `src`; anything but a whole integer is a CheckpointError
// naming the file and the key.
int meta_int(const std::string& src, const std::string& key, const std::string& text) {
  int v = 0;
  const char* end = text.data() + text.size();
  const auto r = std::from_chars(text.data(), end, v);
  if (text.empty() || r.ec != std::errc() || r.ptr != end)
    throw CheckpointError(src + ": metadata \"" + key + "\": expected an integer, got \"" + text + "\"");
  return v;
}

}  // namespace

double TrainProgress::mean_return() const {
  if (recent_returns.empty()) return std::numeric_limits<double>::quiet_NaN();
  double s = 0;
  for (float r : recent_returns) s += r;
  return s / static_cast<double>(recent_returns.size());
}

double TrainProgress::mean_length() const {
  if (recent_lengths.empty()) return std::numeric_limits<double>::quiet_NaN();
  double s = 0;
  for (auto l : recent_lengths) s += l;
  return s / static_cast<double>(recent_lengths.size());
}

void TrainProgress::add_episode(float ret, std::int32_t len, std::size_t window) {
  recent_returns.push_back(ret);
  recent_lengths.push_back(len);
  while (recent_returns.size() > window) recent_returns.pop_front();
  while (recent_lengths.size() > window) recent_lengths.pop_front();
  ++episodes;
}

namespace {

// CRC-32 (zlib's) of a tensor's bytes, as 8 hex digits: stored as metadata "crc32:<tensor>" so that
// flipped bytes are found and named on load.
std::string tensor_crc(const Tensor& t) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const std::uint8_t* p = t.data.data();
  for (size_t left = t.data.size(); left > 0;) {
    const uInt n = static_cast<uInt>(std::min<size_t>(left, 1u << 30));
    crc = crc32(crc, p, n);
    p += n, left -= n;
  }
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08lx", static_cast<unsigned long>(crc));
  return buf;
}

// The first non-finite value of a learner array, or -1.
template <class T>
std::int64_t first_nonfinite(const std::vector<T>& v) {
  for (size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i])) return static_cast<std::int64_t>(i);
  return -1;
}

}  // namespace

namespace {

// The learner arrays that differ between the processes of a job (one value per env).
bool per_process_array(const std::string& name) { return name == "disc_return"; }

// Tensors as bytes and back: name, dtype, shape, data, each length-prefixed.
template <class T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
template <class T>
T take(const std::string& in, size_t& at) {
  T v{};
  if (at + sizeof v > in.size()) throw std::runtime_error("truncated process state");
  std::memcpy(&v, in.data() + at, sizeof v);
  at += sizeof v;
  return v;
}

std::string pack_tensors(const std::vector<Tensor>& tensors) {
  std::string out;
  put<std::uint32_t>(out, static_cast<std::uint32_t>(tensors.size()));
  for (const Tensor& t : tensors) {
    put<std::uint32_t>(out, static_cast<std::uint32_t>(t.name.size()));
    out += t.name;
    put<std::uint32_t>(out, static_cast<std::uint32_t>(t.dtype));
    put<std::uint32_t>(out, static_cast<std::uint32_t>(t.shape.size()));
    for (std::int64_t d : t.shape) put<std::int64_t>(out, d);
    put<std::uint64_t>(out, t.data.size());
    out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size());
  }
  return out;
}

std::vector<Tensor> unpack_tensors(const std::string& in) {
  size_t at = 0;
  std::vector<Tensor> out(take<std::uint32_t>(in, at));
  for (Tensor& t : out) {
    const auto len = take<std::uint32_t>(in, at);
    if (at + len > in.size()) throw std::runtime_error("truncated process state");
    t.name = in.substr(at, len);
    at += len;
    t.dtype = static_cast<DType>(take<std::uint32_t>(in, at));
    t.shape.resize(take<std::uint32_t>(in, at));
    for (std::int64_t& d : t.shape) d = take<std::int64_t>(in, at);
    const auto bytes = take<std::uint64_t>(in, at);
    if (at + bytes > in.size()) throw std::runtime_error("truncated process state");
    t.data.assign(in.begin() + static_cast<std::ptrdiff_t>(at), in.begin() + static_cast<std::ptrdiff_t>(at + bytes));
    at += bytes;
  }
  return out;
}

}  // namespace

std::string pack_process_state(const Learner& learner, const VecEnv& env) {
  std::vector<Tensor> tensors;
  for (const StateBlob& b : env.save_state()) tensors.push_back(make_tensor("env/" + b.name, b.bytes));
  for (const NamedArray& a : learner.save())
    if (per_process_array(a.name)) tensors.push_back(make_tensor("learner/" + a.name, a.f32));
  return pack_tensors(tensors);
}

int checkpoint_world_size(const Checkpoint& ckpt) {
  const auto it = ckpt.file.metadata.find("world_size");
  return it == ckpt.file.metadata.end() ? 1 : meta_int(ckpt.file.source, "world_size", it->second);
}

Checkpoint checkpoint_for_rank(const Checkpoint& ckpt, int rank) {
  if (rank == 0) return ckpt;
  const std::string prefix = "rank" + std::to_string(rank) + "/";
  Checkpoint c;
  c.config = ckpt.config;
  c.file.source = ckpt.file.source;
  c.file.metadata = ckpt.file.metadata;
  std::vector<Tensor> mine;
  for (const Tensor& t : ckpt.file.tensors)
    if (t.name.rfind(prefix, 0) == 0) {
      mine.push_back(t);
      mine.back().name = t.name.substr(prefix.size());
    }
  if (mine.empty())
    throw CheckpointError(ckpt.file.source + ": no tensors \"" + prefix + "*\": not written by a job of more than " +
                          std::to_string(rank) + " processes");
  auto replaced = [&](const std::string& name) {
    if (name.rfind("rank", 0) == 0) return true;  // other processes' state
    for (const Tensor& t : mine)
      if (t.name == name) return true;
    return name.rfind("env/", 0) == 0;  // rank 0's envs
  };
  for (const Tensor& t : ckpt.file.tensors)
    if (!replaced(t.name)) c.file.tensors.push_back(t);
  for (Tensor& t : mine) c.file.tensors.push_back(std::move(t));
  return c;
}

void save_checkpoint(const std::string& path, const Config& cfg, const Learner& learner, const VecEnv& env,
                     const TrainProgress& progress, const std::vector<std::string>& other_processes) {
  TensorFile f;
  const PolicySpec& ps = learner.policy_spec();
  f.metadata["format"] = kCheckpointFormat;
  f.metadata["env"] = env.spec().name;
  f.metadata["obs_dim"] = std::to_string(ps.obs_dim);
  f.metadata["head_dim"] = std::to_string(ps.head_dim());
  f.metadata["critic_obs_dim"] = std::to_string(ps.critic_obs_dim);  // 0: symmetric actor-critic
  f.metadata["num_envs"] = std::to_string(env.num_envs());
  f.metadata["config"] = to_toml(cfg);
  for (const NamedArray& a : learner.save()) {
    // Nothing non-finite is ever written: the previous checkpoint stays the last good one.
    const std::int64_t bad = a.f32.empty() ? first_nonfinite(a.f64) : first_nonfinite(a.f32);
    if (bad >= 0)
      throw std::runtime_error(path + ": not written: learner/" + a.name + " holds a non-finite value (index " +
                               std::to_string(bad) + "); the previous checkpoint is kept");
    if (!a.f32.empty()) f.tensors.push_back(make_tensor("learner/" + a.name, a.f32));
    else f.tensors.push_back(make_tensor("learner/" + a.name, a.f64));
  }
  for (const StateBlob& b : env.save_state()) f.tensors.push_back(make_tensor("env/" + b.name, b.bytes));
  f.tensors.push_back(make_tensor(
      "progress/counters", std::vector<std::int64_t>{progress.iteration, progress.env_steps, progress.episodes}));
  f.tensors.push_back(make_tensor("progress/wall_seconds", std::vector<double>{progress.wall_seconds}));
  f.tensors.push_back(make_tensor("progress/skipped_updates", std::vector<std::int64_t>{progress.skipped_updates}));
  f.tensors.push_back(make_tensor("progress/recent_returns",
                                  std::vector<float>(progress.recent_returns.begin(), progress.recent_returns.end())));
  f.tensors.push_back(make_tensor("progress/recent_lengths", std::vector<std::int32_t>(progress.recent_lengths.begin(),
                                                                                       progress.recent_lengths.end())));
  f.metadata["world_size"] = std::to_string(1 + other_processes.size());
  for (size_t r = 0; r < other_processes.size(); ++r) {
    const std::string prefix = "rank" + std::to_string(r + 1) + "/";
    for (Tensor& t : unpack_tensors(other_processes[r])) {
      t.name = prefix + t.name;
      f.tensors.push_back(std::move(t));
    }
  }
  for (const Tensor& t : f.tensors) f.metadata["crc32:" + t.name] = tensor_crc(t);
  write_safetensors(path, f);
}

bool is_policy_file(const Checkpoint& ckpt) {
  const auto it = ckpt.file.metadata.find("contents");
  return it != ckpt.file.metadata.end() && it->second == kPolicyContents;
}

void check_resumable(const Checkpoint& ckpt) {
  if (is_policy_file(ckpt))
    throw CheckpointError(ckpt.file.source + ": metadata \"contents\": a policy file (rltrain export --format "
                          "policy) has no optimizer or env state to resume; start a run from it with train.init_from");
}

void save_policy_file(const Checkpoint& ckpt, const std::string& path) {
  // LearnerLoad::kModel's arrays (rl/ppo_impl.h Ppo::load); the critic's normalizer only where the
  // learner is asymmetric.
  static const char* const kModelArrays[] = {"params",          "obs_mean",        "obs_var",
                                             "ret_mean",        "ret_var",         "counts",
                                             "critic_obs_mean", "critic_obs_var",  "critic_obs_count"};
  TensorFile f;
  f.metadata = ckpt.file.metadata;
  for (auto it = f.metadata.begin(); it != f.metadata.end();)
    it = it->first.rfind("crc32:", 0) == 0 ? f.metadata.erase(it) : std::next(it);
  f.metadata["contents"] = kPolicyContents;
  f.metadata.erase("world_size");
  // Asymmetric as the metadata says (learner_arrays checks it against the policy on every load).
  const auto cd = ckpt.file.metadata.find("critic_obs_dim");
  const bool asymmetric =
      cd != ckpt.file.metadata.end() && meta_int(ckpt.file.source, "critic_obs_dim", cd->second) > 0;
  for (const char* name : kModelArrays) {
    const std::string key = std::string("learner/") + name;
    const bool critic = key.rfind("learner/critic_obs", 0) == 0;
    if (critic && !asymmetric) continue;
    const Tensor* t = ckpt.file.find(key);
    if (t == nullptr) {
      throw CheckpointError(ckpt.file.source + ": tensor \"" + key +
                            "\" is missing (not a trained learner's checkpoint?)");
    }
    f.tensors.push_back(*t);
  }
  for (const Tensor& t : f.tensors) f.metadata["crc32:" + t.name] = tensor_crc(t);
  write_safetensors(path, f);
}

Checkpoint read_checkpoint(const std::string& path) {
  Checkpoint c;
  c.file = read_safetensors(path);
  auto it = c.file.metadata.find("format");
  if (it == c.file.metadata.end() || it->second != kCheckpointFormat)
    throw CheckpointError(path + ": metadata \"format\": expected \"" + kCheckpointFormat +
                          "\" (not an rltrain checkpoint?)");
  // Checksums (checkpoints written before them have none): a flipped byte names its tensor.
  for (const Tensor& t : c.file.tensors) {
    const auto crc = c.file.metadata.find("crc32:" + t.name);
    if (crc != c.file.metadata.end() && crc->second != tensor_crc(t))
      throw CheckpointError(path + ": tensor \"" + t.name + "\": checksum mismatch (crc32 " + tensor_crc(t) +
                            ", recorded " + crc->second + "): the file is damaged");
  }
  try {
    c.config = parse_config(c.file.meta("config"), path + " [metadata config]");
  } catch (const ConfigError& e) {
    throw CheckpointError(e.what());
  }
  return c;
}

namespace {

// The checkpoint's learner/ arrays, after checking that they fit a policy of spec ps (and, when env
// is given, that env): CheckpointError naming the file and the metadata otherwise.
std::vector<NamedArray> learner_arrays(const Checkpoint& ckpt, const PolicySpec& ps, const VecEnv* env) {
  const std::string& src = ckpt.file.source;
  const std::string ck_env = ckpt.file.meta("env");
  const int ck_obs = meta_int(src, "obs_dim", ckpt.file.meta("obs_dim"));
  const int ck_head = meta_int(src, "head_dim", ckpt.file.meta("head_dim"));
  if (env != nullptr && ck_env != env->spec().name)
    throw CheckpointError(src + ": metadata \"env\": checkpoint is for env '" + ck_env + "', expected '" +
                          env->spec().name + "'");
  if (ck_obs != ps.obs_dim || ck_head != ps.head_dim())
    throw CheckpointError(src + ": metadata \"obs_dim\"/\"head_dim\": checkpoint has " + std::to_string(ck_obs) + "/" +
                          std::to_string(ck_head) + ", expected " + std::to_string(ps.obs_dim) + "/" +
                          std::to_string(ps.head_dim()) + " (another env?)");
  // Checkpoints from before asymmetric actor-critic have no critic_obs_dim: their critic read obs.
  const auto cd = ckpt.file.metadata.find("critic_obs_dim");
  const int ck_critic = cd == ckpt.file.metadata.end() ? 0 : meta_int(src, "critic_obs_dim", cd->second);
  if (ck_critic != ps.critic_obs_dim)
    throw CheckpointError(src + ": metadata \"critic_obs_dim\": checkpoint has " + std::to_string(ck_critic) +
                          ", expected " + std::to_string(ps.critic_obs_dim) + " (another env?)");
  std::vector<NamedArray> arrays;
  for (const Tensor& t : ckpt.file.tensors) {
    if (t.name.rfind("learner/", 0) != 0) continue;
    NamedArray a;
    a.name = t.name.substr(8);
    if (t.dtype == DType::F32) a.f32 = tensor_values<float>(t, src);
    else a.f64 = tensor_values<double>(t, src);
    const std::int64_t bad = a.f32.empty() ? first_nonfinite(a.f64) : first_nonfinite(a.f32);
    if (bad >= 0)
      throw CheckpointError(src + ": tensor \"" + t.name + "\": non-finite value at index " + std::to_string(bad));
    arrays.push_back(std::move(a));
  }
  return arrays;
}

const char* const kShapeHint = " (policy.hidden or env differs from the checkpoint's?)";

}  // namespace

void check_checkpoint_env(const Checkpoint& ckpt, const std::string& path, const std::string& env_name,
                          const std::string& source) {
  if (ckpt.config.env.name != env_name)
    throw CheckpointError(path + ": metadata \"env\": checkpoint is for env '" + ckpt.config.env.name + "', but " +
                          source + " asks for env '" + env_name + "'");
}

void restore_policy(const Checkpoint& ckpt, Policy& policy) {
  const std::vector<NamedArray> arrays = learner_arrays(ckpt, policy.spec(), nullptr);
  try {
    policy.load(arrays);
  } catch (const std::runtime_error& e) {
    throw CheckpointError(ckpt.file.source + ": " + e.what() + kShapeHint);
  }
}

void restore_checkpoint(const Checkpoint& ckpt, Learner& learner, LearnerLoad what, VecEnv* env,
                        TrainProgress* progress) {
  const std::string& src = ckpt.file.source;
  if (what == LearnerLoad::kAll) check_resumable(ckpt);
  const std::vector<NamedArray> arrays = learner_arrays(ckpt, learner.policy_spec(), env);
  try {
    learner.load(arrays, what);
  } catch (const std::runtime_error& e) {
    throw CheckpointError(src + ": " + e.what() + kShapeHint);
  }
  if (env != nullptr) {
    std::vector<StateBlob> blobs;
    for (const Tensor& t : ckpt.file.tensors)
      if (t.name.rfind("env/", 0) == 0)
        blobs.push_back(StateBlob{t.name.substr(4), tensor_values<std::uint8_t>(t, src)});
    try {
      env->load_state(blobs);
    } catch (const std::runtime_error& e) {
      throw CheckpointError(src + ": " + e.what());
    }
  }
  if (progress != nullptr) {
    const auto counters = ckpt.file.values<std::int64_t>("progress/counters", {3});
    progress->iteration = counters[0];
    progress->env_steps = counters[1];
    progress->episodes = counters[2];
    progress->wall_seconds = ckpt.file.values<double>("progress/wall_seconds", {1})[0];
    const Tensor* skipped = ckpt.file.find("progress/skipped_updates");  // absent in older checkpoints
    progress->skipped_updates = skipped ? tensor_values<std::int64_t>(*skipped, {1}, src)[0] : 0;
    // Counters out of range would mislead the resume (metrics trimmed to nothing, a wrong schedule).
    const std::int64_t batch = learner.batch_size() * checkpoint_world_size(ckpt);  // a job's iteration: every process's batch
    if (progress->iteration < 0 || progress->env_steps != progress->iteration * batch || progress->episodes < 0 ||
        progress->skipped_updates < 0 || !(progress->wall_seconds >= 0) || !std::isfinite(progress->wall_seconds))
      throw CheckpointError(src + ": tensor \"progress/counters\": out of range (iteration " +
                            std::to_string(progress->iteration) + ", env_steps " + std::to_string(progress->env_steps) +
                            " for batches of " + std::to_string(batch) + ", episodes " +
                            std::to_string(progress->episodes) + ")");
    const auto rets = ckpt.file.values<float>("progress/recent_returns");
    const auto lens = ckpt.file.values<std::int32_t>("progress/recent_lengths");
    progress->recent_returns.assign(rets.begin(), rets.end());
    progress->recent_lengths.assign(lens.begin(), lens.end());
  }
}

}  // namespace rlt
