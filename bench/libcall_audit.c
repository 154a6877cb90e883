/* The other way to see library calls: glibc's rtld-audit interface
   (LD_AUDIT=libparlot_bench_audit.so), as issue 10 asks to measure against
   Parlot's GOT stubs. la_symbind64 keeps every binding, la_pltenter asks for
   la_pltexit (frame size 0: the callee's stack arguments are not copied, so
   only functions without any can be seen this way) and both only count:
   the least any tracer built on it pays. glibc calls them only for calls
   bound lazily through the PLT (not for -z now objects, nor LD_BIND_NOW).
   Prints the counts at exit on stderr. */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdio.h>

static unsigned long enters, exits;

unsigned int la_version(unsigned int version) {
  return version < LAV_CURRENT ? version : LAV_CURRENT;
}

unsigned int la_objopen(struct link_map* map, Lmid_t lmid, uintptr_t* cookie) {
  (void)map;
  (void)lmid;
  (void)cookie;
  return LA_FLG_BINDTO | LA_FLG_BINDFROM;
}

uintptr_t la_symbind64(Elf64_Sym* sym, unsigned int ndx, uintptr_t* refcook, uintptr_t* defcook,
                       unsigned int* flags, const char* symname) {
  (void)ndx;
  (void)refcook;
  (void)defcook;
  (void)flags;
  (void)symname;
  return sym->st_value;
}

Elf64_Addr la_x86_64_gnu_pltenter(Elf64_Sym* sym, unsigned int ndx, uintptr_t* refcook,
                                  uintptr_t* defcook, La_x86_64_regs* regs, unsigned int* flags,
                                  const char* symname, long int* framesizep) {
  (void)ndx;
  (void)refcook;
  (void)defcook;
  (void)regs;
  (void)flags;
  (void)symname;
  __atomic_add_fetch(&enters, 1, __ATOMIC_RELAXED);
  *framesizep = 0;
  return sym->st_value;
}

unsigned int la_x86_64_gnu_pltexit(Elf64_Sym* sym, unsigned int ndx, uintptr_t* refcook,
                                   uintptr_t* defcook, const La_x86_64_regs* inregs,
                                   La_x86_64_retval* outregs, const char* symname) {
  (void)sym;
  (void)ndx;
  (void)refcook;
  (void)defcook;
  (void)inregs;
  (void)outregs;
  (void)symname;
  __atomic_add_fetch(&exits, 1, __ATOMIC_RELAXED);
  return 0;
}

__attribute__((destructor)) static void report(void) {
  fprintf(stderr, "audit: %lu plt enters, %lu plt exits\n", enters, exits);
}
