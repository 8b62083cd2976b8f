// safetensors reader and atomic writer (rl/safetensors.h).
#include "rl/safetensors.h"

#include "rl/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <set>

namespace rlt {
namespace {

using json = nlohmann::json;

// safetensors' own reader refuses headers above 100 MB; a larger length means a corrupt file.
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;
constexpr const char* kMetadataKey = "__metadata__";

const DType kAllDTypes[] = {DType::F32, DType::F64, DType::I32, DType::I64, DType::U8, DType::U32};

[[noreturn]] void fail(const std::string& file, const std::string& what) { throw CheckpointError(file + ": " + what); }
// A write the machine refused (rl/files.h): not bad input.
[[noreturn]] void fail_io(const std::string& file, const std::string& what) { throw IoError(file + ": " + what); }

std::string errno_text(int err) { return std::strerror(err); }

// A name as a one-line JSON string: "actor.w0".
std::string json_quoted(const std::string& s) { return json(s).dump(-1, ' ', false, json::error_handler_t::replace); }

std::string tensor_where(const std::string& name) { return "tensor " + json_quoted(name); }

// Messages stay on one line whatever nlohmann or the file put in them.
std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  return s;
}

std::string prefixed(const std::string& source, const std::string& what) {
  return source.empty() ? what : source + ": " + what;
}

// ---- writing -----------------------------------------------------------------------------------

// Closes and removes the temporary file unless release()d after the rename.
class TempFile {
 public:
  TempFile(std::string path, int fd) : m_path(std::move(path)), m_fd(fd) {}
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    close_fd();
    if (!m_renamed) ::unlink(m_path.c_str());
  }
  int fd() const { return m_fd; }
  const std::string& path() const { return m_path; }
  int close_fd() {  // returns close()'s result; errno is kept for the caller
    int rc = 0;
    if (m_fd >= 0) rc = ::close(m_fd);
    m_fd = -1;
    return rc;
  }
  void mark_renamed() { m_renamed = true; }

 private:
  std::string m_path;
  int m_fd;
  bool m_renamed = false;
};

void write_all(const TempFile& tmp, const std::string& path, const void* data, std::size_t size) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  while (size > 0) {
    ssize_t n = ::write(tmp.fd(), p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_io(path, "cannot write " + tmp.path() + " (" + errno_text(errno) + ")");
    }
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

std::string directory_of(const std::string& path) {
  std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// The JSON header, padded with spaces to a multiple of 8 bytes.
std::string make_header(const std::string& path, const TensorFile& file) {
  json header = json::object();
  std::uint64_t offset = 0;
  for (const Tensor& t : file.tensors) {
    if (t.name.empty()) fail(path, "tensor with an empty name");
    if (t.name == kMetadataKey) fail(path, tensor_where(t.name) + ": name is reserved for metadata");
    if (header.contains(t.name)) fail(path, tensor_where(t.name) + ": duplicate name");
    std::int64_t numel;
    try {
      numel = detail::checked_numel(t.name, t.shape);
    } catch (const CheckpointError& e) {
      fail(path, e.what());
    }
    std::uint64_t bytes = static_cast<std::uint64_t>(numel) * dtype_size(t.dtype);
    if (bytes / dtype_size(t.dtype) != static_cast<std::uint64_t>(numel) || t.data.size() != bytes)
      fail(path, tensor_where(t.name) + ": shape " + shape_text(t.shape) + " of " + dtype_name(t.dtype) + " needs " +
                     std::to_string(bytes) + " bytes, data holds " + std::to_string(t.data.size()));
    header[t.name] = {{"dtype", dtype_name(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  if (!file.metadata.empty()) header[kMetadataKey] = file.metadata;
  std::string text;
  try {
    text = header.dump();
  } catch (const json::exception& e) {  // invalid UTF-8 in a name or metadata
    fail(path, "cannot encode the header (" + one_line(e.what()) + ")");
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

}  // namespace

// ---- dtypes and tensors ------------------------------------------------------------------------

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return "F32";
    case DType::F64:
      return "F64";
    case DType::I32:
      return "I32";
    case DType::I64:
      return "I64";
    case DType::U8:
      return "U8";
    case DType::U32:
      return "U32";
  }
  return "?";
}

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return 4;
    case DType::F64:
      return 8;
    case DType::I32:
      return 4;
    case DType::I64:
      return 8;
    case DType::U8:
      return 1;
    case DType::U32:
      return 4;
  }
  return 0;
}

bool dtype_from_name(const std::string& name, DType* dtype) {
  for (DType d : kAllDTypes) {
    if (name == dtype_name(d)) {
      *dtype = d;
      return true;
    }
  }
  return false;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::int64_t Tensor::numel() const { return detail::checked_numel(name, shape); }

namespace detail {

std::int64_t checked_numel(const std::string& name, const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0) throw CheckpointError(tensor_where(name) + ": negative dimension in shape " + shape_text(shape));
    if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d)
      throw CheckpointError(tensor_where(name) + ": shape " + shape_text(shape) + " is too large");
    n *= d;
  }
  return n;
}

void throw_shape_mismatch(const std::string& name, std::size_t num_values, const std::vector<std::int64_t>& shape) {
  throw CheckpointError(tensor_where(name) + ": shape " + shape_text(shape) + " does not hold " +
                        std::to_string(num_values) + " values");
}

void throw_type_mismatch(const Tensor& t, DType expected_dtype, const std::vector<std::int64_t>* expected_shape,
                         const std::string& source) {
  std::string what = tensor_where(t.name) + ": ";
  if (t.dtype == expected_dtype && (!expected_shape || *expected_shape == t.shape)) {
    what += "data holds " + std::to_string(t.data.size()) + " bytes, " + dtype_name(t.dtype) + " " +
            shape_text(t.shape) + " needs " + std::to_string(t.numel() * dtype_size(t.dtype));
  } else {
    what += std::string("expected ") + dtype_name(expected_dtype) +
            (expected_shape ? " " + shape_text(*expected_shape) : std::string()) + ", got " + dtype_name(t.dtype) +
            " " + shape_text(t.shape);
  }
  throw CheckpointError(prefixed(source, what));
}

}  // namespace detail

const Tensor* TensorFile::find(const std::string& name) const {
  for (const Tensor& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

const Tensor& TensorFile::get(const std::string& name) const {
  const Tensor* t = find(name);
  if (!t) throw CheckpointError(prefixed(source, tensor_where(name) + ": missing"));
  return *t;
}

const std::string& TensorFile::meta(const std::string& key) const {
  auto it = metadata.find(key);
  if (it == metadata.end()) throw CheckpointError(prefixed(source, "metadata " + json_quoted(key) + ": missing"));
  return it->second;
}

// ---- write -------------------------------------------------------------------------------------

void write_safetensors(const std::string& path, const TensorFile& file) {
  const std::string header = make_header(path, file);  // checks everything before touching disk

  const std::string tmp_path = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail_io(path, "cannot create " + tmp_path + " (" + errno_text(errno) + ")");
  TempFile tmp(tmp_path, fd);

  std::uint8_t length_bytes[8];
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) length_bytes[i] = static_cast<std::uint8_t>(n >> (8 * i));
  write_all(tmp, path, length_bytes, sizeof length_bytes);
  write_all(tmp, path, header.data(), header.size());
  for (const Tensor& t : file.tensors) write_all(tmp, path, t.data.data(), t.data.size());

  if (::fsync(tmp.fd()) != 0) fail_io(path, "cannot fsync " + tmp_path + " (" + errno_text(errno) + ")");
  if (tmp.close_fd() != 0) fail_io(path, "cannot close " + tmp_path + " (" + errno_text(errno) + ")");
  if (::rename(tmp_path.c_str(), path.c_str()) != 0) {
    const int err = errno;  // a directory at `path` is a bad path (input), anything else the machine's refusal
    const std::string what = "cannot rename " + tmp_path + " over it (" + errno_text(err) + ")";
    if (err == EISDIR) fail(path, what);
    fail_io(path, what);
  }
  tmp.mark_renamed();

  // Make the rename itself durable. The new file is already in place if this fails.
  const std::string dir = directory_of(path);
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0)
    fail_io(path, "written, but cannot open directory " + dir + " to fsync it (" + errno_text(errno) + ")");
  int rc = ::fsync(dir_fd);
  int err = errno;
  ::close(dir_fd);
  if (rc != 0 && err != EINVAL)  // EINVAL: the filesystem does not sync directories
    fail_io(path, "written, but cannot fsync directory " + dir + " (" + errno_text(err) + ")");
}

// ---- read --------------------------------------------------------------------------------------

namespace {

std::vector<std::uint8_t> read_whole_file(const std::string& path) {
  // O_NONBLOCK: a FIFO given as a checkpoint opens at once (and is refused below) instead of
  // waiting for a writer; it changes nothing for a regular file.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail(path, "cannot open (" + errno_text(errno) + ")");
  struct stat st {};
  int err = ::fstat(fd, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : !S_ISREG(st.st_mode) ? EINVAL : 0;
  if (err != 0) {
    ::close(fd);
    fail(path, err == EINVAL ? std::string("not a regular file (a checkpoint is a .safetensors file)")
                             : "cannot open (" + errno_text(err) + ")");
  }
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : 0;
      ::close(fd);
      fail(path, n < 0 ? "cannot read (" + errno_text(err) + ")" : "file shrank while being read");
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return bytes;
}

// Parses the header, refusing duplicate keys (nlohmann would silently keep the last one).
json parse_header(const std::string& path, const std::uint8_t* begin, const std::uint8_t* end) {
  std::vector<std::set<std::string>> keys_at_depth;
  std::string duplicate;
  auto callback = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      if (keys_at_depth.size() <= static_cast<std::size_t>(depth)) keys_at_depth.resize(depth + 1);
      keys_at_depth[depth].clear();
    } else if (event == json::parse_event_t::key) {
      // Keys of an object opened at depth d arrive with depth d + 1.
      auto& keys = keys_at_depth[depth - 1];
      if (!keys.insert(parsed.get<std::string>()).second && duplicate.empty()) duplicate = parsed.get<std::string>();
    }
    return true;
  };
  // nlohmann stops at a NUL as if the input ended there; safetensors' reader rejects it.
  if (const std::uint8_t* nul = std::find(begin, end, std::uint8_t{0}); nul != end)
    fail(path, "bad JSON header (NUL byte at header offset " + std::to_string(nul - begin) + ")");
  json header;
  try {
    header = json::parse(begin, end, callback);
  } catch (const json::exception& e) {
    fail(path, "bad JSON header (" + one_line(e.what()) + ")");
  }
  if (!duplicate.empty()) fail(path, "bad JSON header (duplicate key " + json_quoted(duplicate) + ")");
  if (!header.is_object()) fail(path, "bad header: expected a JSON object, got " + std::string(header.type_name()));
  return header;
}

std::uint64_t get_uint(const std::string& path, const std::string& where, const json& v) {
  if (!v.is_number_unsigned()) fail(path, where + ": expected a non-negative integer, got " + one_line(v.dump()));
  return v.get<std::uint64_t>();
}

}  // namespace

TensorFile read_safetensors(const std::string& path) { return parse_safetensors(read_whole_file(path), path); }

TensorFile parse_safetensors(const std::vector<std::uint8_t>& bytes, const std::string& path) {
  if (bytes.size() < 8)
    fail(path, "file too short (" + std::to_string(bytes.size()) +
                   " bytes; a safetensors file starts with an 8-byte header length)");
  std::uint64_t header_len = 0;
  for (int i = 0; i < 8; ++i) header_len |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
  const std::uint64_t available = bytes.size() - 8;
  if (header_len > available)
    fail(path, "header length " + std::to_string(header_len) + " exceeds the " + std::to_string(available) +
                   " bytes after it (truncated or not a safetensors file)");
  if (header_len > kMaxHeaderBytes)
    fail(path, "header length " + std::to_string(header_len) + " exceeds the limit of " +
                   std::to_string(kMaxHeaderBytes) + " bytes");
  const json header = parse_header(path, bytes.data() + 8, bytes.data() + 8 + header_len);

  const std::uint8_t* data = bytes.data() + 8 + header_len;
  const std::uint64_t data_size = available - header_len;

  TensorFile out;
  out.source = path;
  struct Span {
    std::uint64_t begin, end;
    std::size_t index;  // into out.tensors
  };
  std::vector<Span> spans;
  for (const auto& [name, info] : header.items()) {
    if (name == kMetadataKey) {
      if (!info.is_object())
        fail(path, "__metadata__: expected an object of strings, got " + std::string(info.type_name()));
      for (const auto& [key, value] : info.items()) {
        if (!value.is_string())
          fail(path, "metadata " + json_quoted(key) + ": expected a string, got " + one_line(value.dump()));
        out.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    const std::string where = tensor_where(name);
    if (!info.is_object()) fail(path, where + ": expected an object, got " + std::string(info.type_name()));
    for (const auto& [field, value] : info.items())
      if (field != "dtype" && field != "shape" && field != "data_offsets")
        fail(path, where + ": unexpected field " + json_quoted(field));
    if (!info.contains("dtype") || !info.contains("shape") || !info.contains("data_offsets"))
      fail(path, where + ": expected fields dtype, shape and data_offsets");

    Tensor t;
    t.name = name;
    const json& dtype = info["dtype"];
    if (!dtype.is_string()) fail(path, where + ": dtype: expected a string, got " + one_line(dtype.dump()));
    if (!dtype_from_name(dtype.get<std::string>(), &t.dtype))
      fail(path, where + ": unsupported dtype " + json_quoted(dtype.get<std::string>()) +
                     " (supported: F32, F64, I32, I64, U8, U32)");

    const json& shape = info["shape"];
    if (!shape.is_array()) fail(path, where + ": shape: expected an array, got " + one_line(shape.dump()));
    for (const json& d : shape) {
      std::uint64_t dim = get_uint(path, where + ": shape", d);
      if (dim > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        fail(path, where + ": shape: dimension " + std::to_string(dim) + " is too large");
      t.shape.push_back(static_cast<std::int64_t>(dim));
    }

    const json& offsets = info["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2)
      fail(path, where + ": data_offsets: expected [begin, end], got " + one_line(offsets.dump()));
    std::uint64_t begin = get_uint(path, where + ": data_offsets", offsets[0]);
    std::uint64_t end = get_uint(path, where + ": data_offsets", offsets[1]);
    if (begin > end)
      fail(path,
           where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] end before begin");
    if (end > data_size)
      fail(path, where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] beyond the " +
                     std::to_string(data_size) + " data bytes (truncated file?)");

    std::int64_t numel;
    try {
      numel = detail::checked_numel(name, t.shape);
    } catch (const CheckpointError& e) {
      fail(path, e.what());
    }
    const std::uint64_t size = dtype_size(t.dtype);
    if (static_cast<std::uint64_t>(numel) > std::numeric_limits<std::uint64_t>::max() / size ||
        static_cast<std::uint64_t>(numel) * size != end - begin)
      fail(path, where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] span " +
                     std::to_string(end - begin) + " bytes, " + dtype_name(t.dtype) + " " + shape_text(t.shape) +
                     " needs " + std::to_string(static_cast<std::uint64_t>(numel) * size));
    t.data.assign(data + begin, data + end);
    spans.push_back({begin, end, out.tensors.size()});
    out.tensors.push_back(std::move(t));
  }

  // The tensors must tile the data exactly: sorted by offset, each starts where the last ended.
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  std::uint64_t covered = 0;
  const Span* previous = nullptr;
  for (const Span& s : spans) {
    const std::string& name = out.tensors[s.index].name;
    if (s.begin < covered)
      fail(path, tensor_where(name) + ": data_offsets [" + std::to_string(s.begin) + ", " + std::to_string(s.end) +
                     "] overlap " + tensor_where(out.tensors[previous->index].name));
    if (s.begin > covered)
      fail(path, tensor_where(name) + ": data_offsets [" + std::to_string(s.begin) + ", " + std::to_string(s.end) +
                     "] leave data bytes [" + std::to_string(covered) + ", " + std::to_string(s.begin) + ") unused");
    covered = s.end;
    previous = &s;
  }
  if (covered != data_size)
    fail(path, std::to_string(data_size - covered) + " trailing bytes after the last tensor's data");

  std::vector<Tensor> ordered;
  ordered.reserve(out.tensors.size());
  for (const Span& s : spans) ordered.push_back(std::move(out.tensors[s.index]));
  out.tensors = std::move(ordered);
  return out;
}

}  // namespace rlt
