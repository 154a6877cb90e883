// A static-file HTTP server on 127.0.0.1 for browser tests: serves one
// directory tree to GET requests, one connection at a time, on a thread of
// its own, until destroyed.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <thread>

namespace parlot::test {

/// Serves the files under `root` at http://127.0.0.1:port()/ (HTTP/1.0, one
/// response per connection, Content-Type from the file extension; 404 for a
/// missing file or a path with ".."). Binds a free port chosen by the kernel.
/// Throws std::system_error if the socket cannot be made, bound or listened
/// on. Symlinks under `root` are followed.
class LocalHttpServer {
 public:
  explicit LocalHttpServer(std::filesystem::path root);
  ~LocalHttpServer();
  LocalHttpServer(const LocalHttpServer&) = delete;
  LocalHttpServer& operator=(const LocalHttpServer&) = delete;

  /// The TCP port it listens on.
  std::uint16_t port() const { return port_; }
  /// Requests answered so far (any status).
  int requests() const { return requests_.load(); }

 private:
  void serve();
  void answer(int connection);

  std::filesystem::path root_;
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

}  // namespace parlot::test
