#include "damage_log.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "analysis/summary_bytes.h"

namespace parlot::tool {
namespace {

/// Damage named on the summary line; the rest are counted.
constexpr std::size_t kNamed = 3;

bool is_this_host(const std::string& host) {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return false;
  return host == name;
}

/// Entries of take_bytes(): a kind, a text, and for kListed the state.
enum Entry : std::uint64_t { kListed = 1, kUnreadable = 2, kDamage = 3, kCutShort = 4 };

}  // namespace

ProcessState process_state(const ProcessMetadata& m) {
  if (m.end_ns != 0) return ProcessState::kFinished;
  if (m.pid > 0 && m.pid <= 0x7fffffff && is_this_host(m.host) &&
      (::kill(static_cast<pid_t>(m.pid), 0) == 0 || errno == EPERM)) {
    return ProcessState::kRunning;
  }
  return ProcessState::kEnded;
}

DamageLog& DamageLog::get() {
  static DamageLog log;
  return log;
}

void DamageLog::listed(const std::filesystem::path& process_dir, const ProcessMetadata& m) {
  const ProcessState state = process_state(m);
  const std::lock_guard<std::mutex> guard(lock_);
  listed_[process_dir.string()] = state;
}

void DamageLog::add_message(const std::string& message, bool whole_process) {
  if (!message_set_.insert(message).second) return;
  messages_.push_back(message);
  if (!whole_process) ++other_damage_;
}

void DamageLog::unreadable_process(const UnreadableProcess& p) {
  const std::lock_guard<std::mutex> guard(lock_);
  if (!unreadable_.insert(p.directory.string()).second) return;
  add_message(p.message, true);
}

void DamageLog::damaged(const std::string& message) {
  const std::lock_guard<std::mutex> guard(lock_);
  add_message(message, false);
}

void DamageLog::opened(const ProcessTrace& p) {
  const bool finished = p.metadata.end_ns != 0;
  for (const auto& w : p.warnings) {
    // The runtime writes the function table with a thread's first block: a
    // process that has not finished may not have one yet.
    const bool no_table_yet = !finished && w.starts_with((p.directory / "functions").string());
    if (!no_table_yet) damaged(w);
  }
  for (const auto& e : p.errors) damaged(e);
}

int DamageLog::thread_read(const ThreadTraceSummary& s) {
  if (s.trailer) return 0;
  ProcessState state = ProcessState::kEnded;
  {
    const std::lock_guard<std::mutex> guard(lock_);
    const auto it = listed_.find(s.path.parent_path().string());
    if (it != listed_.end()) state = it->second;
  }
  if (state == ProcessState::kRunning) return 0;  // still being written
  // A killed process leaves each thread file after its last whole block;
  // a process that finished closed every stream it could stop (one it
  // could not, frozen, ends at a block boundary too).
  if (s.ends_at_block_boundary) {
    const std::lock_guard<std::mutex> guard(lock_);
    cut_short_.insert(s.path.string());
    return 0;
  }
  damaged(fmt::format("{}: offset {}: {}", s.path.string(), s.damage_offset, s.damage));
  return 1;
}

bool DamageLog::any_damage() const {
  const std::lock_guard<std::mutex> guard(lock_);
  return !messages_.empty();
}

std::string DamageLog::summary() const {
  const std::lock_guard<std::mutex> guard(lock_);
  const std::size_t cut = cut_short_.size();
  const std::string cut_text = fmt::format("{} thread{} cut short", cut, cut == 1 ? "" : "s");
  if (messages_.empty()) {
    if (cut == 0) return {};
    return fmt::format(
        "parlot-read: {} (the process ended without finishing its trace; each is read up to "
        "its last complete block)\n",
        cut_text);
  }
  std::string head;
  if (!unreadable_.empty()) {
    const std::size_t all = listed_.size() + unreadable_.size();
    head = fmt::format("{} of {} process{} could not be read", unreadable_.size(), all,
                       all == 1 ? "" : "es");
  }
  if (other_damage_ > 0) {
    head += fmt::format("{}{} damaged file{}", head.empty() ? "" : ", ", other_damage_,
                        other_damage_ == 1 ? "" : "s");
  }
  // Sorted, so that the line does not depend on which decoding thread
  // found what first (the paths order them by process directory).
  std::vector<std::string> sorted = messages_;
  std::sort(sorted.begin(), sorted.end());
  std::string named;
  for (std::size_t i = 0; i < sorted.size() && i < kNamed; ++i) {
    named += (i == 0 ? "" : "; ") + sorted[i];
  }
  if (messages_.size() > kNamed) named += fmt::format("; and {} more", messages_.size() - kNamed);
  return fmt::format("parlot-read: {}: {}{}\n", head, named,
                     cut == 0 ? "" : fmt::format(" ({} more {})", cut, cut_text));
}

int DamageLog::exit_status() const {
  const std::lock_guard<std::mutex> guard(lock_);
  if (messages_.empty()) return 0;
  return listed_.empty() && !unreadable_.empty() ? 1 : 2;
}

std::string DamageLog::take_bytes() {
  const std::lock_guard<std::mutex> guard(lock_);
  analysis::SummaryWriter out;
  for (const auto& [dir, state] : listed_) {
    out.number(kListed);
    out.text(dir);
    out.number(static_cast<std::uint64_t>(state));
  }
  for (const auto& m : messages_) {
    out.number(kDamage);
    out.text(m);
  }
  for (const auto& dir : unreadable_) {
    out.number(kUnreadable);
    out.text(dir);
  }
  for (const auto& f : cut_short_) {
    out.number(kCutShort);
    out.text(f);
  }
  out.number(0);
  listed_.clear();
  unreadable_.clear();
  messages_.clear();
  message_set_.clear();
  other_damage_ = 0;
  cut_short_.clear();
  return out.take();
}

void DamageLog::merge_bytes(std::string_view bytes) {
  analysis::SummaryReader in(bytes);
  std::map<std::string, ProcessState> listed;
  std::vector<std::string> messages, unreadable, cut;
  for (std::uint64_t kind = in.number(); kind != 0; kind = in.number()) {
    std::string text = in.text();
    switch (kind) {
      case kListed: {
        const std::uint64_t state = in.number();
        if (state > static_cast<std::uint64_t>(ProcessState::kEnded)) {
          throw std::runtime_error("damage log from another rank: bad process state");
        }
        listed[std::move(text)] = static_cast<ProcessState>(state);
        break;
      }
      case kDamage:
        messages.push_back(std::move(text));
        break;
      case kUnreadable:
        unreadable.push_back(std::move(text));
        break;
      case kCutShort:
        cut.push_back(std::move(text));
        break;
      default:
        throw std::runtime_error("damage log from another rank: unknown entry");
    }
  }
  in.expect_done();
  const std::lock_guard<std::mutex> guard(lock_);
  listed_.merge(listed);
  // A message is about a whole process when it names an unreadable
  // process's `process` file.
  for (auto& dir : unreadable) unreadable_.insert(std::move(dir));
  for (const auto& m : messages) {
    bool whole = false;
    for (const auto& dir : unreadable_) {
      if (m.starts_with(dir + "/process:")) whole = true;
    }
    add_message(m, whole);
  }
  for (auto& f : cut) cut_short_.insert(std::move(f));
}

}  // namespace parlot::tool
