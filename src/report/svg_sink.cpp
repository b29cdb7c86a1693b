#include "report/svg_sink.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>

#include "report/staging.hpp"

namespace attn::report {

namespace {

// --- the directory ---------------------------------------------------------------------------

bool is_dir(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::string parent_of(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const auto slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return p.substr(0, slash);
}

}  // namespace

std::string svg_dir_problem(const std::string& dir) {
  if (dir.empty()) return "an empty path";
  if (exists(dir)) {
    if (!is_dir(dir)) return "'" + dir + "', which is not a directory";
    if (access(dir.c_str(), W_OK | X_OK) != 0) return "'" + dir + "', a directory without write permission";
    return "";
  }
  std::string up = parent_of(dir);
  while (!exists(up)) up = parent_of(up);
  if (!is_dir(up)) return "'" + dir + "', under '" + up + "', which is not a directory";
  if (access(up.c_str(), W_OK | X_OK) != 0) return "'" + dir + "', under '" + up + "', which is not writable";
  return "";
}

std::string svg_size_problem(const Report& report) {
  for (const Stage& s : report.stages())
    for (const Item& item : s.items)
      if (const auto* t = std::get_if<TensorItem>(&item); t && t->attention) {
        const PanelSet set = panels_of(*t);
        if (set.rows > kMaxSvgSide || set.cols > kMaxSvgSide) return t->name + " " + shape_str(t->shape);
      }
  return "";
}

bool PanelSelection::selects(const Pick& pick, const std::vector<std::size_t>& index) const {
  if (pick.batch >= 0 && index.size() >= 1 && index[0] != static_cast<std::size_t>(pick.batch)) return false;
  if (pick.head >= 0 && index.size() >= 2 && index[1] != static_cast<std::size_t>(pick.head)) return false;
  return true;
}

bool PanelSelection::selects(const std::vector<std::size_t>& index) const {
  if (picks.empty()) return true;
  for (const Pick& p : picks)
    if (selects(p, index)) return true;
  return false;
}

std::string svg_unmatched_pick(const Report& report, const PanelSelection& selection, std::size_t& count,
                               std::string& available, const PanelView& view) {
  count = 0;
  std::vector<bool> used(selection.picks.size(), false);
  std::size_t batches = 0, heads = 0;  // the largest counts seen, for the message
  for (const Stage& s : report.stages())
    for (const Item& item : s.items)
      if (const auto* t = std::get_if<TensorItem>(&item); t && t->attention)
        for (const Panel& p : panels_of(*t, view).panels) {
          if (p.index.size() >= 1) batches = std::max(batches, p.index[0] + 1);
          if (p.index.size() >= 2) heads = std::max(heads, p.index[1] + 1);
          if (!selection.selects(p.index)) continue;
          ++count;
          for (std::size_t k = 0; k < selection.picks.size(); ++k) used[k] = used[k] || selection.selects(selection.picks[k], p.index);
        }
  for (std::size_t k = 0; k < selection.picks.size(); ++k) {
    const auto& pick = selection.picks[k];
    // A pick of an axis no tensor has, or of an index past its end, draws nothing: say what exists.
    const bool batch_missing = pick.batch >= 0 && static_cast<std::size_t>(pick.batch) >= batches;
    const bool head_missing = pick.head >= 0 && static_cast<std::size_t>(pick.head) >= heads;
    if (!used[k] || batch_missing || head_missing) {
      available = (batches ? "b0..b" + std::to_string(batches - 1) : std::string("no batch axis")) + ", " +
                  (heads ? "h0..h" + std::to_string(heads - 1) : std::string("no head axis"));
      return pick.text;
    }
  }
  return "";
}

std::string svg_file_name(const std::string& lesson, std::size_t stage, std::size_t total_stages,
                          const std::string& tensor, const std::vector<std::size_t>& index) {
  const std::size_t digits = std::max<std::size_t>(2, std::to_string(total_stages).size());
  std::string n = std::to_string(stage);
  n.insert(0, digits > n.size() ? digits - n.size() : 0, '0');
  std::string name;
  for (char c : tensor) name += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ? c : '_';
  std::string file = lesson + "-stage" + n + "-" + name;
  static const char* kAxes[] = {"b", "h"};
  for (std::size_t a = 0; a < index.size(); ++a)
    file += "-" + std::string(index.size() <= 2 ? kAxes[a] : "i") + std::to_string(index[a]);
  return file + ".svg";
}
void SvgSink::begin(const Header& header, std::size_t) { header_ = header; }

// Every picture of a run is registered at once, beside the dump, the archive, the page and their
// directories.
static_assert(kMaxSvgFiles + 16 <= kMaxRemovedOnSignal, "the signal handler's table holds every picture");

void SvgSink::commit() {
  for (std::size_t i = 0; i < written_.size(); ++i) {
    if (std::rename(staged_[i].c_str(), (dir_ + "/" + written_[i]).c_str()) == 0) continue;
    const std::string why = std::strerror(errno);
    for (std::size_t j = 0; j < i; ++j) std::remove((dir_ + "/" + written_[j]).c_str());  // this run's, already moved
    throw std::runtime_error("could not write " + dir_ + "/" + written_[i] + ": " + why);
  }
  committed_ = true;
  removed_on_signal_.clear();
}

SvgSink::~SvgSink() {
  if (committed_) return;
  for (const std::string& tmp : staged_) std::remove(tmp.c_str());
}

void SvgSink::stage(const Stage& s, std::size_t total) {
  std::set<std::string> used;  // two tensors of one name in a stage still get two files
  auto write = [&](const std::string& tensor, const std::vector<std::size_t>& index, const std::string& svg) {
    std::string name = svg_file_name(header_.lesson, s.index, total, tensor, index);
    for (int k = 2; used.count(name); ++k)
      name = svg_file_name(header_.lesson, s.index, total, tensor + "-" + std::to_string(k), index);
    used.insert(name);
    const std::string path = dir_ + "/" + name;
    const std::string tmp = staging_path(path);
    remove_stale_staging(path);
    removed_on_signal_.push_back(RemovedOnSignal::tree(std::filesystem::absolute(tmp).string()));  // before it exists
    staged_.push_back(tmp);
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << svg;
    out.close();
    if (!out) throw std::runtime_error("could not write " + path + ": " + std::strerror(errno ? errno : EIO));
    written_.push_back(name);
  };
  for (const Item& item : s.items) {
    const auto* t = std::get_if<TensorItem>(&item);
    if (!t) continue;
    if (!t->curve_x.empty()) {  // a curve is one picture, whatever --svg-panels picks
      write(t->name, {}, svg_curve(header_, s, total, *t));
      continue;
    }
    if (!t->attention) continue;
    const PanelSet set = panels_of(*t, view_);
    // The mean of the heads is named apart from the heads: ...-attn_weights-mean-b0.svg.
    const std::string name = set.head_mean ? t->name + "-mean" : t->name;
    for (const Panel& p : set.panels)
      if (selection_.selects(p.index)) write(name, p.index, svg_picture(header_, s, total, *t, set, p));
  }
}

}  // namespace attn::report
