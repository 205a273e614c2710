// `ordo slurm` where no Slurm controller answers (no test cluster needed): the failure names the
// controller the commands were pointed at, and usage errors are one line.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tests/e2e/cli_runner.h"

namespace ordo::testing {
namespace {

std::string LastLine(const std::string& text) {
  std::string trimmed = text;
  while (!trimmed.empty() && trimmed.back() == '\n') trimmed.pop_back();
  const size_t at = trimmed.rfind('\n');
  return at == std::string::npos ? trimmed : trimmed.substr(at + 1);
}

TEST(SlurmCommandTest, AnUnreachableControllerIsNamedBySlurmConf) {
  // Short timeouts and one retry: Slurm's commands themselves retry a missing configuration for a
  // minute.
  TempDir dir;
  WriteWhole(dir.path() / "slurm.json",
             R"({"command_timeout_s": 2, "retry": {"attempts": 2, "initial_backoff_s": 0.1}})");
  setenv("SLURM_CONF", "/nonexistent/ordo-test/slurm.conf", 1);
  const CliResult r = RunOrdo({"slurm", "--once", "--dry-run", "--config", dir.File("slurm.json")});
  unsetenv("SLURM_CONF");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string last = LastLine(r.err);
  EXPECT_NE(last.find("cycle failed"), std::string::npos) << r.err;
  EXPECT_NE(last.find("SLURM_CONF=/nonexistent/ordo-test/slurm.conf"), std::string::npos) << r.err;
}

TEST(SlurmCommandTest, AUsageErrorIsOneLine) {
  const CliResult r = RunOrdo({"slurm", "--every", "1m", "--silence", "5s"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_NE(r.err.find("--silence"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("see `ordo slurm --help`"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ordo::testing
