// vec_env_trace: steps an env's C++ VecEnv (envs/registry.h, CPU executor) with actions read from a
// file and writes what it produced, so that tests/python/test_make_vec.py can check that
// rltrain.make_vec gives the same bits.
//
// usage: vec_env_trace ENV NUM_ENVS SEED THREADS ACTIONS_FILE OUT_FILE [name=value ...]
//   ACTIONS_FILE  steps x num_envs x act_dim float32 (native byte order)
//   OUT_FILE      the observation after reset (num_envs x obs_dim float32), then per step: obs,
//                 final_obs (float32), reward (float32), terminated, truncated (uint8 each)
//   name=value    env parameters, set before the reset
// Bad arguments print one line on stderr and exit with status 2.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "envs/registry.h"

namespace {

template <class T>
void write(std::ofstream& out, const T* data, rlt::i64 n) {
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(sizeof(T) * n));
}

int run(int argc, char** argv) {
  if (argc < 7) throw std::invalid_argument("usage: vec_env_trace ENV NUM_ENVS SEED THREADS ACTIONS_FILE OUT_FILE [name=value ...]");
  const rlt::i64 n = std::stoll(argv[2]);
  const rlt::CpuExecutor exec(std::stoi(argv[4]));
  auto env = rlt::make_vec_env(argv[1], n, exec);
  for (int k = 7; k < argc; ++k) {
    const std::string kv = argv[k];
    const auto eq = kv.find('=');
    if (eq == std::string::npos || !env->set_param(kv.substr(0, eq), std::stod(kv.substr(eq + 1))))
      throw std::invalid_argument("bad parameter '" + kv + "'");
  }
  std::ifstream in(argv[5], std::ios::binary);
  if (!in) throw std::invalid_argument(std::string("cannot open ") + argv[5]);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const rlt::i64 act = n * env->spec().action.dim, obs = n * env->spec().observation.dim;
  if (bytes.size() % (sizeof(float) * act) != 0) throw std::invalid_argument("cannot read the actions");
  const std::vector<float> actions(reinterpret_cast<const float*>(bytes.data()),
                                   reinterpret_cast<const float*>(bytes.data() + bytes.size()));
  std::ofstream out(argv[6], std::ios::binary);
  env->reset(std::stoull(argv[3]));
  write(out, env->obs(), obs);
  for (size_t t = 0; t * act < actions.size(); ++t) {
    env->step(actions.data() + t * act);
    write(out, env->obs(), obs);
    write(out, env->final_obs(), obs);
    write(out, env->reward(), n);
    write(out, env->terminated(), n);
    write(out, env->truncated(), n);
  }
  if (!out) throw std::runtime_error(std::string("cannot write ") + argv[6]);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vec_env_trace: %s\n", e.what());
    return 2;
  }
}
