#include "io/load_map_writer.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/build_id.h"
#include "io/proc_maps.h"
#include "io/raw_io.h"
#include "parlot/format.h"

namespace parlot::runtime {
namespace {

struct Context {
  int fd;
  int error;
  char exe[1024];
  char path[1024];  // a relative name made absolute
};

// Appends the GNU build ID found in the object's PT_NOTE segments as hex.
void append_build_id(const dl_phdr_info* info, TextBuilder& line) {
  char hex[128];
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* notes = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    if (find_gnu_build_id(notes, ph.p_memsz, hex, sizeof hex)) {
      line.str(hex);
      return;
    }
  }
  line.ch('-');
}

int on_object(dl_phdr_info* info, size_t, void* data) {
  auto* ctx = static_cast<Context*>(data);
  const char* path = info->dlpi_name;
  if (path == nullptr || path[0] == '\0') path = ctx->exe;  // the executable
  std::uint64_t lo = ~std::uint64_t{0}, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const std::uint64_t a = info->dlpi_addr + ph.p_vaddr;
    if (a < lo) lo = a;
    if (a + ph.p_memsz > hi) hi = a + ph.p_memsz;
  }
  if (hi == 0) return 0;
  // A relative name (LD_LIBRARY_PATH=lib, dlopen("./x.so")) is made
  // absolute; the vdso and the like have no file.
  if (path[0] != '/' && !absolute_object_path(path, lo, ctx->path, sizeof ctx->path)) return 0;
  if (path[0] != '/') path = ctx->path;
  char buf[1400];
  TextBuilder line(buf, sizeof buf);
  line.hex(lo).ch(' ').hex(hi).ch(' ').hex(info->dlpi_addr).ch(' ');
  append_build_id(info, line);
  line.ch(' ').escaped(path, std::strlen(path)).ch('\n');
  if (ctx->error == 0) ctx->error = write_all(ctx->fd, line.data(), line.size());
  return 0;
}

}  // namespace

int write_load_map(int fd, bool with_magic) {
  Context ctx{};
  ctx.fd = fd;
  const ssize_t n = readlink("/proc/self/exe", ctx.exe, sizeof ctx.exe - 1);
  ctx.exe[n > 0 ? n : 0] = '\0';
  if (with_magic) {
    char buf[64];
    TextBuilder magic(buf, sizeof buf);
    magic.str(format::kLoadMapMagicLine).ch('\n');
    ctx.error = write_all(ctx.fd, magic.data(), magic.size());
  }
  dl_iterate_phdr(on_object, &ctx);
  return ctx.error;
}

}  // namespace parlot::runtime
