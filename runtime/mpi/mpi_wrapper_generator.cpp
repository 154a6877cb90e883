// Build-time generator of Parlot's MPI wrappers (libparlotmpi.so).
//
// Reads the *preprocessed* MPI header (`mpicc -E -P` of `#include <mpi.h>`,
// so only the declarations this MPI library really has are seen) and the
// list of Fortran symbols its Fortran library exports (`nm -D`), and writes
// one C source file with:
//   - a wrapper for every C function `MPI_*` the header declares: entry hook,
//     the next definition of the same function (dlsym(RTLD_NEXT), so other
//     PMPI tools still see the call), exit hook;
//   - a wrapper for every gfortran binding `mpi_*_` the Fortran library
//     exports whose C counterpart exists, recorded under the C function's
//     address, so a Fortran call is named as the standard names it
//     (`MPI_Send`).
//
// Usage: mpi_wrapper_generator PREPROCESSED_MPI_H FORTRAN_SYMBOLS OUT.c
// (FORTRAN_SYMBOLS may be an empty file: no Fortran wrappers.)
// Exit status 0, or 1 with a message naming the declaration it could not
// parse: a wrapper is never guessed.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Parameter {
  std::string text;  // as declared, e.g. "const void *buf", "int ranges[][3]"
  std::string name;  // "buf", "ranges"
};

struct Function {
  std::string return_type;  // "int", "double", "MPI_Aint"
  std::string name;         // "MPI_Send"
  std::vector<Parameter> parameters;
  bool variadic = false;
};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\n\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\n\r");
  return s.substr(b, e - b + 1);
}

std::string collapse_spaces(const std::string& s) {
  std::string out;
  bool space = false;
  for (const char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// Removes every `__attribute__((...))` and `__extension__` (balanced parentheses).
std::string strip_attributes(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (text.compare(i, 13, "__attribute__") == 0) {
      std::size_t j = text.find('(', i);
      if (j == std::string::npos) break;
      int depth = 0;
      for (; j < text.size(); ++j) {
        if (text[j] == '(') ++depth;
        if (text[j] == ')' && --depth == 0) break;
      }
      i = j + 1;
      continue;
    }
    if (text.compare(i, 13, "__extension__") == 0) {
      i += 13;
      continue;
    }
    out += text[i++];
  }
  return out;
}

// Top-level statements (split at ';' outside parentheses and braces).
std::vector<std::string> statements(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  int parens = 0, braces = 0;
  for (const char c : text) {
    if (c == '(') ++parens;
    if (c == ')') --parens;
    if (c == '{') ++braces;
    if (c == '}') --braces;
    if (c == ';' && parens == 0 && braces == 0) {
      out.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  return out;
}

std::vector<std::string> split_top_level_commas(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (const char c : s) {
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (!trim(cur).empty()) out.push_back(trim(cur));
  return out;
}

// The declared name of a parameter: the last identifier before any array
// suffix. Throws if the parameter has only a type.
std::string parameter_name(const std::string& p) {
  const std::string head = p.substr(0, p.find('['));
  static const std::regex last_identifier(R"(([A-Za-z_]\w*)\s*$)");
  std::smatch m;
  if (!std::regex_search(head, m, last_identifier))
    throw std::runtime_error("no name in '" + p + "'");
  const std::string name = m[1];
  static const std::set<std::string> type_words{"int",    "char",  "void",    "double",
                                                "float",  "long",  "short",   "unsigned",
                                                "signed", "const", "MPI_Aint"};
  // A lone type ("int", "MPI_Comm") has no name.
  const std::string before = trim(head.substr(0, head.size() - m[0].length()));
  if (type_words.count(name) != 0 || before.empty()) {
    throw std::runtime_error("no name in '" + p + "'");
  }
  return name;
}

std::vector<Function> parse_functions(const std::string& header) {
  std::vector<Function> out;
  std::set<std::string> seen;
  static const std::regex declaration(
      R"(^\s*(?:extern\s+)?([A-Za-z_][\w\s\*]*?)\s*\b(MPI_\w+)\s*\(([\s\S]*)\)\s*$)");
  for (const std::string& raw : statements(strip_attributes(header))) {
    const std::string st = trim(raw);
    if (st.rfind("typedef", 0) == 0 || st.find("MPI_") == std::string::npos) continue;
    std::smatch m;
    if (!std::regex_match(st, m, declaration)) continue;
    Function f;
    f.return_type = collapse_spaces(m[1]);
    f.name = m[2];
    if (f.return_type.find('(') != std::string::npos || !seen.insert(f.name).second) continue;
    const std::string params = trim(m[3]);
    if (params != "void" && !params.empty()) {
      for (const std::string& p : split_top_level_commas(params)) {
        if (p == "...") {
          f.variadic = true;
          continue;
        }
        f.parameters.push_back({collapse_spaces(p), parameter_name(p)});
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::string parameter_list(const Function& f) {
  if (f.parameters.empty()) return "void";
  std::string s;
  for (const auto& p : f.parameters) s += (s.empty() ? "" : ", ") + p.text;
  return s;
}

std::string argument_list(const Function& f) {
  std::string s;
  for (const auto& p : f.parameters) s += (s.empty() ? "" : ", ") + p.name;
  return s;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

void write_c_wrapper(std::ostream& out, const Function& f) {
  const bool returns = f.return_type != "void";
  out << "typedef " << f.return_type << " (*parlot_next_" << f.name << "_t)(" << parameter_list(f)
      << (f.variadic ? ", ..." : "") << ");\n";
  out << "static parlot_next_" << f.name << "_t parlot_next_" << f.name << ";\n";
  out << "PARLOT_MPI_WRAPPER " << f.return_type << " " << f.name << "(" << parameter_list(f)
      << (f.variadic ? ", ..." : "") << ") {\n";
  out << "  parlot_next_" << f.name << "_t parlot_next_fn = (parlot_next_" << f.name
      << "_t)parlot_mpi_next((void**)&parlot_next_" << f.name << ", \"" << f.name << "\");\n";
  out << "  void* const parlot_call_site = __builtin_return_address(0);\n";
  out << "  __cyg_profile_func_enter((void*)&" << f.name << ", parlot_call_site);\n";
  out << "  " << (returns ? f.return_type + " parlot_result = " : "") << "parlot_next_fn("
      << argument_list(f) << ");\n";
  out << "  __cyg_profile_func_exit((void*)&" << f.name << ", parlot_call_site);\n";
  if (returns) out << "  return parlot_result;\n";
  out << "}\n\n";
}

// gfortran passes every argument by reference, plus hidden string lengths at
// the end: a wrapper forwards a fixed number of pointer-sized words (the
// callee reads only those it has; x86-64 SysV, the caller pops). C functions
// returning int are Fortran subroutines; others (MPI_Wtime: double,
// MPI_Aint_add: MPI_Aint) are Fortran functions of the same type.
constexpr int kFortranWords = 24;

void write_fortran_wrapper(std::ostream& out, const Function& f, const std::string& symbol) {
  const std::string ret = f.return_type == "int" ? "void" : f.return_type;
  std::string params, args;
  for (int i = 0; i < kFortranWords; ++i) {
    params += (i ? ", " : "") + std::string("void* a") + std::to_string(i);
    args += (i ? ", " : "") + std::string("a") + std::to_string(i);
  }
  out << "typedef " << ret << " (*parlot_next_" << symbol << "_t)(" << params << ");\n";
  out << "static parlot_next_" << symbol << "_t parlot_next_" << symbol << ";\n";
  out << "PARLOT_MPI_WRAPPER " << ret << " " << symbol << "(" << params << ") {\n";
  out << "  parlot_next_" << symbol << "_t parlot_next_fn = (parlot_next_" << symbol
      << "_t)parlot_mpi_next((void**)&parlot_next_" << symbol << ", \"" << symbol << "\");\n";
  out << "  void* const parlot_call_site = __builtin_return_address(0);\n";
  out << "  __cyg_profile_func_enter((void*)&" << f.name << ", parlot_call_site);\n";
  out << "  " << (ret != "void" ? ret + " parlot_result = " : "") << "parlot_next_fn(" << args
      << ");\n";
  out << "  __cyg_profile_func_exit((void*)&" << f.name << ", parlot_call_site);\n";
  if (ret != "void") out << "  return parlot_result;\n";
  out << "}\n\n";
}

std::string read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(std::string("cannot read ") + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: mpi_wrapper_generator PREPROCESSED_MPI_H FORTRAN_SYMBOLS OUT.c\n";
    return 2;
  }
  try {
    const std::vector<Function> functions = parse_functions(read_file(argv[1]));
    std::set<std::string> fortran_symbols;
    std::istringstream symbols(read_file(argv[2]));
    for (std::string line; std::getline(symbols, line);) {
      const std::string s = trim(line.substr(line.find_last_of(' ') + 1));
      if (!s.empty()) fortran_symbols.insert(s);
    }
    std::ofstream out(argv[3]);
    out << "/* Generated by runtime/mpi/mpi_wrapper_generator.cpp from this machine's mpi.h.\n"
           "   Do not edit. */\n"
           "#include <mpi.h>\n"
           "#include \"mpi_wrapper_support.h\"\n\n";
    int c_count = 0, fortran_count = 0;
    for (const Function& f : functions) {
      write_c_wrapper(out, f);
      ++c_count;
    }
    for (const Function& f : functions) {
      const std::string symbol = lower(f.name) + "_";
      if (fortran_symbols.count(symbol) == 0) continue;
      write_fortran_wrapper(out, f, symbol);
      ++fortran_count;
    }
    if (!out) throw std::runtime_error(std::string("cannot write ") + argv[3]);
    std::cout << "mpi_wrapper_generator: " << c_count << " C and " << fortran_count
              << " Fortran wrappers\n";
    if (c_count == 0) throw std::runtime_error("no MPI function found in " + std::string(argv[1]));
  } catch (const std::exception& e) {
    std::cerr << "mpi_wrapper_generator: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
