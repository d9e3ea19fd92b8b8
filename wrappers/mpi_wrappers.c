/* mpi_wrappers.c: the MPI_* entry points that a preloaded libapsmpi.so puts in front of the MPI library. */
#include "mpi_signatures.h"

/* Each MPI_<name> hands its arguments to apsmpi_<name>, which either compresses the call or
 * passes it to PMPI_<name> unchanged. Symbol resolution is the dynamic linker's: a preloaded
 * MPI_<name> comes before the MPI library's, and PMPI_<name> is always the MPI library's. */
#define APSMPI_DEFINE_WRAPPER(name) \
    int MPI_##name APSMPI_PARAMS_##name { return apsmpi_##name APSMPI_ARGS_##name; }
APSMPI_WRAPPED(APSMPI_DEFINE_WRAPPER)
