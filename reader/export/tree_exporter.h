// Base of the formats that are views of the merged call tree (folded,
// callgrind, dot, hatchet): builds each thread's tree from its events,
// merges it by name at the thread's end, and writes the view at the end.
#pragma once

#include "call_tree.h"
#include "call_tree_collector.h"
#include "exporter.h"
#include "output_file.h"

namespace parlot::exporter {

class TreeExporter : public Exporter {
 public:
  TreeExporter(const std::string& output, ExportOptions options)
      : out_(output), options_(std::move(options)) {}

  void begin_process(const ProcessInfo& process) override { tree_.begin_process(process); }
  void begin_thread(const ThreadInfo& thread) override { tree_.begin_thread(thread); }
  void event(const CallEvent& e, std::uint64_t time) override { tree_.event(e, time); }
  void end_thread(std::uint64_t end_time) override { tree_.end_thread(end_time); }
  void end() override {
    write(tree_.tree());
    out_.close();
  }

 protected:
  /// Writes the format's view of `tree` to out().
  virtual void write(const CallTree& tree) = 0;
  OutputFile& out() { return out_; }
  const ExportOptions& options() const { return options_; }

 private:
  OutputFile out_;
  ExportOptions options_;
  CallTreeCollector tree_;
};

}  // namespace parlot::exporter
