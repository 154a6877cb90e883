#include "reader_team.h"

#include <dlfcn.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "../mpi/read_mpi_plugin.h"

namespace parlot::tool {

struct ReaderTeam::Plugin {
  void* handle = nullptr;
  decltype(&parlot_read_mpi_init) init = nullptr;
  decltype(&parlot_read_mpi_send) send = nullptr;
  decltype(&parlot_read_mpi_receive_size) receive_size = nullptr;
  decltype(&parlot_read_mpi_receive) receive = nullptr;
  decltype(&parlot_read_mpi_max) max = nullptr;
  decltype(&parlot_read_mpi_finalize) finalize = nullptr;
};

namespace {

namespace fs = std::filesystem;

/// Size of the MPI job this process was started in, or 0 outside one.
unsigned launcher_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    if (const char* v = std::getenv(name); v != nullptr) {
      return static_cast<unsigned>(std::strtoul(v, nullptr, 10));
    }
  }
  return 0;
}

/// Where the plugin may be: $PARLOT_READ_MPI_PLUGIN, next to the
/// executable (the build tree), or in <prefix>/<libdir>/parlot.
std::vector<fs::path> plugin_candidates() {
  std::vector<fs::path> out;
  if (const char* p = std::getenv("PARLOT_READ_MPI_PLUGIN"); p != nullptr && *p != '\0') {
    out.emplace_back(p);
    return out;
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    out.push_back(exe.parent_path() / "libparlot-read-mpi.so");
    out.push_back(exe.parent_path().parent_path() / PARLOT_INSTALL_LIBDIR / "parlot" /
                  "libparlot-read-mpi.so");
  }
  return out;
}

template <class F>
void bind(void* handle, const char* name, F& f) {
  f = reinterpret_cast<F>(::dlsym(handle, name));
  if (f == nullptr) throw std::runtime_error(std::string("MPI plugin lacks ") + name);
}

void check(int rc, const char* what) {
  if (rc != 0)
    throw std::runtime_error(std::string(what) + " failed (MPI error " + std::to_string(rc) + ")");
}

}  // namespace

std::string framed(std::string_view bytes) {
  return std::to_string(bytes.size()) + ":" + std::string(bytes);
}

std::string_view unframe(std::string_view& message) {
  const std::size_t colon = message.find(':');
  std::uint64_t n = 0;
  if (colon == std::string_view::npos || colon == 0 || colon > 19 ||
      std::from_chars(message.data(), message.data() + colon, n).ptr != message.data() + colon ||
      n > message.size() - colon - 1) {
    throw std::runtime_error("malformed message from another reader rank");
  }
  const std::string_view piece = message.substr(colon + 1, n);
  message.remove_prefix(colon + 1 + n);
  return piece;
}

std::string framed_damage(bool leader) {
  return framed(leader ? std::string() : DamageLog::get().take_bytes());
}

void merge_framed_damage(std::string_view& message) {
  const std::string_view damage = unframe(message);
  if (!damage.empty()) DamageLog::get().merge_bytes(damage);
}

ReaderTeam& ReaderTeam::get() {
  static ReaderTeam team;
  return team;
}

ReaderTeam::ReaderTeam() {
  const unsigned launched = launcher_size();
  if (launched <= 1) return;
  std::string tried;
  void* handle = nullptr;
  for (const auto& c : plugin_candidates()) {
    // RTLD_GLOBAL: Open MPI's components resolve libmpi's symbols from it.
    handle = ::dlopen(c.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle != nullptr) break;
    tried += "\n  " + std::string(::dlerror());
  }
  if (handle == nullptr) {
    throw std::runtime_error(
        "started by mpirun, but parlot-read's MPI plugin (libparlot-read-mpi.so) cannot be "
        "loaded (was Parlot built without MPI?); run parlot-read without mpirun:" +
        tried);
  }
  auto plugin = std::make_unique<Plugin>();
  plugin->handle = handle;
  bind(handle, "parlot_read_mpi_init", plugin->init);
  bind(handle, "parlot_read_mpi_send", plugin->send);
  bind(handle, "parlot_read_mpi_receive_size", plugin->receive_size);
  bind(handle, "parlot_read_mpi_receive", plugin->receive);
  bind(handle, "parlot_read_mpi_max", plugin->max);
  bind(handle, "parlot_read_mpi_finalize", plugin->finalize);
  int rank = 0, size = 1;
  check(plugin->init(&rank, &size), "MPI_Init");
  rank_ = static_cast<unsigned>(rank);
  size_ = static_cast<unsigned>(size);
  follower_ = rank_ != 0;
  plugin_ = plugin.release();
}

ReaderTeam::~ReaderTeam() {
  if (plugin_ == nullptr) return;
  plugin_->finalize();
  // The library stays loaded: Open MPI's atexit handlers may still run.
  delete plugin_;
}

std::vector<std::string> ReaderTeam::gather(std::string mine) {
  std::vector<std::string> all;
  if (plugin_ == nullptr) {
    all.push_back(std::move(mine));
    return all;
  }
  if (!leader()) {
    check(plugin_->send(mine.data(), mine.size(), 0), "MPI_Send");
    return all;
  }
  all.resize(size_);
  all[0] = std::move(mine);
  for (unsigned r = 1; r < size_; ++r) {
    std::uint64_t bytes = 0;
    check(plugin_->receive_size(static_cast<int>(r), &bytes), "MPI_Recv");
    all[r].resize(bytes);
    check(plugin_->receive(all[r].data(), bytes, static_cast<int>(r)), "MPI_Recv");
  }
  return all;
}

void ReaderTeam::send(std::string_view data, unsigned to) {
  if (plugin_ == nullptr) throw std::logic_error("ReaderTeam::send in a team of one");
  check(plugin_->send(data.data(), data.size(), static_cast<int>(to)), "MPI_Send");
}

std::string ReaderTeam::receive(unsigned from) {
  if (plugin_ == nullptr) throw std::logic_error("ReaderTeam::receive in a team of one");
  std::uint64_t bytes = 0;
  check(plugin_->receive_size(static_cast<int>(from), &bytes), "MPI_Recv");
  std::string data(bytes, '\0');
  check(plugin_->receive(data.data(), bytes, static_cast<int>(from)), "MPI_Recv");
  return data;
}

int ReaderTeam::max(int value) {
  if (plugin_ == nullptr) return value;
  int result = value;
  check(plugin_->max(value, &result), "MPI_Allreduce");
  return result;
}

}  // namespace parlot::tool
