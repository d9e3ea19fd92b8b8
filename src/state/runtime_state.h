/* runtime_state.h: apsmpi's state for the life of the job: the configuration, the codec, the call counter. */
#ifndef APSMPI_RUNTIME_STATE_H
#define APSMPI_RUNTIME_STATE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include "core/codec.h"
#include "core/config.h"

typedef struct apsmpi_runtime {
    apsmpi_config cfg;
    apsmpi_codec *codec; /* non-NULL while calls can be compressed */
    size_t piece_elems;  /* APSMPI_CHUNK_SIZE in whole slices of 64: elements per piece; 0: never pipelined */
    int codec_threads;   /* APSMPI_CODEC_THREADS resolved: threads that share the host codec's work (1: no helpers) */
} apsmpi_runtime;

/* Set up by MPI_Init (entry/init_finalize.c), read-only once it has returned. The steps of a call
 * reach it through apsmpi_call.rt, never through this name. */
extern apsmpi_runtime apsmpi_rt;

/* A number drawn once per compressed call, keying the stochastic rounding of that call. */
uint64_t apsmpi_next_call_number(void);

#endif
