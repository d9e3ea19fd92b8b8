/* reduction.h: one eligible float sum, from the route to its result, as a resumable operation: what the blocking entry points run and what a request holds. */
#ifndef APSMPI_REDUCTION_H
#define APSMPI_REDUCTION_H

#include <mpi.h>
#include <stddef.h>
#include "algo/algorithm.h"
#include "algo/node_path.h"
#include "call/compressed_call.h"
#include "state/comm_info.h"
#include "state/scratch.h"

/* Where a reduction is (reductions.c says what each step does). */
enum apsmpi_reduction_step {
    APSMPI_STEP_ROUTE,       /* how the communicator lies on nodes: one node, the node path, or flat */
    APSMPI_STEP_ROUTE_AGREE, /* the ranks agree whether any rank's buffers are on a GPU */
    APSMPI_STEP_PLAN,        /* the algorithm, its plan and memory, the agreement started */
    APSMPI_STEP_AGREE,       /* the agreement's reduction completing */
    APSMPI_STEP_RUN,         /* the algorithm running */
    APSMPI_STEP_NODES,       /* the node path running (its parts are reductions of their own) */
    APSMPI_STEP_FP32,        /* the call in fp32, as MPI's own */
    APSMPI_STEP_DONE
};

typedef struct apsmpi_reduction {
    /* the call, as the job made it (a part of the node path: its part of the buffer) */
    int kind; /* enum apsmpi_reduction_kind */
    const void *sendbuf;
    void *recvbuf;
    const int *recvcounts; /* MPI_Reduce_scatter's */
    int count;             /* MPI_Allreduce's elements, or MPI_Reduce_scatter_block's per rank */
    MPI_Datatype datatype;
    MPI_Op op;
    MPI_Comm comm;
    /* how it runs */
    const apsmpi_memory *mem; /* the provider of its memory */
    int blocking;             /* 1: every step waits in MPI where it has to (a blocking call) */
    int private_failed;       /* this rank could not make the private duplicate: not tried again */
    int across_nodes;         /* a part of the node path (its reduction across nodes) */
    size_t part_first;        /* a part of the node path: where it starts in the whole buffer */
    /* where it is */
    enum apsmpi_reduction_step step;
    const int *counts; /* the segments' elements, per rank (NULL if this rank could not make them) */
    size_t total;      /* the buffer's elements */
    apsmpi_call c;
    const apsmpi_comm_info *info;
    int dev, any_dev; /* this rank's buffers are on a GPU; any rank's (the route's agreement) */
    MPI_Request req;  /* the route's or the agreement's reduction, or the fp32 call, when not blocking */
    float *host;      /* the fp32 path's host copy of a GPU call's buffers */
    apsmpi_plan plan;
    apsmpi_op run;                  /* the algorithm running on the call */
    apsmpi_node_path_ctx nodes_ctx; /* the node path's context (run.algo_ctx) */
    int rc;
} apsmpi_reduction;

/* Prepares r for an eligible call (reductions.c's eligibility), as the job made it: kind,
 * buffers, recvcounts (MPI_Reduce_scatter), count (MPI_Allreduce's elements or
 * MPI_Reduce_scatter_block's per rank), total (the whole buffer's elements). No MPI yet. */
void apsmpi_reduction_begin(apsmpi_reduction *r, int kind, const void *sendbuf, void *recvbuf, const int *recvcounts,
                            int count, size_t total, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                            const apsmpi_memory *mem, int blocking);

/* Advances r as far as it can (waiting in MPI only when r->blocking); when it is complete,
 * *done = 1 and the call's result is returned (MPI_SUCCESS or an MPI error code, already
 * through the communicator's error handler where MPI's own would be). */
int apsmpi_reduction_progress(apsmpi_reduction *r, int *done);

/* 1 when r will post no more collective operations (on its communicators or those apsmpi
 * derives from them): only then may a later reduction on the same communicator post its own,
 * so that every rank posts them in the same order (entry/requests.c). */
int apsmpi_reduction_posted_all(const apsmpi_reduction *r);

/* Whether a call is eligible (reductions.c), from its arguments alone: 0, or the statistic
 * of the reason it is not (state/stats.h's APSMPI_STAT_PASS_*). kind: enum
 * apsmpi_reduction_kind; recvcounts: MPI_Reduce_scatter's; count: MPI_Allreduce's elements or
 * MPI_Reduce_scatter_block's per rank. *total: the buffer's elements when eligible. */
int apsmpi_reduction_eligibility(int kind, const void *sendbuf, const void *recvbuf, const int *recvcounts, int count,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, size_t *total);

/* A large-count call's (MPI_*_c) count array as ints, in an array the caller frees: NULL
 * when a count does not fit an int (*why = APSMPI_STAT_PASS_LARGE_COUNT), or comm is not a
 * valid communicator or there is no memory (*why = APSMPI_STAT_PASS_COMM: the MPI's own call
 * takes it, and reports what it finds wrong). */
int *apsmpi_reduction_int_counts(const MPI_Count *counts, MPI_Comm comm, int *why);

/* Counts a call passed to MPI unchanged for reason `why` (as above); returns rc, MPI's result. */
int apsmpi_passed_through(int why, int rc);

#endif
