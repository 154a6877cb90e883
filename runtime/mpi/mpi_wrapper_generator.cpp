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
//   - for the calls of kArgumentTable, a function that also records the
//     call's arguments (peer, tag, bytes, communicator, root, completed
//     requests) as a side record, taken instead of the plain call when
//     PARLOT_MPI_ARGS=1 (mpi_call_record.h); the table names the parameters
//     by their position, which the MPI standard fixes, and the generator
//     checks each one's declared type.
//
// Usage: mpi_wrapper_generator PREPROCESSED_MPI_H FORTRAN_SYMBOLS OUT.c
// (FORTRAN_SYMBOLS may be an empty file: no Fortran wrappers.)
// Exit status 0, or 1 with a message naming the declaration it could not
// parse: a wrapper is never guessed.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <iostream>
#include <map>
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

// ---- Arguments recorded with PARLOT_MPI_ARGS=1 ------------------------------
//
// One line per MPI function whose arguments matter for debugging, as
// space-separated rules `what=positions` (0-based parameter positions of
// the C binding, the same in the Fortran binding, whose error argument
// follows them; `-` = none):
//   dest, source, tag, recv_tag, root = P       an int argument
//   bytes, recv_bytes = BUF,COUNT,TYPE          COUNT x size of TYPE (none
//                                               when BUF is MPI_IN_PLACE)
//   comm = P                                    communicator ID and size
//   op = P                                      reduction operation's code
//   newcomm = P     after the call, the communicator it created (MPI_Comm*)
//   freecomm = P    before the call, the communicator it frees (MPI_Comm*)
//   status = P      after the call, the status's source, tag and bytes
//   status_if = FLAG,P                          ... when *FLAG is true
//   wait = P / test = FLAG,P                    one request completed (index 0)
//   waitany = COUNT,INDEX,P / testany = COUNT,INDEX,FLAG,P
//   waitall = COUNT,P / testall = COUNT,FLAG,P  every request completed
//   waitsome, testsome = COUNT,OUTCOUNT,INDICES,P
// (Fortran binding: indices returned are 1-based and recorded 0-based, as
// in C.)
struct ArgumentRule {
  std::string what;
  std::vector<int> at;  // positions; -1 = none
};

struct ArgumentEntry {
  const char* function;
  const char* rules;
};

constexpr ArgumentEntry kArgumentTable[] = {
    // Point to point.
    {"MPI_Send", "bytes=0,1,2 dest=3 tag=4 comm=5"},
    {"MPI_Bsend", "bytes=0,1,2 dest=3 tag=4 comm=5"},
    {"MPI_Ssend", "bytes=0,1,2 dest=3 tag=4 comm=5"},
    {"MPI_Rsend", "bytes=0,1,2 dest=3 tag=4 comm=5"},
    {"MPI_Isend", "bytes=0,1,2 dest=3 tag=4 comm=5"},
    {"MPI_Ibsend", "bytes=0,1,2 dest=3 tag=4 comm=5"},
    {"MPI_Issend", "bytes=0,1,2 dest=3 tag=4 comm=5"},
    {"MPI_Irsend", "bytes=0,1,2 dest=3 tag=4 comm=5"},
    {"MPI_Send_init", "bytes=0,1,2 dest=3 tag=4 comm=5"},
    {"MPI_Recv", "bytes=0,1,2 source=3 tag=4 comm=5 status=6"},
    {"MPI_Irecv", "bytes=0,1,2 source=3 tag=4 comm=5"},
    {"MPI_Recv_init", "bytes=0,1,2 source=3 tag=4 comm=5"},
    {"MPI_Sendrecv",
     "bytes=0,1,2 dest=3 tag=4 recv_bytes=5,6,7 source=8 recv_tag=9 comm=10 status=11"},
    {"MPI_Sendrecv_replace", "bytes=0,1,2 dest=3 tag=4 source=5 recv_tag=6 comm=7 status=8"},
    {"MPI_Probe", "source=0 tag=1 comm=2 status=3"},
    {"MPI_Iprobe", "source=0 tag=1 comm=2 status_if=3,4"},
    // Request completion.
    {"MPI_Wait", "wait=1"},
    {"MPI_Test", "test=1,2"},
    {"MPI_Waitany", "waitany=0,2,3"},
    {"MPI_Testany", "testany=0,2,3,4"},
    {"MPI_Waitall", "waitall=0,2"},
    {"MPI_Testall", "testall=0,2,3"},
    {"MPI_Waitsome", "waitsome=0,2,3,4"},
    {"MPI_Testsome", "testsome=0,2,3,4"},
    // Collectives (counts significant on every rank only).
    {"MPI_Barrier", "comm=0"},
    {"MPI_Ibarrier", "comm=0"},
    {"MPI_Bcast", "bytes=-,1,2 root=3 comm=4"},
    {"MPI_Ibcast", "bytes=-,1,2 root=3 comm=4"},
    {"MPI_Reduce", "bytes=-,2,3 op=4 root=5 comm=6"},
    {"MPI_Ireduce", "bytes=-,2,3 op=4 root=5 comm=6"},
    {"MPI_Allreduce", "bytes=-,2,3 op=4 comm=5"},
    {"MPI_Iallreduce", "bytes=-,2,3 op=4 comm=5"},
    {"MPI_Scan", "bytes=-,2,3 op=4 comm=5"},
    {"MPI_Exscan", "bytes=-,2,3 op=4 comm=5"},
    {"MPI_Reduce_scatter_block", "recv_bytes=-,2,3 op=4 comm=5"},
    {"MPI_Gather", "bytes=0,1,2 root=6 comm=7"},
    {"MPI_Gatherv", "bytes=0,1,2 root=7 comm=8"},
    {"MPI_Scatter", "recv_bytes=3,4,5 root=6 comm=7"},
    {"MPI_Scatterv", "recv_bytes=4,5,6 root=7 comm=8"},
    {"MPI_Allgather", "bytes=0,1,2 recv_bytes=-,4,5 comm=6"},
    {"MPI_Allgatherv", "bytes=0,1,2 comm=7"},
    {"MPI_Alltoall", "bytes=0,1,2 recv_bytes=-,4,5 comm=6"},
    {"MPI_Alltoallv", "comm=8"},
    // Communicators.
    {"MPI_Comm_rank", "comm=0"},
    {"MPI_Comm_size", "comm=0"},
    {"MPI_Abort", "comm=0"},
    {"MPI_Comm_dup", "comm=0 newcomm=1"},
    {"MPI_Comm_dup_with_info", "comm=0 newcomm=2"},
    {"MPI_Comm_split", "comm=0 newcomm=3"},
    {"MPI_Comm_split_type", "comm=0 newcomm=4"},
    {"MPI_Comm_create", "comm=0 newcomm=2"},
    {"MPI_Comm_create_group", "comm=0 newcomm=3"},
    {"MPI_Cart_create", "comm=0 newcomm=5"},
    {"MPI_Cart_sub", "comm=0 newcomm=2"},
    {"MPI_Graph_create", "comm=0 newcomm=5"},
    {"MPI_Dist_graph_create", "comm=0 newcomm=8"},
    {"MPI_Dist_graph_create_adjacent", "comm=0 newcomm=9"},
    {"MPI_Intercomm_create", "comm=0 newcomm=5"},
    {"MPI_Intercomm_merge", "comm=0 newcomm=2"},
    {"MPI_Comm_free", "freecomm=0"},
    {"MPI_Comm_disconnect", "freecomm=0"},
};

std::vector<ArgumentRule> parse_rules(const std::string& text) {
  std::vector<ArgumentRule> out;
  std::istringstream in(text);
  for (std::string word; in >> word;) {
    const auto eq = word.find('=');
    if (eq == std::string::npos) throw std::runtime_error("bad argument rule '" + word + "'");
    ArgumentRule r{word.substr(0, eq), {}};
    std::istringstream list(word.substr(eq + 1));
    for (std::string p; std::getline(list, p, ',');) r.at.push_back(p == "-" ? -1 : std::stoi(p));
    out.push_back(std::move(r));
  }
  return out;
}

// The declared type of parameter `i` (its text without its name), spaces
// removed: "constvoid*", "int", "MPI_Comm*", "MPI_Statusarray_of_statuses[]"...
std::string parameter_type(const Function& f, int i) {
  const Parameter& p = f.parameters.at(static_cast<std::size_t>(i));
  std::string t = p.text;
  const auto at = t.rfind(p.name);
  if (at != std::string::npos) t.erase(at, p.name.size());
  t.erase(std::remove_if(t.begin(), t.end(), [](unsigned char c) { return std::isspace(c); }),
          t.end());
  return t;
}

// Checks that each position a rule names exists and has the type the rule
// needs; throws naming the function otherwise (a record is never guessed).
void check_rule(const Function& f, const ArgumentRule& r) {
  static const std::map<std::string, std::vector<std::vector<std::string>>> kTypes{
      {"dest", {{"int"}}},
      {"source", {{"int"}}},
      {"tag", {{"int"}}},
      {"recv_tag", {{"int"}}},
      {"root", {{"int"}}},
      {"bytes", {{"constvoid*", "void*"}, {"int"}, {"MPI_Datatype"}}},
      {"recv_bytes", {{"constvoid*", "void*"}, {"int"}, {"MPI_Datatype"}}},
      {"comm", {{"MPI_Comm"}}},
      {"op", {{"MPI_Op"}}},
      {"newcomm", {{"MPI_Comm*"}}},
      {"freecomm", {{"MPI_Comm*"}}},
      {"status", {{"MPI_Status*"}}},
      {"status_if", {{"int*"}, {"MPI_Status*"}}},
      {"wait", {{"MPI_Status*"}}},
      {"test", {{"int*"}, {"MPI_Status*"}}},
      {"waitany", {{"int"}, {"int*"}, {"MPI_Status*"}}},
      {"testany", {{"int"}, {"int*"}, {"int*"}, {"MPI_Status*"}}},
      {"waitall", {{"int"}, {"MPI_Status[]", "MPI_Status*"}}},
      {"testall", {{"int"}, {"int*"}, {"MPI_Status[]", "MPI_Status*"}}},
      {"waitsome", {{"int"}, {"int*"}, {"int[]", "int*"}, {"MPI_Status[]", "MPI_Status*"}}},
      {"testsome", {{"int"}, {"int*"}, {"int[]", "int*"}, {"MPI_Status[]", "MPI_Status*"}}},
  };
  const auto it = kTypes.find(r.what);
  if (it == kTypes.end()) throw std::runtime_error(f.name + ": unknown argument rule " + r.what);
  if (it->second.size() != r.at.size()) {
    throw std::runtime_error(f.name + ": rule " + r.what + " takes " +
                             std::to_string(it->second.size()) + " positions");
  }
  for (std::size_t k = 0; k < r.at.size(); ++k) {
    const int i = r.at[k];
    if (i < 0) {
      if (k != 0 || (r.what != "bytes" && r.what != "recv_bytes")) {
        throw std::runtime_error(f.name + ": rule " + r.what + " needs every position");
      }
      continue;
    }
    if (static_cast<std::size_t>(i) >= f.parameters.size()) {
      throw std::runtime_error(f.name + ": rule " + r.what + " names parameter " +
                               std::to_string(i) + " of " + std::to_string(f.parameters.size()));
    }
    std::string t = parameter_type(f, i);
    // "MPI_Status array_of_statuses[]" keeps its brackets after the name.
    const auto& accepted = it->second[k];
    if (std::find(accepted.begin(), accepted.end(), t) == accepted.end()) {
      throw std::runtime_error(f.name + ": parameter " + std::to_string(i) + " ('" +
                               f.parameters[static_cast<std::size_t>(i)].text +
                               "') does not fit rule " + r.what);
    }
  }
}

// The statements a rule adds before the call, after it, and the fields it
// sets, for the C binding (`fortran` false: parameters by name) or the
// Fortran one (parameters a0.. by reference, error code after them).
struct RecordCode {
  std::string before;
  std::string after;
};

std::string field_of(const std::string& what) {
  std::string up = what;
  std::transform(up.begin(), up.end(), up.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return "PARLOT_MPI_" + up;
}

bool completes_from_arrays(const std::string& what) {
  return what == "waitany" || what == "testany" || what == "waitall" || what == "testall" ||
         what == "waitsome" || what == "testsome";
}

RecordCode record_code(const Function& f, const std::vector<ArgumentRule>& rules, bool fortran) {
  RecordCode c;
  auto arg = [&](int i) {
    return fortran ? "a" + std::to_string(i) : f.parameters.at(static_cast<std::size_t>(i)).name;
  };
  auto integer = [&](int i) { return fortran ? "parlot_mpi_fint(" + arg(i) + ")" : arg(i); };
  auto comm = [&](int i) { return fortran ? "parlot_mpi_comm_f2c(" + arg(i) + ")" : arg(i); };
  auto deref_comm = [&](int i) {
    return fortran ? "parlot_mpi_comm_f2c(" + arg(i) + ")" : "*" + arg(i);
  };
  const std::string ok =
      fortran ? "parlot_mpi_fint(a" + std::to_string(f.parameters.size()) + ") == MPI_SUCCESS"
              : "parlot_result == MPI_SUCCESS";
  const std::string rec = "&parlot_rec";
  for (const ArgumentRule& r : rules) {
    const auto& at = r.at;
    if (fortran && completes_from_arrays(r.what)) {
      // Fortran binding: every argument by reference. MPI_STATUS(ES)_IGNORE
      // is replaced by statuses of the wrapper's, as in the C binding.
      const std::string count = integer(at[0]);
      const bool one = r.what == "waitany" || r.what == "testany";
      c.before += "  parlot_mpi_put(" + rec + ", PARLOT_MPI_REQUESTS, " + count + ");\n";
      c.before +=
          "  MPI_Fint parlot_fstatuses[PARLOT_MPI_MAX_COMPLETIONS * (sizeof(MPI_Status) / "
          "sizeof(MPI_Fint))];\n  " +
          arg(at.back()) + " = parlot_mpi_fortran_statuses(" + arg(at.back()) + ", " +
          (one ? std::string("1") : count) + ", parlot_fstatuses);\n";
      if (r.what == "waitany" || r.what == "testany") {
        std::string cond = ok + " && " + integer(at[1]) + " != MPI_UNDEFINED";
        if (r.what == "testany") cond += " && " + integer(at[2]) + " != 0";
        c.after += "  if (" + cond + ") parlot_mpi_add_fortran_completion(" + rec + ", " +
                   integer(at[1]) + " - 1, " + arg(at.back()) + ");\n";
      } else if (r.what == "waitall" || r.what == "testall") {
        std::string cond = ok;
        if (r.what == "testall") cond += " && " + integer(at[1]) + " != 0";
        c.after += "  if (" + cond + ") parlot_mpi_add_fortran_completions(" + rec + ", " +
                   arg(at.back()) + ", " + count + ", (const void*)0);\n";
      } else {  // waitsome, testsome
        c.after += "  if (" + ok + " && " + integer(at[1]) + " != MPI_UNDEFINED) " +
                   "parlot_mpi_add_fortran_completions(" + rec + ", " + arg(at.back()) + ", " +
                   integer(at[1]) + ", " + arg(at[2]) + ");\n";
      }
      continue;
    }
    if (r.what == "dest" || r.what == "source" || r.what == "tag" || r.what == "recv_tag" ||
        r.what == "root") {
      c.before +=
          "  parlot_mpi_put(" + rec + ", " + field_of(r.what) + ", " + integer(at[0]) + ");\n";
    } else if (r.what == "bytes" || r.what == "recv_bytes") {
      std::string buf = "(const void*)0";
      if (at[0] >= 0) buf = fortran ? "parlot_mpi_fortran_buffer(" + arg(at[0]) + ")" : arg(at[0]);
      const std::string type = fortran ? "parlot_mpi_type_f2c(" + arg(at[2]) + ")" : arg(at[2]);
      c.before += "  parlot_mpi_put_bytes(" + rec + ", " + field_of(r.what) + ", " + buf + ", " +
                  integer(at[1]) + ", " + type + ");\n";
    } else if (r.what == "comm") {
      c.before += "  parlot_mpi_put_comm(" + rec + ", " + comm(at[0]) + ");\n";
    } else if (r.what == "op") {
      const std::string op = fortran ? "parlot_mpi_op_f2c(" + arg(at[0]) + ")" : arg(at[0]);
      c.before += "  parlot_mpi_put_op(" + rec + ", " + op + ");\n";
    } else if (r.what == "freecomm") {
      c.before += "  parlot_mpi_comm_freed(" + rec + ", " + deref_comm(at[0]) + ");\n";
    } else if (r.what == "newcomm") {
      c.after +=
          "  if (" + ok + ") parlot_mpi_comm_created(" + rec + ", " + deref_comm(at[0]) + ");\n";
    } else if (r.what == "status" || r.what == "status_if" || r.what == "wait" ||
               r.what == "test") {
      const bool flagged = r.what == "status_if" || r.what == "test";
      const int s = at.back();
      std::string cond = ok;
      if (flagged)
        cond +=
            " && " + (fortran ? "parlot_mpi_fint(" + arg(at[0]) + ")" : "*" + arg(at[0])) + " != 0";
      const bool completion = r.what == "wait" || r.what == "test";
      if (completion) c.before += "  parlot_mpi_put(" + rec + ", PARLOT_MPI_REQUESTS, 1);\n";
      if (fortran) {
        c.after += "  if (" + cond + ") " +
                   (completion ? "parlot_mpi_add_fortran_completion(" + rec + ", 0, "
                               : "parlot_mpi_put_fortran_status(" + rec + ", ") +
                   arg(s) + ");\n";
      } else {
        c.before += "  MPI_Status parlot_status;\n  if (" + arg(s) + " == MPI_STATUS_IGNORE) " +
                    arg(s) + " = &parlot_status;\n";
        c.after += "  if (" + cond + ") " +
                   (completion ? "parlot_mpi_add_completion(" + rec + ", 0, "
                               : "parlot_mpi_put_status(" + rec + ", ") +
                   arg(s) + ");\n";
      }
    } else if (r.what == "waitany" || r.what == "testany") {
      const std::string count = arg(at[0]), index = arg(at[1]), s = arg(at.back());
      std::string cond = ok + " && *" + index + " != MPI_UNDEFINED";
      if (r.what == "testany") cond += " && *" + arg(at[2]) + " != 0";
      c.before += "  parlot_mpi_put(" + rec + ", PARLOT_MPI_REQUESTS, " + count + ");\n";
      c.before += "  MPI_Status parlot_status;\n  if (" + s + " == MPI_STATUS_IGNORE) " + s +
                  " = &parlot_status;\n";
      c.after += "  if (" + cond + ") parlot_mpi_add_completion(" + rec + ", *" + index + ", " + s +
                 ");\n";
    } else if (r.what == "waitall" || r.what == "testall" || r.what == "waitsome" ||
               r.what == "testsome") {
      const bool some = r.what == "waitsome" || r.what == "testsome";
      const std::string count = arg(at[0]), s = arg(at.back());
      c.before += "  parlot_mpi_put(" + rec + ", PARLOT_MPI_REQUESTS, " + count + ");\n";
      c.before += "  MPI_Status parlot_statuses[PARLOT_MPI_MAX_COMPLETIONS];\n  if (" + s +
                  " == MPI_STATUSES_IGNORE && " + count + " <= PARLOT_MPI_MAX_COMPLETIONS) " + s +
                  " = parlot_statuses;\n";
      std::string cond = ok + " && " + s + " != MPI_STATUSES_IGNORE";
      if (r.what == "testall") cond += " && *" + arg(at[1]) + " != 0";
      if (some) {
        const std::string out = arg(at[1]), idx = arg(at[2]);
        c.after +=
            "  if (" + cond + " && *" + out + " != MPI_UNDEFINED)\n    for (int i = 0; i < *" +
            out + "; ++i) parlot_mpi_add_completion(" + rec + ", " + idx + "[i], &" + s + "[i]);\n";
      } else {
        c.after += "  if (" + cond + ")\n    for (int i = 0; i < " + count +
                   "; ++i) parlot_mpi_add_completion(" + rec + ", i, &" + s + "[i]);\n";
      }
    }
  }
  return c;
}

// What a wrapper runs just before it calls the next definition of `f`:
// MPI_Abort, which never returns, first has the flight recorder dump every
// thread (parlot_mpi_before_abort; nothing outside flight mode), so the
// windows end in its frame whatever ends the process afterwards. Each line
// starts with `indent`.
std::string before_call(const Function& f, const std::string& indent = "  ") {
  return f.name == "MPI_Abort" ? indent + "parlot_mpi_before_abort();\n" : "";
}

// The function that records `f`'s arguments around the next definition,
// named `name`, for the C binding.
void write_c_argument_function(std::ostream& out, const Function& f,
                               const std::vector<ArgumentRule>& rules) {
  const RecordCode c = record_code(f, rules, false);
  out << "PARLOT_MPI_ARGS_FN int parlot_args_" << f.name << "(parlot_next_" << f.name
      << "_t parlot_next_fn, " << parameter_list(f) << ") {\n";
  out << "  parlot_mpi_record parlot_rec;\n";
  out << "  parlot_mpi_record_begin(&parlot_rec, (const void*)&" << f.name << ");\n";
  out << c.before;
  // A record with nothing to learn from the call goes out before it, so a
  // call that never returns (MPI_Abort, a deadlocked MPI_Send) keeps it;
  // one with results also goes out before it as "begun" (kind 8), so a
  // receive or wait that never returns keeps its arguments.
  if (c.after.empty()) out << "  parlot_mpi_record_end(&parlot_rec);\n";
  if (!c.after.empty()) out << "  parlot_mpi_record_begun(&parlot_rec);\n";
  out << before_call(f);
  out << "  const int parlot_result = parlot_next_fn(" << argument_list(f) << ");\n";
  if (!c.after.empty()) out << c.after << "  parlot_mpi_record_end(&parlot_rec);\n";
  out << "  return parlot_result;\n}\n";
}

// `rules`: the arguments to record with PARLOT_MPI_ARGS=1 (none: null).
void write_c_wrapper(std::ostream& out, const Function& f, const std::vector<ArgumentRule>* rules) {
  const bool returns = f.return_type != "void";
  out << "typedef " << f.return_type << " (*parlot_next_" << f.name << "_t)(" << parameter_list(f)
      << (f.variadic ? ", ..." : "") << ");\n";
  out << "static parlot_next_" << f.name << "_t parlot_next_" << f.name << ";\n";
  if (rules != nullptr) write_c_argument_function(out, f, *rules);
  out << "PARLOT_MPI_WRAPPER " << f.return_type << " " << f.name << "(" << parameter_list(f)
      << (f.variadic ? ", ..." : "") << ") {\n";
  out << "  parlot_next_" << f.name << "_t parlot_next_fn = (parlot_next_" << f.name
      << "_t)parlot_mpi_next((void**)&parlot_next_" << f.name << ", \"" << f.name << "\");\n";
  out << "  void* const parlot_call_site = __builtin_return_address(0);\n";
  out << "  parlot_mpi_time_next_event();\n";  // the call may wait: its entry's time exact
  out << "  __cyg_profile_func_enter((void*)&" << f.name << ", parlot_call_site);\n";
  if (rules != nullptr) {
    // The only cost of PARLOT_MPI_ARGS when it is off: a load and a branch.
    out << "  int parlot_result;\n";
    out << "  if (__builtin_expect(parlot_mpi_args, 0))\n";
    out << "    parlot_result = parlot_args_" << f.name << "(parlot_next_fn"
        << (f.parameters.empty() ? "" : ", ") << argument_list(f) << ");\n";
    out << "  else {\n"
        << before_call(f, "    ") << "    parlot_result = parlot_next_fn(" << argument_list(f)
        << ");\n  }\n";
  } else {
    out << before_call(f);
    out << "  " << (returns ? f.return_type + " parlot_result = " : "") << "parlot_next_fn("
        << argument_list(f) << ");\n";
  }
  out << "  parlot_mpi_time_next_event();\n";  // and its exit's
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

void write_fortran_wrapper(std::ostream& out, const Function& f, const std::string& symbol,
                           const std::vector<ArgumentRule>* rules) {
  const std::string ret = f.return_type == "int" ? "void" : f.return_type;
  std::string params, args;
  for (int i = 0; i < kFortranWords; ++i) {
    params += (i ? ", " : "") + std::string("void* a") + std::to_string(i);
    args += (i ? ", " : "") + std::string("a") + std::to_string(i);
  }
  if (rules != nullptr && (ret != "void" || f.parameters.size() + 1 > kFortranWords)) {
    rules = nullptr;  // not a subroutine with its error code in the forwarded words
  }
  if (rules != nullptr) {
    const RecordCode c = record_code(f, *rules, true);
    if (c.before.empty() && c.after.empty()) rules = nullptr;  // C-only rules: nothing to record
  }
  out << "typedef " << ret << " (*parlot_next_" << symbol << "_t)(" << params << ");\n";
  out << "static parlot_next_" << symbol << "_t parlot_next_" << symbol << ";\n";
  if (rules != nullptr) {
    const RecordCode c = record_code(f, *rules, true);
    out << "PARLOT_MPI_ARGS_FN void parlot_args_" << symbol << "(parlot_next_" << symbol
        << "_t parlot_next_fn, " << params << ") {\n";
    out << "  parlot_mpi_record parlot_rec;\n";
    out << "  parlot_mpi_record_begin(&parlot_rec, (const void*)&" << f.name << ");\n";
    out << c.before;
    if (c.after.empty()) out << "  parlot_mpi_record_end(&parlot_rec);\n";
    if (!c.after.empty()) out << "  parlot_mpi_record_begun(&parlot_rec);\n";
    out << before_call(f);
    out << "  parlot_next_fn(" << args << ");\n";
    if (!c.after.empty()) out << c.after << "  parlot_mpi_record_end(&parlot_rec);\n";
    out << "}\n";
  }
  out << "PARLOT_MPI_WRAPPER " << ret << " " << symbol << "(" << params << ") {\n";
  out << "  parlot_next_" << symbol << "_t parlot_next_fn = (parlot_next_" << symbol
      << "_t)parlot_mpi_next((void**)&parlot_next_" << symbol << ", \"" << symbol << "\");\n";
  out << "  void* const parlot_call_site = __builtin_return_address(0);\n";
  out << "  parlot_mpi_time_next_event();\n";  // the call may wait: its entry's time exact
  out << "  __cyg_profile_func_enter((void*)&" << f.name << ", parlot_call_site);\n";
  if (rules != nullptr) {
    out << "  if (__builtin_expect(parlot_mpi_args, 0))\n    parlot_args_" << symbol
        << "(parlot_next_fn, " << args << ");\n  else {\n"
        << before_call(f, "    ") << "    parlot_next_fn(" << args << ");\n  }\n";
  } else {
    out << before_call(f);
    out << "  " << (ret != "void" ? ret + " parlot_result = " : "") << "parlot_next_fn(" << args
        << ");\n";
  }
  out << "  parlot_mpi_time_next_event();\n";  // and its exit's
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
           "#include \"mpi_call_record.h\"\n"
           "#include \"mpi_wrapper_support.h\"\n\n";
    // The argument rules of the functions this MPI has, checked.
    std::map<std::string, std::vector<ArgumentRule>> argument_rules;
    for (const ArgumentEntry& e : kArgumentTable) {
      const auto f = std::find_if(functions.begin(), functions.end(),
                                  [&](const Function& g) { return g.name == e.function; });
      if (f == functions.end()) continue;  // an older MPI: not declared, not wrapped
      std::vector<ArgumentRule> rules = parse_rules(e.rules);
      for (const ArgumentRule& r : rules) check_rule(*f, r);
      if (f->return_type != "int" || f->variadic) {
        throw std::runtime_error(f->name + ": argument rules need an int function");
      }
      argument_rules.emplace(f->name, std::move(rules));
    }
    auto rules_of = [&](const Function& f) -> const std::vector<ArgumentRule>* {
      const auto it = argument_rules.find(f.name);
      return it == argument_rules.end() ? nullptr : &it->second;
    };
    int c_count = 0, fortran_count = 0;
    for (const Function& f : functions) {
      write_c_wrapper(out, f, rules_of(f));
      ++c_count;
    }
    for (const Function& f : functions) {
      const std::string symbol = lower(f.name) + "_";
      if (fortran_symbols.count(symbol) == 0) continue;
      write_fortran_wrapper(out, f, symbol, rules_of(f));
      ++fortran_count;
    }
    if (!out) throw std::runtime_error(std::string("cannot write ") + argv[3]);
    std::cout << "mpi_wrapper_generator: " << c_count << " C and " << fortran_count
              << " Fortran wrappers, " << argument_rules.size() << " recording arguments\n";
    if (c_count == 0) throw std::runtime_error("no MPI function found in " + std::string(argv[1]));
  } catch (const std::exception& e) {
    std::cerr << "mpi_wrapper_generator: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
