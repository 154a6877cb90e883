// A guard for the runtime's own work outside the hooks (interposers,
// patching passes, the flusher's thread start): no event of it is
// recorded. Defined with the thread registry (process/thread_registry.cpp);
// declared here, at the bottom of the runtime, for every folder to use.
#pragma once

namespace parlot::runtime {

/// While alive, hooks called on this thread are ignored: the runtime's own
/// calls into the C library may reach instrumented code (a program that
/// replaces malloc), and must not appear in the trace.
class IgnoreHooksOnThisThread {
 public:
  IgnoreHooksOnThisThread();
  ~IgnoreHooksOnThisThread();
  IgnoreHooksOnThisThread(const IgnoreHooksOnThisThread&) = delete;
  IgnoreHooksOnThisThread& operator=(const IgnoreHooksOnThisThread&) = delete;

 private:
  int saved_;
};

}  // namespace parlot::runtime
