// `ordo compare`'s progress bar: drawn on stderr when stderr is a terminal (here a pseudo-terminal
// from forkpty), absent otherwise, so scripts and the other tests see unchanged output.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "tests/e2e/cli_runner.h"

namespace ordo::testing {
namespace {

struct TtyRun {
  std::string skip;  // why the run could not be made (no pseudo-terminal); empty when it ran
  int exit_code = -1;
  std::string out;       // stdout, redirected to a file
  std::string terminal;  // everything written to the terminal: stderr
};

// Runs ORDO_BINARY with stdin and stderr on a new pseudo-terminal and stdout to a file.
TtyRun RunOrdoOnTerminal(const std::vector<std::string>& args) {
  TtyRun run;
  TempDir dir;
  const std::string out_path = dir.File("stdout");
  const std::string binary = OrdoBinary();
  std::vector<char*> argv = {const_cast<char*>(binary.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid < 0) {
    run.skip = std::string("forkpty: ") + std::strerror(errno);
    return run;
  }
  if (pid == 0) {
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0 || dup2(out, STDOUT_FILENO) < 0) _exit(127);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  // Until the child closes the terminal: read() then fails with EIO (Linux) or returns 0.
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(master, buffer, sizeof buffer);
    if (n > 0) {
      run.terminal.append(buffer, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  close(master);
  int status = 0;
  if (waitpid(pid, &status, 0) == pid && WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  run.out = ReadWhole(out_path);
  return run;
}

std::vector<std::string> CompareArgs() {
  return {"compare",
          (SourceDir() / "scenarios" / "01-mixed-control.json").string(),
          (SourceDir() / "scenarios" / "03-training-heavy.json").string(),
          "--policies",
          "fifo,ordo",
          "--no-bound"};
}

TEST(CompareProgressTest, NothingOnStderrWhenItIsNotATerminal) {
  const CliResult r = RunOrdo(CompareArgs());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("mixed-control"), std::string::npos);
}

TEST(CompareProgressTest, ABarNamingEachScenarioAndPolicyOnATerminal) {
  const TtyRun r = RunOrdoOnTerminal(CompareArgs());
  if (!r.skip.empty()) GTEST_SKIP() << "no pseudo-terminal to run on (" << r.skip << ")";
  ASSERT_EQ(r.exit_code, 0) << r.terminal;
  // One redraw per step, before it runs: 2 scenarios x 2 policies.
  const char* const steps[] = {"]  0/4  mixed-control: fifo", "]  1/4  mixed-control: ordo",
                               "]  2/4  training-heavy: fifo", "]  3/4  training-heavy: ordo"};
  size_t at = 0;
  for (const char* step : steps) {
    at = r.terminal.find(step, at);
    ASSERT_NE(at, std::string::npos) << step << " not (in order) in: " << r.terminal;
  }
  EXPECT_NE(r.terminal.find("\r[##########.........."), std::string::npos) << r.terminal;
  // The bar is erased before the command ends: nothing of it is left on the last line.
  EXPECT_EQ(r.terminal.substr(r.terminal.size() - 4), "\r\033[K") << r.terminal;
  // stdout is the same table as without a terminal: the bar never goes there.
  EXPECT_NE(r.out.find("mixed-control"), std::string::npos);
  EXPECT_EQ(r.out.find('\r'), std::string::npos);
  EXPECT_EQ(r.out.find("0/4"), std::string::npos);
}

}  // namespace
}  // namespace ordo::testing
