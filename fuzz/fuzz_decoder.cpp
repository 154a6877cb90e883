// libFuzzer target: codec::Decoder (codec/decoder.h) on arbitrary
// bytes, every codec.
//
// Input layout:
//   byte 0   bit 0: codec (1 = LZ + zero elimination, 0 = raw words);
//            bit 1 set: codec 2 (LZ + ranked literals, range-coded) instead,
//            bit 0 then the format version (1 = version 2: length model 1;
//            0: bit 2 set = version 3, length model 2; else bit 3 set =
//            version 4, length model 2 and the table tail; clear = version
//            5, and the long context);
//            bits 2-7: events pulled per next() call, minus 1 (1 .. 64)
//   byte 1   bytes per feed() call / 16; 0 = the whole rest in one feed
//            (codec 2: each feed is a block, whole segments)
//   rest     the encoded stream (a thread file's block payloads, concatenated)
//
// Checks beyond "no crash": next() honours its cap and reports kOk only when
// the cap was reached, errors point inside the current input, and the first
// kRoundTripEvents events fit in 31 bits and survive a round trip through
// the matching encoder (encode, decode again, compare).
//
// Work per input is bounded (kMaxEvents, two turns of the 64K history): a
// stream of 0xffff length words legitimately decodes to 65535 events per
// word, and decoding further only costs time.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "codec/decoder.h"
#include "fuzz_support.h"
#include "parlot/codec.h"

namespace {

using parlot::codec::Decoder;
using parlot::codec::OutputWindow;
using parlot::format::Codec;

constexpr std::uint64_t kMaxEvents = 1u << 17;
// Events re-encoded for the round-trip check (the first ones of the input;
// the round trip costs as much per event as decoding). The 65535-event match
// boundary is covered by codec/test.
constexpr std::size_t kRoundTripEvents = 1u << 14;

struct VectorSink {
  std::vector<std::uint8_t> bytes;
  std::uint8_t window[1024];  // >= codec::v2::kMinWindowBytes
  OutputWindow fresh() { return {window, window + sizeof window}; }
  void drain(OutputWindow& w) {
    bytes.insert(bytes.end(), window, w.cur);
    w = fresh();
  }
};

template <class Enc, class... Options>
std::vector<std::uint8_t> encode(const std::vector<std::uint32_t>& events, Options... options) {
  VectorSink sink;
  Enc enc(sink, sink.fresh(), options...);
  for (const std::uint32_t v : events) enc.encode(v);
  enc.finish();
  sink.drain(enc.window());
  return std::move(sink.bytes);
}

void check_round_trip(const std::vector<std::uint32_t>& events, Codec codec, unsigned version) {
  const std::vector<std::uint8_t> bytes =
      codec == Codec::kLzRank ? encode<parlot::codec::v2::Encoder>(events, version)
      : codec == Codec::kLzZe ? encode<parlot::codec::Encoder>(events)
                              : encode<parlot::codec::RawEncoder>(events);
  auto d = std::make_unique<Decoder>(codec);
  d->set_format_version(version);
  d->feed(bytes.data(), bytes.size());
  std::vector<std::uint32_t> back(events.size());
  std::size_t got = 0;
  while (got < events.size()) {
    const std::size_t n = d->next(back.data() + got, events.size() - got);
    PARLOT_FUZZ_CHECK(d->status() != Decoder::Status::kError);
    if (n == 0) break;
    got += n;
  }
  PARLOT_FUZZ_CHECK(got == events.size());
  PARLOT_FUZZ_CHECK(back == events);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const Codec codec = (data[0] & 2) != 0   ? Codec::kLzRank
                      : (data[0] & 1) != 0 ? Codec::kLzZe
                                           : Codec::kRawWords;
  const unsigned version = codec != Codec::kLzRank ? parlot::format::kVersion
                           : (data[0] & 1) != 0    ? 2
                           : (data[0] & 4) != 0    ? 3
                           : (data[0] & 8) != 0    ? 4
                                                   : 5;
  const std::size_t batch = 1 + (data[0] >> 2);
  const std::size_t chunk = data[1] == 0 ? size : std::size_t{data[1]} * 16;
  data += 2;
  size -= 2;

  auto decoder = std::make_unique<Decoder>(codec);
  decoder->set_format_version(version);
  std::vector<std::uint32_t> out(batch);
  std::vector<std::uint32_t> kept;                // first events, for the round trip
  std::size_t feed_size = std::min(chunk, size);  // bytes of the current feed
  std::size_t fed = feed_size;                    // bytes handed to the decoder so far
  decoder->feed(data, feed_size);
  std::uint64_t events = 0;
  for (;;) {
    const std::size_t n = decoder->next(out.data(), batch);
    PARLOT_FUZZ_CHECK(n <= batch);
    const auto status = decoder->status();
    PARLOT_FUZZ_CHECK(status != Decoder::Status::kOk || n == batch);
    // Per batch, not per event: under -fsanitize=fuzzer every comparison in
    // a per-event loop is traced, and decoding is most of the time spent.
    const std::size_t keep = std::min(n, kRoundTripEvents - kept.size());
    kept.insert(kept.end(), out.begin(), out.begin() + static_cast<std::ptrdiff_t>(keep));
    events += n;
    if (status == Decoder::Status::kError) {
      PARLOT_FUZZ_CHECK(decoder->error_offset() <= feed_size);
      PARLOT_FUZZ_CHECK(decoder->error()[0] != '\0');
      break;
    }
    if (events >= kMaxEvents) break;
    if (status == Decoder::Status::kNeedInput) {
      PARLOT_FUZZ_CHECK(n < batch);
      if (fed == size) break;
      feed_size = std::min(chunk, size - fed);
      decoder->feed(data + fed, feed_size);
      fed += feed_size;
    }
  }
  for (const std::uint32_t v : kept) PARLOT_FUZZ_CHECK(v <= parlot::codec::kMaxValue);
  check_round_trip(kept, codec, version);
  return 0;
}
