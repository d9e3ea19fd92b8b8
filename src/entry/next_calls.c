/* next_calls.c: finds, for each intercepted MPI function, the definition after apsmpi's (next_calls.h), and whether another library's comes before it. */
#define _GNU_SOURCE
#include "entry/next_calls.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "entry/entry_points.h"

static apsmpi_next_calls next;
static pthread_once_t found = PTHREAD_ONCE_INIT;

/* The object (shared library or program) that defines the function at addr; NULL if none. */
static const char *object_of(const void *addr)
{
    Dl_info info;
    return addr != NULL && dladdr(addr, &info) != 0 ? info.dli_fname : NULL;
}

static void find_all(void)
{
    const char *self = object_of((const void *)apsmpi_next_calls_find);
#define APSMPI_NEXT_FIND(name)                                                               \
    {                                                                                        \
        void *f = dlsym(RTLD_NEXT, "MPI_" #name);                                            \
        const char *where = object_of(f);                                                    \
        next.name = f != NULL && (where == NULL || self == NULL || strcmp(where, self) != 0) \
                        ? (__typeof__(&PMPI_##name))f                                        \
                        : PMPI_##name;                                                       \
    }
    APSMPI_INTERCEPTED(APSMPI_NEXT_FIND)
#undef APSMPI_NEXT_FIND
}

const apsmpi_next_calls *apsmpi_next_calls_find(void)
{
    pthread_once(&found, find_all);
    return &next;
}

int apsmpi_next_calls_hidden(char *line, size_t len)
{
    const char *self = object_of((const void *)apsmpi_next_calls_find);
#define APSMPI_NEXT_HIDDEN(name)                                          \
    {                                                                     \
        const char *where = object_of(dlsym(RTLD_DEFAULT, "MPI_" #name)); \
        if (self != NULL && where != NULL && strcmp(where, self) != 0 &&  \
            object_of((const void *)PMPI_##name) != NULL &&               \
            strcmp(where, object_of((const void *)PMPI_##name)) != 0) {   \
            snprintf(line, len, "MPI_" #name " (in %s)", where);          \
            return 1;                                                     \
        }                                                                 \
    }
    APSMPI_INTERCEPTED(APSMPI_NEXT_HIDDEN)
#undef APSMPI_NEXT_HIDDEN
    return 0;
}
