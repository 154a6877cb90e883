#include "input_files.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <streambuf>

#include "parlot/crc32c.h"
#include "parlot/format.h"
#include "parlot/node_format.h"
#include "parlot/trace_reader.h"

namespace parlot::detail {

namespace fs = std::filesystem;

namespace {

// One run of a logical file's bytes in its node file.
struct Extent {
  std::uint64_t bytes;
  std::uint64_t node_offset;
};

// A file of a node-layout process: its bytes as extents of the node file,
// keyed by logical offset (sorted, disjoint; bytes in no extent are zero).
struct LogicalFile {
  fs::path node_file;
  std::map<std::uint64_t, Extent> extents;
  std::uint64_t size = 0;

  // Bytes [off, off + n) now come from node offset `node_offset`.
  void write(std::uint64_t off, std::uint64_t n, std::uint64_t node_offset) {
    if (n == 0) {
      size = std::max(size, off);
      return;
    }
    const std::uint64_t end = off + n;
    auto it = extents.lower_bound(off);
    if (it != extents.begin()) {
      auto prev = std::prev(it);
      const std::uint64_t prev_end = prev->first + prev->second.bytes;
      if (prev_end > off) {
        if (prev_end > end) {
          extents[end] = {prev_end - end, prev->second.node_offset + (end - prev->first)};
        }
        prev->second.bytes = off - prev->first;
      }
    }
    it = extents.lower_bound(off);
    while (it != extents.end() && it->first < end) {
      const std::uint64_t e_end = it->first + it->second.bytes;
      if (e_end > end) {
        extents[end] = {e_end - end, it->second.node_offset + (end - it->first)};
      }
      it = extents.erase(it);
    }
    extents[off] = {n, node_offset};
    size = std::max(size, end);
  }
};

struct Registry {
  std::mutex lock;
  // Virtual file path -> its bytes.
  std::map<std::string, std::shared_ptr<const LogicalFile>> files;
  // Virtual directory path -> its files' names.
  std::map<std::string, std::vector<std::string>> directories;
  // Node file path -> the virtual directories it registered.
  std::map<std::string, std::vector<std::string>> by_node;
};

Registry& registry() {
  static Registry r;
  return r;
}

std::shared_ptr<const LogicalFile> find_file(const fs::path& path) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> guard(r.lock);
  auto it = r.files.find(path.lexically_normal().string());
  return it == r.files.end() ? nullptr : it->second;
}

// Reads a logical file from its node file's extents.
class LogicalFileBuffer : public std::streambuf {
 public:
  explicit LogicalFileBuffer(std::shared_ptr<const LogicalFile> f)
      : file_(std::move(f)), in_(file_->node_file, std::ios::binary) {}
  bool ok() const { return static_cast<bool>(in_); }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    const std::uint64_t pos = start_ + static_cast<std::uint64_t>(egptr() - eback());
    if (pos >= file_->size) return traits_type::eof();
    std::uint64_t n = std::min<std::uint64_t>(sizeof buf_, file_->size - pos);
    auto it = file_->extents.upper_bound(pos);
    const bool in_extent =
        it != file_->extents.begin() && std::prev(it)->first + std::prev(it)->second.bytes > pos;
    if (in_extent) {
      const auto& [at, e] = *std::prev(it);
      n = std::min(n, at + e.bytes - pos);
      in_.clear();
      in_.seekg(static_cast<std::streamoff>(e.node_offset + (pos - at)));
      in_.read(buf_, static_cast<std::streamsize>(n));
      n = static_cast<std::uint64_t>(std::max<std::streamsize>(in_.gcount(), 0));
      if (n == 0) return traits_type::eof();  // the node file shrank
    } else {
      if (it != file_->extents.end()) n = std::min(n, it->first - pos);
      std::memset(buf_, 0, n);
    }
    start_ = pos;
    setg(buf_, buf_, buf_ + n);
    return traits_type::to_int_type(*gptr());
  }

  pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode) override {
    const std::uint64_t cur = start_ + static_cast<std::uint64_t>(gptr() - eback());
    std::int64_t base = dir == std::ios_base::beg   ? 0
                        : dir == std::ios_base::cur ? static_cast<std::int64_t>(cur)
                                                    : static_cast<std::int64_t>(file_->size);
    const std::int64_t to = base + off;
    if (to < 0) return pos_type(off_type(-1));
    start_ = static_cast<std::uint64_t>(to);
    setg(buf_, buf_, buf_);
    return pos_type(to);
  }

  pos_type seekpos(pos_type pos, std::ios_base::openmode which) override {
    return seekoff(off_type(pos), std::ios_base::beg, which);
  }

 private:
  std::shared_ptr<const LogicalFile> file_;
  std::ifstream in_;
  std::uint64_t start_ = 0;  // logical offset of eback()
  char buf_[1 << 16];
};

class LogicalFileStream : public std::istream {
 public:
  explicit LogicalFileStream(std::shared_ptr<const LogicalFile> f)
      : std::istream(nullptr), buf_(std::move(f)) {
    rdbuf(&buf_);
    if (!buf_.ok()) setstate(std::ios::failbit);
  }

 private:
  LogicalFileBuffer buf_;
};

// What try_record() found at an offset.
enum class RecordCheck { kGood, kIncomplete, kBad };

struct Record {
  format::NodeRecordHeader h{};
  std::string name;
  std::vector<std::uint8_t> payload;
  std::string problem;
};

// Reads and checks the record at `off` of `in` (`size` bytes long).
RecordCheck try_record(std::ifstream& in, std::uint64_t off, std::uint64_t size, Record& r) {
  if (size - off < sizeof r.h) {
    r.problem = "incomplete record header";
    return RecordCheck::kIncomplete;
  }
  in.clear();
  in.seekg(static_cast<std::streamoff>(off));
  in.read(reinterpret_cast<char*>(&r.h), sizeof r.h);
  if (in.gcount() != sizeof r.h) {
    r.problem = "cannot read record header";
    return RecordCheck::kIncomplete;
  }
  if (r.h.magic != format::kNodeRecordMagic) {
    r.problem = "bad record magic";
    return RecordCheck::kBad;
  }
  if (r.h.version != format::kNodeVersion) {
    r.problem = "unsupported node record version " + std::to_string(r.h.version);
    return RecordCheck::kBad;
  }
  if (r.h.name_bytes == 0 || r.h.name_bytes > format::kMaxNodeRecordName ||
      r.h.record_bytes < sizeof r.h + r.h.name_bytes ||
      r.h.record_bytes > format::kMaxNodeRecordBytes) {
    r.problem = "bad record length " + std::to_string(r.h.record_bytes);
    return RecordCheck::kBad;
  }
  if (r.h.record_bytes > size - off) {
    r.problem = "record of " + std::to_string(r.h.record_bytes) + " bytes cut short";
    return RecordCheck::kIncomplete;
  }
  r.name.resize(r.h.name_bytes);
  in.read(r.name.data(), r.h.name_bytes);
  r.payload.resize(r.h.record_bytes - sizeof r.h - r.h.name_bytes);
  in.read(reinterpret_cast<char*>(r.payload.data()),
          static_cast<std::streamsize>(r.payload.size()));
  if (!in) {
    r.problem = "cannot read record";
    return RecordCheck::kIncomplete;
  }
  format::NodeRecordHeader zeroed = r.h;
  zeroed.crc32c = 0;
  std::uint32_t crc = crc32c::of(reinterpret_cast<const std::uint8_t*>(&zeroed), sizeof zeroed);
  crc = format::crc32c_extend(crc, reinterpret_cast<const std::uint8_t*>(r.name.data()),
                              r.name.size());
  crc = format::crc32c_extend(crc, r.payload.data(), r.payload.size());
  if (crc != r.h.crc32c) {
    r.problem = "record checksum mismatch";
    return RecordCheck::kBad;
  }
  const std::size_t slash = r.name.find('/');
  if (slash == 0 || slash == std::string::npos || slash + 1 == r.name.size() ||
      r.name.find('/', slash + 1) != std::string::npos || r.name.starts_with('.') ||
      r.name.find("/.") != std::string::npos) {
    r.problem = "bad record name";
    return RecordCheck::kBad;
  }
  if (r.h.kind < static_cast<std::uint8_t>(format::NodeRecordKind::kAppend) ||
      r.h.kind > static_cast<std::uint8_t>(format::NodeRecordKind::kReference)) {
    r.problem = "unknown record kind " + std::to_string(r.h.kind);
    return RecordCheck::kBad;
  }
  return RecordCheck::kGood;
}

// The next offset after `from` where a good record starts, or `size`.
std::uint64_t resync(std::ifstream& in, std::uint64_t from, std::uint64_t size) {
  std::vector<char> window(1 << 20);
  for (std::uint64_t base = from; base < size;) {
    in.clear();
    in.seekg(static_cast<std::streamoff>(base));
    in.read(window.data(), static_cast<std::streamsize>(window.size()));
    const auto got = static_cast<std::uint64_t>(in.gcount());
    if (got < 4) break;
    for (std::uint64_t i = 0; i + 4 <= got; ++i) {
      std::uint32_t m;
      std::memcpy(&m, window.data() + i, 4);
      if (m != format::kNodeRecordMagic) continue;
      Record r;
      if (try_record(in, base + i, size, r) == RecordCheck::kGood) return base + i;
    }
    base += got - 3;
  }
  return size;
}

std::uint64_t content_key(const std::vector<std::uint8_t>& p) {
  return crc32c::of(p.data(), p.size()) ^ (static_cast<std::uint64_t>(p.size()) << 32);
}

}  // namespace

bool is_node_file_name(const std::string& name) {
  return name.starts_with("node-") && name.ends_with(".parlot") && name.size() > 12;
}

NodeScan scan_node_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw FormatError(file, 0, "cannot open node file");
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(in.tellg());
  NodeScan scan;
  // A process: its record name's first part and its start time.
  struct Process {
    std::string directory;  // virtual path
    bool published = false;
    std::map<std::string, std::shared_ptr<LogicalFile>> files;
  };
  std::map<std::pair<std::string, std::uint64_t>, Process> processes;
  std::vector<std::pair<std::string, std::uint64_t>> order;
  std::map<std::string, unsigned> images;  // first part -> processes so far
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> contents;  // for references
  const std::string node = file.lexically_normal().string();
  for (std::uint64_t off = 0; off < size;) {
    Record r;
    const RecordCheck c = try_record(in, off, size, r);
    if (c == RecordCheck::kIncomplete) {
      scan.incomplete_tail = size - off;
      scan.damage.emplace_back(
          off, r.problem + "; the last " + std::to_string(size - off) +
                   " bytes are no complete record (a writer was stopped mid-write) and "
                   "are left out");
      break;
    }
    if (c == RecordCheck::kBad) {
      const std::uint64_t next = resync(in, off + 1, size);
      scan.damage.emplace_back(off, r.problem + "; " + std::to_string(next - off) +
                                        " bytes skipped" +
                                        (next < size ? " to the next good record" : " to the end"));
      off = next;
      continue;
    }
    const std::size_t slash = r.name.find('/');
    const std::string first = r.name.substr(0, slash);
    const std::string leaf = r.name.substr(slash + 1);
    const auto key = std::make_pair(first, r.h.start_ns);
    auto [pit, added] = processes.try_emplace(key);
    Process& p = pit->second;
    if (added) {
      const unsigned k = images[first]++;
      p.directory = node + "/" + first + (k == 0 ? "" : "." + std::to_string(k));
      order.push_back(key);
    }
    const std::uint64_t payload_at = off + sizeof r.h + r.h.name_bytes;
    const auto kind = static_cast<format::NodeRecordKind>(r.h.kind);
    if (kind == format::NodeRecordKind::kPublish) {
      p.published = true;
      off += r.h.record_bytes;
      continue;
    }
    auto& f = p.files[leaf];
    if (f == nullptr) {
      f = std::make_shared<LogicalFile>();
      f->node_file = file;
    }
    switch (kind) {
      case format::NodeRecordKind::kAppend:
        f->write(f->size, r.payload.size(), payload_at);
        break;
      case format::NodeRecordKind::kWriteAt:
        f->write(r.h.offset, r.payload.size(), payload_at);
        break;
      case format::NodeRecordKind::kReplace:
        f->extents.clear();
        f->size = 0;
        f->write(0, r.payload.size(), payload_at);
        if (!r.payload.empty()) {
          contents.try_emplace(std::to_string(content_key(r.payload)),
                               std::make_pair(payload_at, r.payload.size()));
        }
        break;
      case format::NodeRecordKind::kReference: {
        format::NodeReference ref{};
        if (r.payload.size() != sizeof ref) {
          scan.damage.emplace_back(off, "reference record of a bad size; ignored");
          break;
        }
        std::memcpy(&ref, r.payload.data(), sizeof ref);
        auto c_it = contents.find(std::to_string(ref.hash[0]));
        if (c_it == contents.end() || c_it->second.second != ref.bytes) {
          scan.damage.emplace_back(off, "reference to content not in the file before it; ignored");
          break;
        }
        f->extents.clear();
        f->size = 0;
        f->write(0, c_it->second.second, c_it->second.first);
        break;
      }
      case format::NodeRecordKind::kPublish:
        break;
    }
    off += r.h.record_bytes;
  }
  Registry& reg = registry();
  const std::lock_guard<std::mutex> guard(reg.lock);
  for (const std::string& dir : reg.by_node[node]) {
    for (const std::string& name : reg.directories[dir]) reg.files.erase(dir + "/" + name);
    reg.directories.erase(dir);
  }
  auto& mine = reg.by_node[node];
  mine.clear();
  for (const auto& key : order) {
    Process& p = processes[key];
    if (!p.published) continue;
    auto& names = reg.directories[p.directory];
    for (auto& [name, f] : p.files) {
      names.push_back(name);
      reg.files[p.directory + "/" + name] = std::move(f);
    }
    mine.push_back(p.directory);
    scan.processes.emplace_back(p.directory);
  }
  return scan;
}

bool input_is_file(const fs::path& path) {
  if (find_file(path) != nullptr) return true;
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

bool input_exists(const fs::path& path) {
  if (find_file(path) != nullptr) return true;
  {
    Registry& r = registry();
    const std::lock_guard<std::mutex> guard(r.lock);
    if (r.directories.contains(path.lexically_normal().string())) return true;
  }
  std::error_code ec;
  return fs::exists(path, ec);
}

std::uint64_t input_file_size(const fs::path& path, std::error_code& ec) {
  if (auto f = find_file(path)) return f->size;
  return fs::file_size(path, ec);
}

std::unique_ptr<std::istream> open_input(const fs::path& path) {
  if (auto f = find_file(path)) return std::make_unique<LogicalFileStream>(std::move(f));
  return std::make_unique<std::ifstream>(path, std::ios::binary);
}

OpenablePath::OpenablePath(const fs::path& path) : path_(path) {
  auto f = find_file(path);
  if (f == nullptr) return;
  fd_ = memfd_create("parlot-node-file", MFD_CLOEXEC);
  if (fd_ < 0) throw FormatError(path, 0, "cannot make a memory file for it");
  std::ifstream in(f->node_file, std::ios::binary);
  std::vector<char> buf(1 << 20);
  for (const auto& [at, e] : f->extents) {
    for (std::uint64_t done = 0; done < e.bytes;) {
      const std::uint64_t n = std::min<std::uint64_t>(buf.size(), e.bytes - done);
      in.seekg(static_cast<std::streamoff>(e.node_offset + done));
      in.read(buf.data(), static_cast<std::streamsize>(n));
      if (static_cast<std::uint64_t>(in.gcount()) != n ||
          pwrite(fd_, buf.data(), n, static_cast<off_t>(at + done)) != static_cast<ssize_t>(n)) {
        throw FormatError(f->node_file, e.node_offset + done, "cannot copy " + path.string());
      }
      done += n;
    }
  }
  if (ftruncate(fd_, static_cast<off_t>(f->size)) != 0) {
    throw FormatError(path, 0, "cannot size its memory file");
  }
  path_ = "/proc/self/fd/" + std::to_string(fd_);
}

OpenablePath::~OpenablePath() {
  if (fd_ >= 0) close(fd_);
}

std::vector<fs::path> list_virtual_directory(const fs::path& dir, bool& found) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> guard(r.lock);
  const std::string d = dir.lexically_normal().string();
  auto it = r.directories.find(d);
  found = it != r.directories.end();
  std::vector<fs::path> out;
  if (found) {
    for (const auto& name : it->second) out.emplace_back(d + "/" + name);
  }
  return out;
}

std::string node_file_location(const fs::path& path, std::uint64_t offset) {
  auto f = find_file(path);
  if (f == nullptr) return "";
  auto it = f->extents.upper_bound(offset);
  if (it == f->extents.begin()) return "";
  --it;
  if (offset >= it->first + it->second.bytes) return "";
  return f->node_file.string() + ": offset " +
         std::to_string(it->second.node_offset + (offset - it->first));
}

}  // namespace parlot::detail
