/* device_plugin.h: the GPU operations a device plugin gives the library (the CUDA one: kernels/cuda_plugin.c). */
#ifndef APSMPI_DEVICE_PLUGIN_H
#define APSMPI_DEVICE_PLUGIN_H

/* libapsmpi.so links no GPU library: it loads a plugin, libapsmpi_cuda.so, with dlopen,
 * and only once a buffer of an eligible call is found to be device memory (which needs
 * CUDA to be in the process already, see device.c). The plugin exports one symbol,
 * APSMPI_DEVICE_PLUGIN_SYMBOL, a function that returns this table.
 *
 * Streams and events are opaque handles. Every operation that takes a stream only enqueues
 * work on it; results are there once an event recorded after it, or the stream itself, has
 * been synchronised. Functions returning int return 0 on success, else an error code that
 * error_string describes. Device memory must never be read or written by the host. */

#include <stddef.h>
#include <stdint.h>
#include "core/codec.h"
#include "core/flush_depth.h"
#include "core/format.h"

#define APSMPI_DEVICE_PLUGIN_SYMBOL "apsmpi_device_plugin"
/* The plugin's one exported symbol, in a library built with -fvisibility=hidden. */
#define APSMPI_PLUGIN_EXPORT __attribute__((visibility("default")))
#define APSMPI_DEVICE_PLUGIN_ABI 2 /* 2: encode_measured */

typedef struct apsmpi_device_ops {
    int abi; /* APSMPI_DEVICE_PLUGIN_ABI */
    const char *name;

    /* Number of usable devices (0 when there are none or the driver fails). */
    int (*device_count)(void);
    /* The ordinal of the device whose memory p points to, or -1 when the host can read p
     * (host memory, pinned or managed memory, or memory the driver does not know). */
    int (*device_of)(const void *p);
    /* Makes device dev current for the calling thread; *previous gets the one that was. */
    int (*set_device)(int dev, int *previous);

    void *(*stream_create)(void); /* on the current device; NULL on failure */
    void (*stream_destroy)(void *stream);
    int (*stream_sync)(void *stream);
    void *(*event_create)(void); /* NULL on failure */
    void (*event_destroy)(void *event);
    int (*event_record)(void *event, void *stream);
    int (*event_sync)(void *event);
    int (*stream_wait_event)(void *stream, void *event); /* later work on stream waits for event */

    void *(*device_alloc)(size_t bytes); /* on the current device; NULL on failure */
    void (*device_free)(void *p);
    void *(*host_alloc)(size_t bytes); /* page-locked host memory; NULL on failure */
    void (*host_free)(void *p);
    /* Copies bytes from src to dst, each host or device memory (found from the pointers). */
    int (*copy)(void *dst, const void *src, size_t bytes, void *stream);

    /* The kernels, with the contracts of kernels/apsmpi_kernels.h. */
    int (*block_exponents)(const float *x, size_t n, size_t block_len, int16_t *exps, void *stream);
    int (*encode)(const apsmpi_format *f, const float *in, size_t n, size_t first_index, const int16_t *scales,
                  size_t block_len, apsmpi_rounding r, void *out, unsigned long long *counters, void *stream);
    int (*decode)(const apsmpi_format *f, const void *in, size_t n, size_t first_index, const int16_t *scales,
                  size_t block_len, float *out, void *stream);
    /* An MX format's encode that measures what APSMPI_FORMAT=auto reads, in the same pass
     * (apsmpi_cuda_encode_measured): counters has APSMPI_MEASURE_COUNTERS entries. */
    int (*encode_measured)(const apsmpi_format *f, const float *in, size_t n, size_t first_index, apsmpi_rounding r,
                           const apsmpi_depth_bins *bins, void *out, unsigned long long *counters, void *stream);

    const char *(*error_string)(int err);
} apsmpi_device_ops;

typedef const apsmpi_device_ops *(*apsmpi_device_plugin_fn)(void);

#endif
