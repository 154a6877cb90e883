/* Shared by the generated MPI wrappers (mpi_wrappers.c, written at build
   time by mpi_wrapper_generator.cpp). Plain C: the wrappers are C, never
   instrumented, and depend on nothing but libc. */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

/* The -finstrument-functions hooks: libparlotrt.so's when it is loaded,
   glibc's no-op ones otherwise. */
void __cyg_profile_func_enter(void* fn, void* call_site);
void __cyg_profile_func_exit(void* fn, void* call_site);

/* Returns *slot, resolving it on first use to the next definition of `name`
   after this library (dlsym(RTLD_NEXT)): the MPI library's, or another PMPI
   tool's loaded after Parlot's. Thread-safe (every thread resolves the same
   address). A symbol that cannot be found ends the process with a message
   naming it, as the dynamic loader would. */
void* parlot_mpi_next(void** slot, const char* name);

/* Makes the calling thread read the clock at its next recorded event (the
   runtime's parlot_rt_time_next_event, found at load; nothing without the
   runtime): called before a wrapper's entry and exit hooks, so both ends of
   an MPI call, which may wait, have exact times. */
void parlot_mpi_time_next_event(void);

/* Called by the MPI_Abort wrappers just before the MPI library's MPI_Abort:
   the runtime's parlot_rt_before_abort (in flight mode, a dump of every
   thread's window, which then ends in the MPI_Abort frame); nothing
   without the runtime. */
void parlot_mpi_before_abort(void);

/* A wrapper is exported and never instrumented. */
#define PARLOT_MPI_WRAPPER __attribute__((visibility("default"), no_instrument_function))

#ifdef __cplusplus
}
#endif
