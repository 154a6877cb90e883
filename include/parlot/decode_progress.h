// How many events the ThreadEventReaders of this process have decoded so
// far, for progress displays (parlot-read's progress bar).
#pragma once

#include <cstdint>

namespace parlot {

/// Events returned by ThreadEventReader::next_batch so far, summed over
/// every reader and thread of the process (a relaxed atomic counter, added
/// once per batch). Never decreases.
std::uint64_t events_decoded_so_far();

}  // namespace parlot
