/* A sotruss-style audit module (LD_AUDIT): counts the PLT calls of the
 * program's executable to getpid (la_pltenter) and its bindings (la_symbind) and prints
 * them when the program's object closes. Not instrumented. */
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <string.h>

static unsigned long pltenter_calls;
static unsigned long bindings;

unsigned int la_version(unsigned int version) {
  return version < LAV_CURRENT ? version : LAV_CURRENT;
}

/* The program's own calls only: its object's cookie is 1. */
unsigned int la_objopen(struct link_map* map, Lmid_t lmid, uintptr_t* cookie) {
  (void)lmid;
  *cookie = map->l_name == NULL || map->l_name[0] == '\0';
  return LA_FLG_BINDTO | LA_FLG_BINDFROM;
}

uintptr_t la_symbind64(Elf64_Sym* sym, unsigned int ndx, uintptr_t* refcook, uintptr_t* defcook,
                       unsigned int* flags, const char* symname) {
  (void)ndx;
  (void)defcook;
  (void)flags;
  if (*refcook == 1 && strcmp(symname, "getpid") == 0) ++bindings;
  return sym->st_value;
}

Elf64_Addr la_x86_64_gnu_pltenter(Elf64_Sym* sym, unsigned int ndx, uintptr_t* refcook,
                                  uintptr_t* defcook, La_x86_64_regs* regs, unsigned int* flags,
                                  const char* symname, long* framesizep) {
  (void)ndx;
  (void)defcook;
  (void)regs;
  (void)flags;
  (void)framesizep;
  if (*refcook == 1 && strcmp(symname, "getpid") == 0) ++pltenter_calls;
  return sym->st_value;
}

unsigned int la_objclose(uintptr_t* cookie) {
  (void)cookie;
  static int printed;
  if (!printed && pltenter_calls != 0) {
    printed = 1;
    fprintf(stderr, "audit: getpid pltenter %lu symbind %lu\n", pltenter_calls, bindings);
  }
  return 0;
}
