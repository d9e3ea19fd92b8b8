/* device.c: finds whether a pointer is GPU memory through the CUDA driver already in the process, and loads the plugin. */
#define _GNU_SOURCE
#include "device/device.h"

#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

/* The driver API's pointer query, with the ABI values of cuda.h written out so that this
 * file builds without CUDA (they are part of CUDA's stable driver ABI). */
typedef int (*cu_pointer_get_attributes_fn)(unsigned int n, int *attributes, void **data, unsigned long long ptr);
enum {
    CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
    CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
    CU_MEMORYTYPE_DEVICE = 2
};

static _Atomic(cu_pointer_get_attributes_fn) cu_query;
static const apsmpi_device_ops *override_ops; /* from APSMPI_DEVICE_PLUGIN */

static pthread_mutex_t plugin_lock = PTHREAD_MUTEX_INITIALIZER;
static const apsmpi_device_ops *plugin_ops;
static int plugin_tried;

/* dlopens path and takes its table; NULL with the reason in err. */
static const apsmpi_device_ops *load_plugin(const char *path, char *err, size_t errlen)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    apsmpi_device_plugin_fn get;
    const apsmpi_device_ops *ops;

    if (h == NULL) {
        snprintf(err, errlen, "cannot load the device plugin %s: %s", path, dlerror());
        return NULL;
    }
    *(void **)&get = dlsym(h, APSMPI_DEVICE_PLUGIN_SYMBOL);
    ops = get ? get() : NULL;
    if (ops == NULL || ops->abi != APSMPI_DEVICE_PLUGIN_ABI) {
        snprintf(err, errlen, "%s is not an apsmpi device plugin of interface version %d", path,
                 APSMPI_DEVICE_PLUGIN_ABI);
        dlclose(h);
        return NULL;
    }
    return ops;
}

int apsmpi_device_init(const char *path, char *err, size_t errlen)
{
    if (path == NULL || *path == '\0' || override_ops != NULL)
        return MPI_SUCCESS;
    override_ops = load_plugin(path, err, errlen);
    if (override_ops == NULL) {
        char why[4096];
        snprintf(why, sizeof why, "%s", err);
        snprintf(err, errlen, "APSMPI_DEVICE_PLUGIN=%s: %s", path, why);
        return MPI_ERR_OTHER;
    }
    plugin_ops = override_ops;
    plugin_tried = 1;
    return MPI_SUCCESS;
}

/* The driver's pointer query if the driver library is already loaded; NULL otherwise. The
 * lookup uses RTLD_NOLOAD, which never loads anything, and is repeated until the driver
 * appears (a job may start CUDA after MPI_Init). */
static cu_pointer_get_attributes_fn driver_query(void)
{
    cu_pointer_get_attributes_fn q = atomic_load_explicit(&cu_query, memory_order_acquire);
    void *h;

    if (q != NULL)
        return q;
    h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (h == NULL)
        return NULL;
    *(void **)&q = dlsym(h, "cuPointerGetAttributes");
    /* the handle is kept: the driver stays loaded for the life of the process anyway */
    if (q != NULL)
        atomic_store_explicit(&cu_query, q, memory_order_release);
    return q;
}

int apsmpi_device_of(const void *p)
{
    cu_pointer_get_attributes_fn query;
    int attrs[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    unsigned int memtype = 0;
    int managed = 0, ordinal = -1;
    void *data[3] = {&memtype, &managed, &ordinal};

    if (override_ops != NULL)
        return override_ops->device_of(p);
    if (p == NULL || (query = driver_query()) == NULL)
        return -1;
    /* an error (a pointer CUDA never saw, a driver not initialised) means host memory */
    if (query(3, attrs, data, (unsigned long long)(uintptr_t)p) != 0)
        return -1;
    return memtype == CU_MEMORYTYPE_DEVICE && !managed && ordinal >= 0 ? ordinal : -1;
}

#define CUDA_PLUGIN "libapsmpi_cuda.so"

/* libapsmpi_cuda.so in the directory that libapsmpi.so was loaded from (the build tree,
 * or a plugin installed beside the library); "" if that directory is unknown. */
static void plugin_beside_library(char *path, size_t len)
{
    Dl_info info;
    const char *slash;

    path[0] = '\0';
    if (dladdr((void *)&apsmpi_device_of, &info) && info.dli_fname && (slash = strrchr(info.dli_fname, '/')))
        snprintf(path, len, "%.*s/" CUDA_PLUGIN, (int)(slash - info.dli_fname), info.dli_fname);
}

/* The CUDA plugin: beside libapsmpi.so, else where plugins are installed ($pkglibdir). NULL
 * with the reasons in err if neither loads. */
static const apsmpi_device_ops *load_cuda_plugin(char *err, size_t errlen)
{
    char path[4096], beside[4352] = "", installed[4352];
    const apsmpi_device_ops *ops;

    plugin_beside_library(path, sizeof path);
    if (path[0] != '\0' && (ops = load_plugin(path, beside, sizeof beside)) != NULL)
        return ops;
#ifdef APSMPI_PKGLIBDIR
    ops = load_plugin(APSMPI_PKGLIBDIR "/" CUDA_PLUGIN, installed, sizeof installed);
#else
    ops = load_plugin(CUDA_PLUGIN, installed, sizeof installed);
#endif
    if (ops == NULL)
        snprintf(err, errlen, "%s%s%s", beside, beside[0] ? "; " : "", installed);
    return ops;
}

const apsmpi_device_ops *apsmpi_device_ops_get(void)
{
    char err[8800];
    const apsmpi_device_ops *ops;

    pthread_mutex_lock(&plugin_lock);
    if (!plugin_tried) {
        plugin_tried = 1;
        plugin_ops = load_cuda_plugin(err, sizeof err);
        if (plugin_ops == NULL)
            APSMPI_ERROR("%s; GPU buffers are handed to MPI uncompressed (build apsmpi with --with-cuda)", err);
    }
    ops = plugin_ops;
    pthread_mutex_unlock(&plugin_lock);
    return ops;
}
