// libFuzzer target: the safetensors reader (rl/safetensors.h) on arbitrary bytes, and each tensor it
// accepts read back as its dtype. CheckpointError is the expected answer to bad input.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "rl/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::uint8_t> bytes(data, data + size);
  try {
    const rlt::TensorFile f = rlt::parse_safetensors(bytes, "fuzz.safetensors");
    for (const rlt::Tensor& t : f.tensors) {
      if (t.dtype == rlt::DType::F32) (void)rlt::tensor_values<float>(t);
      if (t.dtype == rlt::DType::F64) (void)rlt::tensor_values<double>(t);
    }
  } catch (const rlt::CheckpointError&) {
  }
  return 0;
}
