/* compressed_call.h: one compressed reduction in progress: its input, the scales all ranks agreed on, its buffers. */
#ifndef APSMPI_COMPRESSED_CALL_H
#define APSMPI_COMPRESSED_CALL_H

#include <mpi.h>
#include <stddef.h>
#include "call/call_types.h"
#include "core/fault.h"

/* Starts a call on the n-element input `in`, whose result goes to out; finds whether either
 * is GPU memory. Its memory comes from mem. */
void apsmpi_call_begin(apsmpi_call *c, const apsmpi_runtime *rt, const apsmpi_memory *mem, const float *in, size_t n,
                       const void *out, MPI_Comm comm);

/* The agreement, in two halves so that a non-blocking call can post it and return.
 * apsmpi_call_agree_start finds the local block exponents, takes working buffers of
 * packed_size and result_size bytes (result_size 0: none), and starts one MAX reduction with
 * the other ranks on the exponents, on whether every rank got its buffers (local_failed:
 * this rank already lacks one) and on whether any rank's buffers are on a GPU: the blocking
 * PMPI_Allreduce when req is NULL, else PMPI_Iallreduce into *req (complete it before the
 * finish). apsmpi_call_agree_finish reads the agreed array: everything that decides the path
 * is in it, so all ranks take the same path, which goes to *path. Each returns MPI_SUCCESS
 * or an MPI error code. */
int apsmpi_call_agree_start(apsmpi_call *c, size_t packed_size, size_t result_size, int local_failed, MPI_Request *req);
int apsmpi_call_agree_finish(apsmpi_call *c, enum apsmpi_path *path);

/* After the agreement on compression: lets a GPU input start encoding, segment by segment in
 * the order of segs. Nothing to do for host input. */
void apsmpi_call_start(apsmpi_call *c, const apsmpi_segments *segs);

/* Encodes in[first, first+n) into out; first must be a multiple of the packing group. For a
 * GPU input, out is where the layout given to apsmpi_call_start puts these elements in c->packed. */
void apsmpi_call_encode(apsmpi_call *c, size_t first, size_t n, void *out);

/* Decodes n elements of packed data `in`, which start at element `first`, into out. */
void apsmpi_call_decode(apsmpi_call *c, const void *in, size_t first, size_t n, float *out);

/* Adds the decoding of n elements encoded with the agreed scales at `in` (a contribution),
 * elements [first, first+n) of the buffer, to host fp32 dst[0..n) (set: dst = it); tmp: n
 * floats of scratch. */
void apsmpi_call_add_contribution(apsmpi_call *c, const void *in, size_t first, size_t n, float *dst, int set,
                                  float *tmp);

/* The one encoding of an owner's fp32 sum (rsag): sum[0..n), elements [first, first+n) of
 * the buffer, into a result message at msg of msg_bytes bytes (inside c->result): per-block
 * scales from the sum's own values (apsmpi_result_scale_bytes of them) and then the codes,
 * with a random stream of the piece's own. */
void apsmpi_call_encode_sum(apsmpi_call *c, const float *sum, size_t n, size_t first, void *msg);

/* The two-level schedule's partial sums (algo/twolevel.h): the one encoding of a group's
 * fp32 sum[0..n), elements [first, first+n) of the buffer, as a result message at msg
 * (apsmpi_call_encode_sum's layout and scales), with a random stream other than the final
 * sum's and, with error feedback, a residual of its own (APSMPI_RESIDUAL_PARTIAL). */
void apsmpi_call_encode_partial(apsmpi_call *c, const float *sum, size_t n, size_t first, void *msg);

/* Adds the decoding of a result message at msg (a partial sum), elements [first, first+n) of
 * the buffer, to host fp32 dst[0..n) (set: dst = it); tmp: n floats of scratch. */
void apsmpi_call_add_result(apsmpi_call *c, const void *msg, size_t first, size_t n, float *dst, int set, float *tmp);

/* Decodes a result message at msg of msg_bytes bytes (inside c->result), elements [first,
 * first+n) of the buffer, into out (for a GPU output, queued on the GPU). */
void apsmpi_call_decode_result(apsmpi_call *c, const void *msg, size_t msg_bytes, size_t first, size_t n, float *out);

/* Counts the call in the statistics; returns rc, or the error of a failed GPU step (after
 * handing it to comm's error handler). */
int apsmpi_call_end(apsmpi_call *c, int rc);

/* For tests (APSMPI_TEST_FAIL): MPI_ERR_OTHER, through the error handler of the call's
 * communicator as MPI fails its own calls, if this pass of the MPI step `site` is to fail;
 * else MPI_SUCCESS. */
int apsmpi_call_injected_error(apsmpi_call *c, enum apsmpi_fault_site site);

/* With APSMPI_FORMAT=auto, a call agreed on the FP32 rung: its measure, the histogram of its
 * input as the host holds it (in: c->n floats; for a GPU input, the host copy its fp32 path
 * sends). Nothing for another call, or one measured already. */
void apsmpi_call_measure_fp32(apsmpi_call *c, const float *in);

/* Ends a call that the ranks agreed to send in fp32, rc being the result of that. */
int apsmpi_call_end_fp32(apsmpi_call *c, int rc);

#endif
