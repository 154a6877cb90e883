#include "local_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <system_error>

namespace parlot::test {
namespace {

std::string content_type(const std::filesystem::path& p) {
  static const std::map<std::string, std::string> types{{".html", "text/html; charset=utf-8"},
                                                        {".js", "text/javascript"},
                                                        {".css", "text/css"},
                                                        {".json", "application/json"},
                                                        {".png", "image/png"},
                                                        {".ico", "image/x-icon"},
                                                        {".wasm", "application/wasm"},
                                                        {".woff2", "font/woff2"},
                                                        {".txt", "text/plain; charset=utf-8"},
                                                        {".folded", "text/plain; charset=utf-8"}};
  const auto it = types.find(p.extension().string());
  return it == types.end() ? "application/octet-stream" : it->second;
}

void send_all(int fd, const std::string& data) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    sent += static_cast<std::size_t>(n);
  }
}

}  // namespace

LocalHttpServer::LocalHttpServer(std::filesystem::path root) : root_(std::move(root)) {
  listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener_ < 0) throw std::system_error(errno, std::generic_category(), "socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener_, 64) != 0 ||
      ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int error = errno;
    ::close(listener_);
    throw std::system_error(error, std::generic_category(), "bind/listen on 127.0.0.1");
  }
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { serve(); });
}

LocalHttpServer::~LocalHttpServer() {
  stop_ = true;
  thread_.join();
  ::close(listener_);
}

void LocalHttpServer::serve() {
  while (!stop_) {
    pollfd p{listener_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;  // wakes every 100 ms to check stop_
    const int connection = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) continue;
    answer(connection);
    ::close(connection);
    ++requests_;
  }
}

void LocalHttpServer::answer(int connection) {
  // The request line is all we need: "GET /path?query HTTP/1.1".
  std::string request;
  char buffer[4096];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < 65536) {
    pollfd p{connection, POLLIN, 0};
    if (::poll(&p, 1, 2000) <= 0) return;
    const ssize_t n = ::recv(connection, buffer, sizeof buffer, 0);
    if (n <= 0) return;
    request.append(buffer, static_cast<std::size_t>(n));
  }
  std::istringstream line(request.substr(0, request.find("\r\n")));
  std::string method, target;
  line >> method >> target;
  target = target.substr(0, target.find_first_of("?#"));
  const std::filesystem::path file = root_ / std::filesystem::path(target).relative_path();
  std::ifstream in(file, std::ios::binary);
  if (method != "GET" || target.find("..") != std::string::npos || !in ||
      std::filesystem::is_directory(file)) {
    send_all(connection,
             "HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    return;
  }
  std::stringstream body;
  body << in.rdbuf();
  const std::string content = body.str();
  send_all(connection, "HTTP/1.0 200 OK\r\nContent-Type: " + content_type(file) +
                           "\r\nContent-Length: " + std::to_string(content.size()) +
                           "\r\nConnection: close\r\n\r\n" + content);
}

}  // namespace parlot::test
