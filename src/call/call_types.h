/* call_types.h: the types of one compressed call: the call object, its GPU state, how its encoded buffer is cut, the path the ranks agreed on. */
#ifndef APSMPI_CALL_TYPES_H
#define APSMPI_CALL_TYPES_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include "core/codec.h"
#include "core/width_controller.h"
#include "state/runtime_state.h"
#include "state/scratch.h"

struct apsmpi_device_state; /* a thread's GPU resources (device_steps.c) */

/* The GPU state of a call, owned by the GPU steps (device_steps.c): no other file reads or
 * writes its fields; they ask device_steps.h. */
typedef struct apsmpi_device_call {
    struct apsmpi_device_state *state; /* the thread's GPU resources, when the input or the output is GPU memory */
    int in, out;                       /* the input, the output is GPU memory */
    int failed;                        /* this rank cannot do the call on the GPU: the ranks agree on fp32 */
    int err;                           /* the first GPU error of the call */
    int any;      /* agreed: some rank's call has GPU buffers, so GPU errors are agreed at its end */
    int encoding; /* the input's encoding was started on the GPU */
    int counting; /* its encodings count (statistics) or measure (auto) on the GPU */
    int decoding; /* decodes were queued on the GPU */
} apsmpi_device_call;

/* What all ranks agreed to do with an eligible call. Errors are not paths: every function
 * of the library that can fail returns MPI_SUCCESS or an MPI error code. */
enum apsmpi_path { APSMPI_PATH_COMPRESS = 0, APSMPI_PATH_FP32 = 1 };

/* How a call's packed buffer is cut: nsegs segments of counts[s] elements, each starting a
 * packing group (core/packed_layout.h), encoded in the order order[0..nsegs), segment
 * order[0] first. order NULL: 0, 1, 2, ...; then first and offset may be NULL, else they are
 * the segments' element starts and byte offsets. */
typedef struct apsmpi_segments {
    int nsegs;
    const int *counts;
    const size_t *first, *offset;
    const int *order;
} apsmpi_segments;

/* A call's agreement (compressed_call.h: apsmpi_call_agree_start, _finish). */
typedef struct apsmpi_agreement {
    int addends;     /* values a low-precision sum may add, the scales' headroom: 1 when sums are fp32 */
    int count;       /* entries of exps: the block exponents and two flags; -1: too many blocks to agree on */
    int16_t *exps;   /* the array the ranks reduce with MPI_MAX */
    int16_t *scales; /* once agreed on compression: one per block (exps made scales); NULL before */
} apsmpi_agreement;

/* Where a call's buffer lies in the job's call, which keys error feedback's residuals: the
 * job's communicator, element count and buffer, and the offset of the call's element 0 in
 * it (a part of the node path is a call of its own on a stretch of the job's buffer). */
typedef struct apsmpi_call_origin {
    MPI_Comm comm;
    size_t count;
    const void *buf;
    size_t offset;
} apsmpi_call_origin;

struct apsmpi_residual; /* feedback/residuals.h */

/* Error feedback on a call's contribution (feedback/encodings.h). */
typedef struct apsmpi_call_feedback {
    struct apsmpi_residual *residual; /* the contribution's, pinned for the call; NULL: none */
    double in_sq, res_sq;             /* sums of squares of the input and of the new residual */
} apsmpi_call_feedback;

typedef struct apsmpi_call {
    const apsmpi_runtime *rt; /* the configuration and the codec */
    const apsmpi_memory *mem; /* the provider of the call's memory (state/scratch.h) */
    const float *in;          /* the whole input buffer (error feedback: plus its residual, feedback/encodings.h) */
    size_t n;                 /* its elements */
    MPI_Comm comm;
    MPI_Comm coll; /* where the call's own collectives go (agreement, fp32 path, GPU errors): comm, or
                    * for a request its private duplicate, so that they never meet the job's own */
    struct apsmpi_private_comm *priv; /* a request's private duplicate, held from its start (then comm,
                                       * which the job may free meanwhile, is never looked up); NULL */
    int nranks, rank;
    size_t block_len;       /* elements per scaling block */
    size_t nblocks;         /* blocks of the call */
    apsmpi_agreement agree; /* its scales */
    void *packed;           /* the encoded input */
    void *result;           /* a second encoded buffer, when the call asked for one */
    apsmpi_rounding rounding;
    uint64_t codec_ns;
    int request;                   /* a request's call (MPI_I*, persistent): counted among the requests too */
    uint64_t scale_bytes;          /* result scales this rank decoded (the statistics' bytes after) */
    apsmpi_device_call gpu;        /* its GPU state: the GPU steps' own (device_steps.h asks it) */
    apsmpi_call_origin origin;     /* error feedback's key */
    apsmpi_call_feedback feedback; /* error feedback on the contribution */
    /* the format it goes in: the configuration's; with APSMPI_FORMAT=auto, once agreed, its rung's */
    const apsmpi_format *f;
    const apsmpi_codec *codec;
    int rung;                        /* auto: the rung agreed (core/width_controller.h); -1: none (yet) */
    int measured;                    /* auto: measure holds what this rank's encodings flushed */
    apsmpi_flush_measure measure[2]; /* auto: of the contribution, of the sums this rank owns */
} apsmpi_call;

#endif
