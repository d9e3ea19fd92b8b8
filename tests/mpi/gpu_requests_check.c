/* gpu_requests_check.c: requests on device buffers started in different orders on two communicators (even ranks d1 then d2, odd ranks d2 then d1): legal MPI, so no hang, at every thread level; each result the blocking call's bits (tests/mpi/device_mock.sh). */
/* Usage: gpu_requests_check PLUGIN [--count N] [--single]. The buffers are device memory of
 * PLUGIN (the mock device on the CPU in make check). MPI_THREAD_MULTIPLE, or with --single
 * plain MPI_Init. With MPI 4's persistent collectives, the same with MPI_Allreduce_init and
 * MPI_Start, twice. Prints "gpu_requests_check: ok" on rank 0. */
#include "build_config.h"

#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/device_plugin.h"

static const apsmpi_device_ops *dev;
static int rank, count = 300001;

static void fail(const char *what)
{
    fprintf(stderr, "gpu_requests_check[%d]: FAILED: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void *device_copy_of(const float *h, size_t bytes)
{
    void *d = dev->device_alloc(bytes);
    if (d == NULL || dev->copy(d, h, bytes, NULL) || dev->stream_sync(NULL))
        fail("device memory or a copy to it");
    return d;
}

static void to_host(float *h, const void *d, size_t bytes)
{
    if (dev->copy(h, d, bytes, NULL) || dev->stream_sync(NULL))
        fail("a copy from the device");
}

/* The two requests' results (device) against the blocking call's on each communicator. */
static void check(void *const out[2], const void *in, MPI_Comm const d[2], const char *what)
{
    size_t bytes = (size_t)count * sizeof(float);
    float *got = malloc(bytes), *want = malloc(bytes);
    void *ref = dev->device_alloc(bytes);

    for (int k = 0; k < 2; k++) {
        if (ref == NULL || MPI_Allreduce(in, ref, count, MPI_FLOAT, MPI_SUM, d[k]) != MPI_SUCCESS)
            fail("the blocking reference");
        to_host(got, out[k], bytes);
        to_host(want, ref, bytes);
        if (memcmp(got, want, bytes) != 0)
            fail(what);
    }
    dev->device_free(ref);
    free(got);
    free(want);
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE, single = 0;
    size_t bytes;
    float *h;
    void *in, *out[2];
    MPI_Comm d[2];
    MPI_Request req[2];

    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--single") == 0)
            single = 1;
    if (single)
        MPI_Init(&argc, &argv);
    else
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2)
        fail("usage: gpu_requests_check PLUGIN [--count N] [--single]");
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--count") == 0 && i + 1 < argc)
            count = atoi(argv[++i]);
        else if (strcmp(argv[i], "--single") != 0)
            fail("unknown option");
    if (!single && provided != MPI_THREAD_MULTIPLE)
        fail("the MPI does not give MPI_THREAD_MULTIPLE");
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    apsmpi_device_plugin_fn get = lib ? (apsmpi_device_plugin_fn)dlsym(lib, APSMPI_DEVICE_PLUGIN_SYMBOL) : NULL;
    if ((dev = get ? get() : NULL) == NULL)
        fail("not a device plugin");
    bytes = (size_t)count * sizeof(float);
    h = malloc(bytes);
    for (int i = 0; i < count; i++)
        h[i] = (float)((i * 7 + rank * 13) % 29 - 14) * (1.0f + (float)(i % 5) * 0.25f);
    in = device_copy_of(h, bytes);
    out[0] = device_copy_of(h, bytes);
    out[1] = device_copy_of(h, bytes);
    MPI_Comm_dup(MPI_COMM_WORLD, &d[0]);
    MPI_Comm_dup(MPI_COMM_WORLD, &d[1]);

    for (int k = 0; k < 2; k++) {
        int which = rank % 2 == 0 ? k : 1 - k;
        MPI_Iallreduce(in, out[which], count, MPI_FLOAT, MPI_SUM, d[which], &req[which]);
    }
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    check(out, in, d, "crossed MPI_Iallreduce: a request's result is the blocking call's");
#ifdef APSMPI_HAVE_PERSISTENT_REDUCTIONS
    for (int k = 0; k < 2; k++)
        MPI_Allreduce_init(in, out[k], count, MPI_FLOAT, MPI_SUM, d[k], MPI_INFO_NULL, &req[k]);
    for (int round = 0; round < 2; round++) {
        for (int k = 0; k < 2; k++) {
            int which = rank % 2 == 0 ? k : 1 - k;
            MPI_Start(&req[which]);
        }
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        check(out, in, d, "crossed MPI_Start of persistent requests: the blocking call's bits");
    }
    for (int k = 0; k < 2; k++)
        MPI_Request_free(&req[k]);
#endif
    MPI_Comm_free(&d[0]);
    MPI_Comm_free(&d[1]);
    dev->device_free(in);
    dev->device_free(out[0]);
    dev->device_free(out[1]);
    free(h);
    if (rank == 0)
        printf("gpu_requests_check: ok\n");
    MPI_Finalize();
    return 0;
}
