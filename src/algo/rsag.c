/* rsag.c: direct-exchange reduce-scatter of encoded contributions, fp32 sums at the owners, allgather of the encoded sums. */
#include "algo/rsag.h"

#include <string.h>

#include "algo/pieces.h"
#include "algo/ring_plan.h"
#include "call/device_steps.h"
#include "core/own_scales.h"
#include "core/packed_layout.h"
#include "state/private_comm.h"
#include "state/scratch.h"
#include "state/stats.h"

/* Tags: contributions carry the piece number, results the piece number plus this. */
enum { TAG_RESULT = APSMPI_MAX_PIECES };

struct rsag {
    apsmpi_call *c;
    const apsmpi_format *f;
    MPI_Comm comm; /* the private duplicate of the call's communicator */
    int tag_base;  /* this call's range of tags on it */
    int size, rank, allgather;
    const int *counts;
    size_t piece, block_len, gelems, gbytes;
    size_t *first;  /* per segment: its first element */
    size_t *offset; /* per segment: its byte offset in packed */
    size_t *gp0;    /* per segment: the index of its first piece among all pieces */
    int *order;     /* segments in encoding order: rank-1, rank-2, ..., rank */
    size_t *slot;   /* per piece: the byte offset of its result message in results */
    size_t own_pieces, own_bytes;
    unsigned char *packed;  /* this rank's encoded input, all segments */
    unsigned char *staging; /* contributions to this rank's segment from rank+1, rank+2, ... */
    unsigned char *results; /* the encoded result messages, one slot per piece */
    float *sum, *tmp;       /* fp32: the sum (one piece, or the whole segment without allgather), a decoded piece */
    float *out;
    size_t enc_pos, enc_piece;    /* the encoding cursor: segment position (rank-1-pos) and piece */
    MPI_Request *c_recv, *r_send; /* [k-1][j]: contribution from / result to rank+k, rank-k */
    MPI_Request *c_send, *r_recv; /* per piece of every segment */
};

static int mod(int a, int n) { return ((a % n) + n) % n; }

static size_t align16(size_t b) { return (b + 15) / 16 * 16; }

/* Scale entries a result message reserves: enough for any piece of len elements. */
static size_t scale_room(size_t len, size_t block_len) { return len / block_len + 2; }

static size_t slot_bytes(const apsmpi_format *f, size_t len, size_t block_len)
{
    return align16(align16(scale_room(len, block_len) * sizeof(int16_t)) + apsmpi_packed_bytes(f, len));
}

static size_t total_pieces(const int *counts, int nranks, size_t piece)
{
    size_t total = 0;
    for (int s = 0; s < nranks; s++)
        total += apsmpi_pieces_of((size_t)counts[s], piece);
    return total;
}

size_t apsmpi_rsag_result_bytes(const apsmpi_format *f, const int *counts, int nranks, int rank, size_t piece,
                                size_t block_len)
{
    size_t bytes = align16((size_t)(nranks - 1) * apsmpi_packed_bytes(f, (size_t)counts[rank]));

    piece = apsmpi_piece_size(counts, nranks, piece);
    for (int s = 0; s < nranks; s++)
        for (size_t j = 0; j < apsmpi_pieces_of((size_t)counts[s], piece); j++)
            bytes += slot_bytes(f, apsmpi_piece_len((size_t)counts[s], piece, j), block_len);
    return bytes;
}

/* Floats of the fp32 sum area: one piece and a decoded piece, or the whole segment too. */
static size_t sum_floats(const int *counts, int rank, size_t piece, int allgather)
{
    return 2 * piece + (allgather ? 0 : (size_t)counts[rank]);
}

static size_t book_bytes(const int *counts, int nranks, int rank, size_t piece)
{
    size_t all = total_pieces(counts, nranks, piece), own = apsmpi_pieces_of((size_t)counts[rank], piece);
    return (3 * (size_t)nranks + all) * sizeof(size_t) +
           (2 * (size_t)(nranks - 1) * own + 2 * all) * sizeof(MPI_Request) + (size_t)nranks * sizeof(int);
}

void *apsmpi_rsag_reserve(const int *counts, int nranks, int rank, size_t piece, int allgather)
{
    piece = apsmpi_piece_size(counts, nranks, piece);
    if (apsmpi_scratch(APSMPI_SCRATCH_SUM, sum_floats(counts, rank, piece, allgather) * sizeof(float)) == NULL)
        return NULL;
    return apsmpi_scratch(APSMPI_SCRATCH_RSAG, book_bytes(counts, nranks, rank, piece));
}

static int setup(struct rsag *r, apsmpi_call *c, const int *counts, size_t piece)
{
    const apsmpi_format *f = &c->rt->cfg.format;
    size_t n = (size_t)c->nranks, all, at = 0, gp = 0;
    unsigned char *mem;

    r->c = c;
    r->f = f;
    r->size = c->nranks;
    r->rank = c->rank;
    r->counts = counts;
    r->piece = apsmpi_piece_size(counts, r->size, piece);
    r->block_len = c->block_len;
    r->gelems = apsmpi_group_elems(f);
    r->gbytes = apsmpi_group_bytes(f);
    all = total_pieces(counts, r->size, r->piece);
    r->own_pieces = apsmpi_pieces_of((size_t)counts[r->rank], r->piece);
    r->own_bytes = apsmpi_packed_bytes(f, (size_t)counts[r->rank]);
    mem = apsmpi_rsag_reserve(counts, r->size, r->rank, piece, r->allgather);
    r->sum = apsmpi_scratch(APSMPI_SCRATCH_SUM, 0);
    if (mem == NULL || r->sum == NULL) /* not after apsmpi_rsag_reserve succeeded for the same call */
        return MPI_ERR_NO_MEM;
    r->tmp = r->sum + (r->allgather ? r->piece : (size_t)counts[r->rank]);
    r->first = (size_t *)(void *)mem;
    r->offset = r->first + n;
    r->gp0 = r->offset + n;
    r->slot = r->gp0 + n;
    r->c_recv = (MPI_Request *)(void *)(r->slot + all);
    r->r_send = r->c_recv + (n - 1) * r->own_pieces;
    r->c_send = r->r_send + (n - 1) * r->own_pieces;
    r->r_recv = r->c_send + all;
    r->order = (int *)(void *)(r->r_recv + all);
    for (size_t i = 0; i < 2 * (n - 1) * r->own_pieces + 2 * all; i++)
        r->c_recv[i] = MPI_REQUEST_NULL;
    r->packed = c->packed;
    r->staging = c->result;
    r->results = r->staging + align16((n - 1) * r->own_bytes);
    apsmpi_packed_segments(f, counts, r->size, r->first, r->offset);
    for (size_t s = 0; s < n; s++) {
        r->order[s] = apsmpi_ring_encode_segment(r->rank, r->size, (int)s);
        r->gp0[s] = gp;
        for (size_t j = 0; j < apsmpi_pieces_of((size_t)counts[s], r->piece); j++, gp++) {
            r->slot[gp] = at;
            at += slot_bytes(f, apsmpi_piece_len((size_t)counts[s], r->piece, j), r->block_len);
        }
    }
    apsmpi_call_start(c, &(apsmpi_segments){r->size, counts, r->first, r->offset, r->order});
    return apsmpi_private_comm_call(c->comm, &r->comm, &r->tag_base);
}

static size_t len_of(const struct rsag *r, int seg, size_t j)
{
    return apsmpi_piece_len((size_t)r->counts[seg], r->piece, j);
}

static size_t pieces_of(const struct rsag *r, int seg) { return apsmpi_pieces_of((size_t)r->counts[seg], r->piece); }

/* Byte offset of piece j inside a segment's encoded bytes. */
static size_t piece_offset(const struct rsag *r, size_t j) { return j * r->piece / r->gelems * r->gbytes; }

/* The segment at position pos of the encoding (and sending) order: rank-1, rank-2, ..., rank. */
static int enc_seg(const struct rsag *r, size_t pos) { return r->order[pos]; }

/* Posts one message of the call on its private communicator. */
static int send_message(struct rsag *r, const void *buf, size_t bytes, int to, int tag, MPI_Request *req)
{
    int rc = apsmpi_call_injected_error(r->c, APSMPI_FAULT_RSAG_SEND);
    return rc != MPI_SUCCESS ? rc : PMPI_Isend(buf, (int)bytes, MPI_BYTE, to, r->tag_base + tag, r->comm, req);
}

/* Encodes the next piece of this rank's contributions and sends it to its owner; 0 when all
 * are encoded. */
static int encode_next(struct rsag *r, int *rc)
{
    int seg;
    unsigned char *at;

    while (r->enc_pos < (size_t)r->size && r->enc_piece >= pieces_of(r, enc_seg(r, r->enc_pos))) {
        r->enc_pos++;
        r->enc_piece = 0;
    }
    if (r->enc_pos == (size_t)r->size)
        return 0;
    seg = enc_seg(r, r->enc_pos);
    at = r->packed + r->offset[seg] + piece_offset(r, r->enc_piece);
    apsmpi_call_encode(r->c, r->first[seg] + r->enc_piece * r->piece, len_of(r, seg, r->enc_piece), at);
    if (seg != r->rank && *rc == MPI_SUCCESS)
        *rc = send_message(r, at, apsmpi_packed_bytes(r->f, len_of(r, seg, r->enc_piece)), seg, (int)r->enc_piece,
                           &r->c_send[r->gp0[seg] + r->enc_piece]);
    r->enc_piece++;
    return 1;
}

/* Waits for req, encoding and sending contributions while the bytes are on their way. */
static int wait_working(struct rsag *r, MPI_Request *req)
{
    int done = 0, rc = MPI_SUCCESS;
    for (;;) {
        if (rc == MPI_SUCCESS)
            rc = PMPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || done)
            return rc;
        if (!encode_next(r, &rc))
            return rc == MPI_SUCCESS ? PMPI_Wait(req, MPI_STATUS_IGNORE) : rc;
    }
}

static int encode_all(struct rsag *r)
{
    int rc = MPI_SUCCESS;
    while (encode_next(r, &rc))
        ;
    return rc;
}

static int post_receives(struct rsag *r)
{
    int rc = MPI_SUCCESS;

    for (int k = 1; k < r->size; k++) {
        int from = mod(r->rank + k, r->size);
        for (size_t j = 0; rc == MPI_SUCCESS && j < r->own_pieces; j++)
            rc = PMPI_Irecv(r->staging + (size_t)(k - 1) * r->own_bytes + piece_offset(r, j),
                            (int)apsmpi_packed_bytes(r->f, len_of(r, r->rank, j)), MPI_BYTE, from, r->tag_base + (int)j,
                            r->comm, &r->c_recv[(size_t)(k - 1) * r->own_pieces + j]);
        if (!r->allgather)
            continue;
        for (size_t j = 0; rc == MPI_SUCCESS && j < pieces_of(r, from); j++) {
            size_t gp = r->gp0[from] + j;
            rc = PMPI_Irecv(r->results + r->slot[gp], (int)slot_bytes(r->f, len_of(r, from, j), r->block_len), MPI_BYTE,
                            from, r->tag_base + TAG_RESULT + (int)j, r->comm, &r->r_recv[gp]);
        }
    }
    return rc;
}

/* Elements decoded at a time before they are added: small enough to stay in cache, a
 * multiple of every packing group. */
enum { ADD_SLICE = 2048 };

/* Decodes n encoded elements at `in`, element 0 being buffer index first, with the agreed
 * scales into fp32 dst (host memory), adding to it unless `set`. */
static void add_decoded(struct rsag *r, const unsigned char *in, size_t first, size_t n, float *dst, int set)
{
    apsmpi_scales sc = {r->c->scales, r->c->block_len};
    uint64_t t0 = apsmpi_now_ns();

    if (set)
        apsmpi_decode(r->c->rt->codec, in, n, first, sc, dst);
    for (size_t at = 0; !set && at < n; at += ADD_SLICE) {
        size_t len = n - at < ADD_SLICE ? n - at : ADD_SLICE;
        apsmpi_decode(r->c->rt->codec, in + at / r->gelems * r->gbytes, len, first + at, sc, r->tmp);
        for (size_t i = 0; i < len; i++)
            dst[at + i] += r->tmp[i];
    }
    r->c->codec_ns += apsmpi_now_ns() - t0;
}

/* The fp32 sum of piece j of this rank's segment into dst: the contributions of rank+1,
 * rank+2, ... as they arrive, then this rank's own (encoded and decoded like the others). */
static int sum_piece(struct rsag *r, size_t j, float *dst)
{
    size_t first = r->first[r->rank] + j * r->piece, len = len_of(r, r->rank, j);
    int rc = MPI_SUCCESS;

    for (int k = 1; rc == MPI_SUCCESS && k < r->size; k++) {
        rc = wait_working(r, &r->c_recv[(size_t)(k - 1) * r->own_pieces + j]);
        if (rc == MPI_SUCCESS)
            add_decoded(r, r->staging + (size_t)(k - 1) * r->own_bytes + piece_offset(r, j), first, len, dst, k == 1);
    }
    /* this rank's own piece is last in its encoding order: everything else is encoded by now */
    while (rc == MPI_SUCCESS && r->enc_pos < (size_t)r->size - 1)
        encode_next(r, &rc);
    while (rc == MPI_SUCCESS && r->enc_pos == (size_t)r->size - 1 && r->enc_piece <= j)
        encode_next(r, &rc);
    if (rc == MPI_SUCCESS)
        add_decoded(r, r->packed + r->offset[r->rank] + piece_offset(r, j), first, len, dst, r->size == 1);
    return rc;
}

/* The scales at the start of a result slot, and the codes after them. */
static int16_t *slot_scales(const struct rsag *r, size_t gp) { return (int16_t *)(void *)(r->results + r->slot[gp]); }

static unsigned char *slot_codes(const struct rsag *r, size_t gp, size_t len)
{
    return r->results + r->slot[gp] + align16(scale_room(len, r->block_len) * sizeof(int16_t));
}

/* Decodes the result message of piece j of segment seg into the output. */
static void decode_result(struct rsag *r, int seg, size_t j)
{
    size_t gp = r->gp0[seg] + j, first = r->first[seg] + j * r->piece, len = len_of(r, seg, j);
    apsmpi_scales sc = {slot_scales(r, gp), r->block_len};
    uint64_t t0 = apsmpi_now_ns();

    if (r->c->out_dev)
        apsmpi_device_decode_slot(r->c, r->results + r->slot[gp], slot_bytes(r->f, len, r->block_len),
                                  slot_codes(r, gp, len), first % r->block_len, len, r->out + first);
    else
        apsmpi_decode(r->c->rt->codec, slot_codes(r, gp, len), len, first % r->block_len, sc, r->out + first);
    r->c->codec_ns += apsmpi_now_ns() - t0;
}

/* Encodes the fp32 sum of this rank's piece j once, with scales from its own values, sends
 * the message to every other rank and decodes it here too. */
static int share_piece(struct rsag *r, size_t j)
{
    const apsmpi_format *f = r->f;
    size_t gp = r->gp0[r->rank] + j, first = r->first[r->rank] + j * r->piece, len = len_of(r, r->rank, j);
    size_t offset = first % r->block_len, room = scale_room(len, r->block_len);
    int16_t *scales = slot_scales(r, gp);
    apsmpi_rounding rounding = r->c->rounding;
    apsmpi_scales sc = {scales, r->block_len};
    uint64_t t0 = apsmpi_now_ns();
    int rc = MPI_SUCCESS;

    memset(scales, 0, align16(room * sizeof *scales));
    if (r->c->rt->cfg.scaling != APSMPI_SCALING_NONE)
        apsmpi_own_scales(r->sum, len, offset, r->block_len, f, scales);
    /* the codec keys random streams by element index, here counted from the piece's block:
     * a seed of the piece's own keeps pieces independent */
    rounding.seed ^= ((uint64_t)first + 1) * 0xbf58476d1ce4e5b9ull;
    apsmpi_encode(r->c->rt->codec, r->sum, len, offset, sc, rounding, slot_codes(r, gp, len), NULL);
    r->c->codec_ns += apsmpi_now_ns() - t0;
    for (int k = 1; rc == MPI_SUCCESS && k < r->size; k++)
        rc = send_message(r, r->results + r->slot[gp], slot_bytes(r->f, len, r->block_len), mod(r->rank - k, r->size),
                          TAG_RESULT + (int)j, &r->r_send[(size_t)(k - 1) * r->own_pieces + j]);
    if (rc == MPI_SUCCESS)
        decode_result(r, r->rank, j);
    return rc;
}

/* Without allgather: the fp32 sum of this rank's segment is the result. */
static int reduce_scatter_only(struct rsag *r)
{
    size_t count = (size_t)r->counts[r->rank];
    int rc = MPI_SUCCESS;

    for (size_t j = 0; rc == MPI_SUCCESS && j < r->own_pieces; j++)
        rc = sum_piece(r, j, r->sum + j * r->piece);
    if (rc == MPI_SUCCESS)
        rc = encode_all(r); /* the output may overlap the input (MPI_IN_PLACE) */
    if (rc != MPI_SUCCESS || count == 0)
        return rc;
    if (r->c->out_dev)
        apsmpi_device_copy(r->c, r->out, r->sum, count * sizeof(float)); /* a failure ends the call with an error */
    else
        memcpy(r->out, r->sum, count * sizeof(float));
    return rc;
}

static int reduce_and_gather(struct rsag *r)
{
    int rc = MPI_SUCCESS;

    for (size_t j = 0; rc == MPI_SUCCESS && j < r->own_pieces; j++) {
        rc = sum_piece(r, j, r->sum);
        if (rc == MPI_SUCCESS)
            rc = share_piece(r, j);
    }
    if (rc == MPI_SUCCESS)
        rc = encode_all(r);
    for (int k = 1; rc == MPI_SUCCESS && k < r->size; k++) {
        int from = mod(r->rank + k, r->size);
        for (size_t j = 0; rc == MPI_SUCCESS && j < pieces_of(r, from); j++) {
            rc = PMPI_Wait(&r->r_recv[r->gp0[from] + j], MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS)
                decode_result(r, from, j);
        }
    }
    return rc;
}

/* After an error: no request may stay active on the scratch buffers that the next call
 * reuses. The receives still posted are cancelled (one that already matched completes), and
 * every request is completed; messages the other ranks sent that no receive takes any more
 * carry this call's tags, which the next calls do not use. */
static void abandon(struct rsag *r)
{
    size_t own = (size_t)(r->size - 1) * r->own_pieces, all = total_pieces(r->counts, r->size, r->piece);
    MPI_Request *recvs[] = {r->c_recv, r->r_recv};
    size_t nrecvs[] = {own, all};

    if (r->c_recv == NULL) /* the setup failed before making any */
        return;
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < nrecvs[i]; j++)
            if (recvs[i][j] != MPI_REQUEST_NULL) {
                PMPI_Cancel(&recvs[i][j]);
                PMPI_Wait(&recvs[i][j], MPI_STATUS_IGNORE);
            }
    PMPI_Waitall((int)all, r->c_send, MPI_STATUSES_IGNORE);
    PMPI_Waitall((int)own, r->r_send, MPI_STATUSES_IGNORE);
}

int apsmpi_rsag_run(apsmpi_call *c, const int *counts, int allgather, size_t piece, float *out)
{
    struct rsag r = {.out = out, .allgather = allgather};
    size_t own, all;
    int rc = setup(&r, c, counts, piece);

    if (rc == MPI_SUCCESS)
        rc = post_receives(&r);
    if (rc == MPI_SUCCESS)
        rc = allgather ? reduce_and_gather(&r) : reduce_scatter_only(&r);
    if (rc != MPI_SUCCESS) {
        abandon(&r);
        return rc;
    }
    own = (size_t)(r.size - 1) * r.own_pieces;
    all = total_pieces(counts, r.size, r.piece);
    rc = PMPI_Waitall((int)all, r.c_send, MPI_STATUSES_IGNORE);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Waitall((int)own, r.r_send, MPI_STATUSES_IGNORE);
    return rc;
}
