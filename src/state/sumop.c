/* sumop.c: builds, caches and frees the MPI ops (libffi closures) that sum packed groups of a format. */
#include "state/sumop.h"

#include <ffi.h>
#include <pthread.h>

#include "core/log.h"
#include "state/stats.h"

#define MAX_SUMOPS 16

struct sumop {
    const apsmpi_codec *codec;
    ffi_closure *closure;
    MPI_Op op;
    MPI_Datatype type;
};

static struct sumop sumops[MAX_SUMOPS];
static int nsumops;
static pthread_mutex_t sumop_lock = PTHREAD_MUTEX_INITIALIZER;
static ffi_cif user_function_cif;
static ffi_type *user_function_args[4] = {&ffi_type_pointer, &ffi_type_pointer, &ffi_type_pointer, &ffi_type_pointer};

/* The body of every op: MPI passes (invec, inoutvec, int *len, MPI_Datatype *type). */
static void sum_groups(ffi_cif *cif, void *ret, void **args, void *codec)
{
    void *in = *(void **)args[0];
    void *inout = *(void **)args[1];
    int len = **(int **)args[2];
    uint64_t t0 = apsmpi_now_ns();

    apsmpi_sum_packed(codec, in, inout, (size_t)len);
    apsmpi_stats_add(APSMPI_STAT_CODEC_NS, apsmpi_now_ns() - t0);
}

static int sumop_create(const apsmpi_codec *codec, struct sumop *s)
{
    const apsmpi_format *f = apsmpi_codec_format(codec);
    void *code;
    int rc;

    if (user_function_cif.nargs == 0 &&
        ffi_prep_cif(&user_function_cif, FFI_DEFAULT_ABI, 4, &ffi_type_void, user_function_args) != FFI_OK)
        return MPI_ERR_INTERN;
    s->closure = ffi_closure_alloc(sizeof(ffi_closure), &code);
    if (s->closure == NULL)
        return MPI_ERR_NO_MEM;
    if (ffi_prep_closure_loc(s->closure, &user_function_cif, sum_groups, (void *)codec, code) != FFI_OK) {
        ffi_closure_free(s->closure);
        return MPI_ERR_INTERN;
    }
    rc = PMPI_Type_contiguous((int)apsmpi_group_bytes(f), MPI_BYTE, &s->type);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_commit(&s->type);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Op_create((MPI_User_function *)code, 1, &s->op);
    if (rc != MPI_SUCCESS) {
        ffi_closure_free(s->closure);
        return rc;
    }
    s->codec = codec;
    APSMPI_DEBUG("sum op for %s: groups of %zu bytes", f->name, apsmpi_group_bytes(f));
    return MPI_SUCCESS;
}

int apsmpi_sumop_get(const apsmpi_codec *codec, MPI_Op *op, MPI_Datatype *type)
{
    int rc = MPI_SUCCESS, i;

    pthread_mutex_lock(&sumop_lock);
    for (i = 0; i < nsumops && sumops[i].codec != codec; i++)
        ;
    if (i == nsumops) {
        if (nsumops == MAX_SUMOPS)
            rc = MPI_ERR_INTERN;
        else if ((rc = sumop_create(codec, &sumops[i])) == MPI_SUCCESS)
            nsumops++;
    }
    if (rc == MPI_SUCCESS) {
        *op = sumops[i].op;
        *type = sumops[i].type;
    }
    pthread_mutex_unlock(&sumop_lock);
    return rc;
}

void apsmpi_sumop_free_all(void)
{
    pthread_mutex_lock(&sumop_lock);
    for (int i = 0; i < nsumops; i++) {
        PMPI_Op_free(&sumops[i].op);
        PMPI_Type_free(&sumops[i].type);
        ffi_closure_free(sumops[i].closure);
    }
    nsumops = 0;
    pthread_mutex_unlock(&sumop_lock);
}
