// safetensors reading, atomic writing and validation (rl/safetensors.h).
#include "rl/files.h"
#include "rl/safetensors.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace rlt {
namespace {

#define EXPECT_CONTAINS(haystack, needle)                          \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) \
      << "missing \"" << (needle) << "\" in: " << (haystack)

// A fresh empty directory per test, removed (with its files) afterwards.
class SafetensorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "rlt_st_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    m_dir = tmpl;
  }
  void TearDown() override {
    ::chmod(m_dir.c_str(), 0700);
    remove_tree(m_dir);
  }
  static void remove_tree(const std::string& path) {
    if (DIR* d = ::opendir(path.c_str())) {
      while (dirent* e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name != "." && name != "..") remove_tree(path + "/" + name);
      }
      ::closedir(d);
      ::rmdir(path.c_str());
    } else {
      std::remove(path.c_str());
    }
  }
  std::string path(const std::string& name) const { return m_dir + "/" + name; }
  std::vector<std::string> dir_entries(const std::string& dir) const {
    std::vector<std::string> names;
    if (DIR* d = ::opendir(dir.c_str())) {
      while (dirent* e = ::readdir(d))
        if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
      ::closedir(d);
    }
    return names;
  }

  std::string m_dir;
};

std::vector<std::uint8_t> file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void put_bytes(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// A file with a hand-written header: 8-byte length, `header` verbatim, `data_size` data bytes.
void put_raw(const std::string& path, const std::string& header, std::size_t data_size) {
  std::vector<std::uint8_t> bytes(8);
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<std::uint8_t>(n >> (8 * i));
  bytes.insert(bytes.end(), header.begin(), header.end());
  for (std::size_t i = 0; i < data_size; ++i) bytes.push_back(static_cast<std::uint8_t>(i));
  put_bytes(path, bytes);
}

std::string read_error(const std::string& path) {
  try {
    read_safetensors(path);
  } catch (const CheckpointError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << "message does not start with the file: " << msg;
    return msg;
  }
  ADD_FAILURE() << "read_safetensors(" << path << ") did not throw";
  return {};
}

TensorFile sample() {
  TensorFile f;
  f.metadata = {{"format", "rltrain-checkpoint"}, {"iteration", "42"}, {"note", "quote \" and \xc3\xa9"}};
  f.tensors.push_back(make_tensor<float>("actor.w0", {1.5f, -2.0f, 0.25f, 3.0f, -0.0f, 1e-30f}, {2, 3}));
  f.tensors.push_back(make_tensor<double>("obs_norm.mean", {0.1, -1e300, 3.141592653589793}));
  f.tensors.push_back(make_tensor<std::int32_t>("counts", {-1, 0, std::numeric_limits<std::int32_t>::max()}));
  f.tensors.push_back(make_tensor<std::int64_t>("global_step", {std::int64_t{1} << 40}, {}));  // scalar
  f.tensors.push_back(make_tensor<std::uint8_t>("mask", {0, 1, 255, 7, 9}));
  f.tensors.push_back(make_tensor<std::uint32_t>("rng", {0xdeadbeefu, 0u, 4000000000u, 1u}, {2, 1, 2}));
  f.tensors.push_back(make_tensor<float>("empty", {}, {0, 4}));
  return f;
}

TEST_F(SafetensorsTest, RoundTripsEveryDtypeAndMetadata) {
  const TensorFile written = sample();
  write_safetensors(path("a.safetensors"), written);
  const TensorFile back = read_safetensors(path("a.safetensors"));
  EXPECT_EQ(back.source, path("a.safetensors"));
  EXPECT_EQ(back.metadata, written.metadata);
  ASSERT_EQ(back.tensors.size(), written.tensors.size());
  for (std::size_t i = 0; i < written.tensors.size(); ++i) {
    const Tensor& w = written.tensors[i];
    const Tensor& r = back.tensors[i];  // read in data order, which is the written order
    EXPECT_EQ(r.name, w.name);
    EXPECT_EQ(r.dtype, w.dtype) << w.name;
    EXPECT_EQ(r.shape, w.shape) << w.name;
    EXPECT_EQ(r.data, w.data) << w.name;
  }
  EXPECT_EQ(back.values<float>("actor.w0", {2, 3}), (std::vector<float>{1.5f, -2.0f, 0.25f, 3.0f, -0.0f, 1e-30f}));
  EXPECT_EQ(back.values<double>("obs_norm.mean"), (std::vector<double>{0.1, -1e300, 3.141592653589793}));
  EXPECT_EQ(back.values<std::int64_t>("global_step", {}), std::vector<std::int64_t>{std::int64_t{1} << 40});
  EXPECT_EQ(back.values<std::uint32_t>("rng")[2], 4000000000u);
  EXPECT_TRUE(back.values<float>("empty", {0, 4}).empty());
  EXPECT_EQ(back.meta("iteration"), "42");

  // The layout: length, space-padded header of a multiple of 8 bytes, then exactly the data.
  std::vector<std::uint8_t> bytes = file_bytes(path("a.safetensors"));
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= std::uint64_t{bytes[i]} << (8 * i);
  EXPECT_EQ(n % 8, 0u);
  EXPECT_EQ(bytes[8], '{');
  std::size_t data_bytes = 0;
  for (const Tensor& t : written.tensors) data_bytes += t.data.size();
  EXPECT_EQ(bytes.size(), 8 + n + data_bytes);
}

TEST_F(SafetensorsTest, EmptyFileRoundTrips) {
  write_safetensors(path("e.safetensors"), TensorFile{});
  TensorFile back = read_safetensors(path("e.safetensors"));
  EXPECT_TRUE(back.tensors.empty());
  EXPECT_TRUE(back.metadata.empty());
}

TEST_F(SafetensorsTest, OverwriteReplacesAndLeavesNoTempFiles) {
  write_safetensors(path("c.safetensors"), sample());
  TensorFile small;
  small.tensors.push_back(make_tensor<float>("x", {1.0f}));
  write_safetensors(path("c.safetensors"), small);
  EXPECT_EQ(read_safetensors(path("c.safetensors")).tensors.size(), 1u);
  EXPECT_EQ(dir_entries(m_dir), std::vector<std::string>{"c.safetensors"});
}

TEST_F(SafetensorsTest, ValueHelpersCheckDtypeShapeAndPresence) {
  write_safetensors(path("h.safetensors"), sample());
  TensorFile f = read_safetensors(path("h.safetensors"));
  const std::string file = path("h.safetensors");
  try {
    f.values<float>("obs_norm.mean");
    ADD_FAILURE();
  } catch (const CheckpointError& e) {
    EXPECT_EQ(std::string(e.what()), file + ": tensor \"obs_norm.mean\": expected F32, got F64 [3]");
  }
  try {
    f.values<float>("actor.w0", {3, 2});
    ADD_FAILURE();
  } catch (const CheckpointError& e) {
    EXPECT_EQ(std::string(e.what()), file + ": tensor \"actor.w0\": expected F32 [3, 2], got F32 [2, 3]");
  }
  try {
    f.get("critic.w0");
    ADD_FAILURE();
  } catch (const CheckpointError& e) {
    EXPECT_EQ(std::string(e.what()), file + ": tensor \"critic.w0\": missing");
  }
  try {
    f.meta("optimizer");
    ADD_FAILURE();
  } catch (const CheckpointError& e) {
    EXPECT_EQ(std::string(e.what()), file + ": metadata \"optimizer\": missing");
  }
  EXPECT_EQ(f.find("nope"), nullptr);
  ASSERT_NE(f.find("mask"), nullptr);
  EXPECT_EQ(f.find("mask")->numel(), 5);
  EXPECT_THROW(make_tensor<float>("bad", {1.0f, 2.0f}, {3}), CheckpointError);
}

TEST_F(SafetensorsTest, WriterRefusesInconsistentTensorsBeforeTouchingDisk) {
  write_safetensors(path("keep.safetensors"), sample());
  const std::vector<std::uint8_t> before = file_bytes(path("keep.safetensors"));
  auto expect_refused = [&](TensorFile f, const std::string& what) {
    try {
      write_safetensors(path("keep.safetensors"), f);
      ADD_FAILURE() << "no throw for " << what;
    } catch (const CheckpointError& e) {
      EXPECT_CONTAINS(e.what(), path("keep.safetensors") + ": ");
      EXPECT_CONTAINS(e.what(), what);
    }
    EXPECT_EQ(file_bytes(path("keep.safetensors")), before);
  };
  TensorFile dup = sample();
  dup.tensors.push_back(make_tensor<float>("mask", {1.0f}));
  expect_refused(dup, "tensor \"mask\": duplicate name");
  TensorFile short_data = sample();
  short_data.tensors[0].data.pop_back();
  expect_refused(short_data, "tensor \"actor.w0\": shape [2, 3] of F32 needs 24 bytes, data holds 23");
  TensorFile reserved;
  reserved.tensors.push_back(make_tensor<float>("__metadata__", {1.0f}));
  expect_refused(reserved, "__metadata__");
  TensorFile negative;
  negative.tensors.push_back(make_tensor<float>("neg", {}, {0}));
  negative.tensors[0].shape = {-1, 0};
  expect_refused(negative, "tensor \"neg\": negative dimension");
  EXPECT_EQ(dir_entries(m_dir), std::vector<std::string>{"keep.safetensors"});
}

TEST_F(SafetensorsTest, FailedWriteWhenPathIsADirectory) {
  ASSERT_EQ(::mkdir(path("ckpt").c_str(), 0755), 0);
  put_bytes(path("ckpt/inside"), {1, 2, 3});
  try {
    write_safetensors(path("ckpt"), sample());
    ADD_FAILURE() << "writing over a directory did not throw";
  } catch (const CheckpointError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path("ckpt") + ": cannot rename", 0), 0u) << e.what();
  }
  struct stat st {};
  ASSERT_EQ(::stat(path("ckpt").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(file_bytes(path("ckpt/inside")), (std::vector<std::uint8_t>{1, 2, 3}));
  std::vector<std::string> entries = dir_entries(m_dir);
  EXPECT_EQ(entries, std::vector<std::string>{"ckpt"}) << "temporary file left behind";
}

TEST_F(SafetensorsTest, FailedWriteMidFileKeepsTheOldFile) {
  // A file-size limit makes write() fail with EFBIG part-way through the data, as a full disk
  // would; this works for root too, unlike an unwritable directory.
  write_safetensors(path("model.safetensors"), sample());
  const std::vector<std::uint8_t> before = file_bytes(path("model.safetensors"));
  TensorFile big;
  big.tensors.push_back(make_tensor<float>("big", std::vector<float>(1 << 16, 1.0f)));  // 256 KiB

  struct rlimit old_limit {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old_limit;
  small.rlim_cur = 64 * 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string message;
  try {
    write_safetensors(path("model.safetensors"), big);
  } catch (const IoError& e) {
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  ::signal(SIGXFSZ, old_handler);

  EXPECT_EQ(message.rfind(path("model.safetensors") + ": cannot write", 0), 0u) << message;
  EXPECT_CONTAINS(message, "File too large");
  EXPECT_EQ(file_bytes(path("model.safetensors")), before);
  EXPECT_EQ(dir_entries(m_dir), std::vector<std::string>{"model.safetensors"}) << "temporary file left behind";
  EXPECT_EQ(read_safetensors(path("model.safetensors")).tensors.size(), sample().tensors.size());
}

TEST_F(SafetensorsTest, FailedWriteWhenTheTemporaryCannotBeCreated) {
  write_safetensors(path("m.safetensors"), sample());
  const std::vector<std::uint8_t> before = file_bytes(path("m.safetensors"));
  // Something that is not ours already sits at the temporary path: it is neither used nor removed.
  const std::string tmp = path("m.safetensors") + ".tmp." + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(tmp.c_str(), 0755), 0);
  try {
    write_safetensors(path("m.safetensors"), TensorFile{});
    ADD_FAILURE();
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path("m.safetensors") + ": cannot create " + tmp, 0), 0u) << e.what();
  }
  EXPECT_EQ(file_bytes(path("m.safetensors")), before);
  struct stat st {};
  EXPECT_EQ(::stat(tmp.c_str(), &st), 0);
}

TEST_F(SafetensorsTest, FailedWriteInUnwritableDirectory) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into read-only directories; covered by the EFBIG test";
  write_safetensors(path("r.safetensors"), sample());
  const std::vector<std::uint8_t> before = file_bytes(path("r.safetensors"));
  ASSERT_EQ(::chmod(m_dir.c_str(), 0500), 0);
  try {
    write_safetensors(path("r.safetensors"), TensorFile{});
    ADD_FAILURE();
  } catch (const IoError& e) {
    EXPECT_CONTAINS(e.what(), path("r.safetensors") + ": cannot create");
    EXPECT_CONTAINS(e.what(), "Permission denied");
  }
  ::chmod(m_dir.c_str(), 0700);
  EXPECT_EQ(file_bytes(path("r.safetensors")), before);
}

// ---- corrupt files -------------------------------------------------------------------------------

TEST_F(SafetensorsTest, MissingFile) {
  EXPECT_EQ(read_error(path("nope.safetensors")),
            path("nope.safetensors") + ": cannot open (No such file or directory)");
  EXPECT_EQ(read_error(m_dir), m_dir + ": cannot open (Is a directory)");
}

TEST_F(SafetensorsTest, TooShort) {
  put_bytes(path("s"), {});
  EXPECT_CONTAINS(read_error(path("s")), "file too short (0 bytes");
  put_bytes(path("s"), {8, 0, 0});
  EXPECT_CONTAINS(read_error(path("s")), "file too short (3 bytes");
}

TEST_F(SafetensorsTest, Truncated) {
  write_safetensors(path("t"), sample());
  std::vector<std::uint8_t> bytes = file_bytes(path("t"));
  // Cut into the data: the tensors at the end no longer fit.
  std::vector<std::uint8_t> cut(bytes.begin(), bytes.end() - 3);
  put_bytes(path("t"), cut);
  std::string msg = read_error(path("t"));
  EXPECT_CONTAINS(msg, ": data_offsets [");
  EXPECT_CONTAINS(msg, "data bytes (truncated file?)");
  // Cut into the header.
  cut.assign(bytes.begin(), bytes.begin() + 20);
  put_bytes(path("t"), cut);
  EXPECT_CONTAINS(read_error(path("t")), "exceeds the 12 bytes after it");
}

TEST_F(SafetensorsTest, CorruptHeaderLength) {
  write_safetensors(path("l"), sample());
  std::vector<std::uint8_t> bytes = file_bytes(path("l"));
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= std::uint64_t{bytes[i]} << (8 * i);
  auto with_length = [&](std::uint64_t length) {
    std::vector<std::uint8_t> out = bytes;
    for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(length >> (8 * i));
    return out;
  };
  put_bytes(path("l"), with_length(n ^ (std::uint64_t{1} << 63)));  // top bit flipped
  std::string msg = read_error(path("l"));
  EXPECT_CONTAINS(msg, "header length 92233720368547");
  EXPECT_CONTAINS(msg, "exceeds the");
  put_bytes(path("l"), with_length(n + 1));  // the header swallows the first data byte (0x00)
  EXPECT_CONTAINS(read_error(path("l")), "bad JSON header (NUL byte at header offset " + std::to_string(n) + ")");
  put_bytes(path("l"), with_length(n - 8));  // too short: the JSON is cut
  EXPECT_CONTAINS(read_error(path("l")), "bad JSON header (");
  put_bytes(path("l"), with_length(0));
  EXPECT_CONTAINS(read_error(path("l")), "bad JSON header (");
}

TEST_F(SafetensorsTest, BadJson) {
  put_raw(path("j"), "{\"a\": {\"dtype\": \"F32\", ", 0);
  EXPECT_CONTAINS(read_error(path("j")), "bad JSON header (");
  put_raw(path("j"), "[1, 2, 3]", 0);
  EXPECT_CONTAINS(read_error(path("j")), "bad header: expected a JSON object, got array");
  put_raw(
      path("j"),
      R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
      8);
  EXPECT_CONTAINS(read_error(path("j")), "duplicate key \"a\"");
  put_raw(path("j"), R"({"a": {"dtype": "F32", "dtype": "F64", "shape": [1], "data_offsets": [0, 4]}})", 4);
  EXPECT_CONTAINS(read_error(path("j")), "duplicate key \"dtype\"");
  // The same key in different objects is fine.
  put_raw(
      path("j"),
      R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
      8);
  EXPECT_EQ(read_safetensors(path("j")).tensors.size(), 2u);
}

TEST_F(SafetensorsTest, BadTensorEntries) {
  struct Case {
    std::string header;
    std::size_t data_size;
    std::string message;
  };
  const Case cases[] = {
      {R"({"w": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}})", 4,
       "tensor \"w\": unsupported dtype \"BF16\""},
      {R"({"w": {"dtype": 5, "shape": [2], "data_offsets": [0, 8]}})", 8, "tensor \"w\": dtype: expected a string"},
      {R"({"w": {"shape": [2], "data_offsets": [0, 8]}})", 8,
       "tensor \"w\": expected fields dtype, shape and data_offsets"},
      {R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8], "extra": 1}})", 8,
       "tensor \"w\": unexpected field \"extra\""},
      {R"({"w": [1, 2]})", 0, "tensor \"w\": expected an object, got array"},
      {R"({"w": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})", 8,
       "tensor \"w\": shape: expected a non-negative integer, got -2"},
      {R"({"w": {"dtype": "F32", "shape": 2, "data_offsets": [0, 8]}})", 8, "tensor \"w\": shape: expected an array"},
      {R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0]}})", 8,
       "tensor \"w\": data_offsets: expected [begin, end]"},
      {R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8.0]}})", 8,
       "tensor \"w\": data_offsets: expected a non-negative integer, got 8.0"},
      {R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}})", 8,
       "tensor \"w\": data_offsets [8, 0] end before begin"},
      {R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 16]}})", 8,
       "tensor \"w\": data_offsets [0, 16] beyond the 8 data bytes"},
      {R"({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", 8,
       "tensor \"w\": data_offsets [0, 8] span 8 bytes, F32 [3] needs 12"},
      {R"({"w": {"dtype": "F64", "shape": [2305843009213693952], "data_offsets": [0, 8]}})", 8,
       "tensor \"w\": data_offsets [0, 8] span 8 bytes"},
      {R"({"w": {"dtype": "F32", "shape": [9223372036854775807, 2], "data_offsets": [0, 8]}})", 8,
       "tensor \"w\": shape [9223372036854775807, 2] is too large"},
      {R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
       12, "tensor \"b\": data_offsets [4, 12] overlap tensor \"a\""},
      {R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})", 8,
       "tensor \"a\": data_offsets [4, 8] leave data bytes [0, 4) unused"},
      {R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})", 8,
       "4 trailing bytes after the last tensor's data"},
      {R"({"__metadata__": {"step": 5}})", 0, "metadata \"step\": expected a string, got 5"},
      {R"({"__metadata__": ["x"]})", 0, "__metadata__: expected an object of strings"},
  };
  for (const Case& c : cases) {
    put_raw(path("b"), c.header, c.data_size);
    std::string msg = read_error(path("b"));
    EXPECT_CONTAINS(msg, c.message) << c.header;
  }
}

TEST_F(SafetensorsTest, TrailingGarbage) {
  write_safetensors(path("g"), sample());
  std::vector<std::uint8_t> bytes = file_bytes(path("g"));
  bytes.push_back(0);
  put_bytes(path("g"), bytes);
  EXPECT_CONTAINS(read_error(path("g")), "1 trailing bytes after the last tensor's data");
}

TEST_F(SafetensorsTest, ReadsHeadersInAnyOrderAndPadding) {
  // Tensors listed out of data order, zero-size tensors, and a header without padding all read.
  put_raw(
      path("o"),
      R"({"z": {"dtype": "U8", "shape": [0], "data_offsets": [4, 4]}, "b": {"dtype": "U8", "shape": [2], "data_offsets": [2, 4]},)"
      R"( "a": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]}, "__metadata__": {}})",
      4);
  TensorFile f = read_safetensors(path("o"));
  ASSERT_EQ(f.tensors.size(), 3u);
  EXPECT_EQ(f.tensors[0].name, "a");
  EXPECT_EQ(f.tensors[1].name, "b");
  EXPECT_EQ(f.tensors[2].name, "z");
  EXPECT_EQ(f.values<std::uint8_t>("b"), (std::vector<std::uint8_t>{2, 3}));
}

}  // namespace
}  // namespace rlt
