// A run stopped by a signal leaves what a failed run leaves: nothing (docs/interop.md, "--dump
// DIR"; docs/pictures.md). The built attn is started as a child process writing a large --dump,
// --npz, or --svg beside --dump and --html; once its temporary entries exist and hold data, it is
// frozen there (SIGSTOP, so that the moment is certain and not a race with the end of the write),
// sent SIGINT (a learner's Ctrl-C), SIGTERM, SIGHUP or SIGQUIT, and let go: it must die of that
// signal, with nothing left in its directory, not even the parents it made. A run killed where no
// handler can run (SIGKILL) leaves its temporary entry; the next run writing the same target
// removes it, and only it.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "process.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;
using attn::testing::TempDir;

namespace {

const std::string kAttn = ATTN_BINARY;

// attn started in the background, its output in files under `logs`.
struct Child {
  pid_t pid = -1;
  int status = 0;
  bool reaped = false;
  Child(const std::vector<std::string>& args, const fs::path& logs, bool ignore_hup = false) {
    std::vector<std::string> argv = {kAttn};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string out = (logs / "stdout").string(), err = (logs / "stderr").string();
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      const rlimit no_core{0, 0};
      setrlimit(RLIMIT_CORE, &no_core);  // SIGQUIT's default action would write a core file
      if (ignore_hup) signal(SIGHUP, SIG_IGN);  // as nohup starts it
      const int in = open("/dev/null", O_RDONLY);
      const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(in, 0);
      dup2(o, 1);
      dup2(e, 2);
      std::vector<char*> a;
      for (auto& s : argv) a.push_back(s.data());
      a.push_back(nullptr);
      execv(a[0], a.data());
      _exit(127);
    }
  }
  ~Child() {
    if (!reaped) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
  }
  bool exited() {
    if (!reaped && waitpid(pid, &status, WNOHANG) == pid) reaped = true;
    return reaped;
  }
  void wait() {
    if (!reaped) waitpid(pid, &status, 0);
    reaped = true;
  }
};

// Polls every millisecond until `ready` holds (true) or the child ended or a minute passed (false).
bool wait_for(Child& child, const std::function<bool()>& ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return true;
    if (child.exited()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> all;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    all.insert(fs::relative(it->path(), dir).string());
  return all;
}

// The names, one per line, so that a failed check shows them.
std::string joined(const std::set<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += n + "\n";
  return s;
}

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

std::size_t entries_in(const fs::path& dir) {
  std::error_code ec;
  std::size_t n = 0;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) ++n;
  return n;
}

std::string staging_name(const std::string& target, pid_t pid) { return "." + target + ".tmp-" + std::to_string(pid); }

std::string signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
  }
  return std::to_string(sig);
}

// Starts attn with `args` (writing under `root`), waits until `writing` says its output is being
// written, freezes it there, sends `sig` and lets it go; checks that it died of `sig`, printed
// nothing, and left `root` empty.
void interrupt_while_writing(const fs::path& root, const std::vector<std::string>& args, int sig,
                             const std::function<bool(pid_t)>& writing) {
  TempDir logs{"attn-interrupt-logs"};
  Child child(args, logs.path);
  const pid_t pid = child.pid;
  REQUIRE(wait_for(child, [&writing, pid]() { return writing(pid); }));
  REQUIRE(kill(pid, SIGSTOP) == 0);
  int stopped = 0;
  REQUIRE(waitpid(pid, &stopped, WUNTRACED) == pid);
  REQUIRE(WIFSTOPPED(stopped));
  REQUIRE(writing(pid));  // still part-way: nothing has moved into place
  REQUIRE(kill(pid, sig) == 0);
  REQUIRE(kill(pid, SIGCONT) == 0);
  child.wait();
  INFO("signal: " << signal_name(sig));
  INFO("stderr: " << attn::testing::read_file(logs.path / "stderr"));
  CHECK(WIFSIGNALED(child.status));
  CHECK(WTERMSIG(child.status) == sig);
  CHECK(attn::testing::read_file(logs.path / "stdout").empty());
  CHECK(joined(listing(root)) == "");
}

// A process id that is no longer a process: a child that has ended and been reaped.
pid_t dead_pid() {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(kill(pid, 0) != 0);
  return pid;
}

}  // namespace

TEST_CASE("Ctrl-C or SIGQUIT during a large --dump removes the staged dump and the parent it made") {
  // 23 files, 39 MB: the signal comes once the first file is written, while the rest are.
  for (const int sig : {SIGINT, SIGQUIT}) {
    TempDir root{"attn-interrupt-dump"};
    const fs::path out = root.path / "out";
    interrupt_while_writing(root.path, {"lesson", "heads", "--seq-len", "1024", "--d-in", "64", "--d-out", "64", "--dump", (out / "d").string()},
                            sig, [&out](pid_t pid) { return entries_in(out / staging_name("d", pid)) > 0; });
  }
}

TEST_CASE("SIGTERM during a large --npz removes the partial archive and the parent it made") {
  TempDir root{"attn-interrupt-npz"};
  const fs::path out = root.path / "out";
  interrupt_while_writing(root.path, {"lesson", "heads", "--seq-len", "1024", "--d-in", "64", "--d-out", "64", "--npz", (out / "d.npz").string()},
                          SIGTERM, [&out](pid_t pid) {
                            std::error_code ec;
                            const auto size = fs::file_size(out / staging_name("d.npz", pid), ec);
                            return !ec && size > 0;
                          });
}

TEST_CASE("SIGHUP while --svg pictures are written beside --dump and --html leaves none of the three") {
  // The dump and the page are staged first; the signal comes once a picture has been written.
  TempDir root{"attn-interrupt-svg"};
  const fs::path pics = root.path / "pics";
  interrupt_while_writing(root.path,
                          {"lesson", "heads", "--seq-len", "256", "--d-in", "64", "--d-out", "64", "--dump",
                           (root.path / "d").string(), "--html", (root.path / "page.html").string(), "--svg", pics.string()},
                          SIGHUP, [&pics](pid_t) { return entries_in(pics) > 0; });
}

TEST_CASE("a signal ignored when attn starts (nohup) stays ignored: the run completes") {
  TempDir root{"attn-interrupt-nohup"};
  TempDir logs{"attn-interrupt-logs"};
  const fs::path pics = root.path / "pics";
  Child child({"lesson", "heads", "--seq-len", "256", "--d-in", "64", "--d-out", "64", "--dump", (root.path / "d").string(),
               "--svg", pics.string()},
              logs.path, /*ignore_hup=*/true);
  REQUIRE(wait_for(child, [&pics]() { return entries_in(pics) > 0; }));
  kill(child.pid, SIGHUP);
  child.wait();
  INFO("stderr: " << attn::testing::read_file(logs.path / "stderr"));
  CHECK(WIFEXITED(child.status));
  CHECK(WEXITSTATUS(child.status) == 0);
  CHECK(fs::exists(root.path / "d" / "manifest.json"));
  CHECK(entries_in(pics) == 4);  // heads-stage08-attn_weights-b{0,1}-h{0,1}.svg, nothing else
}

TEST_CASE("the next run removes the staging a killed run left, and nothing else") {
  TempDir root{"attn-interrupt-stale"};
  const fs::path out = root.path / "out", pics = root.path / "pics";
  fs::create_directories(out);
  fs::create_directories(pics);
  const std::string dead = std::to_string(dead_pid()), alive = std::to_string(getpid());
  auto make_dir = [](const fs::path& p) {
    fs::create_directories(p);
    std::ofstream(p / "s01_x.npy") << "partial";
  };
  auto make_file = [](const fs::path& p) { std::ofstream(p) << "partial"; };
  // Left by runs that are gone: removed.
  make_dir(out / (".d.tmp-" + dead));
  make_file(out / (".d.npz.tmp-" + dead));
  make_file(pics / (".causal-stage06-attn_weights.svg.tmp-" + dead));
  make_file(out / ".d.tmp-999999999");  // past any pid_max: no process has it
  // A live process's (this test's), another target's, and names that only look alike: kept.
  const std::set<std::string> kept = {
      ".d.tmp-" + alive, ".e.tmp-" + dead, ".d.tmp-0" + dead, ".d.tmp-" + dead + "x", ".d.tmp-", "d.tmp-" + dead,
      ".d.npz.tmp--" + dead, "..d.tmp-" + dead};
  for (const auto& name : kept) make_file(out / name);

  const auto r = attn::testing::run({kAttn, "lesson", "causal", "--dump", (out / "d").string(), "--npz", (out / "d.npz").string(),
                                     "--svg", pics.string()});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  std::set<std::string> expected = kept;
  expected.insert("d");
  expected.insert("d.npz");
  CHECK(joined(names_in(out)) == joined(expected));
  CHECK(joined(names_in(pics)) == joined({"causal-stage06-attn_weights.svg", "causal-stage07-attn_weights_2.svg"}));
}
