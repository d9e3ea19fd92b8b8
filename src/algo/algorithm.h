/* algorithm.h: the one shape of every reduction algorithm: a plan of its sizes made once without MPI, then a resumable operation (start, progress, end) on memory its caller hands it. */
#ifndef APSMPI_ALGORITHM_H
#define APSMPI_ALGORITHM_H

#include <mpi.h>
#include <stddef.h>
#include "call/compressed_call.h"

/* Each algorithm is an apsmpi_algorithm that its own header under algo/ declares, with the
 * types of what only it reads (its apsmpi_plan_in.algo_in, its apsmpi_op.algo_ctx): this
 * interface names none of them, so an algorithm is added without editing it. The caller
 * (entry/reductions.c) chooses one per call.
 *
 * The life of one: the caller plans it (apsmpi_plan_make: sizes only,
 * no MPI, no memory), takes the memory the plan asks for from its own memory
 * (state/scratch.h's apsmpi_memory: a blocking call's thread scratch, a request's own), has
 * the ranks agree on the call's scales (apsmpi_call_agree_start/finish, with the plan's
 * buffer sizes and addends) unless it is the node path (whose parts agree each on their
 * own), then starts the operation, makes it progress until it is done, and ends it. A
 * blocking call does so with op.blocking set, so that progress waits in MPI where nothing
 * else is left to do (as PMPI_Wait would) instead of spinning.
 * A non-blocking call starts it, returns, and calls progress from the job's
 * test and wait calls (op.blocking 0: progress never waits in MPI; every algorithm keeps
 * where it stands and returns instead), then end. Several operations may be outstanding on one thread: each has its
 * own memory. */

/* The reductions an algorithm serves. */
enum apsmpi_reduction_kind { APSMPI_ALLREDUCE = 0, APSMPI_REDUCE_SCATTER = 1, APSMPI_REDUCE_SCATTER_BLOCK = 2 };

/* What an algorithm plans from: the call's shape, nothing that needs MPI. */
typedef struct apsmpi_plan_in {
    const apsmpi_format *f;
    int kind; /* enum apsmpi_reduction_kind */
    int nranks, rank;
    const int *counts; /* segment r of the buffer: counts[r] elements, in rank order (flat algorithms) */
    size_t n;          /* the buffer's elements */
    size_t piece;      /* APSMPI_CHUNK_SIZE in whole slices of 64 (apsmpi_runtime.piece_elems); 0: never pipelined */
    size_t block_len;  /* elements per scaling block of the call */
    /* what only the planned algorithm reads, of the type its header declares, or NULL for
     * its defaults: read while the plan is made, never after (apsmpi_plan_make sets the
     * plan's copy to NULL), so it may be the caller's local */
    const void *algo_in;
} apsmpi_plan_in;

struct apsmpi_algo;

/* Bytes an algorithm's own plan may take in apsmpi_plan. */
enum { APSMPI_PLAN_OWN_BYTES = 512 };

/* An algorithm's plan of one call. */
typedef struct apsmpi_plan {
    const struct apsmpi_algo *algo;
    apsmpi_plan_in in;
    size_t packed_bytes; /* the call's encoded input (apsmpi_call_agree_start takes it) */
    size_t result_bytes; /* its second encoded buffer (0: none) */
    size_t memory_bytes; /* the operation's own host memory: its state, then the algorithm's region */
    size_t state_bytes;  /* of which the state, at its start (a multiple of 64) */
    int addends;         /* values a low-precision sum adds: the headroom of the agreed scales */
    /* the algorithm's own plan, of its own type, which only the algorithm reads (apsmpi_plan_own) */
    _Alignas(max_align_t) unsigned char own[APSMPI_PLAN_OWN_BYTES];
} apsmpi_plan;

/* The algorithm's own plan in p, as its own type (each algorithm checks at compile time that the
 * type fits in APSMPI_PLAN_OWN_BYTES). */
#define apsmpi_plan_own(p, type) ((type *)(void *)(p)->own)

/* One algorithm running on one call. */
typedef struct apsmpi_op {
    apsmpi_plan *plan;
    apsmpi_call *c; /* the call: its input, agreed scales, encoded buffers (c->packed, c->result) */
    float *out;     /* the result: the whole buffer (allreduce) or this rank's segment */
    void *memory;   /* plan->memory_bytes of host memory from the provider, APSMPI_ALIGN-aligned */
    int blocking;   /* 1: progress may wait in MPI where nothing else is left to do */
    /* what only the running algorithm reads, of the type its header declares, or NULL: it
     * lives as long as the operation */
    const void *algo_ctx;
} apsmpi_op;

typedef struct apsmpi_algo {
    const char *name;
    int private_comm; /* sends its own messages on the private duplicate of the communicator,
                       * which every rank must then make (state/private_comm.h) */
    size_t state;     /* bytes of the operation's state */
    /* Fills p's sizes and the algorithm's own plan from p->in: no MPI, no memory. */
    void (*plan)(apsmpi_plan *p);
    /* Lays out the memory and posts what can be posted. MPI_SUCCESS or an MPI error code. */
    int (*start)(apsmpi_op *op);
    /* Advances as far as it can (without waiting in MPI unless op->blocking); sets *done: 1
     * when everything is complete, else 0. MPI_SUCCESS or an MPI error code. */
    int (*progress)(apsmpi_op *op, int *done);
    /* After done, or after an error rc of start or progress: completes or cancels whatever is
     * still in flight, so that no request stays active on the memory. Returns rc, or an
     * error of its own when rc was MPI_SUCCESS. */
    int (*end)(apsmpi_op *op, int rc);
} apsmpi_algorithm;

/* Plans algorithm a for the call that in describes: p's sizes, addends and own plan. */
void apsmpi_plan_make(apsmpi_plan *p, const apsmpi_algorithm *a, const apsmpi_plan_in *in);

/* The algorithm's region of the operation's memory, after its state. */
static inline void *apsmpi_op_memory(const apsmpi_op *op) { return (char *)op->memory + op->plan->state_bytes; }

#endif
