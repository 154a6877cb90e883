// Shadow stack with stack-pointer correction (runtime/hot_path/shadow_stack.h),
// driven by synthetic stack-pointer sequences.
#include "hot_path/shadow_stack.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace {

using parlot::runtime::ShadowFrame;
using parlot::runtime::ShadowStack;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

// Records the emitted stream: IDs for entries, 0 for exits. Function address
// f has ID f in these tests.
struct Recorder {
  std::vector<std::uint32_t> events;
  void emit_enter(std::uint32_t id) { events.push_back(id); }
  void emit_exit() { events.push_back(0); }
};

class ShadowStackTest : public ::testing::Test {
 protected:
  void enter(std::uintptr_t fn, std::uintptr_t sp, std::uintptr_t call_site = 0) {
    stack.enter(fn, call_site == 0 ? 0x1000 + sp : call_site, sp, static_cast<std::uint32_t>(fn),
                out);
  }
  void exit(std::uintptr_t fn, std::uintptr_t sp) { stack.exit(fn, sp, false, out); }
  // An exit hook jumped to after the epilogue: `cfa` is the function's CFA.
  void exit_at_cfa(std::uintptr_t fn, std::uintptr_t cfa) { stack.exit(fn, cfa, true, out); }

  std::vector<ShadowFrame> storage = std::vector<ShadowFrame>(ShadowStack::storage_frames(64));
  ShadowStack stack{storage.data(), 64};
  Recorder out;
};

TEST_F(ShadowStackTest, NormalNestingNeedsNoCorrection) {
  enter(1, 1000);
  enter(2, 900);
  exit(2, 900);
  enter(3, 900);
  exit(3, 900);
  exit(1, 1000);
  EXPECT_THAT(out.events, ElementsAre(1, 2, 0, 3, 0, 0));
  EXPECT_EQ(stack.counters().corrected_exits, 0u);
  EXPECT_EQ(stack.depth(), 0u);
  EXPECT_EQ(stack.max_depth(), 2u);
}

TEST_F(ShadowStackTest, LongjmpOutOfNestedCallsClosesThemAtTheNextEntry) {
  enter(1, 1000);
  enter(2, 900);
  enter(3, 800);
  enter(4, 700);
  // longjmp back into 1; 1 then calls 5 from a frame above 2's.
  enter(5, 950);
  EXPECT_THAT(out.events, ElementsAre(1, 2, 3, 4, 0, 0, 0, 5));
  EXPECT_EQ(stack.counters().corrected_exits, 3u);
  EXPECT_EQ(stack.depth(), 2u);
}

TEST_F(ShadowStackTest, MissedExitsClosedByTheCallersExit) {
  enter(1, 1000);
  enter(2, 900);
  enter(3, 800);
  exit(1, 1000);
  EXPECT_THAT(out.events, ElementsAre(1, 2, 3, 0, 0, 0));
  EXPECT_EQ(stack.counters().corrected_exits, 2u);
  EXPECT_EQ(stack.counters().unmatched_exits, 0u);
}

TEST_F(ShadowStackTest, DeadSiblingAtTheSameStackPointerIsClosed) {
  enter(1, 1000);
  enter(2, 900, /*call_site=*/0x10);
  // 2's exit was missed (exception under clang); 1 calls 3 from another site.
  enter(3, 900, /*call_site=*/0x20);
  EXPECT_THAT(out.events, ElementsAre(1, 2, 0, 3));
  EXPECT_EQ(stack.counters().corrected_exits, 1u);
}

TEST_F(ShadowStackTest, SameFunctionFromTheSameCallSiteAgainIsASibling) {
  enter(1, 1000);
  enter(2, 900, 0x10);
  enter(2, 900, 0x10);  // a loop re-calls 2 after a missed exit
  EXPECT_THAT(out.events, ElementsAre(1, 2, 0, 2));
}

TEST_F(ShadowStackTest, InlinedCalleeNestsInItsCallersFrame) {
  // gcc/clang keep the hooks of inlined functions: same sp, same call site.
  enter(1, 1000, 0x10);
  enter(2, 1000, 0x10);
  enter(3, 1000, 0x10);
  exit(3, 1000);
  exit(2, 1000);
  enter(4, 900, 0x30);  // a real call from 1
  exit(4, 900);
  exit(1, 1000);
  EXPECT_THAT(out.events, ElementsAre(1, 2, 3, 0, 0, 4, 0, 0));
  EXPECT_EQ(stack.counters().corrected_exits, 0u);
  EXPECT_EQ(stack.counters().unmatched_exits, 0u);
}

// gcc's function splitting (ipa-split): the head of 7 is inlined into 1, so
// 7's entry hook runs at 1's stack pointer; the rest, 7.part.0, is a real
// call that leaves through a tail-jumped exit hook for 7, whose CFA is again
// 1's stack pointer: equal to the entry's, not above it (Lua's luaV_concat).
TEST_F(ShadowStackTest, SplitFunctionEntersInlinedAndExitsFromItsOutlinedPart) {
  enter(1, 1000, 0x10);
  enter(7, 1000, 0x10);  // inlined head of 7
  exit_at_cfa(7, 1000);  // 7.part.0 jumped to the exit hook after its epilogue
  enter(8, 936, 0x40);   // 1 goes on calling
  exit_at_cfa(8, 1000);
  exit(1, 1000);
  EXPECT_THAT(out.events, ElementsAre(1, 7, 0, 8, 0, 0));
  EXPECT_EQ(stack.counters().corrected_exits, 0u);
  EXPECT_EQ(stack.counters().unmatched_exits, 0u);
}

// An inlined callee whose entry hook ran while its host had pushed stack
// arguments (16 bytes lower) and whose exit hook runs at the host's stack
// pointer (sqlite3ResolvePartIdxLabel inlined into sqlite3RefillIndex).
TEST_F(ShadowStackTest, InlinedCalleeExitsAboveItsEntryStackPointer) {
  enter(1, 1000, 0x10);
  enter(7, 984, 0x10);  // inlined: the host's call site
  exit(7, 1000);
  enter(8, 936, 0x40);
  exit(8, 936);
  exit(1, 1000);
  EXPECT_THAT(out.events, ElementsAre(1, 7, 0, 8, 0, 0));
  EXPECT_EQ(stack.counters().corrected_exits, 0u);
  EXPECT_EQ(stack.counters().unmatched_exits, 0u);
}

// The same shape for a real call (its own call site) is a lost exit: the
// frame below the exit's stack pointer is dead.
TEST_F(ShadowStackTest, RealCalleeExitingAboveItsEntryIsNotTakenForInlined) {
  enter(1, 1000, 0x10);
  enter(7, 984, 0x20);
  exit(7, 1000);
  EXPECT_EQ(stack.counters().unmatched_exits, 1u);
  EXPECT_EQ(stack.depth(), 1u);
}

TEST_F(ShadowStackTest, MissedExitOfAnInlinedFrameClosedByItsHostsExit) {
  enter(1, 1000, 0x10);
  enter(2, 1000, 0x10);
  exit(1, 1000);
  EXPECT_THAT(out.events, ElementsAre(1, 2, 0, 0));
  EXPECT_EQ(stack.counters().corrected_exits, 1u);
}

// gcc -O2 restores callee-saved registers, then jumps to the exit hook: the
// hook's CFA is the function's own CFA, above its entry stack pointer, and
// equal to its caller's stack pointer.
TEST_F(ShadowStackTest, TailJumpedExitHookMatchesItsFrame) {
  enter(1, 1000);
  enter(2, 936);        // 2's CFA is 1000; prologue pushes put its hook 64 lower
  enter(3, 872);        // 3's CFA is 936
  exit_at_cfa(3, 936);  // jumped to the hook after the epilogue
  exit_at_cfa(2, 1000);
  exit_at_cfa(1, 1064);
  EXPECT_THAT(out.events, ElementsAre(1, 2, 3, 0, 0, 0));
  EXPECT_EQ(stack.counters().corrected_exits, 0u);
  EXPECT_EQ(stack.counters().unmatched_exits, 0u);
}

TEST_F(ShadowStackTest, TailJumpedExitOfRecursionClosesSkippedInnerInstances) {
  enter(1, 2000);
  enter(5, 1000);  // outer instance, CFA 1064
  enter(5, 900);   // inner instances whose exits a longjmp skipped
  enter(5, 800);
  exit_at_cfa(5, 1064);  // the outer instance leaves through a tail-jumped hook
  EXPECT_THAT(out.events, ElementsAre(1, 5, 5, 5, 0, 0, 0));
  EXPECT_EQ(stack.counters().corrected_exits, 2u);
  EXPECT_EQ(stack.depth(), 1u);
}

// The ambiguous case that needs `at_cfa`: 5a -> 5b -> 5c -> 5d, a longjmp
// lands in 5b (5c and 5d never return), then 5b returns. A tail-jumped exit
// of 5c would pass the same stack pointer as a called exit of 5b.
TEST_F(ShadowStackTest, CalledExitOfAMiddleRecursiveInstance) {
  enter(5, 1000);  // 5a, CFA 1064
  enter(5, 936);   // 5b, CFA 1000
  enter(5, 872);   // 5c, CFA 936
  enter(5, 808);   // 5d
  exit(5, 936);    // 5b's exit hook, called from its body
  EXPECT_THAT(out.events, ElementsAre(5, 5, 5, 5, 0, 0, 0));
  EXPECT_EQ(stack.depth(), 1u);
  EXPECT_EQ(stack.counters().corrected_exits, 2u);
}

TEST_F(ShadowStackTest, JumpedExitOfAMiddleRecursiveInstance) {
  enter(5, 1000);        // 5a, CFA 1064
  enter(5, 936);         // 5b, CFA 1000
  enter(5, 872);         // 5c, CFA 936
  enter(5, 808);         // 5d
  exit_at_cfa(5, 1000);  // 5b's exit hook, jumped to after its epilogue
  EXPECT_THAT(out.events, ElementsAre(5, 5, 5, 5, 0, 0, 0));
  EXPECT_EQ(stack.depth(), 1u);
  EXPECT_EQ(stack.counters().corrected_exits, 2u);
}

TEST_F(ShadowStackTest, ExitBelowTheEntryStackPointerAfterAlloca) {
  enter(1, 1000);
  enter(2, 900);
  exit(2, 700);  // 2 grew its frame with alloca
  exit(1, 1000);
  EXPECT_THAT(out.events, ElementsAre(1, 2, 0, 0));
  EXPECT_EQ(stack.counters().corrected_exits, 0u);
}

TEST_F(ShadowStackTest, ExitWithoutEntryIsIgnored) {
  exit(7, 500);
  EXPECT_TRUE(out.events.empty());
  EXPECT_EQ(stack.counters().unmatched_exits, 1u);
  enter(1, 1000);
  exit(9, 1000);  // 1 is live at this sp: not dead, and not 9
  EXPECT_THAT(out.events, ElementsAre(1));
  EXPECT_EQ(stack.counters().unmatched_exits, 2u);
  EXPECT_EQ(stack.depth(), 1u);
}

TEST_F(ShadowStackTest, RecursionWithLongjmpClosesInnerInstancesOnly) {
  enter(5, 1000);
  enter(5, 900);
  enter(5, 800);
  exit(5, 1000);  // the outer instance returns; the inner two never did
  EXPECT_THAT(out.events, ElementsAre(5, 5, 5, 0, 0, 0));
  EXPECT_EQ(stack.counters().corrected_exits, 2u);
  EXPECT_EQ(stack.depth(), 0u);
}

TEST_F(ShadowStackTest, CloseAllEmitsOneExitPerOpenFrame) {
  enter(1, 1000);
  enter(2, 900);
  enter(3, 800);
  EXPECT_EQ(stack.close_all(out), 3u);
  EXPECT_THAT(out.events, ElementsAre(1, 2, 3, 0, 0, 0));
}

// A signal handler on an alternate stack above the thread's stack: its
// frames nest under the interrupted frame instead of closing every frame.
TEST_F(ShadowStackTest, HandlerOnAnAlternateStackAboveNests) {
  stack.set_thread_stack(500, 2000);
  enter(1, 1000);
  enter(2, 900);
  enter(7, 5000);  // the handler, on an alternate stack at 4096..8192
  enter(8, 4900);
  exit(8, 4900);
  exit(7, 5000);
  enter(3, 800);  // back on the thread stack, called by 2
  EXPECT_THAT(out.events, ElementsAre(1, 2, 7, 8, 0, 0, 3));
  EXPECT_EQ(stack.counters().corrected_exits, 0u);
}

// The sentinel below the outermost frame (its sp the thread stack's top)
// must not change what happens with nothing open: an entry on another
// stack (a handler on an alternate stack as the thread's first event) is
// pushed, a jumped-to exit of the only frame pops it whatever its stack,
// and an exit with nothing open (a null function too) is counted, never
// taken for the sentinel's.
TEST_F(ShadowStackTest, OutermostFrameOnAnotherStackOrAtTheThreadStacksTop) {
  stack.set_thread_stack(500, 2000);
  enter(7, 5000);        // above the thread stack, nothing open
  exit_at_cfa(7, 5008);  // jumped-to exit: its CFA, above the sentinel's sp
  enter(1, 1999);        // the thread stack's highest address
  exit_at_cfa(1, 2007);  // its CFA, at the stack's top
  exit(9, 1000);         // nothing open
  exit_at_cfa(0, 1999);  // a null function with nothing open
  exit(0, 1000);
  EXPECT_THAT(out.events, ElementsAre(7, 0, 1, 0));
  EXPECT_EQ(stack.depth(), 0u);
  EXPECT_EQ(stack.counters().unmatched_exits, 3u);
  EXPECT_EQ(stack.counters().corrected_exits, 0u);
}

// Leaving another stack without exits (a coroutine switched away): the
// next call on the thread's stack closes the frames left there.
TEST_F(ShadowStackTest, FramesOnAnotherStackLeftWithoutExitsAreClosed) {
  stack.set_thread_stack(500, 2000);
  enter(1, 1000);
  enter(5, 300);  // a coroutine on a stack below the thread's
  enter(6, 250);
  enter(3, 900);  // main context again, called by 1
  EXPECT_THAT(out.events, ElementsAre(1, 5, 6, 0, 0, 3));
  EXPECT_EQ(stack.counters().corrected_exits, 2u);
}

// After a longjmp: the frames whose call sites are no longer on the real
// stack are popped; the topmost one still there and those below stay.
TEST_F(ShadowStackTest, ResyncPopsFramesAbsentFromTheRealStack) {
  enter(1, 1000, 0x11);
  enter(2, 900, 0x22);
  enter(3, 800, 0x33);
  enter(4, 700, 0x44);
  const std::uintptr_t live[] = {0x500, 0x22, 0x11, 0x600};
  EXPECT_EQ(stack.pop_frames_not_on(live, 4, out), 2u);
  EXPECT_THAT(out.events, ElementsAre(1, 2, 3, 4, 0, 0));
  EXPECT_EQ(stack.depth(), 2u);
  // An unwind that found nothing known pops nothing.
  const std::uintptr_t unknown[] = {0x999};
  EXPECT_EQ(stack.pop_frames_not_on(unknown, 1, out), 0u);
  EXPECT_EQ(stack.depth(), 2u);
}

TEST(ShadowStackCapacity, FullStackDropsTheEntryAndItsExit) {
  std::vector<ShadowFrame> storage(ShadowStack::storage_frames(2));
  ShadowStack stack(storage.data(), 2);
  Recorder out;
  EXPECT_TRUE(stack.enter(1, 0x10, 1000, 1, out));
  EXPECT_TRUE(stack.enter(2, 0x20, 900, 2, out));
  EXPECT_FALSE(stack.enter(3, 0x30, 800, 3, out));
  stack.exit(3, 800, false, out);
  stack.exit(2, 900, false, out);
  stack.exit(1, 1000, false, out);
  EXPECT_THAT(out.events, ElementsAre(1, 2, 0, 0));
  EXPECT_EQ(stack.counters().overflowed, 1u);
}

// Random programs: a true call tree with real stack pointers, of which a
// random subset of exits is lost. Whatever is lost, the emitted stream is
// well nested, and with no loss it equals the true stream.
TEST(ShadowStackProperty, EmittedStreamIsAlwaysWellNested) {
  for (int seed = 0; seed < 200; ++seed) {
    std::mt19937 rng(seed);
    const double loss = seed % 4 == 0 ? 0.0 : 0.05 * (seed % 7);
    std::vector<ShadowFrame> storage(ShadowStack::storage_frames(4096));
    ShadowStack stack(storage.data(), 4096);
    Recorder out;
    std::vector<std::uint32_t> truth;
    std::vector<std::pair<std::uintptr_t, std::uintptr_t>> live;  // fn, sp
    std::uintptr_t sp = 1 << 20;
    for (int step = 0; step < 5000; ++step) {
      if (!live.empty() && rng() % 2 == 0) {
        const auto [fn, fsp] = live.back();
        live.pop_back();
        truth.push_back(0);
        const std::uintptr_t cfa = fsp + 16 + (fn % 5) * 16;  // the caller's stack pointer
        // Half the exits come through a hook jumped to after the epilogue.
        const bool jumped = rng() % 2;
        if (std::uniform_real_distribution<>(0, 1)(rng) >= loss) {
          stack.exit(fn, jumped ? cfa : fsp, jumped, out);
        }
        sp = cfa;
      } else {
        const std::uintptr_t fn = 1 + rng() % 30;
        sp -= 16 + (fn % 5) * 16;
        live.emplace_back(fn, sp);
        truth.push_back(static_cast<std::uint32_t>(fn));
        stack.enter(fn, 0x100000 + fn * 8 + live.size(), sp, static_cast<std::uint32_t>(fn), out);
      }
    }
    long depth = 0;
    for (const auto e : out.events) {
      depth += e != 0 ? 1 : -1;
      ASSERT_GE(depth, 0) << "seed " << seed;
    }
    EXPECT_EQ(static_cast<std::size_t>(depth), stack.depth());
    if (loss == 0.0) {
      EXPECT_THAT(out.events, ElementsAreArray(truth)) << "seed " << seed;
      EXPECT_EQ(stack.counters().corrected_exits, 0u);
    }
  }
}

}  // namespace

// PARLOT_MAX_DEPTH: frames deeper than the record depth stay on the stack
// (nesting and corrections work as before) but emit nothing, and count.
TEST(ShadowStackRecordDepth, DeeperCallsAreTrackedNotRecorded) {
  std::vector<ShadowFrame> storage(ShadowStack::storage_frames(16));
  ShadowStack stack(storage.data(), 16);
  stack.set_record_depth(2);
  Recorder out;
  stack.enter(1, 0x10, 1000, 1, out);
  stack.enter(2, 0x20, 900, 2, out);
  stack.enter(3, 0x30, 800, 3, out);  // depth 3: not recorded
  stack.enter(4, 0x40, 700, 4, out);  // depth 4: not recorded
  stack.exit(4, 700, false, out);
  stack.exit(3, 800, false, out);
  stack.enter(5, 0x50, 800, 5, out);  // depth 3 again
  // 5's exit is lost; 2's exit pops it silently.
  stack.exit(2, 900, false, out);
  stack.enter(6, 0x60, 900, 6, out);
  EXPECT_EQ(stack.close_all(out), 2u);  // 6 and 1: the recorded frames
  EXPECT_THAT(out.events, ElementsAre(1, 2, 0, 6, 0, 0));
  EXPECT_EQ(stack.counters().overflowed, 3u);
  EXPECT_EQ(stack.counters().corrected_exits, 1u);
  EXPECT_EQ(stack.max_depth(), 4u);
}

// exit_top() pops only the top frame of the function; anything else is
// left to exit_below_top().
TEST(ShadowStackExitTop, OnlyTheTopFramesFunction) {
  std::vector<ShadowFrame> storage(ShadowStack::storage_frames(16));
  ShadowStack stack(storage.data(), 16);
  Recorder out;
  stack.enter(1, 0x10, 1000, 1, out);
  stack.enter(2, 0x20, 900, 2, out);
  EXPECT_FALSE(stack.exit_top(1, 1000, false, out));  // 2 is on top
  EXPECT_FALSE(stack.exit_top(9, 900, false, out));   // never entered (excluded)
  EXPECT_THAT(out.events, ElementsAre(1, 2));
  EXPECT_TRUE(stack.exit_top(2, 900, false, out));
  stack.exit_below_top(1, 1000, false, out);
  EXPECT_THAT(out.events, ElementsAre(1, 2, 0, 0));
  EXPECT_EQ(stack.depth(), 0u);
}
