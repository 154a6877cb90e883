#include "flags_command.h"

#include <fmt/core.h>
#include <parlot/build_modes.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include "build_flags.h"
#include "install_paths.h"

namespace parlot::frontend {
namespace {

struct FlagsOptions {
  std::string mode = "hooks";
  std::string cc = "gcc";
  bool after_inlining = false;
  bool with_runtime = false;
  bool cflags = false;
  bool libs = false;
  bool verbose = false;
};

[[noreturn]] void usage_error(const std::string& message) {
  fmt::print(stderr, "parlot flags: {}\n", message);
  std::exit(2);
}

// What a run of a program built with `request` needs, for -v.
void print_explanation(const FlagRequest& request) {
  const bool linked = request.runtime_dir.has_value();
  if (request.mode == BuildMode::sleds) {
    fmt::print(
        "# sleds: every function left after inlining starts with {} NOP bytes, listed in the\n"
        "# section {}; the runtime patches them into calls while tracing is on and\n"
        "# leaves them NOPs while it is off.\n",
        PARLOT_SLED_ENTRY_BYTES, PARLOT_SLED_SECTION);
    fmt::print("{}", linked
                         ? "# Linked with the runtime: every run loads it and is traced; "
                           "PARLOT_START=off starts with tracing off.\n"
                         : "# Untraced when run alone; traced under `parlot record -- PROGRAM`.\n");
  } else {
    fmt::print(
        "# hooks: every instrumented function calls __cyg_profile_func_enter/exit, traced or\n"
        "# not (untraced runs call glibc's no-op hooks).\n");
    fmt::print("{}", linked
                         ? "# Linked with the runtime: every run is traced.\n"
                         : "# Untraced when run alone; traced under `parlot record -- PROGRAM`.\n");
  }
}

void run_flags(const FlagsOptions& o) {
  FlagRequest request;
  const auto mode = parse_build_mode(o.mode);
  if (!mode) usage_error("--mode " + o.mode + ": expected hooks or sleds");
  request.mode = *mode;
  const auto compiler = parse_compiler(o.cc);
  if (!compiler) usage_error("--cc " + o.cc + ": expected gcc or clang");
  request.compiler = *compiler;
  request.after_inlining = o.after_inlining;
  if (o.with_runtime) {
    const auto runtime = find_runtime();
    if (!runtime) {
      usage_error("--with-runtime: cannot find the runtime (" PARLOT_RUNTIME_NAME ") next to " +
                  own_directory().string());
    }
    request.runtime_dir = runtime->parent_path();
  }
  BuildFlags flags;
  try {
    flags = build_flags(request);
  } catch (const std::invalid_argument& e) {
    usage_error(e.what());
  }
  if (o.verbose) {
    print_explanation(request);
    fmt::print("compile: {}\nlink:    {}\n", join_flags(flags.compile), join_flags(flags.link));
    return;
  }
  const bool both = o.cflags == o.libs;  // neither or both: every flag
  std::vector<std::string> out;
  if (both || o.cflags) out = flags.compile;
  if (both || o.libs) out.insert(out.end(), flags.link.begin(), flags.link.end());
  fmt::print("{}\n", join_flags(out));
}

}  // namespace

void add_flags_command(CLI::App& app) {
  auto o = std::make_shared<FlagsOptions>();
  CLI::App* cmd = app.add_subcommand(
      "flags", "Print the compile and link flags that build a program for tracing");
  cmd->add_option("--mode", o->mode,
                  "hooks: -finstrument-functions (default); sleds: patchable function entries, "
                  "nearly free while tracing is off")
      ->type_name("hooks|sleds");
  cmd->add_option("--cc", o->cc, "The compiler family (default gcc)")->type_name("gcc|clang");
  cmd->add_flag("--after-inlining", o->after_inlining,
                "Hooks: instrument only what is left after inlining (clang), or leave the "
                "functions of system headers out (gcc)");
  cmd->add_flag("--with-runtime", o->with_runtime,
                "Link with the runtime (every run loads it) instead of preloading it with "
                "`parlot record`");
  cmd->add_flag("--cflags", o->cflags, "Print only the compile flags");
  cmd->add_flag("--libs", o->libs, "Print only the link flags");
  cmd->add_flag("-v,--verbose", o->verbose, "Labelled lines and what a run needs");
  cmd->callback([o] { run_flags(*o); });
}

}  // namespace parlot::frontend
