#include "ordo/adapters/slurm/process_slurm_client.h"

#include <fcntl.h>
#include <poll.h>
// kill() is POSIX and declared here; <csignal> promises only the C library's signal functions.
#include <signal.h>  // NOLINT(modernize-deprecated-headers)
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

extern char** environ;

namespace ordo::slurm {
namespace {

constexpr size_t kMaxStreamBytes = size_t{64} << 20;

struct Pipe {
  int fds[2] = {-1, -1};
  ~Pipe() {
    for (int& fd : fds) {
      if (fd >= 0) close(fd);
    }
  }
};

Error SystemError(const std::string& what) {
  return Error{ErrorCode::kIo, "", what + ": " + std::strerror(errno)};
}

}  // namespace

Result<CommandResult> ProcessSlurmClient::Run(const std::vector<std::string>& argv,
                                              double timeout_s) {
  if (argv.empty()) return Fail(Error{ErrorCode::kInternal, "", "empty command"});
  Pipe out;
  Pipe err;
  if (pipe2(out.fds, O_CLOEXEC) != 0 || pipe2(err.fds, O_CLOEXEC) != 0) {
    return Fail(SystemError("pipe"));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fds[1], 2);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    errno = rc;
    return Fail(SystemError("cannot run " + argv[0]));
  }
  close(out.fds[1]);
  out.fds[1] = -1;
  close(err.fds[1]);
  err.fds[1] = -1;

  CommandResult result;
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_s));
  bool killed = false;
  bool sigkill_sent = false;
  auto kill_deadline = deadline;
  pollfd fds[2] = {{out.fds[0], POLLIN, 0}, {err.fds[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_streams = 2;
  char buffer[65536];
  while (open_streams > 0) {
    const auto now = Clock::now();
    if (!killed && now >= deadline) {
      // Past its time: ask it to stop, then insist. Its pipes close when it dies.
      kill(pid, SIGTERM);
      killed = true;
      result.timed_out = true;
      kill_deadline = now + std::chrono::seconds(1);
    } else if (killed && now >= kill_deadline) {
      // A grandchild may still hold the pipes open after the command is gone: stop reading.
      if (sigkill_sent) break;
      kill(pid, SIGKILL);
      sigkill_sent = true;
      kill_deadline = now + std::chrono::seconds(2);
    }
    const auto until = killed ? kill_deadline : deadline;
    const int wait_ms = static_cast<int>(std::clamp<long long>(
        std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count() + 1, 1,
        1000));
    const int n = poll(fds, 2, wait_ms);
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t got = read(fds[i].fd, buffer, sizeof(buffer));
      if (got > 0) {
        if (sinks[i]->size() < kMaxStreamBytes) sinks[i]->append(buffer, static_cast<size_t>(got));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        fds[i].fd = -1;
        --open_streams;
      }
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Fail(SystemError("waitpid"));
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  return result;
}

}  // namespace ordo::slurm
