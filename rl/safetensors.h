// Reading and writing the safetensors format (https://github.com/huggingface/safetensors), the
// checkpoint format of rltrain (DESIGN.md D7):
//
//   8 bytes   N, little-endian uint64: header length
//   N bytes   JSON: {"<tensor>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]},
//                    ..., "__metadata__": {"<key>": "<string value>"}}, padded with spaces to a
//                    multiple of 8
//   rest      tensor data, little-endian, row-major; offsets are relative to the start of the data
//             and the tensors cover it exactly (no gaps, no overlaps, nothing after the last one)
//
// Everything read is validated; every failure throws CheckpointError("<file>: <what>"), one line.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlt {

// Bad or unreadable checkpoint, or a failed write: one line naming the file and the tensor or key.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class DType { F32, F64, I32, I64, U8, U32 };

const char* dtype_name(DType dtype);                          // safetensors' name: "F32", "F64", ...
std::size_t dtype_size(DType dtype);                          // bytes per element
bool dtype_from_name(const std::string& name, DType* dtype);  // false for names we do not support

template <class T>
struct DTypeOf;  // DTypeOf<float>::value == DType::F32, ...
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::F32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::F64;
};
template <>
struct DTypeOf<std::int32_t> {
  static constexpr DType value = DType::I32;
};
template <>
struct DTypeOf<std::int64_t> {
  static constexpr DType value = DType::I64;
};
template <>
struct DTypeOf<std::uint8_t> {
  static constexpr DType value = DType::U8;
};
template <>
struct DTypeOf<std::uint32_t> {
  static constexpr DType value = DType::U32;
};

struct Tensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::int64_t> shape;  // row-major; {} is a scalar (one element)
  std::vector<std::uint8_t> data;   // numel() * dtype_size(dtype) bytes, little-endian

  std::int64_t numel() const;  // product of shape (1 for a scalar)
};

// "[2, 3]": shapes in messages.
std::string shape_text(const std::vector<std::int64_t>& shape);

// A tensor holding `values` with `shape` (default: 1-D of values.size()). Throws CheckpointError
// when the shape does not hold values.size() elements.
template <class T>
Tensor make_tensor(const std::string& name, const std::vector<T>& values, std::vector<std::int64_t> shape);
template <class T>
Tensor make_tensor(const std::string& name, const std::vector<T>& values) {
  return make_tensor(name, values, {static_cast<std::int64_t>(values.size())});
}

// The tensor's elements as T. Throws CheckpointError("<source>: tensor \"<name>\": expected F32
// [64, 4], got F64 [64, 4]") when the dtype is not T's or the shape is not `expected_shape`.
// `source` (the file it came from) only prefixes messages.
template <class T>
std::vector<T> tensor_values(const Tensor& t, const std::string& source = "");
template <class T>
std::vector<T> tensor_values(const Tensor& t, const std::vector<std::int64_t>& expected_shape,
                             const std::string& source = "");

struct TensorFile {
  std::string source;                           // the file it was read from (set by read_safetensors; messages only)
  std::map<std::string, std::string> metadata;  // "__metadata__": string keys and values
  std::vector<Tensor> tensors;                  // read: in data order; written: in this order

  const Tensor* find(const std::string& name) const;  // nullptr when absent
  // The named tensor; throws CheckpointError("<source>: tensor \"<name>\": missing").
  const Tensor& get(const std::string& name) const;
  // get(name) read as T with a dtype (and shape) check.
  template <class T>
  std::vector<T> values(const std::string& name) const {
    return tensor_values<T>(get(name), source);
  }
  template <class T>
  std::vector<T> values(const std::string& name, const std::vector<std::int64_t>& shape) const {
    return tensor_values<T>(get(name), shape, source);
  }
  // metadata[key]; throws CheckpointError("<source>: metadata \"<key>\": missing").
  const std::string& meta(const std::string& key) const;
};

// Writes atomically: the bytes go to "<path>.tmp.<pid>", are fsync'ed, renamed over `path`, and the
// directory is fsync'ed. On any failure the temporary file is removed, CheckpointError is thrown
// and whatever was at `path` before is untouched. Tensor names must be unique, non-empty and not
// "__metadata__"; each tensor's data must be numel * dtype size bytes.
void write_safetensors(const std::string& path, const TensorFile& file);

// Reads and validates a whole file (see the top of this header); sets TensorFile::source = path.
TensorFile read_safetensors(const std::string& path);
// The same from bytes in memory (`path` only names them in messages; the fuzz harness uses it).
TensorFile parse_safetensors(const std::vector<std::uint8_t>& bytes, const std::string& path);

// ---- template definitions ----------------------------------------------------------------------

namespace detail {
[[noreturn]] void throw_shape_mismatch(const std::string& name, std::size_t num_values,
                                       const std::vector<std::int64_t>& shape);
[[noreturn]] void throw_type_mismatch(const Tensor& t, DType expected_dtype,
                                      const std::vector<std::int64_t>* expected_shape, const std::string& source);
std::int64_t checked_numel(const std::string& name, const std::vector<std::int64_t>& shape);
}  // namespace detail

template <class T>
Tensor make_tensor(const std::string& name, const std::vector<T>& values, std::vector<std::int64_t> shape) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian");
  if (detail::checked_numel(name, shape) != static_cast<std::int64_t>(values.size()))
    detail::throw_shape_mismatch(name, values.size(), shape);
  Tensor t;
  t.name = name;
  t.dtype = DTypeOf<T>::value;
  t.shape = std::move(shape);
  t.data.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

template <class T>
std::vector<T> tensor_values(const Tensor& t, const std::string& source) {
  if (t.dtype != DTypeOf<T>::value || t.data.size() != static_cast<std::size_t>(t.numel()) * sizeof(T))
    detail::throw_type_mismatch(t, DTypeOf<T>::value, nullptr, source);
  std::vector<T> out(t.data.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), t.data.data(), t.data.size());
  return out;
}

template <class T>
std::vector<T> tensor_values(const Tensor& t, const std::vector<std::int64_t>& expected_shape,
                             const std::string& source) {
  if (t.dtype != DTypeOf<T>::value || t.shape != expected_shape)
    detail::throw_type_mismatch(t, DTypeOf<T>::value, &expected_shape, source);
  return tensor_values<T>(t, source);
}

}  // namespace rlt
