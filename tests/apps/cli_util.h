// Helpers for end-to-end tests of the `rltrain` binary: run it in a temp directory (fork/exec,
// stdout and stderr captured through files), snapshot a run directory's bytes, read metrics.csv.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/temp_dir.h"

#ifndef RLTRAIN_BIN
#error "RLTRAIN_BIN (the path of the rltrain binary) must be defined by the build"
#endif
#ifndef RLTRAIN_SOURCE_DIR
#error "RLTRAIN_SOURCE_DIR (the project root, for configs/) must be defined by the build"
#endif

namespace rlt::cli_test {

namespace fs = std::filesystem;

inline std::string cartpole_config() { return std::string(RLTRAIN_SOURCE_DIR) + "/configs/cartpole.toml"; }

// A fresh directory under the temp dir (tests/temp_dir.h).
struct TempDir : test::TempDir {
  TempDir() : test::TempDir("rltrain_cli") {}
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error(path + ": cannot write");
}

struct CliResult {
  int exit_code = -1;  // the exit status; 128 + signal when killed by one
  std::string out, err;
};

inline std::string describe(const std::vector<std::string>& args, const CliResult& r) {
  std::string s = "rltrain";
  for (const auto& a : args) s += " '" + a + "'";
  return s + "\n  exit " + std::to_string(r.exit_code) + "\n  stdout: " + r.out + "\n  stderr: " + r.err;
}

// A running rltrain: started in `cwd` with stdout and stderr going to files in `capture_dir`.
class CliProcess {
 public:
  CliProcess(const std::vector<std::string>& args, const std::string& cwd, const std::string& capture_dir)
      : m_out(capture_dir + "/.stdout." + std::to_string(s_counter)),
        m_err(capture_dir + "/.stderr." + std::to_string(s_counter)) {
    ++s_counter;
    std::vector<std::string> argv_s;
    argv_s.push_back(RLTRAIN_BIN);
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    m_pid = ::fork();
    if (m_pid < 0) throw std::runtime_error("fork failed");
    if (m_pid == 0) {
      const int out = ::open(m_out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = ::open(m_err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int null_in = ::open("/dev/null", O_RDONLY);
      if (out < 0 || err < 0 || null_in < 0 || ::chdir(cwd.c_str()) != 0) ::_exit(126);
      ::dup2(null_in, 0);
      ::dup2(out, 1);
      ::dup2(err, 2);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~CliProcess() {
    if (m_pid > 0) {
      ::kill(m_pid, SIGKILL);
      int status;
      ::waitpid(m_pid, &status, 0);
    }
  }
  CliProcess(const CliProcess&) = delete;
  CliProcess& operator=(const CliProcess&) = delete;

  void kill_now() {
    if (m_pid > 0) ::kill(m_pid, SIGKILL);
  }
  void send(int sig) {
    if (m_pid > 0) ::kill(m_pid, sig);
  }

  // Waits (at most `timeout`, then kills it) and collects the result.
  CliResult wait(std::chrono::seconds timeout = std::chrono::seconds(240)) {
    CliResult r;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    for (;;) {
      const pid_t done = ::waitpid(m_pid, &status, WNOHANG);
      if (done == m_pid) break;
      if (done < 0) throw std::runtime_error("waitpid failed");
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(m_pid, SIGKILL);
        ::waitpid(m_pid, &status, 0);
        ADD_FAILURE() << "rltrain ran past " << timeout.count() << " s and was killed";
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    m_pid = -1;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = read_file(m_out);
    r.err = read_file(m_err);
    std::remove(m_out.c_str());
    std::remove(m_err.c_str());
    return r;
  }

 private:
  inline static int s_counter = 0;
  pid_t m_pid = -1;
  std::string m_out, m_err;
};

// Runs rltrain with `args` in `cwd` and waits for it.
inline CliResult run_cli(const std::vector<std::string>& args, const std::string& cwd) {
  CliProcess p(args, cwd, cwd);
  return p.wait();
}

// Every regular file under `dir` (relative path -> bytes).
using Snapshot = std::map<std::string, std::string>;
inline Snapshot snapshot(const std::string& dir) {
  Snapshot s;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) s[fs::relative(e.path(), dir).string()] = read_file(e.path().string());
  return s;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) out.push_back(line);
  return out;
}

inline std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::stringstream ss(line);
  while (std::getline(ss, item, sep)) out.push_back(item);
  if (!line.empty() && line.back() == sep) out.push_back("");
  return out;
}

// metrics.csv: the header, then one row per iteration.
struct Metrics {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  int column(const std::string& name) const {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return static_cast<int>(i);
    return -1;
  }
};

inline Metrics read_metrics(const std::string& path) {
  Metrics m;
  const auto lines = lines_of(read_file(path));
  if (lines.empty()) return m;
  m.header = split(lines[0], ',');
  for (size_t i = 1; i < lines.size(); ++i) m.rows.push_back(split(lines[i], ','));
  return m;
}

// The rows without the columns that measure time (they differ run to run by nature).
inline std::vector<std::vector<std::string>> untimed_rows(const Metrics& m) {
  const int wall = m.column("wall_seconds"), sps = m.column("env_steps_per_second");
  std::vector<std::vector<std::string>> out;
  for (const auto& row : m.rows) {
    std::vector<std::string> kept;
    for (size_t i = 0; i < row.size(); ++i)
      if (static_cast<int>(i) != wall && static_cast<int>(i) != sps) kept.push_back(row[i]);
    out.push_back(kept);
  }
  return out;
}

}  // namespace rlt::cli_test
