// Runs the real `ordo` binary (path in ORDO_BINARY) and captures its exit, stdout and stderr, and
// finds the source tree (ORDO_SOURCE_DIR, or this file's location) for scenarios/.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ordo::testing {

struct CliResult {
  int exit_code = -1;  // the exit status; -1 when the process died of a signal
  int signal = 0;
  std::string out;
  std::string err;
};

inline std::string ReadWhole(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void WriteWhole(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// ORDO_BINARY from the environment (scripts set it), else the path CMake compiled in: ctest's
// ENVIRONMENT property cannot carry it beside ORDO_SOURCE_DIR through gtest_discover_tests,
// which splits the list into separate arguments.
inline std::string OrdoBinary() {
  if (const char* path = std::getenv("ORDO_BINARY"); path != nullptr && *path != '\0') return path;
#ifdef ORDO_TEST_BINARY
  return ORDO_TEST_BINARY;
#else
  return "ordo";
#endif
}

inline std::filesystem::path SourceDir() {
  if (const char* dir = std::getenv("ORDO_SOURCE_DIR"); dir != nullptr && *dir != '\0') return dir;
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
}

/// A fresh directory for one test's files, removed with the object.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ordo-e2e-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

/// Runs `program` (a path, or a name looked up in PATH) with `args` (no shell), stdout and stderr
/// to files in a temporary directory.
inline CliResult RunProgram(const std::string& program, const std::vector<std::string>& args) {
  TempDir dir;
  const std::string out_path = dir.File("stdout"), err_path = dir.File("stderr");
  const std::string& binary = program;
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  CliResult result;
  const pid_t pid = fork();
  if (pid == 0) {
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int in = open("/dev/null", O_RDONLY);
    if (out < 0 || err < 0 || in < 0) _exit(127);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    execvp(binary.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return result;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.out = ReadWhole(out_path);
  result.err = ReadWhole(err_path);
  return result;
}

/// Runs ORDO_BINARY with `args` (no shell), stdout and stderr to files in a temporary directory.
inline CliResult RunOrdo(const std::vector<std::string>& args) {
  return RunProgram(OrdoBinary(), args);
}

}  // namespace ordo::testing
