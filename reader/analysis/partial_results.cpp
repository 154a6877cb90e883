#include "partial_results.h"

#include <stdexcept>

#include "summary_bytes.h"

namespace parlot::analysis {
namespace {

void write_status(SummaryWriter& out, int status) {
  out.number(static_cast<std::uint64_t>(status));
}

int read_status(SummaryReader& in) {
  const std::uint64_t status = in.number();
  if (status > 255) throw std::runtime_error("partial result from another rank: bad exit status");
  return static_cast<int>(status);
}

std::uint64_t read_process(SummaryReader& in, std::uint64_t process_count) {
  const std::uint64_t process = in.number();
  if (process >= process_count) {
    throw std::runtime_error("partial result from another rank: process index " +
                             std::to_string(process) + " beyond the " +
                             std::to_string(process_count) + " processes of the run");
  }
  return process;
}

void write_named_stats(SummaryWriter& out, const NamedCallStats& s) {
  out.number(s.marks);
  out.number(s.calls.size());
  for (const auto& [name, n] : s.calls) {
    out.text(name);
    out.number(n);
  }
  out.number(s.edges.size());
  for (const auto& [edge, n] : s.edges) {
    out.text(edge.first);
    out.text(edge.second);
    out.number(n);
  }
}

NamedCallStats read_named_stats(SummaryReader& in) {
  NamedCallStats s;
  s.marks = in.number();
  for (std::uint64_t n = in.count(2); n > 0; --n) {
    std::string name = in.text();
    s.calls[std::move(name)] += in.number();
  }
  for (std::uint64_t n = in.count(3); n > 0; --n) {
    std::string caller = in.text();
    std::string callee = in.text();
    s.edges[{std::move(caller), std::move(callee)}] += in.number();
  }
  return s;
}

void write_thread_id(SummaryWriter& out, const ThreadId& id) {
  out.number(id.rank);
  out.number(id.fork);
  out.number(id.thread);
}

ThreadId read_thread_id(SummaryReader& in) {
  ThreadId id;
  id.rank = in.number();
  id.fork = in.number();
  id.thread = in.number();
  return id;
}

}  // namespace

std::string write_stacks_partial(const StacksPartial& p) {
  SummaryWriter out;
  write_status(out, p.status);
  out.number(p.threads.size());
  for (const auto& t : p.threads) {
    write_thread_id(out, t.id);
    out.number(t.stack.size());
    for (const FunctionKey key : t.stack) out.number(key);
  }
  out.number(p.names.size());
  for (const auto& [key, name] : p.names) {
    out.number(key);
    out.text(name);
  }
  return out.take();
}

StacksPartial read_stacks_partial(std::string_view bytes) {
  SummaryReader in(bytes);
  StacksPartial p;
  p.status = read_status(in);
  p.threads.resize(in.count(4));
  for (auto& t : p.threads) {
    t.id = read_thread_id(in);
    t.stack.resize(in.count(1));
    for (auto& key : t.stack) key = in.number();
  }
  p.names.resize(in.count(2));
  for (auto& [key, name] : p.names) {
    key = in.number();
    name = in.text();
  }
  in.expect_done();
  return p;
}

std::string write_classes_partial(const ClassesPartial& p) {
  SummaryWriter out;
  write_status(out, p.status);
  out.number(p.threads.size());
  for (const auto& t : p.threads) {
    out.number(t.process);
    write_thread_id(out, t.id);
    out.number(t.hash);
    out.number(t.edges.size());
    for (const auto h : t.edges) out.number(h);
  }
  return out.take();
}

ClassesPartial read_classes_partial(std::string_view bytes, std::uint64_t process_count) {
  SummaryReader in(bytes);
  ClassesPartial p;
  p.status = read_status(in);
  p.threads.resize(in.count(6));
  for (auto& t : p.threads) {
    t.process = read_process(in, process_count);
    t.id = read_thread_id(in);
    t.hash = in.number();
    t.edges.resize(in.count(1));
    for (auto& h : t.edges) h = in.number();
  }
  in.expect_done();
  return p;
}

std::string write_stats_partial(const StatsPartial& p) {
  SummaryWriter out;
  write_status(out, p.status);
  out.number(p.units.size());
  for (const auto& u : p.units) {
    out.number(u.process);
    out.number(u.position);
    out.number(u.tid);
    out.number(u.thread);
    write_named_stats(out, u.stats);
  }
  return out.take();
}

StatsPartial read_stats_partial(std::string_view bytes, std::uint64_t process_count) {
  SummaryReader in(bytes);
  StatsPartial p;
  p.status = read_status(in);
  p.units.resize(in.count(7));
  for (auto& u : p.units) {
    u.process = read_process(in, process_count);
    u.position = in.number();
    u.tid = in.number();
    u.thread = in.number();
    u.stats = read_named_stats(in);
  }
  in.expect_done();
  return p;
}

}  // namespace parlot::analysis
