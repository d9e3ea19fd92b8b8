/* device.h: tells GPU buffers from host buffers without loading CUDA, and loads the GPU plugin once one is seen. */
#ifndef APSMPI_DEVICE_H
#define APSMPI_DEVICE_H

#include <stddef.h>
#include "device/device_plugin.h"

/* Loads the plugin at path (APSMPI_DEVICE_PLUGIN), when it is set and not empty (a plugin
 * other than libapsmpi_cuda.so: tests use a mock device). MPI_SUCCESS, or MPI_ERR_OTHER with the reason in err. */
int apsmpi_device_init(const char *path, char *err, size_t errlen);

/* The ordinal of the GPU that owns p, or -1 for memory the host can read. Never loads or
 * initialises CUDA: in a process where CUDA's driver library is not loaded, no pointer can
 * be device memory, and the answer is -1 without any further look. */
int apsmpi_device_of(const void *p);

/* The plugin's operations, loaded on first use (libapsmpi_cuda.so from the directory of
 * libapsmpi.so, else from $pkglibdir, unless APSMPI_DEVICE_PLUGIN names another); NULL,
 * with one error message, if it cannot be loaded. */
const apsmpi_device_ops *apsmpi_device_ops_get(void);

#endif
