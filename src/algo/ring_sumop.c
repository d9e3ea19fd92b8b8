/* ring_sumop.c: the libffi closure that sums packed groups of the job's format as an MPI op, made only when the ring is chosen. */
#include "algo/ring_sumop.h"

#include <ffi.h>

#include "core/log.h"
#include "state/stats.h"

/* Made once at MPI_Init (one thread), read-only until MPI_Finalize frees it. */
static struct {
    ffi_closure *closure;
    MPI_Op op;
    MPI_Datatype type;
} sumop = {NULL, MPI_OP_NULL, MPI_DATATYPE_NULL};

static ffi_cif user_function_cif;
static ffi_type *user_function_args[4] = {&ffi_type_pointer, &ffi_type_pointer, &ffi_type_pointer, &ffi_type_pointer};

/* The body of the op: MPI passes (invec, inoutvec, int *len, MPI_Datatype *type). */
static void sum_groups(ffi_cif *cif, void *ret, void **args, void *codec)
{
    void *in = *(void **)args[0];
    void *inout = *(void **)args[1];
    int len = **(int **)args[2];
    uint64_t t0 = apsmpi_now_ns();

    apsmpi_sum_packed(codec, in, inout, (size_t)len);
    apsmpi_stats_add(APSMPI_STAT_CODEC_NS, apsmpi_now_ns() - t0);
}

int apsmpi_ring_sumop_create(const apsmpi_codec *codec)
{
    const apsmpi_format *f = apsmpi_codec_format(codec);
    void *code;
    int rc;

    if (ffi_prep_cif(&user_function_cif, FFI_DEFAULT_ABI, 4, &ffi_type_void, user_function_args) != FFI_OK)
        return MPI_ERR_INTERN;
    sumop.closure = ffi_closure_alloc(sizeof(ffi_closure), &code);
    if (sumop.closure == NULL)
        return MPI_ERR_NO_MEM;
    if (ffi_prep_closure_loc(sumop.closure, &user_function_cif, sum_groups, (void *)codec, code) != FFI_OK) {
        ffi_closure_free(sumop.closure);
        sumop.closure = NULL;
        return MPI_ERR_INTERN;
    }
    rc = PMPI_Type_contiguous((int)apsmpi_group_bytes(f), MPI_BYTE, &sumop.type);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_commit(&sumop.type);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Op_create((MPI_User_function *)code, 1, &sumop.op);
    if (rc != MPI_SUCCESS) {
        apsmpi_ring_sumop_free();
        return rc;
    }
    APSMPI_DEBUG("sum op for %s: groups of %zu bytes", f->name, apsmpi_group_bytes(f));
    return MPI_SUCCESS;
}

MPI_Op apsmpi_ring_sumop(void) { return sumop.op; }

MPI_Datatype apsmpi_ring_group_type(void) { return sumop.type; }

void apsmpi_ring_sumop_free(void)
{
    if (sumop.op != MPI_OP_NULL)
        PMPI_Op_free(&sumop.op);
    if (sumop.type != MPI_DATATYPE_NULL)
        PMPI_Type_free(&sumop.type);
    if (sumop.closure != NULL)
        ffi_closure_free(sumop.closure);
    sumop.closure = NULL;
    sumop.op = MPI_OP_NULL;
    sumop.type = MPI_DATATYPE_NULL;
}
