// The ncurses side of `gpuq-agent top`: a full screen that shows the text
// lines RenderTop() made, and reads keys. Nothing here knows about queues.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace gpuq {

/// Thread-safety: one thread (ncurses is not thread-safe).
class TopScreen {
 public:
  /// Takes over the terminal on stdin/stdout. nullptr with *error when it
  /// cannot (no terminal, unknown TERM).
  static std::unique_ptr<TopScreen> Open(std::string* error);
  /// Gives the terminal back (endwin).
  ~TopScreen();
  TopScreen(const TopScreen&) = delete;
  TopScreen& operator=(const TopScreen&) = delete;

  /// Waits up to `timeout_ms` for a key: the key (ncurses codes, e.g.
  /// KEY_RESIZE after the terminal changed size), or -1.
  int ReadKey(int timeout_ms);
  int Width() const;
  int Height() const;
  /// Draws `lines` from the top, cut to the screen; line 0 in bold,
  /// `header_line` in reverse video.
  void Draw(const std::vector<std::string>& lines, size_t header_line);

  /// ncurses' code of the resize pseudo-key.
  static int ResizeKey();
  /// The code of the Esc key.
  static int EscapeKey();

 private:
  explicit TopScreen(void* screen) : screen_(screen) {}
  void* screen_;  // SCREEN*
};

}  // namespace gpuq
