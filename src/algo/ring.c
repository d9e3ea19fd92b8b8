/* ring.c: a pipelined ring reduce-scatter and allgather over point-to-point messages on encoded data. */
#include "algo/ring.h"

#include "entry/runtime.h"
#include "state/comm_info.h"
#include "state/scratch.h"
#include "state/stats.h"

/* The ring runs on the private duplicate of the user's communicator (comm_info.h), so its
 * messages can never match the job's own. */
static int private_comm(MPI_Comm comm, MPI_Comm *out)
{
    const apsmpi_comm_info *info;
    int rc = apsmpi_comm_info_get(comm, &info);

    if (rc == MPI_SUCCESS)
        *out = info->priv;
    return rc;
}

struct ring {
    apsmpi_call *c;
    MPI_Comm comm;
    int size, rank, left, right;
    const int *counts;       /* elements of each segment */
    size_t *first;           /* element index where each segment starts */
    size_t *offset;          /* byte offset of each segment in the packed buffers */
    size_t piece, gelems, gbytes;
    unsigned char *packed;   /* this rank's encoded input; summed into in place */
    unsigned char *staging;  /* received pieces, at the same offsets */
    float *out;
    int allgather;
    size_t encode_seg_pos;   /* the encoding cursor: segment (in encoding order) and piece */
    size_t encode_piece;
    size_t max_pieces;
    MPI_Request *recv_req;   /* one per piece */
    MPI_Request *send_req;   /* two steps' worth: [step parity][piece] */
};

static int mod(int a, int n) { return ((a % n) + n) % n; }

static size_t npieces(const struct ring *r, int seg) { return ((size_t)r->counts[seg] + r->piece - 1) / r->piece; }

static size_t piece_len(const struct ring *r, int seg, size_t j)
{
    size_t rest = (size_t)r->counts[seg] - j * r->piece;
    return rest < r->piece ? rest : r->piece;
}

static unsigned char *piece_at(const struct ring *r, unsigned char *buf, int seg, size_t j)
{
    return buf + r->offset[seg] + j * r->piece / r->gelems * r->gbytes;
}

static int piece_groups(const struct ring *r, int seg, size_t j)
{
    return (int)((piece_len(r, seg, j) + r->gelems - 1) / r->gelems);
}

/* Segments are encoded in the order the ring needs them: the one sent first, rank-1, then
 * rank-2, rank-3, ... as their partial sums arrive. */
static int encode_order_seg(const struct ring *r, size_t pos) { return mod(r->rank - 1 - (int)pos, r->size); }

/* Encodes the next piece in encoding order; 0 when everything is encoded. */
static int encode_next(struct ring *r)
{
    int seg;

    while (r->encode_seg_pos < (size_t)r->size &&
           r->encode_piece >= npieces(r, encode_order_seg(r, r->encode_seg_pos))) {
        r->encode_seg_pos++;
        r->encode_piece = 0;
    }
    if (r->encode_seg_pos == (size_t)r->size)
        return 0;
    seg = encode_order_seg(r, r->encode_seg_pos);
    apsmpi_call_encode(r->c, r->first[seg] + r->encode_piece * r->piece, piece_len(r, seg, r->encode_piece),
                       piece_at(r, r->packed, seg, r->encode_piece));
    r->encode_piece++;
    return 1;
}

/* Makes sure piece j of seg is encoded. */
static void ensure_encoded(struct ring *r, int seg, size_t j)
{
    size_t pos = (size_t)mod(r->rank - 1 - seg, r->size);
    while (r->encode_seg_pos < pos || (r->encode_seg_pos == pos && r->encode_piece <= j))
        if (!encode_next(r))
            break;
}

/* Waits for req, encoding pieces needed later while the bytes are on their way. */
static int wait_working(struct ring *r, MPI_Request *req)
{
    int done = 0, rc;
    for (;;) {
        rc = PMPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || done)
            return rc;
        if (!encode_next(r))
            return PMPI_Wait(req, MPI_STATUS_IGNORE);
    }
}

static int post_recv(struct ring *r, int step, size_t j)
{
    int seg = mod(r->rank - step - 2, r->size);
    return PMPI_Irecv(piece_at(r, r->staging, seg, j), piece_groups(r, seg, j), apsmpi_rt.group_type, r->left,
                      (int)j, r->comm, &r->recv_req[j]);
}

/* Sends piece j of step `step` (segment rank-step-1) from the buffer buf (packed or staging),
 * after the send two steps ago that used the same slot. */
static int post_send(struct ring *r, int step, size_t j, unsigned char *buf)
{
    int seg = mod(r->rank - step - 1, r->size);
    MPI_Request *slot = &r->send_req[(size_t)(step & 1) * r->max_pieces + j];
    int rc = PMPI_Wait(slot, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Isend(piece_at(r, buf, seg, j), piece_groups(r, seg, j), apsmpi_rt.group_type, r->right,
                        (int)j, r->comm, slot);
    return rc;
}

/* Handles piece j received at `step`: sums it in (first half) or takes it as final (second
 * half), sends it on at the next step, and decodes what is final. */
static int on_piece(struct ring *r, int step, size_t j, int last_step)
{
    int seg = mod(r->rank - step - 2, r->size), reduce_phase = step < r->size - 1, rc = MPI_SUCCESS;
    int final = !reduce_phase || seg == r->rank;
    unsigned char *holder = r->staging; /* the buffer that holds the piece's value now */
    float *dst;

    if (reduce_phase) {
        uint64_t t0 = apsmpi_now_ns();
        ensure_encoded(r, seg, j);
        apsmpi_sum_packed(apsmpi_rt.codec, piece_at(r, r->staging, seg, j), piece_at(r, r->packed, seg, j),
                          (size_t)piece_groups(r, seg, j));
        r->c->codec_ns += apsmpi_now_ns() - t0;
        holder = r->packed;
    }
    if (step < last_step)
        rc = post_send(r, step + 1, j, holder);
    if (final) {
        dst = r->allgather ? r->out + r->first[seg] : r->out;
        apsmpi_call_decode(r->c, piece_at(r, holder, seg, j), r->first[seg] + j * r->piece, piece_len(r, seg, j),
                           dst + j * r->piece);
    }
    return rc;
}

size_t apsmpi_packed_segments(const int *counts, int nranks)
{
    size_t total = 0;
    for (int i = 0; i < nranks; i++)
        total += apsmpi_packed_bytes((size_t)counts[i]);
    return total;
}

/* The piece size the ring uses: message tags are piece numbers, so pieces grow until every
 * segment has fewer than 16384 of them, well below the smallest MPI_TAG_UB, 32767. */
static size_t ring_piece(const int *counts, int nranks, size_t piece)
{
    for (int i = 0; i < nranks; i++)
        while ((size_t)counts[i] / piece >= 16384)
            piece *= 2;
    return piece;
}

static size_t ring_max_pieces(const int *counts, int nranks, size_t piece)
{
    size_t most = 1;
    for (int i = 0; i < nranks; i++)
        if (((size_t)counts[i] + piece - 1) / piece > most)
            most = ((size_t)counts[i] + piece - 1) / piece;
    return most;
}

void *apsmpi_ring_reserve(const int *counts, int nranks, size_t piece)
{
    size_t p = ring_piece(counts, nranks, piece);
    return apsmpi_scratch(APSMPI_SCRATCH_RING, 2 * (size_t)nranks * sizeof(size_t) +
                                                   3 * ring_max_pieces(counts, nranks, p) * sizeof(MPI_Request));
}

static int ring_setup(struct ring *r, apsmpi_call *c, const int *counts, size_t piece, MPI_Comm comm)
{
    const apsmpi_format *f = &apsmpi_rt.cfg.format;
    size_t n = (size_t)c->nranks, *sizes;
    unsigned char *mem = apsmpi_ring_reserve(counts, c->nranks, piece);

    r->c = c;
    r->size = c->nranks;
    r->rank = c->rank;
    r->left = mod(r->rank - 1, r->size);
    r->right = mod(r->rank + 1, r->size);
    r->counts = counts;
    r->piece = ring_piece(counts, r->size, piece);
    r->gelems = apsmpi_group_elems(f);
    r->gbytes = apsmpi_group_bytes(f);
    r->packed = c->packed;
    r->staging = c->result;
    r->max_pieces = ring_max_pieces(counts, r->size, r->piece);
    if (mem == NULL) /* not after apsmpi_ring_reserve succeeded for the same call */
        return MPI_ERR_NO_MEM;
    sizes = (size_t *)(void *)mem;
    r->first = sizes;
    r->offset = sizes + n;
    r->recv_req = (MPI_Request *)(void *)(sizes + 2 * n);
    r->send_req = r->recv_req + r->max_pieces;
    for (size_t i = 0; i < 3 * r->max_pieces; i++)
        r->recv_req[i] = MPI_REQUEST_NULL;
    for (int i = 0; i < r->size; i++) {
        r->first[i] = i ? r->first[i - 1] + (size_t)counts[i - 1] : 0;
        r->offset[i] = i ? r->offset[i - 1] + apsmpi_packed_bytes((size_t)counts[i - 1]) : 0;
    }
    return private_comm(comm, &r->comm);
}

int apsmpi_ring_run(apsmpi_call *c, const int *counts, int allgather, size_t piece, float *out, MPI_Comm comm)
{
    struct ring r = {.out = out, .allgather = allgather};
    int rc = ring_setup(&r, c, counts, piece, comm), last_step = (allgather ? 2 : 1) * (c->nranks - 1) - 1;

    /* step 0 sends segment rank-1 as it is encoded, and receives rank-2 */
    for (size_t j = 0; rc == MPI_SUCCESS && j < npieces(&r, mod(r.rank - 2, r.size)); j++)
        rc = post_recv(&r, 0, j);
    for (size_t j = 0; rc == MPI_SUCCESS && j < npieces(&r, r.left); j++) {
        ensure_encoded(&r, r.left, j);
        rc = post_send(&r, 0, j, r.packed);
    }
    for (int step = 0; rc == MPI_SUCCESS && step <= last_step; step++) {
        size_t now = npieces(&r, mod(r.rank - step - 2, r.size));
        size_t next = step < last_step ? npieces(&r, mod(r.rank - step - 3, r.size)) : 0;
        for (size_t j = 0; rc == MPI_SUCCESS && j < now; j++) {
            rc = wait_working(&r, &r.recv_req[j]);
            if (rc == MPI_SUCCESS)
                rc = on_piece(&r, step, j, last_step);
            if (rc == MPI_SUCCESS && j < next)
                rc = post_recv(&r, step + 1, j);
        }
        for (size_t j = now; rc == MPI_SUCCESS && j < next; j++)
            rc = post_recv(&r, step + 1, j);
    }
    if (rc == MPI_SUCCESS)
        rc = PMPI_Waitall((int)(2 * r.max_pieces), r.send_req, MPI_STATUSES_IGNORE);
    return rc;
}
