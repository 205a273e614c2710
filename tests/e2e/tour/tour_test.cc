// The README's five-minute tour, run as a new user would: every `$ORDO` line of its ```sh block,
// in order, from a fresh copy of scenarios/ and examples/ in a temporary directory (beside a link
// to the shared traces, as ../shared is beside a clone), each expected to exit 0. The lines are
// read from README.md itself, so the tour cannot drift from what is tested.
//
// What is not run as written: `make ...` lines (the build's own targets, tested elsewhere); the
// `slurm` line (it needs a Slurm controller: `make test-slurm`); lines reading ../shared when no
// shared traces are found (reported). The `serve ... &` line is started in the background with
// its port 8080 replaced by a free one (8080 may be taken on a test machine), and the same port is
// put into the `export ORDO_SERVER=...` line; the server must then stop with exit 0 on SIGTERM.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/cli_runner.h"

namespace ordo::testing {
namespace {

namespace fs = std::filesystem;

// The lines of the ```sh block under "## A five-minute tour".
std::vector<std::string> TourLines() {
  std::istringstream readme(ReadWhole(SourceDir() / "README.md"));
  std::vector<std::string> lines;
  std::string line;
  bool in_section = false, in_block = false;
  while (std::getline(readme, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## A five-minute tour";
    if (!in_section) continue;
    if (line.rfind("```", 0) == 0) {
      if (in_block) break;
      in_block = true;
      continue;
    }
    if (in_block) lines.push_back(line);
  }
  return lines;
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// Starts `bash -c SCRIPT` in `dir` with ORDO set; its output goes to `log`. Returns the pid.
pid_t StartShell(const fs::path& dir, const std::string& script, const fs::path& log) {
  const std::string binary = OrdoBinary(), dir_text = dir.string(), log_text = log.string();
  const pid_t pid = fork();
  if (pid == 0) {
    const int out = open(log_text.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int in = open("/dev/null", O_RDONLY);
    if (out < 0 || in < 0 || chdir(dir_text.c_str()) != 0) _exit(127);
    dup2(in, 0);
    dup2(out, 1);
    dup2(out, 2);
    setenv("ORDO", binary.c_str(), 1);
    execl("/bin/bash", "bash", "-c", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

int Wait(pid_t pid) {
  int status = 0;
  if (pid <= 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

fs::path SharedDir() {
  if (const char* dir = std::getenv("ORDO_SHARED_DIR"); dir != nullptr && *dir != '\0') return dir;
  return SourceDir().parent_path() / "shared";
}

TEST(TourTest, EveryOrdoLineOfTheReadmeTourExitsZero) {
  const std::vector<std::string> lines = TourLines();
  ASSERT_GT(lines.size(), 10u) << "no tour found in README.md";
  TempDir root;
  const fs::path clone = root.path() / "ordo";
  fs::create_directories(clone);
  for (const char* folder : {"scenarios", "examples"}) {
    fs::copy(SourceDir() / folder, clone / folder, fs::copy_options::recursive);
  }
  const bool have_shared = fs::exists(SharedDir() / "data");
  if (have_shared) fs::create_directory_symlink(fs::absolute(SharedDir()), root.path() / "shared");
  // The user's client settings must not leak in.
  for (const char* name : {"ORDO_SERVER", "ORDO_TOKEN", "ORDO_CONFIG"}) unsetenv(name);
  setenv("XDG_CONFIG_HOME", root.path().c_str(), 1);

  std::string exports;
  pid_t server = -1;
  fs::path server_log;
  std::string port;
  int ran = 0;
  // Files a skipped line would have written (the words of the line that name no file of the
  // clone): a later line that reads one is skipped too.
  std::vector<std::string> unwritten;
  auto reads_unwritten = [&](const std::string& line) {
    return std::any_of(unwritten.begin(), unwritten.end(), [&](const std::string& file) {
      return line.find(file) != std::string::npos;
    });
  };
  for (const std::string& line : lines) {
    if (line.rfind("export ", 0) == 0) {
      exports +=
          (port.empty() ? line : Replace(line, "127.0.0.1:8080", "127.0.0.1:" + port)) + "; ";
      continue;
    }
    if (line.rfind("$ORDO ", 0) != 0) continue;
    if (line.find("$ORDO slurm") == 0) continue;
    if (!have_shared && (line.find("../shared") != std::string::npos || reads_unwritten(line))) {
      std::cerr << "tour: skipped (no shared traces at " << SharedDir() << "): " << line << "\n";
      std::istringstream words(line);
      for (std::string word; words >> word;) {
        const bool names_file = word.find('.') != std::string::npos && word[0] != '-' &&
                                word.find("../shared") == std::string::npos;
        if (names_file && !fs::exists(clone / word)) unwritten.push_back(word);
      }
      continue;
    }
    const fs::path log = root.path() / ("line-" + std::to_string(++ran) + ".log");
    if (line.find("$ORDO serve ") == 0) {
      std::string command = Replace(line, "127.0.0.1:8080", "127.0.0.1:0 --port-file serve.port");
      ASSERT_EQ(command.back(), '&') << "the tour starts the server in the background: " << line;
      command.pop_back();
      server = StartShell(clone, "exec " + command, log);
      server_log = log;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
      while (port.empty() && std::chrono::steady_clock::now() < deadline) {
        std::ifstream in(clone / "serve.port");
        if (!(in >> port)) port.clear();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      ASSERT_FALSE(port.empty()) << line << "\n" << ReadWhole(log);
      continue;
    }
    const int exit = Wait(StartShell(clone, exports + line, log));
    EXPECT_EQ(exit, 0) << line << "\n" << ReadWhole(log).substr(0, 4000);
  }
  EXPECT_GE(ran, 10);
  ASSERT_GT(server, 0) << "the tour starts no server";
  kill(server, SIGTERM);
  EXPECT_EQ(Wait(server), 0) << ReadWhole(server_log).substr(0, 4000);
}

// examples/rates.csv is what examples/README.md says: the converter's output for m-large of the
// shared hourly ServeGen table, which the forecaster cannot read as it is.
TEST(TourTest, RatesExampleIsTheConvertersOutputOfTheSharedTrace) {
  const fs::path table = SharedDir() / "data" / "inference" / "servegen_rate_hourly.csv";
  if (!fs::exists(table)) GTEST_SKIP() << "no shared traces at " << SharedDir();
  TempDir dir;
  const std::string script = fs::absolute(SourceDir() / "scripts" / "servegen_rates.py").string();
  const int made = Wait(StartShell(
      dir.path(),
      script + " " + table.string() + " --model m-large --origin 2026-11-16T00:00:00Z > rates.csv",
      dir.path() / "convert.log"));
  ASSERT_EQ(made, 0) << ReadWhole(dir.path() / "convert.log");
  EXPECT_EQ(ReadWhole(dir.path() / "rates.csv"), ReadWhole(SourceDir() / "examples" / "rates.csv"));

  const std::vector<std::string> demand = {
      "forecast", "demand", "--per-gpu-rate", "40", "--start",  "2026-11-30T00:00:00Z",
      "--steps",  "4",      "--step-minutes", "60", "--history"};
  std::vector<std::string> raw = demand;
  raw.push_back(table.string());
  const CliResult refused = RunOrdo(raw);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("missing column `time`"), std::string::npos) << refused.err;
  std::vector<std::string> converted = demand;
  converted.push_back(dir.File("rates.csv"));
  const CliResult read = RunOrdo(converted);
  EXPECT_EQ(read.exit_code, 0) << read.err;
  EXPECT_NE(read.out.find("\"gpus\""), std::string::npos) << read.out;
}

}  // namespace
}  // namespace ordo::testing
