/* Not instrumented: the DEEPBIND plugin's own copy of deep_value. */
const char* deep_value(void) {
  return "plugin's own copy";
}
