/* scratch.h: per-thread working buffers that grow and are kept, so no call allocates fresh memory. */
#ifndef APSMPI_SCRATCH_H
#define APSMPI_SCRATCH_H

#include <stddef.h>

enum apsmpi_scratch_slot {
    APSMPI_SCRATCH_EXPONENTS = 0,    /* the per-block exponents and scales */
    APSMPI_SCRATCH_PACKED = 1,       /* the encoded buffer that MPI reduces */
    APSMPI_SCRATCH_RESULT = 2,       /* the encoded result of a reduce-scatter */
    APSMPI_SCRATCH_COUNTS = 3,       /* per-rank packed-group counts of a reduce-scatter */
    APSMPI_SCRATCH_BLOCK_COUNTS = 4, /* per-rank element counts of a reduce-scatter-block */
    APSMPI_SCRATCH_RING = 5,         /* the ring's offsets and requests */
    APSMPI_SCRATCH_RSAG = 6,         /* rsag's offsets and requests */
    APSMPI_SCRATCH_SUM = 7,          /* rsag's fp32 sums */
    APSMPI_SCRATCH_NODE = 8,         /* the node parts' counts and displacements */
    APSMPI_SCRATCH_PARTIAL = 9,      /* a node's fp32 part in the hierarchical allreduce */
    APSMPI_SCRATCH_SLOTS = 10
};

/* A buffer of at least bytes bytes, private to the calling thread, valid until the next call
 * for the same slot on this thread; NULL if memory runs out. Freed when the thread exits. */
void *apsmpi_scratch(int slot, size_t bytes);

#endif
