#include "ordered_output.h"

#include <cstdio>
#include <stdexcept>

namespace parlot::tool {
namespace {

// Messages of a member to the leader: [type][status][text...].
constexpr char kMore = 'D';    // text of the item, more follows
constexpr char kEnd = 'E';     // the rest of the item's text; status byte set
constexpr char kFailed = '!';  // the item failed: text is the error message
constexpr std::size_t kHeader = 2;
// The leader's requests: send your next message, or stop.
constexpr std::string_view kNext("\1", 1);
constexpr std::string_view kStop("\0", 1);
// The leader writes its own text to stdout in pieces of this size.
constexpr std::size_t kStdoutPiece = std::size_t{1} << 16;

void write_stdout(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
}

}  // namespace

ItemWriter::ItemWriter(ReaderTeam& team) : team_(team) {
  if (!team_.leader()) buffer_.assign(kHeader, '\0');
}

void ItemWriter::write(std::string_view text) {
  buffer_.append(text);
  if (team_.leader()) {
    if (buffer_.size() >= kStdoutPiece) flush_to_stdout();
  } else if (buffer_.size() >= kRunAhead + kHeader) {
    send(kMore, 0);
  }
}

void ItemWriter::flush_to_stdout() {
  write_stdout(buffer_);
  buffer_.clear();
}

void ItemWriter::send(char type, int status) {
  if (team_.receive(0) != kNext) throw Stopped{};
  // The end of an item carries what this member could not read so far.
  if (type == kEnd) buffer_.insert(kHeader, framed_damage(false));
  buffer_[0] = type;
  buffer_[1] = static_cast<char>(status);
  team_.send(buffer_, 0);
  buffer_.assign(kHeader, '\0');
}

void ItemWriter::fail(const std::string& message) {
  if (buffer_.size() > kHeader) send(kMore, 0);
  buffer_.append(message);
  send(kFailed, 1);
}

int print_in_order(ReaderTeam& team, const std::vector<unsigned>& owner,
                   const std::function<int(std::size_t, ItemWriter&)>& produce) {
  if (!team.leader()) {
    ItemWriter out(team);
    for (std::size_t i = 0; i < owner.size(); ++i) {
      if (owner[i] != team.rank()) continue;
      try {
        try {
          const int status = produce(i, out);
          out.send(kEnd, status);
        } catch (const ItemWriter::Stopped&) {
          throw;
        } catch (const std::exception& e) {
          out.fail(e.what());
          return 0;
        }
      } catch (const ItemWriter::Stopped&) {
        return 0;
      }
    }
    return 0;
  }
  // Items each member still has to send; a member with none left waits for
  // no request. The leader asks a member for its next message as soon as it
  // took the last one of an item (requested[]), so that message is on its
  // way while the leader prints other members' items: at most one message
  // per member is in flight.
  std::vector<std::size_t> remaining(team.size(), 0);
  std::vector<bool> requested(team.size(), false);
  for (const unsigned o : owner) ++remaining[o];
  auto request = [&](unsigned r) {
    team.send(kNext, r);
    requested[r] = true;
  };
  for (unsigned r = 1; r < team.size(); ++r) {
    if (remaining[r] > 0) request(r);
  }
  // Ends the other members: a message already asked for is taken first
  // (a member blocked sending it would never end), then a member that
  // still has items is told to stop.
  auto stop_others = [&] {
    for (unsigned r = 1; r < team.size(); ++r) {
      if (remaining[r] == 0) continue;
      if (requested[r]) {
        const std::string message = team.receive(r);
        if (message.empty() || message[0] == kFailed) continue;
        if (message[0] == kEnd && --remaining[r] == 0) continue;
      }
      team.send(kStop, r);
    }
  };
  int status = 0;
  ItemWriter mine(team);
  for (std::size_t i = 0; i < owner.size(); ++i) {
    const unsigned from = owner[i];
    if (from == 0) {
      try {
        status |= produce(i, mine);
        mine.flush_to_stdout();
        --remaining[0];
      } catch (...) {
        mine.flush_to_stdout();
        stop_others();
        throw;
      }
      continue;
    }
    for (;;) {
      if (!requested[from]) team.send(kNext, from);
      requested[from] = false;
      const std::string message = team.receive(from);
      if (message.size() < kHeader) throw std::runtime_error("short message from a reader rank");
      std::string_view text = std::string_view(message).substr(kHeader);
      if (message[0] == kEnd) merge_framed_damage(text);
      if (message[0] == kFailed) {
        remaining[from] = 0;
        std::fflush(stdout);
        stop_others();
        throw std::runtime_error(std::string(text));
      }
      write_stdout(text);
      if (message[0] == kEnd) {
        status |= message[1];
        if (--remaining[from] > 0) request(from);
        break;
      }
    }
  }
  std::fflush(stdout);
  return status;
}

}  // namespace parlot::tool
