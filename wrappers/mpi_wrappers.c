/* mpi_wrappers.c: the MPI_* entry points that a preloaded libapsmpi.so puts in front of the MPI library. */
#include "entry/entry_points.h"
#include "mpi_signatures.h"

/* Each MPI_<name> hands its arguments to apsmpi_<name> (src/entry/entry_points.h), which
 * either compresses the call or passes it to PMPI_<name> unchanged. Symbol resolution is the
 * dynamic linker's: a preloaded MPI_<name> comes before the MPI library's, and PMPI_<name> is
 * always the MPI library's. The implementation must have exactly MPI's signature. */
#define APSMPI_DEFINE_WRAPPER(name)                                                                    \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&apsmpi_##name), __typeof__(&PMPI_##name)), \
                   "apsmpi_" #name " has not the signature of MPI_" #name);                            \
    APSMPI_EXPORT int MPI_##name APSMPI_PARAMS_##name { return apsmpi_##name APSMPI_ARGS_##name; }
APSMPI_WRAPPED(APSMPI_DEFINE_WRAPPER)
