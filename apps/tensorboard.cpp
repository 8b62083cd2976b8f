#include "apps/tensorboard.h"

#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "rl/config.h"  // ConfigError
#include "rl/files.h"   // IoError

#if defined(RLTRAIN_HAVE_TENSORBOARD)
#include <boost/crc.hpp>

#include "apps/tensorboard_event.pb.h"
#endif

namespace fs = std::filesystem;

namespace rlt {

#if defined(RLTRAIN_HAVE_TENSORBOARD)

namespace {

constexpr const char* kPrefix = "events.out.tfevents.";

// CRC-32C (Castagnoli, reflected, as iSCSI and TFRecord use it), masked as TFRecord stores it.
std::uint32_t masked_crc32c(const void* data, std::size_t size) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(data, size);
  const std::uint32_t c = crc.checksum();
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The timestamp field of an event file name (events.out.tfevents.<digits>...), or -1.
long long name_timestamp(const std::string& name) {
  if (name.rfind(kPrefix, 0) != 0) return -1;
  long long t = 0;
  size_t i = std::char_traits<char>::length(kPrefix);
  if (i >= name.size() || !std::isdigit(static_cast<unsigned char>(name[i]))) return -1;
  for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])); ++i) t = t * 10 + (name[i] - '0');
  return t;
}

}  // namespace

struct TensorBoardWriter::Impl {
  std::FILE* file = nullptr;
  std::string path;

  ~Impl() {
    if (file != nullptr) std::fclose(file);
  }

  void write(tensorboard::Event& event) {
    if (event.wall_time() == 0) event.set_wall_time(now_seconds());
    const std::string data = event.SerializeAsString();
    unsigned char header[12];
    const std::uint64_t len = data.size();
    for (int k = 0; k < 8; ++k) header[k] = static_cast<unsigned char>(len >> (8 * k));  // little-endian
    const std::uint32_t len_crc = masked_crc32c(header, 8);
    for (int k = 0; k < 4; ++k) header[8 + k] = static_cast<unsigned char>(len_crc >> (8 * k));
    const std::uint32_t data_crc = masked_crc32c(data.data(), data.size());
    unsigned char footer[4];
    for (int k = 0; k < 4; ++k) footer[k] = static_cast<unsigned char>(data_crc >> (8 * k));
    if (std::fwrite(header, 1, sizeof header, file) != sizeof header ||
        std::fwrite(data.data(), 1, data.size(), file) != data.size() ||
        std::fwrite(footer, 1, sizeof footer, file) != sizeof footer || std::fflush(file) != 0)
      throw IoError(path + ": write failed");
  }
};

bool TensorBoardWriter::available() { return true; }

TensorBoardWriter::TensorBoardWriter(const std::string& dir, std::int64_t resume_step) : m_impl(new Impl) {
  long long stamp = static_cast<long long>(now_seconds());
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const long long t = name_timestamp(entry.path().filename().string());
    if (t >= stamp) stamp = t + 1;
  }
  char host[256] = "localhost";
  if (::gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "localhost");
  char name[512];
  std::snprintf(name, sizeof name, "%s%010lld.%s.%d", kPrefix, stamp, host, static_cast<int>(::getpid()));
  m_path = (fs::path(dir) / name).string();
  m_impl->path = m_path;
  m_impl->file = std::fopen(m_path.c_str(), "wbx");
  if (m_impl->file == nullptr) throw IoError(m_path + ": cannot create the TensorBoard event file");
  tensorboard::Event version;
  version.set_file_version("brain.Event:2");  // version 2: readers honour SessionLog START
  m_impl->write(version);
  if (resume_step >= 0) {
    tensorboard::Event start;
    start.set_step(resume_step + 1);
    start.mutable_session_log()->set_status(tensorboard::SessionLog::START);
    m_impl->write(start);
  }
}

TensorBoardWriter::~TensorBoardWriter() = default;

void TensorBoardWriter::add_scalars(std::int64_t step, const std::vector<std::string>& tags,
                                    const std::vector<double>& values) {
  tensorboard::Event event;
  event.set_step(step);
  auto* summary = event.mutable_summary();
  for (size_t k = 0; k < tags.size() && k < values.size(); ++k) {
    auto* v = summary->add_value();
    v->set_tag(tags[k]);
    v->set_simple_value(static_cast<float>(values[k]));
  }
  m_impl->write(event);
}

void TensorBoardWriter::add_text(std::int64_t step, const std::string& tag, const std::string& markdown) {
  tensorboard::Event event;
  event.set_step(step);
  auto* v = event.mutable_summary()->add_value();
  v->set_tag(tag);
  auto* meta = v->mutable_metadata();
  meta->mutable_plugin_data()->set_plugin_name("text");
  meta->set_data_class(tensorboard::SummaryMetadata::DATA_CLASS_TENSOR);
  auto* t = v->mutable_tensor();
  t->set_dtype(tensorboard::DT_STRING);
  t->mutable_tensor_shape();  // a scalar: no dims
  t->add_string_val(markdown);
  m_impl->write(event);
}

#else  // built without TensorBoard output

struct TensorBoardWriter::Impl {};
bool TensorBoardWriter::available() { return false; }
TensorBoardWriter::TensorBoardWriter(const std::string&, std::int64_t) {}
TensorBoardWriter::~TensorBoardWriter() = default;
void TensorBoardWriter::add_scalars(std::int64_t, const std::vector<std::string>&, const std::vector<double>&) {}
void TensorBoardWriter::add_text(std::int64_t, const std::string&, const std::string&) {}

#endif

}  // namespace rlt
