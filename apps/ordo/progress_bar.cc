#include "progress_bar.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace ordo::cli {
namespace {

constexpr int kBarWidth = 20;

// The terminal's width on stderr; 80 when the terminal does not say (a pty nobody sized).
int TerminalColumns() {
  winsize size{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

}  // namespace

std::string ProgressLine(int done, int total, std::string_view what, double seconds, int columns) {
  const int filled = total > 0 ? std::clamp(done * kBarWidth / total, 0, kBarWidth) : 0;
  char counts[64];
  std::snprintf(counts, sizeof counts, "]  %d/%d  ", done, total);
  char clock[32];
  std::snprintf(clock, sizeof clock, "  %.1f s", seconds);
  std::string line = "[" + std::string(filled, '#') + std::string(kBarWidth - filled, '.') +
                     counts + std::string(what) + clock;
  const size_t room = static_cast<size_t>(std::max(columns - 1, 1));
  if (line.size() > room) line.resize(room);
  return line;
}

void ProgressBar::Show(int done, int total, std::string_view what) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  // \r back to the line's start, the bar, then ESC[K erases what a longer line left.
  std::fprintf(stderr, "\r%s\033[K",
               ProgressLine(done, total, what, seconds, TerminalColumns()).c_str());
  std::fflush(stderr);
  shown_ = true;
}

void ProgressBar::Clear() {
  if (!shown_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  shown_ = false;
}

}  // namespace ordo::cli
