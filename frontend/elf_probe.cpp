#include "elf_probe.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

namespace parlot::frontend {
namespace {

// Tables larger than this are not read (a real .dynsym/.dynstr of the
// largest libraries is a few MiB).
constexpr std::uint64_t kMaxTableBytes = std::uint64_t{256} << 20;

// A read-only file descriptor, closed at the end of its scope.
class File {
 public:
  explicit File(const std::filesystem::path& path)
      : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    struct stat st {};
    if (fd_ >= 0 && ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) {
      size_ = static_cast<std::uint64_t>(st.st_size);
    }
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }

  // Reads exactly `n` bytes at `offset` into `out`: false past the end of
  // the file, or on a read error.
  bool read_at(std::uint64_t offset, void* out, std::uint64_t n) const {
    if (fd_ < 0 || offset > size_ || n > size_ - offset) return false;
    auto* p = static_cast<char*>(out);
    while (n > 0) {
      const ssize_t got = ::pread(fd_, p, n, static_cast<off_t>(offset));
      if (got <= 0) return false;
      p += got;
      offset += static_cast<std::uint64_t>(got);
      n -= static_cast<std::uint64_t>(got);
    }
    return true;
  }

  // Reads the `count` entries of `entry_size` bytes (at least sizeof(T))
  // from `offset` as T, in one read: empty when they do not all fit in the
  // file or the table is larger than kMaxTableBytes.
  template <typename T>
  std::vector<T> read_table(std::uint64_t offset, std::uint64_t count,
                            std::uint64_t entry_size) const {
    if (entry_size < sizeof(T) || count > kMaxTableBytes / entry_size) return {};
    std::vector<char> bytes(count * entry_size);
    if (!read_at(offset, bytes.data(), bytes.size())) return {};
    std::vector<T> out(count);
    for (std::uint64_t i = 0; i < count; ++i) {
      std::memcpy(&out[i], bytes.data() + i * entry_size, sizeof(T));
    }
    return out;
  }

 private:
  int fd_;
  std::uint64_t size_ = 0;
};

// The ELF header, when the file is a 64-bit ELF file of this machine's
// byte order.
std::optional<Elf64_Ehdr> elf_header(const File& f) {
  Elf64_Ehdr h;
  if (!f.read_at(0, &h, sizeof h)) return std::nullopt;
  if (std::memcmp(h.e_ident, ELFMAG, SELFMAG) != 0 || h.e_ident[EI_CLASS] != ELFCLASS64) {
    return std::nullopt;
  }
  const unsigned char host = std::endian::native == std::endian::little ? ELFDATA2LSB : ELFDATA2MSB;
  if (h.e_ident[EI_DATA] != host) return std::nullopt;
  return h;
}

}  // namespace

std::optional<std::string> elf_interpreter(const std::filesystem::path& path) {
  const File f(path);
  const auto h = elf_header(f);
  if (!h) return std::nullopt;
  const auto phdrs = f.read_table<Elf64_Phdr>(h->e_phoff, h->e_phnum, h->e_phentsize);
  for (const Elf64_Phdr& p : phdrs) {
    if (p.p_type != PT_INTERP) continue;
    if (p.p_filesz == 0 || p.p_filesz > 4096) return std::nullopt;
    std::string interp(p.p_filesz, '\0');
    if (!f.read_at(p.p_offset, interp.data(), p.p_filesz)) return std::nullopt;
    interp.resize(std::strlen(interp.c_str()));
    if (interp.empty()) return std::nullopt;
    return interp;
  }
  return std::nullopt;
}

bool elf_defines_dynamic_symbol(const std::filesystem::path& path, std::string_view name) {
  const File f(path);
  const auto h = elf_header(f);
  if (!h) return false;
  const auto sections = f.read_table<Elf64_Shdr>(h->e_shoff, h->e_shnum, h->e_shentsize);
  for (const Elf64_Shdr& s : sections) {
    if (s.sh_type != SHT_DYNSYM || s.sh_link >= sections.size()) continue;
    const Elf64_Shdr& str = sections[s.sh_link];
    if (str.sh_size > kMaxTableBytes || s.sh_entsize == 0) return false;
    std::string strtab(str.sh_size, '\0');
    if (!f.read_at(str.sh_offset, strtab.data(), str.sh_size)) return false;
    const auto symbols =
        f.read_table<Elf64_Sym>(s.sh_offset, s.sh_size / s.sh_entsize, s.sh_entsize);
    for (const Elf64_Sym& sym : symbols) {
      if (sym.st_shndx == SHN_UNDEF || sym.st_name >= strtab.size()) continue;
      const std::string_view sym_name(strtab.c_str() + sym.st_name);
      if (sym_name == name) return true;
    }
    return false;
  }
  return false;
}

}  // namespace parlot::frontend
