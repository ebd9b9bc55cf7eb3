#include "top/top_screen.h"

#include <curses.h>
#include <unistd.h>

#include <cstdio>

namespace gpuq {

std::unique_ptr<TopScreen> TopScreen::Open(std::string* error) {
  if (isatty(STDOUT_FILENO) != 1 || isatty(STDIN_FILENO) != 1) {
    *error = "gpuq-agent top needs a terminal; use --once for a snapshot";
    return nullptr;
  }
  // newterm, not initscr: an unknown TERM is an error to report, not an
  // exit from inside ncurses.
  SCREEN* screen = newterm(nullptr, stdout, stdin);
  if (screen == nullptr) {
    *error =
        "gpuq-agent top cannot drive this terminal (TERM unknown to "
        "terminfo); use --once for a snapshot";
    return nullptr;
  }
  set_term(screen);
  cbreak();  // keys at once; Ctrl-C still signals (SIGINT stops top)
  noecho();
  keypad(stdscr, TRUE);
  // Esc alone (leaving the help) is told from the start of an escape
  // sequence by the time that follows it: 25 ms, not ncurses' default 1 s.
  set_escdelay(25);
  curs_set(0);
  return std::unique_ptr<TopScreen>(new TopScreen(screen));
}

TopScreen::~TopScreen() {
  endwin();
  delscreen(static_cast<SCREEN*>(screen_));
}

int TopScreen::ReadKey(int timeout_ms) {
  timeout(timeout_ms);
  const int key = getch();
  return key == ERR ? -1 : key;
}

int TopScreen::Width() const { return COLS; }
int TopScreen::Height() const { return LINES; }
int TopScreen::ResizeKey() { return KEY_RESIZE; }
int TopScreen::EscapeKey() { return 27; }

void TopScreen::Draw(const std::vector<std::string>& lines,
                     size_t header_line) {
  erase();
  for (size_t i = 0; i < lines.size() && static_cast<int>(i) < LINES; ++i) {
    const int attr = i == 0 ? A_BOLD : i == header_line ? A_REVERSE : 0;
    if (attr != 0) attron(attr);
    mvaddnstr(static_cast<int>(i), 0, lines[i].c_str(), COLS);
    if (attr != 0) attroff(attr);
  }
  refresh();
}

}  // namespace gpuq
