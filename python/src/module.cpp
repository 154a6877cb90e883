// parlot._parlot: the Python binding of the reader library. Runs, threads
// and function tables as Python values; each thread's events decoded into
// numpy columns a chunk at a time (no Python object per event); the
// summaries of parlot-read as plain data. The pure-Python package `parlot`
// builds pandas DataFrames from these.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <limits>

#include "event_columns.h"
#include "run.h"
#include "views.h"

namespace py = pybind11;

namespace parlot::python {
namespace {

/// `text` as a Python str; bytes that are not UTF-8 become U+FFFD (names
/// and paths of a trace are arbitrary bytes).
py::str to_str(const std::string& text) {
  PyObject* s = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace");
  if (s == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

py::list to_str_list(const std::vector<std::string>& texts) {
  py::list out;
  for (const auto& t : texts) out.append(to_str(t));
  return out;
}

py::dict process_dict(const RunProcess& p) {
  const auto& m = p.trace.metadata;
  py::dict d;
  d["directory"] = to_str(p.trace.directory.string());
  d["pid"] = m.pid;
  d["ppid"] = m.ppid;
  d["rank"] = p.rank;
  d["fork"] = p.fork;
  d["mpi_rank"] = to_str(m.rank);
  d["host"] = to_str(m.host);
  d["executable"] = to_str(m.executable);
  d["arguments"] = to_str_list(m.arguments);
  d["start_ns"] = m.start_ns;
  d["end_ns"] = m.end_ns;
  d["functions"] = p.trace.function_addresses.size();
  d["threads"] = p.trace.thread_files.size();
  return d;
}

py::dict thread_dict(const Run& run, const RunThread& t) {
  py::dict d;
  d["process"] = t.process;
  d["file"] = to_str(t.file.string());
  d["rank"] = t.id.rank;
  d["fork"] = t.id.fork;
  d["thread"] = t.id.thread;
  d["pid"] = t.pid;
  d["tid"] = t.tid;
  d["events"] = t.events;
  d["label"] = run.label(t.id);
  return d;
}

/// Name, file and line of function `id` of process `process`.
py::tuple function_info(Run& run, std::size_t process, std::uint32_t id) {
  if (process >= run.processes().size()) throw py::index_error("no such process");
  const std::lock_guard<std::mutex> guard(run.names_lock());
  const SourceLocation& loc = run.process(process).names->lookup(id);
  return py::make_tuple(to_str(loc.function), to_str(loc.file), loc.line);
}

/// Names, files and lines of function IDs 0..count of `process` ([0]: "").
py::tuple function_table(Run& run, std::size_t process) {
  if (process >= run.processes().size()) throw py::index_error("no such process");
  const std::lock_guard<std::mutex> guard(run.names_lock());
  RunProcess& p = run.process(process);
  const std::size_t n = p.trace.function_addresses.size() + 1;
  py::list names, files;
  py::array_t<std::int64_t> lines(static_cast<py::ssize_t>(n));
  auto l = lines.mutable_unchecked<1>();
  names.append(py::str(""));
  files.append(py::str(""));
  l(0) = 0;
  for (std::uint32_t id = 1; id < n; ++id) {
    const SourceLocation& loc = p.names->lookup(id);
    names.append(to_str(loc.function));
    files.append(to_str(loc.file));
    l(id) = loc.line;
  }
  return py::make_tuple(names, files, lines);
}

/// A thread's events as numpy columns, a chunk at a time.
class ThreadDecoder {
 public:
  ThreadDecoder(Run& run, std::size_t thread) {
    if (thread >= run.threads().size()) throw py::index_error("no such thread");
    const RunThread& t = run.threads()[thread];
    columns_.emplace(t.file, run.processes()[t.process].trace.function_addresses.size());
  }

  /// (function_id uint32, depth uint32, enter bool, time_ns int64) of the
  /// next up to `n` events, or None at the end.
  py::object read(std::size_t n) {
    if (n == 0) throw py::value_error("chunk must be at least 1 event");
    const auto size = static_cast<py::ssize_t>(n);
    py::array_t<std::uint32_t> function_id(size), depth(size);
    py::array_t<bool> enter(size);
    py::array_t<std::int64_t> time_ns(size);
    EventColumnsOut out;
    out.function_id = function_id.mutable_data();
    out.depth = depth.mutable_data();
    out.enter = reinterpret_cast<std::uint8_t*>(enter.mutable_data());
    out.time_ns = time_ns.mutable_data();
    out.capacity = n;
    std::size_t got = 0;
    {
      py::gil_scoped_release release;
      got = columns_->read(out);
    }
    if (got == 0) return py::none();
    if (got < n) {
      const py::slice head(0, static_cast<py::ssize_t>(got), 1);
      return py::make_tuple(function_id[head], depth[head], enter[head], time_ns[head]);
    }
    return py::make_tuple(function_id, depth, enter, time_ns);
  }

  /// Decodes the next events into the given arrays from index `at` on, as
  /// many as fit (at most len - at), and returns how many (0 at the end).
  /// The arrays: C-contiguous, of one length, dtypes uint32, uint32, bool,
  /// int64 (else ValueError). The full frame is built so, without copies.
  std::size_t read_into(py::array function_id, py::array depth, py::array enter, py::array time_ns,
                        std::size_t at) {
    const auto n = static_cast<std::size_t>(function_id.size());
    auto check = [&](const py::array& a, const py::dtype& type, const char* name) {
      if (!a.dtype().is(type) || a.ndim() != 1 || static_cast<std::size_t>(a.size()) != n ||
          !(a.flags() & py::array::c_style) || !a.writeable()) {
        throw py::value_error(std::string(name) + ": expected a writable contiguous 1-d array of " +
                              py::str(static_cast<const py::handle&>(type)).cast<std::string>() +
                              " as long as function_id");
      }
    };
    check(function_id, py::dtype::of<std::uint32_t>(), "function_id");
    check(depth, py::dtype::of<std::uint32_t>(), "depth");
    check(enter, py::dtype::of<bool>(), "enter");
    check(time_ns, py::dtype::of<std::int64_t>(), "time_ns");
    if (at >= n) return 0;
    EventColumnsOut out;
    out.function_id = static_cast<std::uint32_t*>(function_id.mutable_data()) + at;
    out.depth = static_cast<std::uint32_t*>(depth.mutable_data()) + at;
    out.enter = static_cast<std::uint8_t*>(enter.mutable_data()) + at;
    out.time_ns = static_cast<std::int64_t*>(time_ns.mutable_data()) + at;
    out.capacity = n - at;
    py::gil_scoped_release release;
    return columns_->read(out);
  }

  bool timed() const { return columns_->timed(); }
  std::uint64_t events_read() const { return columns_->events_read(); }
  /// "file: offset N: why" when the file ends without a trailer, else None.
  py::object damage() const {
    const auto& s = columns_->summary();
    if (s.trailer || s.damage.empty()) return py::none();
    return to_str(fmt::format("{}: offset {}: {}", s.path.string(), s.damage_offset, s.damage));
  }

 private:
  std::optional<ThreadColumns> columns_;
};

/// Decodes and call-tracks every event of `run` in C++ without keeping
/// them (the work `parlot-read trace` does before formatting): the baseline
/// of bench/python_decode.py. Returns the events decoded.
std::uint64_t decode_all(Run& run) {
  std::uint64_t events = 0;
  std::uint64_t checksum = 0;
  for (const auto& t : run.threads()) {
    ThreadEventReader reader(t.file);
    CallStackTracker tracker(run.processes()[t.process].trace.function_addresses.size(), t.file);
    for (auto batch = reader.next_batch(); !batch.empty(); batch = reader.next_batch()) {
      for (const std::uint32_t id : batch) checksum += tracker.push(id).depth;
      events += batch.size();
    }
  }
  // Keeps the tracking from being optimised away.
  return checksum == ~std::uint64_t{0} ? 0 : events;
}

}  // namespace
}  // namespace parlot::python

PYBIND11_MODULE(_parlot, m) {
  using namespace parlot::python;
  m.doc() = "Binding of Parlot's trace reader (use the `parlot` package)";
  static py::exception<parlot::FormatError> format_error(m, "FormatError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const parlot::FormatError& e) {
      py::object err = py::reinterpret_borrow<py::object>(format_error.ptr())(to_str(e.what()));
      err.attr("file") = to_str(e.file().string());
      err.attr("offset") = e.offset();
      PyErr_SetObject(format_error.ptr(), err.ptr());
    }
  });

  py::class_<ThreadDecoder>(m, "ThreadDecoder")
      .def(py::init<Run&, std::size_t>(), py::keep_alive<1, 2>())
      .def("read", &ThreadDecoder::read, py::arg("n"))
      .def("read_into", &ThreadDecoder::read_into, py::arg("function_id"), py::arg("depth"),
           py::arg("enter"), py::arg("time_ns"), py::arg("at"))
      .def_property_readonly("timed", &ThreadDecoder::timed)
      .def_property_readonly("events_read", &ThreadDecoder::events_read)
      .def_property_readonly("damage", &ThreadDecoder::damage);

  py::class_<Run>(m, "Run")
      .def(py::init([](const std::string& path) {
             py::gil_scoped_release release;
             return std::make_unique<Run>(path);
           }),
           py::arg("path"))
      .def_property_readonly("ranked", &Run::ranked)
      .def_property_readonly("messages", [](const Run& r) { return to_str_list(r.messages()); })
      .def("processes",
           [](const Run& r) {
             py::list out;
             for (const auto& p : r.processes()) out.append(process_dict(p));
             return out;
           })
      .def("threads",
           [](const Run& r) {
             py::list out;
             for (const auto& t : r.threads()) out.append(thread_dict(r, t));
             return out;
           })
      .def("function_table", &function_table, py::arg("process"))
      .def("decode_all",
           [](Run& r) {
             py::gil_scoped_release release;
             return decode_all(r);
           })
      .def("function_info", &function_info, py::arg("process"), py::arg("id"))
      .def("stats",
           [](Run& r) {
             StatsTable t;
             {
               py::gil_scoped_release release;
               const std::lock_guard<std::mutex> guard(r.names_lock());
               t = function_stats(r);
             }
             py::list rows;
             for (const auto& row : t.rows) {
               rows.append(py::make_tuple(to_str(row.function), row.calls, row.total, row.self,
                                          row.max_depth));
             }
             py::dict d;
             d["rows"] = rows;
             d["unit"] = t.unit;
             d["description"] = t.description;
             d["damage"] = to_str_list(t.damage);
             return d;
           })
      .def(
          "export",
          [](Run& r, const std::string& format, const std::string& output) {
            std::vector<std::string> damage;
            try {
              py::gil_scoped_release release;
              const std::lock_guard<std::mutex> guard(r.names_lock());
              damage = export_run(r, format, output);
            } catch (const std::invalid_argument& e) {
              throw py::value_error(e.what());
            }
            return to_str_list(damage);
          },
          py::arg("format"), py::arg("output"))
      .def("marks",
           [](Run& r) {
             std::vector<std::string> damage;
             std::vector<ThreadMark> marks;
             {
               py::gil_scoped_release release;
               marks = thread_marks(r, damage);
             }
             py::list rows;
             for (const auto& m : marks) {
               rows.append(py::make_tuple(m.thread, m.index, m.depth, to_str(m.label)));
             }
             return py::make_tuple(rows, to_str_list(damage));
           })
      .def(
          "loops",
          [](Run& r, std::size_t max_body) {
            if (max_body < 1 || max_body > 64) throw py::value_error("max_body must be 1..64");
            std::vector<std::string> damage;
            std::vector<ThreadLoops> loops;
            {
              py::gil_scoped_release release;
              const std::lock_guard<std::mutex> guard(r.names_lock());
              loops = thread_loops(r, max_body, damage);
            }
            py::list rows;
            for (const auto& l : loops)
              rows.append(py::make_tuple(l.thread, l.events, to_str(l.loops)));
            return py::make_tuple(rows, to_str_list(damage));
          },
          py::arg("max_body") = 8)
      .def("stacks",
           [](Run& r) {
             StacksResult s;
             {
               py::gil_scoped_release release;
               const std::lock_guard<std::mutex> guard(r.names_lock());
               s = open_stacks(r);
             }
             py::list stacks;
             for (const auto& frames : s.stacks) stacks.append(to_str_list(frames));
             py::dict d;
             d["threads"] = s.threads;
             d["stacks"] = stacks;
             d["text"] = to_str(s.text);
             d["dot"] = to_str(s.dot);
             d["damage"] = to_str_list(s.damage);
             return d;
           })
      .def(
          "classes",
          [](Run& r, const std::string& by, std::size_t max_body) {
            if (max_body < 1 || max_body > 64) throw py::value_error("max_body must be 1..64");
            std::vector<std::string> damage;
            std::vector<ThreadClass> classes;
            try {
              py::gil_scoped_release release;
              const std::lock_guard<std::mutex> guard(r.names_lock());
              classes = thread_classes(r, by, max_body, damage);
            } catch (const std::invalid_argument& e) {
              throw py::value_error(e.what());
            }
            py::list rows;
            for (const auto& c : classes) {
              rows.append(py::make_tuple(std::string(1, c.label), to_str(c.members), c.size,
                                         to_str(c.representative), c.hash, c.threads));
            }
            return py::make_tuple(rows, to_str_list(damage));
          },
          py::arg("by") = "trace", py::arg("max_body") = 8);
}
