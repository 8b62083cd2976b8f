// Helpers for tests of rltrain under mpirun (tests/apps/test_mpi.cpp, test_mpi_gpu.cpp): run a
// shell command on every process of `mpirun -np N`, skip where mpirun or the MPI build is missing.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "rl/distributed.h"
#include "tests/apps/cli_util.h"

namespace rlt::cli_test {

#ifndef RLTRAIN_MPIEXEC
#define RLTRAIN_MPIEXEC ""
#endif

// Skips the test unless mpirun and an MPI build of rltrain are here.
#define REQUIRE_MPI()                                                                                       \
  do {                                                                                                      \
    if (std::string(RLTRAIN_MPIEXEC).empty() || ::access(RLTRAIN_MPIEXEC, X_OK) != 0)                       \
      GTEST_SKIP() << "mpirun not found (install openmpi-bin libopenmpi-dev: tools/setup.sh)";             \
    if (!mpi_built()) GTEST_SKIP() << "rltrain built without MPI (configure with -DRLTRAIN_MPI=ON)";        \
  } while (0)

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// mpirun -np `np` running `inner` (a shell command; $R is rltrain, $RANK the process's rank) in cwd.
// Oversubscribed: the CI machine has 2 cores; as root, Open MPI wants --allow-run-as-root.
inline CliResult run_mpi(int np, const std::string& inner, const std::string& cwd, int timeout_s = 120) {
  const std::string wrapper = "R=" + quote(RLTRAIN_BIN) + "; RANK=$OMPI_COMM_WORLD_RANK; " + inner;
  std::string cmd = quote(RLTRAIN_MPIEXEC) + " --oversubscribe" + (::geteuid() == 0 ? " --allow-run-as-root" : "") +
                    " -np " + std::to_string(np) + " sh -c " + quote(wrapper);
  const std::string out = cwd + "/.mpi_out", err = cwd + "/.mpi_err";
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(cwd.c_str()) != 0) ::_exit(126);
    const std::string full = "exec timeout " + std::to_string(timeout_s) + " " + cmd + " >" + quote(out) + " 2>" +
                             quote(err) + " </dev/null";
    ::execl("/bin/sh", "sh", "-c", full.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

inline std::string show(const CliResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout: " + r.out + "\nstderr: " + r.err;
}

inline size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace rlt::cli_test
