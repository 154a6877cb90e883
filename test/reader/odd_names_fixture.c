/* Trace source for parlot-read's output escaping (issue 8, case 14).
 *
 * Built with -finstrument-functions and without debug information; after
 * compiling, `odd_name` is renamed in the object file (objcopy
 * --redefine-sym, rename_odd_symbol.sh) to the bytes
 * "odd" 0xff 0x1b "[31mname": not valid UTF-8, and a terminal escape
 * sequence (ESC [31m, red text). The reader names it from the ELF symbol
 * table. Calls: main { odd_name { leaf } after { leaf } }.
 */
#define NOINLINE __attribute__((noinline))

volatile unsigned sink;

NOINLINE void leaf(void) {
  sink++;
}
NOINLINE void odd_name(void) {
  leaf();
}
NOINLINE void after(void) {
  leaf();
}

int main(void) {
  odd_name();
  after();
  return 0;
}
