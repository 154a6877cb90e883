// Text printed in item order by a team of readers (issue 9 §7): `trace`,
// `loops` and `diff` print per process (or per pair of threads) in the
// serial order, under mpirun too. Each item (a process of the listing, say)
// has an owner; the owner writes the item's text; the leader walks the
// items in order, writes its own items' text to stdout and takes the
// others' from their owners, one message at a time when it asks for it
// (a one-byte request per message, sent for a member's next item as soon
// as its previous one is taken), so no member holds more than kRunAhead
// bytes (plus one write) of text that the leader has not printed yet, and
// at most one message per member is in flight to the leader. In a team of
// one it is a plain loop over the items writing to stdout.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "reader_team.h"

namespace parlot::tool {

/// Bytes of text a member other than the leader formats ahead of the
/// leader before it waits for the leader to take them (one message).
inline constexpr std::size_t kRunAhead = std::size_t{8} << 20;

/// Where a member writes one item's text: stdout (buffered) on the leader;
/// elsewhere a buffer sent to the leader, when it asks, each time it holds
/// kRunAhead bytes and at the end of the item.
class ItemWriter {
 public:
  /// Appends `text` to the item's output. On a member other than the
  /// leader it may wait for the leader; throws ItemWriter::Stopped when the
  /// leader stopped (another member failed) and std::runtime_error on an
  /// MPI error.
  void write(std::string_view text);

  /// Thrown by write() when the leader gave up the command.
  struct Stopped {};

 private:
  friend int print_in_order(ReaderTeam& team, const std::vector<unsigned>& owner,
                            const std::function<int(std::size_t, ItemWriter&)>& produce);
  explicit ItemWriter(ReaderTeam& team);
  /// Leader: writes the buffer to stdout.
  void flush_to_stdout();
  /// Other member: waits for the leader's request, then sends the buffer
  /// with `type` ('D' more of this item follows, 'E' the item ends with
  /// status `status`). Throws Stopped.
  void send(char type, int status);
  /// Other member: the item failed with `message` (after its text so far).
  void fail(const std::string& message);

  ReaderTeam& team_;
  std::string buffer_;  // on a member other than the leader: 2 header bytes first
};

/// Prints the text of items 0 .. owner.size()-1 in item order: item i's
/// text comes from `produce(i, out)` run on member owner[i] (< team size),
/// which returns its damage status (0 or 1). Every member calls this with
/// the same `owner`; each runs `produce` for its items in increasing order.
/// An exception in `produce` (std::exception) ends the command after the
/// item's text so far: the leader throws its message as std::runtime_error
/// (in a team of one: the exception itself) and the other members stop.
/// Returns, on the leader, the OR of every item's status; 0 elsewhere.
int print_in_order(ReaderTeam& team, const std::vector<unsigned>& owner,
                   const std::function<int(std::size_t, ItemWriter&)>& produce);

}  // namespace parlot::tool
