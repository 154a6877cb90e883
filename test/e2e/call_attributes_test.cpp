// The runtime's internal call-attribute entry points (runtime/
// call_attributes.cpp, used by libparlotmpi.so for PARLOT_MPI_ARGS=1): a
// record lands on the entry event of the call it is about, and only when
// that entry was recorded and the call is the thread's top frame.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "e2e_support.h"

namespace parlot::e2e {
namespace {

TEST(CallAttributes, RecordsLandOnRecordedEntriesOnly) {
  TempDir dir;
  const RunResult r = run_traced({PARLOT_CALL_ATTRIBUTES_FIXTURE}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  ASSERT_EQ(r.out.rfind("call_with=0x", 0), 0u) << r.out;
  const std::uint64_t call_with = std::strtoull(r.out.c_str() + 10, nullptr, 16);

  const auto processes = open_trace_directory(dir.path());
  ASSERT_EQ(processes.size(), 1u);
  const ProcessTrace& p = processes[0];
  std::uint32_t id = 0;
  for (std::size_t i = 0; i < p.function_addresses.size(); ++i) {
    if (p.function_addresses[i] == call_with) id = static_cast<std::uint32_t>(i + 1);
  }
  ASSERT_NE(id, 0u) << "call_with is not in the function table";

  ASSERT_EQ(p.thread_files.size(), 1u);
  ThreadEventReader reader(p.thread_files[0]);
  std::vector<std::uint64_t> entries;  // indices of call_with's entry events
  std::uint64_t index = 0;
  for (auto batch = reader.next_batch(); !batch.empty(); batch = reader.next_batch()) {
    for (const std::uint32_t e : batch) {
      if (e == id) entries.push_back(index);
      ++index;
    }
  }
  // The paused call is not in the trace: two entries.
  ASSERT_EQ(entries.size(), 2u);
  const auto& calls = reader.summary().mpi_calls;
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].event_index, entries[0]);
  EXPECT_EQ(calls[0].get(format::MpiField::kDest), 1);
  EXPECT_EQ(calls[1].event_index, entries[1]);
  EXPECT_EQ(calls[1].get(format::MpiField::kDest), 3);
}

}  // namespace
}  // namespace parlot::e2e
