#include "output_file.h"

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace parlot::exporter {

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  file_ = path_ == "-" ? stdout : std::fopen(path_.c_str(), "wb");
  if (file_ == nullptr) {
    throw std::runtime_error(fmt::format("cannot create {}: {}", path_, std::strerror(errno)));
  }
}

OutputFile::~OutputFile() {
  if (file_ == stdout || closed_) return;
  // Not closed: an export that failed (refused, disk full, corrupt input)
  // leaves no partial file behind.
  if (file_ != nullptr) std::fclose(file_);
  std::remove(path_.c_str());
}

void OutputFile::flush() {
  if (file_ == nullptr) return;
  if (buffer_.size() != 0 &&
      std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) {
    throw std::runtime_error(fmt::format("cannot write {}: {}", path_, std::strerror(errno)));
  }
  buffer_.clear();
}

void OutputFile::close() {
  flush();
  if (file_ == nullptr) return;
  const bool failed = file_ == stdout ? std::fflush(file_) != 0 : std::fclose(file_) != 0;
  if (file_ != stdout) file_ = nullptr;
  if (failed)
    throw std::runtime_error(fmt::format("cannot write {}: {}", path_, std::strerror(errno)));
  closed_ = true;
}

std::string json_string(std::string_view text) {
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace parlot::exporter
