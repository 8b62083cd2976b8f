// TensorBoard event files for `rltrain train` (issue 20): every metrics.csv column as a scalar per
// iteration (step = env steps) and the resolved config as text, in the run directory, so that
// `tensorboard --logdir runs/` shows every run.
//
// The records are TensorBoard's own Event protos (apps/tensorboard_event.proto: the same message
// and field numbers, serialized by protobuf) in TFRecord framing (length, masked CRC-32C of the
// length, data, masked CRC-32C of the data; the CRC from Boost.CRC). Built only when protobuf
// (libprotobuf-dev, protobuf-compiler) and Boost's headers are found; otherwise available() is
// false, the writer does nothing and CMake says so.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace rlt {

class TensorBoardWriter {
 public:
  // Whether this rltrain was built with TensorBoard output.
  static bool available();

  // Opens a new event file in `dir` (events.out.tfevents.<time>.<host>.<pid>), named after every
  // event file already there so that TensorBoard, which reads a directory's files in name order,
  // reads them in the order they were written. resume_step >= 0: the run continues from a
  // checkpoint at that env-step count, and a SessionLog START at resume_step + 1 makes TensorBoard
  // drop what an earlier file logged past the checkpoint (those iterations are run again; the old
  // file is left as it is). ConfigError when the file cannot be created. Does nothing (and
  // path() is empty) when !available().
  TensorBoardWriter(const std::string& dir, std::int64_t resume_step);
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  // One event with a scalar per (tag, value), flushed.
  void add_scalars(std::int64_t step, const std::vector<std::string>& tags, const std::vector<double>& values);
  // Text (markdown) under `tag`, for TensorBoard's text plugin, flushed.
  void add_text(std::int64_t step, const std::string& tag, const std::string& markdown);

  const std::string& path() const { return m_path; }

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
  std::string m_path;
};

}  // namespace rlt
