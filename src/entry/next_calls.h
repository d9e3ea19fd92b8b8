/* next_calls.h: for each intercepted MPI function, the definition that comes after apsmpi's (another PMPI tool preloaded after it, or the MPI library's own), which the calls apsmpi does not take go to. */
#ifndef APSMPI_NEXT_CALLS_H
#define APSMPI_NEXT_CALLS_H

#include "build_config.h"
#include <mpi.h>
#include <stddef.h>

/* Tools that intercept MPI (profilers, I/O monitors, apsmpi) are stacked by the dynamic
 * linker in LD_PRELOAD's order; each hands a call on to the next by calling MPI_<name> as
 * it comes after itself (dlsym(RTLD_NEXT)), the last one reaching the MPI library. A tool
 * that calls PMPI_<name> directly skips every tool after it. So apsmpi hands on the calls
 * it does not compress, and MPI_Init and MPI_Finalize, through APSMPI_NEXT(name), which a
 * profiler after apsmpi sees; its own messages and collectives go to PMPI_* unseen. */
/* X(name) for each MPI function MPI_<name> that apsmpi intercepts (wrappers/ defines them),
 * written once: the groups the MPI may lack where configure found them (build_config.h):
 * the persistent reductions (MPI 4; Open MPI 5.0, which says MPI 3, has them too; Open MPI
 * 4.1 only under MPIX_ names, which apsmpi leaves alone), the large-count ones (MPI_*_c,
 * MPI 4) and the large-count persistent ones. */
#define APSMPI_INTERCEPTED(X)         \
    X(Init)                           \
    X(Init_thread)                    \
    X(Finalize)                       \
    X(Comm_dup)                       \
    X(Comm_dup_with_info)             \
    X(Comm_split)                     \
    X(Comm_split_type)                \
    X(Comm_create)                    \
    X(Comm_create_group)              \
    X(Allreduce)                      \
    X(Reduce_scatter)                 \
    X(Reduce_scatter_block)           \
    X(Iallreduce)                     \
    X(Ireduce_scatter)                \
    X(Ireduce_scatter_block)          \
    X(Start)                          \
    X(Startall)                       \
    X(Wait)                           \
    X(Waitall)                        \
    X(Waitany)                        \
    X(Waitsome)                       \
    X(Test)                           \
    X(Testall)                        \
    X(Testany)                        \
    X(Testsome)                       \
    X(Request_get_status)             \
    X(Request_free)                   \
    X(Cancel)                         \
    APSMPI_INTERCEPTED_PERSISTENT(X)  \
    APSMPI_INTERCEPTED_LARGE_COUNT(X) \
    APSMPI_INTERCEPTED_LARGE_COUNT_PERSISTENT(X)
#ifdef APSMPI_HAVE_PERSISTENT_REDUCTIONS
#define APSMPI_INTERCEPTED_PERSISTENT(X) \
    X(Allreduce_init)                    \
    X(Reduce_scatter_init)               \
    X(Reduce_scatter_block_init)
#else
#define APSMPI_INTERCEPTED_PERSISTENT(X)
#endif
#ifdef APSMPI_HAVE_LARGE_COUNT_REDUCTIONS
#define APSMPI_INTERCEPTED_LARGE_COUNT(X) \
    X(Allreduce_c)                        \
    X(Reduce_scatter_c)                   \
    X(Reduce_scatter_block_c)             \
    X(Iallreduce_c)                       \
    X(Ireduce_scatter_c)                  \
    X(Ireduce_scatter_block_c)
#else
#define APSMPI_INTERCEPTED_LARGE_COUNT(X)
#endif
#if defined(APSMPI_HAVE_LARGE_COUNT_PERSISTENT_REDUCTIONS) && defined(APSMPI_HAVE_PERSISTENT_REDUCTIONS)
#define APSMPI_INTERCEPTED_LARGE_COUNT_PERSISTENT(X) \
    X(Allreduce_init_c)                              \
    X(Reduce_scatter_init_c)                         \
    X(Reduce_scatter_block_init_c)
#else
#define APSMPI_INTERCEPTED_LARGE_COUNT_PERSISTENT(X)
#endif

/* The next definitions, found at the first use (apsmpi_next_calls_find). */
typedef struct apsmpi_next_calls {
#define APSMPI_NEXT_FIELD(name) __typeof__(&PMPI_##name) name;
    APSMPI_INTERCEPTED(APSMPI_NEXT_FIELD)
#undef APSMPI_NEXT_FIELD
} apsmpi_next_calls;

/* The next definitions, found once (thread-safe): MPI_<name> after the object that holds
 * apsmpi's entry points, or PMPI_<name> where none is found (apsmpi linked statically). */
const apsmpi_next_calls *apsmpi_next_calls_find(void);

/* The next MPI_<name>: APSMPI_NEXT(Allreduce)(sendbuf, recvbuf, ...). */
#define APSMPI_NEXT(name) (apsmpi_next_calls_find()->name)

/* The first intercepted function whose definition the process resolves (its global lookup
 * order) in another object than apsmpi's own (a tool preloaded before apsmpi, which hides
 * it), as "MPI_Allreduce (in /path/libother.so)" into line; 0 if there is none. */
int apsmpi_next_calls_hidden(char *line, size_t len);

#endif
