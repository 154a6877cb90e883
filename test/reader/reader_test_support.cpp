#include "reader_test_support.h"

#include <gtest/gtest.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <typeinfo>

#include "parlot/call_stack_tracker.h"
#include "parlot/codec.h"

#ifndef PARLOT_TEST_SANITIZED
#define PARLOT_TEST_SANITIZED 0
#endif

namespace parlot::test {

// ---- Temporary directories -----------------------------------------------------

// ---- Paths ---------------------------------------------------------------------

namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

// Path of a sanitizer runtime this process has loaded ("libasan", "libubsan").
std::string loaded_library(const char* stem) {
  struct Search {
    const char* stem;
    std::string found;
  } search{stem, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        if (info->dlpi_name != nullptr && std::strstr(info->dlpi_name, s->stem) != nullptr &&
            s->found.empty()) {
          s->found = info->dlpi_name;
        }
        return 0;
      },
      &search);
  return search.found;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::uint64_t current_address_space() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmSize:", 0) == 0) return std::strtoull(line.c_str() + 7, nullptr, 10) * 1024;
  }
  return 0;
}

}  // namespace

std::string runtime_path() {
  return env_or("PARLOT_TEST_RUNTIME", PARLOT_TEST_RUNTIME_PATH);
}
std::string fixture_path() {
  return env_or("PARLOT_TEST_FIXTURE", PARLOT_TEST_FIXTURE_PATH);
}

std::string odd_names_fixture_path() {
  return env_or("PARLOT_TEST_ODD_NAMES_FIXTURE", PARLOT_TEST_ODD_NAMES_FIXTURE_PATH);
}
std::string read_tool_path() {
  return env_or("PARLOT_TEST_READ", PARLOT_TEST_READ_PATH);
}
bool sanitized_build() {
  return PARLOT_TEST_SANITIZED != 0;
}

// ---- Running programs -------------------------------------------------------------

RunResult run_program(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      double timeout_s, std::uint64_t limit_as_bytes) {
  RunResult r;
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);
  const double start = now_s();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(out_pipe[1]);
    close(err_pipe[0]);
    close(err_pipe[1]);
    for (const auto& e : env) putenv(strdup(e.c_str()));
    if (limit_as_bytes != 0) {
      const rlimit lim{limit_as_bytes, limit_as_bytes};
      setrlimit(RLIMIT_AS, &lim);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    std::fprintf(stderr, "execv %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  while (open_fds > 0) {
    const double left = start + timeout_s - now_s();
    if (left <= 0) {
      kill(pid, SIGKILL);
      r.timed_out = true;
      break;
    }
    const int n = poll(fds, 2, static_cast<int>(left * 1000) + 1);
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      char buf[65536];
      const ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else if (sinks[i]->size() < (64u << 20)) {  // keep at most 64 MiB of output
        sinks[i]->append(buf, static_cast<std::size_t>(got));
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.seconds = now_s() - start;
  r.exited = WIFEXITED(status);
  r.exit_status = r.exited ? WEXITSTATUS(status) : -1;
  r.signaled = WIFSIGNALED(status);
  r.signal = r.signaled ? WTERMSIG(status) : 0;
  return r;
}

ChildResult run_in_child(const std::function<int()>& fn, double timeout_s,
                         std::uint64_t extra_address_space) {
  ChildResult r;
  std::fflush(nullptr);
  const std::uint64_t base = current_address_space();
  const double start = now_s();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    if (extra_address_space != 0 && !sanitized_build()) {
      const rlimit lim{base + extra_address_space, base + extra_address_space};
      setrlimit(RLIMIT_AS, &lim);
    }
    int code = 0;
    try {
      code = fn();
    } catch (...) {
      code = 100;
    }
    std::fflush(nullptr);
    _exit(code);
  }
  int status = 0;
  for (;;) {
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (now_s() - start > timeout_s) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      r.timed_out = true;
      break;
    }
    usleep(2000);
  }
  r.seconds = now_s() - start;
  r.exited = WIFEXITED(status);
  r.exit_status = r.exited ? WEXITSTATUS(status) : -1;
  r.signaled = WIFSIGNALED(status);
  r.signal = r.signaled ? WTERMSIG(status) : 0;
  return r;
}

// ---- Real traces ------------------------------------------------------------------

std::string TraceKind::name() const {
  return std::string(compress ? (codec == 2 ? "lz2" : "lz") : "raw") +
         (buffer_kb ? "-" + std::to_string(buffer_kb) + "k" : "");
}

fs::path make_trace(const fs::path& parent, const TraceKind& kind, const std::string& program) {
  const fs::path dir = parent / kind.name();
  std::vector<std::string> env = {
      "PARLOT_DIR=" + dir.string(),
      std::string("PARLOT_COMPRESS=") + (kind.compress ? "1" : "0"),
      "PARLOT_CODEC=" + std::to_string(kind.codec),
      "PARLOT_QUIET=1",
      // No side records: these traces test the block structure and codec
      // of data blocks, at fixed offsets (side records: test/export).
      "PARLOT_CLOCK_EVENTS=0",
      "PARLOT_CALL_SITES=0",
  };
  if (kind.buffer_kb != 0) env.push_back("PARLOT_BUFFER_KB=" + std::to_string(kind.buffer_kb));
  std::string preload = runtime_path();
  if (sanitized_build() && std::getenv("PARLOT_TEST_RUNTIME") == nullptr) {
    // The sanitized runtime needs the sanitizer runtimes loaded first.
    const std::string asan = loaded_library("libasan");
    const std::string ubsan = loaded_library("libubsan");
    if (!ubsan.empty()) preload = ubsan + ":" + preload;
    if (!asan.empty()) preload = asan + ":" + preload;
    // The fixture itself is not instrumented: do not report its (libc) leaks.
    env.push_back("ASAN_OPTIONS=detect_leaks=0");
  }
  env.push_back("LD_PRELOAD=" + preload);
  const std::string fixture = program.empty() ? fixture_path() : program;
  const RunResult r = run_program({fixture}, env, 60);
  EXPECT_TRUE(r.exited && r.exit_status == 0)
      << "fixture " << fixture << " under " << preload << ": exit " << r.exit_status << " signal "
      << r.signal << "\n"
      << r.err;
  std::vector<fs::path> processes;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory()) processes.push_back(e.path());
  }
  EXPECT_EQ(processes.size(), 1u) << "process directories in " << dir << "\n" << r.err;
  if (processes.size() != 1) throw std::runtime_error("no trace made in " + dir.string());
  return processes[0];
}

std::vector<fs::path> thread_files(const fs::path& process_dir) {
  std::vector<std::pair<std::uint64_t, fs::path>> found;
  for (const auto& e : fs::directory_iterator(process_dir)) {
    const std::string n = e.path().filename().string();
    if (n.starts_with("thread-") && n.ends_with(".trace")) {
      found.emplace_back(std::strtoull(n.c_str() + 7, nullptr, 10), e.path());
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (auto& [i, p] : found) out.push_back(p);
  return out;
}

std::vector<std::uint8_t> read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& file, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

void copy_tree(const fs::path& from, const fs::path& to) {
  fs::copy(from, to, fs::copy_options::recursive);
}

// ---- Reading and classifying ------------------------------------------------------------

std::string ReadOutcome::describe() const {
  std::ostringstream s;
  switch (kind) {
    case Kind::kOk:
      s << "ok, " << events.size() << " events";
      if (summary && !summary->damage.empty()) {
        s << ", damage '" << summary->damage << "' at " << summary->damage_offset;
      }
      break;
    case Kind::kFormatError:
      s << "FormatError" << (error_from_tracker ? " (tracker)" : "") << " file " << error_file
        << " offset " << error_offset << ": " << what;
      break;
    case Kind::kOtherException:
      s << "other exception " << exception_type << ": " << what;
      break;
  }
  return s.str();
}

ReadOutcome read_thread_file(const fs::path& file, bool track, std::uint64_t function_count) {
  ReadOutcome o;
  bool in_tracker = false;
  try {
    ThreadEventReader reader(file);
    o.summary = reader.summary();
    std::optional<CallStackTracker> tracker;
    if (track) tracker.emplace(function_count, file);
    for (auto b = reader.next_batch(); !b.empty(); b = reader.next_batch()) {
      if (tracker) {
        in_tracker = true;
        for (const std::uint32_t v : b) {
          tracker->push(v);
          o.events.push_back(v);
        }
        in_tracker = false;
      } else {
        o.events.insert(o.events.end(), b.begin(), b.end());
      }
    }
    o.summary = reader.summary();
  } catch (const FormatError& e) {
    o.kind = ReadOutcome::Kind::kFormatError;
    o.error_file = e.file();
    o.error_offset = e.offset();
    o.what = e.what();
    o.error_from_tracker = in_tracker;
  } catch (const std::exception& e) {
    o.kind = ReadOutcome::Kind::kOtherException;
    o.exception_type = typeid(e).name();
    o.what = e.what();
  } catch (...) {
    o.kind = ReadOutcome::Kind::kOtherException;
    o.exception_type = "(not a std::exception)";
  }
  return o;
}

std::string CallOutcome::describe() const {
  std::ostringstream s;
  switch (kind) {
    case ReadOutcome::Kind::kOk:
      s << "ok";
      break;
    case ReadOutcome::Kind::kFormatError:
      s << "FormatError file " << error_file << " offset " << error_offset << ": " << what;
      break;
    case ReadOutcome::Kind::kOtherException:
      s << "other exception " << exception_type << ": " << what;
      break;
  }
  return s.str();
}

CallOutcome call_classified(const std::function<void()>& fn) {
  CallOutcome o;
  try {
    fn();
  } catch (const FormatError& e) {
    o.kind = ReadOutcome::Kind::kFormatError;
    o.error_file = e.file();
    o.error_offset = e.offset();
    o.what = e.what();
  } catch (const std::exception& e) {
    o.kind = ReadOutcome::Kind::kOtherException;
    o.exception_type = typeid(e).name();
    o.what = e.what();
  } catch (...) {
    o.kind = ReadOutcome::Kind::kOtherException;
    o.exception_type = "(not a std::exception)";
  }
  return o;
}

// ---- Hand-made streams and files -------------------------------------------------------

namespace {

struct VectorSink {
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint8_t> window = std::vector<std::uint8_t>(4096);
  codec::OutputWindow fresh() { return {window.data(), window.data() + window.size()}; }
  void drain(codec::OutputWindow& w) {
    bytes.insert(bytes.end(), window.data(), w.cur);
    w = fresh();
  }
};

template <class Enc>
std::vector<std::uint8_t> encode_with(const std::vector<std::uint32_t>& events) {
  VectorSink sink;
  Enc enc(sink, sink.fresh());
  for (const auto v : events) enc.encode(v);
  enc.finish();
  sink.drain(enc.window());
  return sink.bytes;
}

}  // namespace

std::vector<std::uint8_t> encode_events(const std::vector<std::uint32_t>& events, bool lz) {
  return lz ? encode_with<codec::Encoder>(events) : encode_with<codec::RawEncoder>(events);
}

std::vector<std::uint8_t> ze_pack(const std::vector<std::uint16_t>& words) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i < words.size(); i += 4) {
    std::uint8_t bytes[8] = {};
    for (std::size_t k = 0; k < 4 && i + k < words.size(); ++k) {
      bytes[2 * k] = static_cast<std::uint8_t>(words[i + k]);
      bytes[2 * k + 1] = static_cast<std::uint8_t>(words[i + k] >> 8);
    }
    std::uint8_t bitmap = 0;
    for (unsigned b = 0; b < 8; ++b) bitmap |= static_cast<std::uint8_t>((bytes[b] != 0) << b);
    out.push_back(bitmap);
    for (unsigned b = 0; b < 8; ++b) {
      if (bytes[b] != 0) out.push_back(bytes[b]);
    }
  }
  return out;
}

std::vector<std::uint8_t> HandMadeThread::bytes() const {
  std::vector<std::uint8_t> out;
  auto put = [&](const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  };
  format::TraceFileHeader h{};
  std::memcpy(h.magic, format::kTraceMagic, sizeof h.magic);
  h.version = format::kVersion;
  h.codec = static_cast<std::uint16_t>(codec);
  h.header_bytes = sizeof h;
  h.tid = tid;
  h.pid = pid;
  h.start_ns = 1;
  h.thread_index = thread_index;
  put(&h, sizeof h);
  std::uint64_t seq = 0, payload = 0;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const auto& b = blocks[i];
    // A finalised stream (with trailer) ends with the final block, whose
    // payload starts with the event count (docs/FORMAT.md).
    const bool final = trailer && i + 1 == blocks.size();
    const std::size_t prefix = final ? sizeof(std::uint64_t) : 0;
    const format::BlockHeader bh{final ? format::kFinalBlockMagic : format::kBlockMagic,
                                 static_cast<std::uint32_t>(prefix + b.size()), seq++};
    put(&bh, sizeof bh);
    if (final) put(&events, sizeof events);
    put(b.data(), b.size());
    payload += prefix + b.size();
  }
  if (trailer && blocks.empty()) {
    const format::BlockHeader bh{format::kFinalBlockMagic, sizeof(std::uint64_t), seq++};
    put(&bh, sizeof bh);
    put(&events, sizeof events);
    payload += sizeof(std::uint64_t);
  }
  if (trailer) {
    const format::BlockHeader th{format::kTrailerMagic, sizeof(format::TrailerPayload), seq++};
    format::TrailerPayload t{};
    t.events = events;
    t.raw_bytes = raw_bytes;
    t.payload_bytes = payload;
    t.end_ns = 2;
    put(&th, sizeof th);
    put(&t, sizeof t);
  }
  return out;
}

std::vector<std::vector<std::uint8_t>> split_blocks(const std::vector<std::uint8_t>& payload,
                                                    bool lz, std::size_t block_bytes) {
  std::vector<std::vector<std::uint8_t>> blocks;
  std::size_t start = 0, pos = 0;
  while (pos < payload.size()) {
    std::size_t unit;
    if (lz) {
      unit = 1 + static_cast<std::size_t>(std::popcount(static_cast<unsigned>(payload[pos])));
    } else {
      const unsigned w = payload[pos] | (pos + 1 < payload.size() ? payload[pos + 1] << 8 : 0);
      unit = (w & 0x8000) ? 4 : 2;
    }
    if (pos + unit - start > block_bytes && pos > start) {
      blocks.emplace_back(payload.begin() + static_cast<std::ptrdiff_t>(start),
                          payload.begin() + static_cast<std::ptrdiff_t>(pos));
      start = pos;
    }
    pos = std::min(pos + unit, payload.size());
  }
  if (pos > start) {
    blocks.emplace_back(payload.begin() + static_cast<std::ptrdiff_t>(start), payload.end());
  }
  return blocks;
}

std::vector<std::uint64_t> block_offsets(const std::vector<std::uint8_t>& file) {
  std::vector<std::uint64_t> out;
  format::TraceFileHeader h;
  std::memcpy(&h, file.data(), sizeof h);
  std::uint64_t off = h.header_bytes;
  while (off + sizeof(format::BlockHeader) <= file.size()) {
    format::BlockHeader b;
    std::memcpy(&b, file.data() + off, sizeof b);
    out.push_back(off);
    if (b.magic == format::kTrailerMagic) break;
    off += sizeof b + b.payload_bytes;
  }
  return out;
}

// ---- Crash context -------------------------------------------------------------------

namespace {
char g_crash_context[512];

void crash_handler(int sig) {
  const char head[] = "\n*** reader test died of a signal while: ";
  ssize_t ignored = write(2, head, sizeof head - 1);
  ignored = write(2, g_crash_context, strnlen(g_crash_context, sizeof g_crash_context));
  ignored = write(2, "\n", 1);
  (void)ignored;
  signal(sig, SIG_DFL);
  raise(sig);
}
}  // namespace

void set_crash_context(const std::string& what) {
  const std::size_t n = std::min(what.size(), sizeof g_crash_context - 1);
  std::memcpy(g_crash_context, what.data(), n);
  g_crash_context[n] = '\0';
}

void install_crash_reporter() {
  if (sanitized_build()) return;  // the sanitizers report better
  for (const int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, crash_handler);
}

}  // namespace parlot::test
