// Two questions about an ELF file on disk, asked before a program runs:
// which dynamic loader runs it, and whether a shared object defines a
// dynamic symbol. The file is not trusted: anything that does not read as
// a well-formed 64-bit ELF file of this machine's byte order is "no".
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace parlot::frontend {

/// The program interpreter (PT_INTERP) of the ELF executable at `path`:
/// the dynamic loader of a dynamically linked program, e.g.
/// "/lib64/ld-linux-x86-64.so.2". nullopt when the file cannot be read, is
/// not a 64-bit ELF file of this machine's byte order (a script, a 32-bit
/// program), is damaged, or has no PT_INTERP (statically linked).
std::optional<std::string> elf_interpreter(const std::filesystem::path& path);

/// True when the ELF file at `path` (a shared library) defines the dynamic
/// symbol `name`: an entry of its .dynsym that is not undefined. False when
/// it does not, or when the file cannot be read, is not a 64-bit ELF file
/// of this machine's byte order, has no section headers or is damaged.
bool elf_defines_dynamic_symbol(const std::filesystem::path& path, std::string_view name);

}  // namespace parlot::frontend
