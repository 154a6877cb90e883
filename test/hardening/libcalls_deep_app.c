/* Not instrumented, linked by libcalls_names: the application's copy of
 * deep_value, first in the global scope. */
const char* deep_value(void) {
  return "application's copy";
}
