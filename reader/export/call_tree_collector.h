// An Exporter that writes nothing and keeps the merged call tree, for the
// views that print from it (parlot-read report).
#pragma once

#include "call_tree.h"
#include "exporter.h"

namespace parlot::exporter {

class CallTreeCollector final : public Exporter {
 public:
  void begin_process(const ProcessInfo& process) override { functions_ = process.functions; }
  void begin_thread(const ThreadInfo&) override { thread_ = ThreadCallTree(); }
  void event(const CallEvent& e, std::uint64_t time) override {
    if (e.kind == CallEvent::Kind::kEnter) {
      thread_.enter(e.function_id, time);
    } else {
      thread_.exit(time);
    }
  }
  void end_thread(std::uint64_t end_time) override {
    thread_.close_all(end_time);
    tree_.merge(thread_, *functions_);
    thread_ = ThreadCallTree();
  }
  void end() override {}

  const CallTree& tree() const { return tree_; }

 private:
  FunctionSource* functions_ = nullptr;
  ThreadCallTree thread_;
  CallTree tree_;
};

}  // namespace parlot::exporter
