// The call sites of the calls open at one event of a thread, found by
// reading the thread again up to that event (not to its end): how the views
// that locate a finding on loop summaries (classes' cause first) give its
// call path file:line sites without tracking sites on every thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "parlot/symbolizer.h"
#include "trace_input.h"

namespace parlot::tool {

/// Call sites in thread `t` at event `index` of its (filtered) stream.
struct SitesAt {
  /// Sites (run-time return addresses; 0 unknown) of the calls open just
  /// before event `index`, outermost first.
  std::vector<std::uint64_t> open;
  /// Site of event `index` when it is an entry (0 otherwise, or past the end).
  std::uint64_t at = 0;
};

/// Reads `t` (through `input`, call sites tracked) up to event `index`, the
/// 0-based index in the stream analysis::EventSource::next() gives.
/// O(index) events decoded. Throws FormatError on a damaged file.
SitesAt sites_at(const TraceInput& input, const TraceInput::Thread& t, std::uint64_t index);

/// "file:line" of call sites of the processes of one input, one
/// Symbolizer per process made on first use. Not thread-safe.
class SiteNamer {
 public:
  /// `input` must outlive this.
  explicit SiteNamer(const TraceInput& input) : input_(input) {}
  /// call_site_text() of `site` (run-time, of process `process` of the
  /// input): "a.c:12", or "" when unknown.
  std::string text(std::size_t process, std::uint64_t site);

 private:
  const TraceInput& input_;
  std::map<std::size_t, std::unique_ptr<Symbolizer>> symbolizers_;
};

/// SiteNamer::text() of each of `sites` (process `process` of `input`).
std::vector<std::string> site_texts(const TraceInput& input, std::size_t process,
                                    const std::vector<std::uint64_t>& sites);

}  // namespace parlot::tool
