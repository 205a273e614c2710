// A one-line progress bar on stderr, redrawn in place: for long commands run by a person at a
// terminal. Commands create one only when stderr is a terminal (isatty), so scripts and tests that
// read stderr see nothing of it.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace ordo::cli {

/// "[########............]  3/16  mixed-control: ordo-full  4.2 s", cut to `columns` - 1
/// characters: a line that wraps can no longer be redrawn with a carriage return.
std::string ProgressLine(int done, int total, std::string_view what, double seconds, int columns);

class ProgressBar {
 public:
  ProgressBar() = default;
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  /// Erases the bar: an error printed on the way out starts on a clean line.
  ~ProgressBar() { Clear(); }

  /// Redraws the bar: `done` of `total` steps finished, `what` is running now.
  void Show(int done, int total, std::string_view what);
  /// Erases the bar's line, so what is printed next starts on a clean line. Idempotent.
  void Clear();

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  bool shown_ = false;
};

}  // namespace ordo::cli
