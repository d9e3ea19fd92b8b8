/* device_steps.h: the steps of a compressed call whose input or output is GPU memory, done on the GPU. */
#ifndef APSMPI_DEVICE_STEPS_H
#define APSMPI_DEVICE_STEPS_H

/* The device path for an MPI that is not CUDA-aware: block exponents and encoding on the GPU,
 * the encoded bytes copied to page-locked host buffers, the reduction on the host as for host
 * buffers, the result copied back and decoded on the GPU into the user's buffer. Encoding
 * runs ahead in stages (up to 2^20 elements each) on one stream, each stage's copy
 * ending in an event the host waits for only when it needs that stage; copies back and
 * decodes queue on a second stream as results arrive. So kernels, copies and communication
 * overlap. Functions that can fail return MPI_SUCCESS or an MPI error code. */

#include <stddef.h>
#include <stdint.h>
#include "call/call_types.h"

/* The steps own the call's GPU state (c->gpu, call_types.h); the other steps ask these. */

/* Finds whether the call's input (c->in) or output is device memory. If so, takes the
 * calling thread's device resources (made on first use), or marks that this rank cannot
 * serve the call on the GPU (the plugin is missing, a resource fails): the ranks then agree
 * to send the call in fp32. */
void apsmpi_device_begin(apsmpi_call *c, const void *out);

/* 1 if the call's input or output is GPU memory (whether the GPU can serve it or not). */
int apsmpi_device_on_gpu(const apsmpi_call *c);

/* 1 if the call's input, its output, is GPU memory. */
int apsmpi_device_input(const apsmpi_call *c);
int apsmpi_device_output(const apsmpi_call *c);

/* For a call on the GPU, before the agreement: the block exponents into host array exps
 * (c->nblocks entries; from the device input, or from a host input), and c->packed and
 * c->result (when result_size > 0) pointed at page-locked host buffers of the given sizes,
 * with device buffers of the same sizes behind them. MPI_SUCCESS, or an MPI error code when
 * this rank cannot (the ranks then agree on fp32). */
int apsmpi_device_prepare(apsmpi_call *c, int16_t *exps, size_t packed_size, size_t result_size);

/* After the agreement: whether any rank's call is on a GPU (then GPU errors are agreed at the
 * end of the call), and the question. */
void apsmpi_device_agreed(apsmpi_call *c, int any_on_gpu);
int apsmpi_device_any(const apsmpi_call *c);

/* After the agreement: starts encoding the device input into c->packed in the call's format
 * (c->f: with auto, the agreed rung's, measured as it is encoded), laid out and ordered as segs
 * says (the order the ring needs the segments in). */
void apsmpi_device_start_encode(apsmpi_call *c, const apsmpi_segments *segs);

/* Waits until the encoded elements [first, first+n) are in c->packed. */
void apsmpi_device_wait_encoded(apsmpi_call *c, size_t first, size_t n);

/* Queues the copy to the GPU and the decoding of n elements of encoded data at `in` (inside
 * c->packed or c->result), element 0 being buffer index `first`, into device memory out. */
void apsmpi_device_decode(apsmpi_call *c, const void *in, size_t first, size_t n, float *out);

/* Queues the copy to the GPU of a result message of slot_bytes bytes at `slot` (inside
 * c->result): per-block scales at its start, then the codes of n elements at `codes`; and the
 * decoding of those into device memory out with those scales, element 0 being element
 * `first` of its block of c->block_len. */
void apsmpi_device_decode_slot(apsmpi_call *c, const void *slot, size_t slot_bytes, const void *codes, size_t first,
                               size_t n, float *out);

/* Finishes the call on the GPU: waits for every queued decode, adds the device's counts to
 * the statistics and, on a rung of APSMPI_FORMAT=auto's ladder, to the measure of the
 * contribution (c->measure[0]: what the kernels counted as they encoded, every block), makes
 * the job's device current again. Returns MPI_SUCCESS, or MPI_ERR_OTHER if a GPU operation of
 * the call failed (said once on stderr). */
int apsmpi_device_end(apsmpi_call *c);

/* A host buffer of bytes bytes for the fp32 path of a device call: page-locked, or plain
 * scratch memory when the thread's GPU state could not be set up (NULL: none, or no plugin). */
void *apsmpi_device_fp32_buffer(apsmpi_call *c, size_t bytes);

/* Copies bytes between host and device memory and waits for the copy (on the default stream
 * when the thread's GPU state could not be set up). MPI_SUCCESS or MPI_ERR_OTHER. */
int apsmpi_device_copy(apsmpi_call *c, void *dst, const void *src, size_t bytes);

#endif
