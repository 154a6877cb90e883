#include "io/raw_io.h"

#include <pthread.h>
#include <signal.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/virtual_fd.h"

namespace parlot::runtime {

int write_all_unguarded(int fd, const void* data, std::size_t n);

namespace {

// Runs `write` (returning 0 or an errno) with SIGXFSZ blocked: a write
// past RLIMIT_FSIZE raises SIGXFSZ, whose default action would kill the
// program for the tracer's sake; the one this write raised is consumed
// (the write fails with EFBIG).
template <class Write>
int without_sigxfsz(Write write) {
  sigset_t xfsz, saved;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  sigset_t pending;
  sigemptyset(&pending);
  pthread_sigmask(SIG_BLOCK, &xfsz, &saved);
  sigpending(&pending);
  const bool already_pending = sigismember(&pending, SIGXFSZ) == 1;
  const int err = write();
  if (err == EFBIG && !already_pending) {
    const timespec zero{0, 0};
    sigtimedwait(&xfsz, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  return err;
}

}  // namespace

int write_record(int fd, const iovec* parts, int count, std::size_t total) {
  return without_sigxfsz([&] {
    for (;;) {
      const ssize_t w = ::writev(fd, parts, count);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return errno;
      return static_cast<std::size_t>(w) == total ? 0 : EIO;
    }
  });
}

int write_all(int fd, const void* data, std::size_t n) {
  // A descriptor of a file in a node file (node_file.h): one record.
  if (is_virtual_fd(fd)) return virtual_fd_write(fd, data, n);
  return without_sigxfsz([&] { return write_all_unguarded(fd, data, n); });
}

int write_all_unguarded(int fd, const void* data, std::size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n != 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (w == 0) return EIO;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return 0;
}

TextBuilder& TextBuilder::str(const char* s) {
  return str(s, std::strlen(s));
}

TextBuilder& TextBuilder::str(const char* s, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) ch(s[i]);
  return *this;
}

TextBuilder& TextBuilder::escaped(const char* s, std::size_t n) {
  static const char kHex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '\\':
        str("\\\\");
        break;
      case '\n':
        str("\\n");
        break;
      case '\r':
        str("\\r");
        break;
      case '\t':
        str("\\t");
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          str("\\x");
          ch(kHex[c >> 4]);
          ch(kHex[c & 15]);
        } else {
          ch(static_cast<char>(c));
        }
    }
  }
  return *this;
}

TextBuilder& TextBuilder::ch(char c) {
  if (n_ + 1 < cap_) {
    buf_[n_++] = c;
  } else {
    truncated_ = true;
  }
  return *this;
}

TextBuilder& TextBuilder::u64(std::uint64_t v) {
  char tmp[24];
  int i = 0;
  do {
    tmp[i++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (i != 0) ch(tmp[--i]);
  return *this;
}

TextBuilder& TextBuilder::i64(std::int64_t v) {
  if (v < 0) {
    ch('-');
    return u64(static_cast<std::uint64_t>(-(v + 1)) + 1);
  }
  return u64(static_cast<std::uint64_t>(v));
}

TextBuilder& TextBuilder::hex(std::uint64_t v) {
  static const char kHex[] = "0123456789abcdef";
  char tmp[16];
  int i = 0;
  do {
    tmp[i++] = kHex[v & 15];
    v >>= 4;
  } while (v != 0);
  while (i != 0) ch(tmp[--i]);
  return *this;
}

const char* TextBuilder::c_str() {
  buf_[n_ < cap_ ? n_ : cap_ - 1] = '\0';
  return buf_;
}

void log_line(const char* message) {
  char buf[512];
  TextBuilder line(buf, sizeof buf);
  line.str("parlot: ").str(message).ch('\n');
  write_all(STDERR_FILENO, line.data(), line.size());
}

}  // namespace parlot::runtime
