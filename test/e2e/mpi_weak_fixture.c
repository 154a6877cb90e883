/* A serial program that uses MPI only if it is there (record_untraced_test):
   weak references to MPI functions, and a lookup with dlsym, as libraries
   that work with or without MPI do. Not linked with MPI, so untraced every
   reference is null: the program prints "no MPI" twice and exits 0. If a
   reference is not null it calls the function (as such a program would)
   and exits 1. Instrumented, so it leaves a trace. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

extern int MPI_Initialized(int* flag) __attribute__((weak));
extern int MPI_Finalized(int* flag) __attribute__((weak));

static int weak_reference(void) {
  if (!MPI_Initialized) {
    printf("weak reference: no MPI\n");
    return 0;
  }
  int flag = -1;
  MPI_Initialized(&flag);
  printf("weak reference: MPI_Initialized gave %d\n", flag);
  return 1;
}

static int lookup(void) {
  int (*finalized)(int*) = (int (*)(int*))dlsym(RTLD_DEFAULT, "MPI_Finalized");
  if (finalized == NULL && !MPI_Finalized) {
    printf("dlsym: no MPI\n");
    return 0;
  }
  int flag = -1;
  if (finalized != NULL) finalized(&flag);
  printf("dlsym: MPI_Finalized gave %d\n", flag);
  return 1;
}

int main(void) {
  const int found = weak_reference() + lookup();
  return found == 0 ? 0 : 1;
}
