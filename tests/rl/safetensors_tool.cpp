// Helper for safetensors_peer.py, which checks rl/safetensors against the `safetensors` package:
//   safetensors_tool write <path>   writes the known file below (the peer checks every byte of it)
//   safetensors_tool dump <path>    reads a file and prints it as JSON: metadata, and per tensor its
//                                   name, dtype, shape and data as hex (exact, NaN payloads included)
// Exit status: 0 ok, 1 CheckpointError (message on stderr), 2 bad usage.
#include "rl/safetensors.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

namespace {

// Keep in step with known_file() in safetensors_peer.py.
rlt::TensorFile known_file() {
  rlt::TensorFile f;
  f.metadata = {{"format", "rltrain-peer-test"}, {"iteration", "12345"}, {"note", "quote \" and \xc3\xa9"}};
  std::vector<float> ramp(6);
  for (int i = 0; i < 6; ++i) ramp[i] = 0.5f * i - 1.0f;
  f.tensors.push_back(rlt::make_tensor<float>("actor.w0", ramp, {2, 3}));
  f.tensors.push_back(rlt::make_tensor<double>("obs_norm.mean", {0.1, -1e300, 3.141592653589793, -0.0}));
  f.tensors.push_back(rlt::make_tensor<std::int32_t>(
      "counts", {-1, 0, std::numeric_limits<std::int32_t>::max(), std::numeric_limits<std::int32_t>::min()}));
  f.tensors.push_back(rlt::make_tensor<std::int64_t>("global_step", {std::int64_t{1} << 40}, {}));
  f.tensors.push_back(rlt::make_tensor<std::uint8_t>("mask", {0, 1, 255, 7, 9}));
  f.tensors.push_back(rlt::make_tensor<std::uint32_t>("rng", {0xdeadbeefu, 0u, 4000000000u, 1u}, {2, 1, 2}));
  f.tensors.push_back(rlt::make_tensor<float>("empty", {}, {0, 4}));
  return f;
}

std::string hex(const std::vector<std::uint8_t>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (std::uint8_t b : bytes) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "write" && std::string(argv[1]) != "dump")) {
    std::cerr << "usage: safetensors_tool write|dump <path>\n";
    return 2;
  }
  try {
    if (std::string(argv[1]) == "write") {
      rlt::write_safetensors(argv[2], known_file());
      return 0;
    }
    rlt::TensorFile f = rlt::read_safetensors(argv[2]);
    nlohmann::json out = {{"metadata", f.metadata}, {"tensors", nlohmann::json::array()}};
    for (const rlt::Tensor& t : f.tensors)
      out["tensors"].push_back(
          {{"name", t.name}, {"dtype", rlt::dtype_name(t.dtype)}, {"shape", t.shape}, {"hex", hex(t.data)}});
    std::cout << out.dump() << "\n";
    return 0;
  } catch (const rlt::CheckpointError& e) {
    std::cerr << "safetensors_tool: " << e.what() << "\n";
    return 1;
  }
}
