/* runtime.h: apsmpi's state for the life of the job: the configuration and the codec, set up at MPI_Init. */
#ifndef APSMPI_RUNTIME_H
#define APSMPI_RUNTIME_H

#include <mpi.h>
#include <stdint.h>
#include "core/codec.h"
#include "core/config.h"

typedef struct apsmpi_runtime {
    apsmpi_config cfg;
    apsmpi_codec *codec; /* non-NULL while calls can be compressed */
    MPI_Op sum_op;       /* sums packed groups of cfg.format */
    MPI_Datatype group_type;
    size_t chunk_elems;  /* elements per pipelined allreduce chunk, whole groups; 0: none */
} apsmpi_runtime;

/* Read-only once MPI_Init has returned. */
extern apsmpi_runtime apsmpi_rt;

/* Right after the MPI library's own init (from C or Fortran): reads APSMPI_* on every rank,
 * agrees that all ranks read valid and equal settings (else stops the job with one line),
 * and prepares the codec and the MPI op. Once per job. */
void apsmpi_runtime_after_init(void);

/* Right before the MPI library's own finalize: reports the statistics and frees. Collective. */
void apsmpi_runtime_before_finalize(void);

/* A number drawn once per compressed call, keying the stochastic rounding of that call. */
uint64_t apsmpi_next_call_number(void);

#endif
