// Cases 1 and 2: non-local exits. longjmp/siglongjmp and C++ exceptions
// leave frames whose exit hooks never run (gcc calls exit hooks while
// unwinding an exception, clang does not): the runtime closes them when it
// next sees the stack pointer, and the next call must sit at the depth of
// the function that catches or called setjmp.
#include "hardening_fixture.h"

namespace parlot::hardening {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class Longjmp : public HardeningTest {};

// Was failing before the runtime resynced with the real stack after longjmp.
//
// ShadowStack::enter compares the stack pointers functions have *after their
// prologue*. after() is called from the frame that called setjmp, like the
// jumped-over outer()/s_outer()/s_outer2(); its recorded sp is that frame's
// sp minus its own frame size, so when after()'s frame is larger (gcc -O0:
// 24 vs 8 bytes for s_outer) it lies below the dead sibling's and is nested
// in it. Fails in the siglongjmp parts on every build, in the longjmp
// rounds on clang -O2.
TEST_P(Longjmp, CallsAfterTheJumpSitAtTheCallersDepth) {
  const RunResult r = run_traced({prog("longjmp")}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "rounds 3 blocked 0 jumped 1\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 1u) << last_read.out;
  std::string rounds;
  for (int i = 0; i < 3; ++i) rounds += " outer{middle{leaf jumper{leaf}}} after{leaf}";
  EXPECT_EQ(
      threads[0].body,
      tree_text("main{ run_longjmp{" + rounds +
                "}"
                " run_siglongjmp{ s_outer{s_middle{on_usr1{leaf}}} after{leaf} }"
                " run_sigsetjmp_direct{ s_outer2{s_middle2{s_jumper{leaf}}} after{leaf} } }"));
  // The jumped-over frames were closed by the stack-pointer rule.
  EXPECT_THAT(info(), HasSubstr("exits corrected by stack pointer"));
}

PARLOT_HARDENING_VARIANTS_OF(Longjmp);

class Exceptions : public HardeningTest {};

TEST_P(Exceptions, ThrownCaughtAndRethrownThroughFramesWithDestructors) {
  const RunResult r = run_traced({prog("exceptions")}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "caught 7 8 10\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 1u) << last_read.out;
  const std::string ctor = "Guard::Guard(int){note(int)}";
  const std::string dtor = "Guard::~Guard(){note(int)}";
  // thrower's frame: its guard is built, the exception leaves, the guard's
  // destructor runs while the frame unwinds (nested in it), and so on up.
  const std::string thrower = "thrower(int){" + ctor + " " + dtor + "}";
  const std::string mid = "mid(int){" + ctor + " " + thrower + " " + dtor + "}";
  EXPECT_EQ(threads[0].body, tree_text("main{"
                                       " catch_deep{ top(int){" +
                                       ctor + " " + mid + " " + dtor +
                                       "}"
                                       "   note(int) note(int) }"
                                       " catch_rethrown{ rethrower{" +
                                       ctor + " " + mid + " note(int) " + dtor +
                                       "}"
                                       "   note(int) }"
                                       " catch_translated{ translator{" +
                                       thrower +
                                       " note(int)} }"
                                       "}"));
  // gcc runs the exit hooks of the frames it unwinds; under clang the 8
  // frames left by exceptions (top, mid, thrower; rethrower, mid, thrower;
  // translator, thrower) are closed from the stack pointer.
  if (GetParam().starts_with("gcc")) {
    EXPECT_THAT(info(), Not(HasSubstr("corrected")));
  } else {
    EXPECT_THAT(info(), HasSubstr("8 exits corrected by stack pointer"));
  }
}

PARLOT_HARDENING_VARIANTS_OF(Exceptions);

}  // namespace
}  // namespace parlot::hardening
