// Write failures that concern the whole process: a file system that fills
// up under the trace. The program behaves as untraced, stderr has one line
// of Parlot's for the process (not one per thread), and the trace says
// where and why it was cut. disk_full.c says what the program does.
#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "hardening_fixture.h"

namespace parlot::hardening {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A tmpfs of `size` mounted at `where` (created) for the object's lifetime;
// mounted() is false where the test may not mount (not root, no
// CAP_SYS_ADMIN).
class TmpfsMount {
 public:
  TmpfsMount(const std::filesystem::path& where, const std::string& size) : where_(where) {
    std::filesystem::create_directories(where_);
    const std::string options = "size=" + size + ",mode=0700";
    if (::mount("tmpfs", where_.c_str(), "tmpfs", 0, options.c_str()) == 0) {
      mounted_ = true;
    } else {
      error_ = std::strerror(errno);
    }
  }
  ~TmpfsMount() {
    if (mounted_) ::umount2(where_.c_str(), MNT_DETACH);
  }
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

 private:
  std::filesystem::path where_;
  bool mounted_ = false;
  std::string error_;
};

// The lines of `text`.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class WriteFailures : public HardeningTest {};

TEST_P(WriteFailures, AFullDiskStopsTheTraceWithOneLineForTheProcessAndSaysWhereInTheTrace) {
  const TmpfsMount full(dir.path() / "full", "256k");
  if (!full.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here: " << full.error();
  const std::vector<std::string> argv{prog("disk_full")};
  const RunResult plain = run(argv);
  ASSERT_EQ(plain.exit_status, 0) << plain.err;
  // Blocks of 16 KiB: several are written before the file system is full.
  RunOptions small;
  small.env = {"PARLOT_BUFFER_KB=16"};
  const auto trace_dir = dir.path() / "full" / "trace";
  const RunResult traced = run_traced(argv, trace_dir, small);
  EXPECT_FALSE(traced.timed_out);
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_EQ(traced.exit_status, plain.exit_status) << traced.err;
  EXPECT_EQ(traced.signal, 0);
  const auto err_lines = lines_of(traced.err);
  ASSERT_EQ(err_lines.size(), 1u) << traced.err;
  EXPECT_THAT(err_lines[0], HasSubstr("parlot: cannot write the trace in '" + trace_dir.string()));
  EXPECT_THAT(err_lines[0], HasSubstr("No space left on device"));
  EXPECT_THAT(err_lines[0], HasSubstr("events written"));

  // The trace says it was cut, and why; what was written still reads.
  const RunResult info = parlot_read({"info", trace_dir.string()});
  EXPECT_THAT(info.out, HasSubstr("trace cut by a write failure: No space left on device"))
      << info.out << info.err;
  const RunResult trace = parlot_read({"trace", trace_dir.string()});
  EXPECT_THAT(trace.err, Not(HasSubstr("corrupt"))) << trace.err;
  std::size_t calls = 0;
  for (const auto& t : split_threads(trace.out)) {
    for (const auto& e : parse_text(t.body)) {
      if (e.enter && e.name.size() > 1 && e.name[0] == 'f' && e.name != "main()") ++calls;
    }
  }
  EXPECT_GT(calls, 1000u) << trace.err;
}

PARLOT_HARDENING_VARIANTS_OF(WriteFailures);

}  // namespace
}  // namespace parlot::hardening
