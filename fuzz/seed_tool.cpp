// Host tool for scripts/fuzz.sh (not a fuzz target): turns a real thread
// trace file into a fuzz_decoder input.
//
//   parlot-fuzz-seed decoder-input <thread file> <output>
//
// Output: fuzz_decoder's two selector bytes (the file's codec, 32 events per
// next(), one feed) and the payloads of its data blocks concatenated, the
// final block's without its event count (docs/FORMAT.md); side-record (PAUX)
// blocks are skipped. Exits 1 on a file it cannot walk.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "parlot/format.h"

namespace {

int fail(const char* file, const char* what) {
  std::fprintf(stderr, "parlot-fuzz-seed: %s: %s\n", file, what);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 || std::strcmp(argv[1], "decoder-input") != 0) {
    std::fprintf(stderr, "usage: parlot-fuzz-seed decoder-input <thread file> <output>\n");
    return 2;
  }
  std::ifstream in(argv[2], std::ios::binary);
  if (!in) return fail(argv[2], "cannot open");
  const std::vector<std::uint8_t> file{std::istreambuf_iterator<char>(in), {}};
  parlot::format::TraceFileHeader h;
  if (file.size() < sizeof h) return fail(argv[2], "shorter than a header");
  std::memcpy(&h, file.data(), sizeof h);
  if (std::memcmp(h.magic, parlot::format::kTraceMagic, sizeof h.magic) != 0 ||
      h.header_bytes < sizeof h || h.header_bytes > file.size()) {
    return fail(argv[2], "not a thread trace");
  }
  // Byte 0: codec bits (fuzz_decoder.cpp), then 16 events per next() call.
  const unsigned codec_bits =
      h.codec == static_cast<std::uint16_t>(parlot::format::Codec::kLzRank) ? 2
      : h.codec == static_cast<std::uint16_t>(parlot::format::Codec::kLzZe) ? 1
                                                                            : 0;
  std::vector<std::uint8_t> out{static_cast<std::uint8_t>(codec_bits | 15 << 2), 0};
  std::size_t off = h.header_bytes;
  while (off + sizeof(parlot::format::BlockHeader) <= file.size()) {
    parlot::format::BlockHeader b;
    std::memcpy(&b, file.data() + off, sizeof b);
    off += sizeof b;
    if (b.magic == parlot::format::kTrailerMagic) break;
    if (b.magic == parlot::format::kAuxBlockMagic) {   // side records: not events
      if (b.payload_bytes > file.size() - off) break;  // cut short
      off += b.payload_bytes;
      continue;
    }
    if (b.magic != parlot::format::kBlockMagic && b.magic != parlot::format::kFinalBlockMagic) {
      return fail(argv[2], "bad block magic");
    }
    const std::size_t skip = b.magic == parlot::format::kFinalBlockMagic ? 8 : 0;
    if (b.payload_bytes < skip || b.payload_bytes > file.size() - off) break;  // cut short
    out.insert(out.end(), file.begin() + static_cast<std::ptrdiff_t>(off + skip),
               file.begin() + static_cast<std::ptrdiff_t>(off + b.payload_bytes));
    off += b.payload_bytes;
  }
  std::ofstream o(argv[3], std::ios::binary | std::ios::trunc);
  o.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
  if (!o) return fail(argv[3], "cannot write");
  return 0;
}
