#include "cli/terminal.hpp"

#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace attn::cli {

namespace {

bool set_and_not_empty(const char* v) { return v != nullptr && v[0] != '\0'; }

bool equals_ignoring_case(const char* a, const char* b) {
  if (!a) return false;
  for (; *a && *b; ++a, ++b)
    if (std::tolower(static_cast<unsigned char>(*a)) != std::tolower(static_cast<unsigned char>(*b))) return false;
  return *a == *b;
}

// --- raw mode, and its undoing from a signal handler -------------------------------------------
// A signal handler may only touch plain globals; these hold what it needs to put the terminal back.
int g_fd = -1;
termios g_saved;
termios g_raw;
volatile std::sig_atomic_t g_active = 0;
// Set by SIGCONT (after a stop) and SIGWINCH (a new window size): the page must be drawn again.
volatile std::sig_atomic_t g_redraw = 0;

constexpr int kFatalSignals[] = {SIGTERM, SIGHUP, SIGINT, SIGQUIT};
struct sigaction g_previous[sizeof kFatalSignals / sizeof kFatalSignals[0]];
struct sigaction g_previous_tstp, g_previous_cont, g_previous_winch;

void restore_and_reraise(int sig) {
  if (g_active) tcsetattr(g_fd, TCSANOW, &g_saved);  // async-signal-safe
  signal(sig, SIG_DFL);
  raise(sig);  // die of the same signal, so the parent sees what happened
}

void on_stop(int) {
  if (g_active) tcsetattr(g_fd, TCSANOW, &g_saved);  // the shell gets a sane terminal back
  signal(SIGTSTP, SIG_DFL);
  raise(SIGTSTP);
}

void on_continue(int) {
  struct sigaction sa {};
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTSTP, &sa, nullptr);
  if (g_active) tcsetattr(g_fd, TCSANOW, &g_raw);
  g_redraw = 1;
}

void on_resize(int) { g_redraw = 1; }

// Waits up to `ms` for one more byte of an escape sequence.
bool next_byte(int fd, unsigned char& c, int ms) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, ms) <= 0) return false;
  return read(fd, &c, 1) == 1;
}

}  // namespace

std::optional<ColorChoice> parse_color_choice(const std::string& text) {
  if (text == "auto") return ColorChoice::automatic;
  if (text == "always") return ColorChoice::always;
  if (text == "never") return ColorChoice::never;
  return std::nullopt;
}

report::ColorDepth color_depth(ColorChoice choice, bool stdout_tty, const char* no_color, const char* colorterm,
                               const char* term, const char* clicolor_force) {
  if (choice == ColorChoice::never) return report::ColorDepth::none;
  if (choice == ColorChoice::automatic) {
    // NO_COLOR first, as CMake and the clicolors convention order them; then CLICOLOR_FORCE
    // (set, not empty, not "0") paints into a pipe or a dumb terminal as --color always would.
    if (set_and_not_empty(no_color)) return report::ColorDepth::none;
    const bool forced = set_and_not_empty(clicolor_force) && std::strcmp(clicolor_force, "0") != 0;
    if (!forced && (!stdout_tty || equals_ignoring_case(term, "dumb"))) return report::ColorDepth::none;
  }
  if (equals_ignoring_case(colorterm, "truecolor") || equals_ignoring_case(colorterm, "24bit"))
    return report::ColorDepth::truecolor;
  return report::ColorDepth::xterm256;
}

std::size_t terminal_width(bool stdout_tty, const char* columns, int window_columns) {
  if (!stdout_tty) return 80;
  if (columns && *columns && std::strspn(columns, "0123456789") == std::strlen(columns) && std::strlen(columns) <= 5) {
    const long n = std::strtol(columns, nullptr, 10);
    if (n > 0) return static_cast<std::size_t>(n);
  }
  if (window_columns > 0) return static_cast<std::size_t>(window_columns);
  return 80;
}

Terminal probe_terminal(ColorChoice choice) {
  Terminal t;
  t.stdin_tty = isatty(STDIN_FILENO) == 1;
  t.stdout_tty = isatty(STDOUT_FILENO) == 1;
  int window = 0;
  winsize ws{};
  if (t.stdout_tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) window = ws.ws_col;
  t.width = terminal_width(t.stdout_tty, std::getenv("COLUMNS"), window);
  t.color = color_depth(choice, t.stdout_tty, std::getenv("NO_COLOR"), std::getenv("COLORTERM"), std::getenv("TERM"),
                        std::getenv("CLICOLOR_FORCE"));
  return t;
}

std::pair<std::size_t, std::size_t> window_size() {
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0) return {0, 0};
  return {ws.ws_col, ws.ws_row};
}

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

TerminalKeys::TerminalKeys(int fd) : fd_(fd) {
  if (tcgetattr(fd, &g_saved) != 0) throw std::runtime_error("cannot read the terminal's settings");
  g_fd = fd;
  g_raw = g_saved;
  // No line buffering, no echo, Ctrl-C and Ctrl-Z as plain bytes, Enter as '\r'. Output
  // processing stays on, so "\n" still starts a new line at the left margin.
  g_raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO | ISIG | IEXTEN);
  g_raw.c_iflag &= ~static_cast<tcflag_t>(IXON | ICRNL);
  g_raw.c_cc[VMIN] = 1;
  g_raw.c_cc[VTIME] = 0;

  struct sigaction sa {};
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = restore_and_reraise;
  for (std::size_t i = 0; i < sizeof kFatalSignals / sizeof kFatalSignals[0]; ++i)
    sigaction(kFatalSignals[i], &sa, &g_previous[i]);
  sa.sa_handler = on_stop;
  sigaction(SIGTSTP, &sa, &g_previous_tstp);
  sa.sa_handler = on_continue;
  sigaction(SIGCONT, &sa, &g_previous_cont);
  sa.sa_handler = on_resize;
  sigaction(SIGWINCH, &sa, &g_previous_winch);

  g_redraw = 0;
  g_active = 1;
  if (tcsetattr(fd, TCSAFLUSH, &g_raw) != 0) {
    g_active = 0;
    throw std::runtime_error("cannot put the terminal in raw mode");
  }
}

TerminalKeys::~TerminalKeys() {
  tcsetattr(fd_, TCSAFLUSH, &g_saved);
  g_active = 0;
  for (std::size_t i = 0; i < sizeof kFatalSignals / sizeof kFatalSignals[0]; ++i)
    sigaction(kFatalSignals[i], &g_previous[i], nullptr);
  sigaction(SIGTSTP, &g_previous_tstp, nullptr);
  sigaction(SIGCONT, &g_previous_cont, nullptr);
  sigaction(SIGWINCH, &g_previous_winch, nullptr);
}

report::Key TerminalKeys::read_key() {
  unsigned char c = 0;
  for (;;) {
    // SIGCONT (back from a stop) or SIGWINCH (a new size): draw the page again. The flag is looked
    // at between short polls, not only when read() is interrupted: a signal that came just before
    // read() began would interrupt nothing, and the page would wait for a key to be redrawn.
    if (g_redraw) {
      g_redraw = 0;
      return report::Key::redraw;
    }
    pollfd p{fd_, POLLIN, 0};
    const int ready = poll(&p, 1, 100);
    if (ready == 0 || (ready < 0 && errno == EINTR)) continue;
    const ssize_t n = ready > 0 ? read(fd_, &c, 1) : -1;
    if (n == 1) break;
    if (n < 0 && errno == EINTR) continue;
    return report::Key::quit;  // end of input: the terminal went away
  }
  switch (c) {
    case 0x1a: {  // Ctrl-Z: raw mode reads it as a byte, so attn stops itself as the shell expects
      // on_stop puts the terminal's settings back and stops; on_continue (fg) brings raw mode
      // back. raise() returns once attn runs again, and the page is drawn again.
      raise(SIGTSTP);
      // Where nothing can continue attn (an orphaned process group: no shell to say fg), the
      // kernel discards the stop and raise() returns at once, with no SIGCONT: raw mode and the
      // handler are put back here, as on_continue would have.
      on_continue(SIGCONT);
      g_redraw = 0;
      return report::Key::redraw;
    }
    case '\r': case '\n': case ' ': case 'n': case 'N':
      return report::Key::next;
    case 'p': case 'P': case 'b': case 'B':
      return report::Key::back;
    case 'q': case 'Q': case 0x03 /* Ctrl-C */: case 0x04 /* Ctrl-D */:
      return report::Key::quit;
    case 0x1b: {
      // Arrows and Page Up/Down arrive as ESC [ C, ESC [ D, ESC [ 5 ~, ESC [ 6 ~ (or ESC O C ...).
      unsigned char a = 0, b = 0;
      if (!next_byte(fd_, a, 50) || (a != '[' && a != 'O') || !next_byte(fd_, b, 50)) return report::Key::other;
      if (b == 'C') return report::Key::next;
      if (b == 'D') return report::Key::back;
      if (b == '5' || b == '6') {
        unsigned char tilde = 0;
        if (next_byte(fd_, tilde, 50) && tilde == '~') return b == '6' ? report::Key::next : report::Key::back;
      }
      return report::Key::other;
    }
    default:
      return report::Key::other;
  }
}

}  // namespace attn::cli
