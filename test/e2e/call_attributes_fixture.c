/* Calls the runtime's internal call-attribute entry points
   (runtime/api/call_attributes.cpp) the way libparlotmpi.so does, for
   call_attributes_test.cpp: a record about a recorded entry is kept (also
   when calls nested in it were recorded after the entry), one made while
   paused or for a function that is not the top frame is not. Prints the
   run-time address of call_with. Resolves everything with dlsym, so it
   runs (and records nothing) without the runtime. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef uint64_t (*entry_t)(const void* fn);
typedef void (*attributes_t)(const void* fn, uint64_t entry, unsigned kind, const void* data,
                             size_t n);
static entry_t call_entry;
static attributes_t call_attributes;

__attribute__((noinline)) void leaf(void) {
  __asm__ volatile("");
}

/* A kind-3 record with one field, dest = label (mask bit 0, zigzag). */
__attribute__((noinline)) void call_with(int label) {
  const uint64_t entry = call_entry((const void*)&call_with);
  leaf(); /* events after the entry: the record is still about the entry */
  const unsigned char data[2] = {1, (unsigned char)(2 * label)};
  call_attributes((const void*)&call_with, entry, 3, data, sizeof data);
}

/* A record for call_with while call_with is not the top frame: dropped. */
__attribute__((noinline)) void not_on_top(void) {
  const unsigned char data[2] = {1, 2 * 9};
  call_attributes((const void*)&call_with, 0, 3, data, sizeof data);
}

int main(void) {
  call_entry = (entry_t)dlsym(RTLD_DEFAULT, "parlot_rt_call_entry");
  call_attributes = (attributes_t)dlsym(RTLD_DEFAULT, "parlot_rt_call_attributes");
  void (*pause)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "parlot_pause");
  void (*resume)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "parlot_resume");
  if (!call_entry || !call_attributes || !pause || !resume) return 2;
  printf("call_with=%p\n", (void*)&call_with);
  call_with(1);
  pause();
  call_with(2); /* not recorded, nor its attributes */
  resume();
  not_on_top();
  call_with(3);
  return 0;
}
