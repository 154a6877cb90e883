// parlot: the front end. `parlot record [options] -- PROGRAM ARGS` records a
// program; `parlot flags [options]` prints the flags that build one for
// tracing; `parlot info|trace|stats ... ` (every other subcommand) runs
// parlot-read with the same arguments; `parlot --version`.
// Exit status: record gives the program's (or dies of its signal); 2 usage.
#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

#include "flags_command.h"
#include "install_paths.h"
#include "record_command.h"

namespace {

// Replaces this process with parlot-read, handing it argv[1..].
[[noreturn]] void forward_to_parlot_read(int argc, char** argv) {
  const auto reader = parlot::frontend::find_parlot_read();
  if (!reader) {
    fmt::print(stderr, "parlot: cannot find parlot-read next to {}\n",
               parlot::frontend::own_directory().string());
    std::exit(2);
  }
  const std::string path = reader->string();
  std::vector<char*> args{const_cast<char*>(path.c_str())};
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  execv(path.c_str(), args.data());
  fmt::print(stderr, "parlot: cannot run {}: {}\n", path, std::strerror(errno));
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2) {
    const std::string_view first = argv[1];
    if (first != "record" && first != "flags" && first.substr(0, 1) != "-") {
      forward_to_parlot_read(argc, argv);
    }
  }
  CLI::App app{
      "parlot: whole-program function-call tracer\n"
      "  parlot record [OPTIONS] [--] PROGRAM [ARGS...]   record a program\n"
      "  parlot flags [--mode hooks|sleds] [OPTIONS]      flags to build a program for tracing\n"
      "  parlot info|trace|stats DIR ...                  read a trace (parlot-read)"};
  app.set_version_flag("-V,--version", "parlot " PARLOT_VERSION);
  app.require_subcommand(1);
  std::vector<std::string> command;
  if (argc >= 2 && std::string_view(argv[1]) == "record") {
    command = parlot::frontend::split_program_command(argc, argv);
  }
  parlot::frontend::add_record_command(app, command);
  parlot::frontend::add_flags_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "parlot: error: {}\n", e.what());
    return 2;
  }
  return 0;
}
