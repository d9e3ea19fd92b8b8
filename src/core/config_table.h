/* config_table.h: every APSMPI_* variable in one table, a row each: name, field, kind of value and bounds, default, scope, valid values, meaning. */
#ifndef APSMPI_CONFIG_TABLE_H
#define APSMPI_CONFIG_TABLE_H

/* Loading, the cross-rank comparison, the line of the info log and of the statistics
 * (config.c), and README's configuration table (tests/unit/print_config_table.c, checked by
 * tests/readme_config.sh) all come from this table, in its order. A new variable is one row
 * here, one field in apsmpi_config (config.h), and its line in README. config.c alone
 * includes it, and gives the rest of the program the rows as apsmpi_config_rows (config.h).
 * The shape of a row and the kinds of value (&apsmpi_config_count, ...): config_values.h. */

#include "core/config.h"
#include "core/config_values.h"
#include "core/fault.h"       /* APSMPI_FAULT_VALID */
#include "core/thread_pool.h" /* APSMPI_MAX_CODEC_THREADS */

/* The field of apsmpi_config that a row sets: its offset and size (the size is checked
 * against the row's kind by tests/unit/test_config.c). */
#define FIELD(member)                                                         \
    {                                                                         \
        offsetof(apsmpi_config, member), sizeof(((apsmpi_config *)0)->member) \
    }

#define APSMPI_MAX_ELEMENTS (1ull << 30)
#define APSMPI_ELEMENTS_VALID(lo) "an element count from " lo " to 1073741824 (suffix k, m or g allowed)"

static const apsmpi_config_row config_table_rows[] = {
    {.name = "APSMPI_ENABLE",
     .field = FIELD(enabled),
     .kind = &apsmpi_config_switch,
     .default_value = "1",
     .scope = APSMPI_SCOPE_JOB,
     .valid = APSMPI_ON_OFF_VALID,
     .doc = "`0` passes every call to MPI unchanged"},
    {.name = "APSMPI_FORMAT",
     .field = FIELD(format),
     .kind = &apsmpi_config_format,
     .default_value = "e4m3",
     .scope = APSMPI_SCOPE_WIRE,
     .valid = "fp32, fp16, bf16, e5m2, e4m3, e4m3ieee, eXmY (2<=X<=8, 0<=Y<=13, X+Y<=15), mxfp8, mxfp8e5m2, mxfp6, "
              "mxfp6e2m3, mxfp5, mxfp4, auto",
     .doc =
         "`fp32` (no compression), `fp16`, `bf16`, `e5m2` (OCP FP8 E5M2), `e4m3` (OCP FP8 E4M3FN: no inf, max 448), "
         "`e4m3ieee` (IEEE-like E4M3, max 240, as in CPD), `eXmY`: 1 sign, X exponent and Y mantissa bits, "
         "2<=X<=8, 0<=Y<=13, X+Y<=15, IEEE-like (subnormals, top exponent for inf/NaN); or an OCP MX format, whose "
         "blocks of 32 elements share an E8M0 scale taken from their own values and sent with them: `mxfp8` (E4M3 "
         "elements; also `mxfp8e4m3`), `mxfp8e5m2`, `mxfp6` (E3M2; `mxfp6e3m2`), `mxfp6e2m3`, `mxfp4` (E2M1, 4.25 bits "
         "an element; `mxfp4e2m1`); or `auto`: each call on the narrowest of mxfp4, mxfp6, mxfp8 and fp32 whose "
         "measured share of non-zero values flushed to zero stays within `APSMPI_ERROR_BUDGET`, chosen per bucket "
         "(communicator, count, buffer) from the ranks' measures of its last call, agreed in the call's own "
         "agreement (rsag only)"},
    {.name = "APSMPI_SCALING",
     .field = FIELD(scaling),
     .kind = &apsmpi_config_scaling,
     .default_value = "block",
     .scope = APSMPI_SCOPE_WIRE,
     .valid = "block, aps, none",
     .doc =
         "`block`: APS with one agreed exponent per block of `APSMPI_BLOCK_SIZE` elements (fused buckets of layers of "
         "very different magnitude keep their small layers); `aps`: one exponent per call, as in the APS paper when "
         "each call is one layer; `none`: no scaling, values are cast as they are. An MX format scales its own blocks: "
         "with it only `block` is valid"},
    {.name = "APSMPI_BLOCK_SIZE",
     .field = FIELD(block_size),
     .kind = &apsmpi_config_count,
     .lo = 1,
     .hi = APSMPI_MAX_ELEMENTS,
     .default_value = "4096",
     .scope = APSMPI_SCOPE_WIRE,
     .valid = APSMPI_ELEMENTS_VALID("1"),
     .doc = "elements per scaling block (1 to 2^30; suffix `k`, `m`, `g` allowed); the MX formats have their own "
            "blocks of "
            "32 and do not use it"},
    {.name = "APSMPI_ROUNDING",
     .field = FIELD(stochastic),
     .kind = &apsmpi_config_rounding,
     .default_value = "nearest",
     .scope = APSMPI_SCOPE_WIRE,
     .valid = "nearest, stochastic",
     .doc = "`nearest` (ties to even) or `stochastic`: unbiased, from a counter-based generator keyed by (seed, rank, "
            "call, element), so a run repeats bit for bit"},
    {.name = "APSMPI_SEED",
     .field = FIELD(seed),
     .kind = &apsmpi_config_u64,
     .hi = UINT64_MAX,
     .default_value = "0",
     .scope = APSMPI_SCOPE_WIRE,
     .valid = "an unsigned 64-bit integer",
     .doc = "seed of the stochastic rounding (unsigned 64-bit)"},
    {.name = "APSMPI_MIN_BYTES",
     .field = FIELD(min_bytes),
     .kind = &apsmpi_config_count,
     .hi = UINT64_MAX >> 1,
     .default_value = "65536",
     .scope = APSMPI_SCOPE_WIRE,
     .valid = "a byte count (suffix k, m or g allowed)",
     .doc = "calls with fewer FP32 bytes than this pass through (suffix `k`, `m`, `g` allowed)"},
    {.name = "APSMPI_MAX_BYTES",
     .field = FIELD(max_bytes),
     .kind = &apsmpi_config_count,
     .hi = UINT64_MAX >> 1,
     .default_value = "0",
     .scope = APSMPI_SCOPE_WIRE,
     .valid = "a byte count (suffix k, m or g allowed), 0 for no limit",
     .doc = "calls with more FP32 bytes than this pass through; `0`: no upper limit (suffix `k`, `m`, `g` allowed)"},
    {.name = "APSMPI_COMM_INCLUDE",
     .field = FIELD(comm_include),
     .kind = &apsmpi_config_path,
     .scope = APSMPI_SCOPE_WIRE,
     .valid = "comma-separated glob patterns",
     .doc =
         "comma-separated glob patterns (`*`, `?`, `[...]`): only calls on a communicator whose name "
         "(`MPI_Comm_set_name`; `MPI_COMM_WORLD` is `MPI_COMM_WORLD`, an unnamed one has the empty name) matches one "
         "are "
         "compressed; the job must name its communicators alike on every rank"},
    {.name = "APSMPI_COMM_EXCLUDE",
     .field = FIELD(comm_exclude),
     .kind = &apsmpi_config_path,
     .scope = APSMPI_SCOPE_WIRE,
     .valid = "comma-separated glob patterns",
     .doc = "comma-separated glob patterns: calls on a communicator whose name matches one pass through (checked after "
            "`APSMPI_COMM_INCLUDE`)"},
    {.name = "APSMPI_CHUNK_SIZE",
     .field = FIELD(chunk_size),
     .kind = &apsmpi_config_count,
     .hi = APSMPI_MAX_ELEMENTS,
     .default_value = "256k",
     .scope = APSMPI_SCOPE_WIRE,
     .valid = APSMPI_ELEMENTS_VALID("0 (no pipeline)"),
     .doc = "calls of more elements than this are pipelined: sent in pieces (messages) of this many elements, so that "
            "the codec encodes the next piece while the last ones travel; smaller calls go in one piece per segment. "
            "`0`: never "
            "pipelined (suffix `k`, `m`, `g` allowed)"},
    {.name = "APSMPI_ERROR_FEEDBACK",
     .field = FIELD(error_feedback),
     .kind = &apsmpi_config_switch,
     .default_value = "0",
     .scope = APSMPI_SCOPE_JOB,
     .valid = APSMPI_ON_OFF_VALID,
     .doc =
         "`1`: error feedback: each rank adds what rounding took from its contribution (and from the sum it owns) at "
         "the last call with the same communicator, count and buffer to what it encodes now; right for gradients, "
         "wrong for other sums (keep those out with `APSMPI_COMM_INCLUDE`, `APSMPI_COMM_EXCLUDE`, `APSMPI_MIN_BYTES`)"},
    {.name = "APSMPI_FEEDBACK_MAX_BYTES",
     .field = FIELD(feedback_max_bytes),
     .kind = &apsmpi_config_count,
     .hi = UINT64_MAX >> 1,
     .default_value = "1g",
     .scope = APSMPI_SCOPE_RANK,
     .valid = "a byte count (suffix k, m or g allowed)",
     .doc = "the most memory a rank's residuals of error feedback take (4 bytes per element of each buffer, plus its "
            "owned "
            "part); the least recently used are dropped first, and a call whose residual does not fit goes without "
            "(suffix "
            "`k`, `m`, `g` allowed)"},
    {.name = "APSMPI_ERROR_BUDGET",
     .field = FIELD(error_budget),
     .kind = &apsmpi_config_fraction,
     .lo = 0,
     .hi = 1000000,
     .default_value = "0.3",
     .scope = APSMPI_SCOPE_WIRE,
     .valid = "a fraction from 0 to 1",
     .doc = "with `APSMPI_FORMAT=auto`: the largest share of a call's non-zero values that one encoding (a rank's "
            "contribution, or an owner's sum) may flush to zero; a call over it sends the bucket's next call wider"},
    {.name = "APSMPI_AUTO_LADDER",
     .field = FIELD(ladder),
     .kind = &apsmpi_config_ladder,
     .default_value = APSMPI_LADDER_DEFAULT,
     .scope = APSMPI_SCOPE_WIRE,
     .valid = "1 to 4 comma-separated formats, narrowest first, all MX or all not",
     .doc = "with `APSMPI_FORMAT=auto`: its rungs below fp32, narrowest first: MX formats (each block of 32 scaled by "
            "its own values) or formats scaled by APS blocks of `APSMPI_BLOCK_SIZE` (e.g. `e2m1,e3m2,e4m3`: their "
            "measure is a separate pass on host buffers; GPU buffers stay on the widest); a bucket starts on the "
            "widest"},
    {.name = "APSMPI_STATS",
     .field = FIELD(stats),
     .kind = &apsmpi_config_switch,
     .default_value = "0",
     .scope = APSMPI_SCOPE_JOB,
     .valid = APSMPI_ON_OFF_VALID,
     .doc = "`1`: at `MPI_Finalize`, calls compressed and passed through, bytes before and after, the fraction of "
            "non-zero inputs flushed to zero, codec time; with `APSMPI_ERROR_FEEDBACK=1` a second line: the residuals "
            "held, their memory and their norm against the inputs'"},
    {.name = "APSMPI_LOG_LEVEL",
     .field = FIELD(log_level),
     .kind = &apsmpi_config_log_level,
     .default_value = "warn",
     .scope = APSMPI_SCOPE_RANK,
     .valid = "error, warn, info, debug",
     .doc = "`error`, `warn`, `info` (one line at start with the settings), `debug`"},
    {.name = "APSMPI_CODEC_ISA",
     .field = FIELD(codec_isa),
     .kind = &apsmpi_config_codec_isa,
     .default_value = "auto",
     .scope = APSMPI_SCOPE_RANK,
     .valid = "auto, scalar, avx2, avx512",
     .doc = "the instruction set of the host codec's loops: `auto` (the best this CPU has, found once at start), "
            "`scalar` (portable C), `avx2` (with F16C and FMA), `avx512` (F, BW, VL, DQ); every level sends the same "
            "bits; a level this CPU lacks stops the job"},
    {.name = "APSMPI_CODEC_THREADS",
     .field = FIELD(codec_threads),
     .kind = &apsmpi_config_threads,
     .lo = 1,
     .hi = APSMPI_MAX_CODEC_THREADS,
     .default_value = "auto",
     .scope = APSMPI_SCOPE_RANK,
     .valid = "auto, 1 to 64",
     .doc = "threads per rank that share the host codec's work on each piece of a call: the rank's own and helpers "
            "that only encode, decode and add (every MPI call stays on the rank's thread). `auto`: the CPUs the rank "
            "may run on divided by the ranks on its node (`OMPI_COMM_WORLD_LOCAL_SIZE`, `MPI_LOCALNRANKS`; 1 when the "
            "launcher says neither), at most 8; a number: that many. The bits sent are the same for every value"},
    {.name = "APSMPI_DEVICE_PLUGIN",
     .field = FIELD(device_plugin),
     .kind = &apsmpi_config_path,
     .scope = APSMPI_SCOPE_RANK,
     .valid = "a loadable device plugin",
     .doc = "path of the device plugin to use instead of `libapsmpi_cuda.so` (beside `libapsmpi.so`, else in "
            "`$pkglibdir`; the tests use it for a mock GPU); one that does not load stops the job at `MPI_Init`"},
    {.name = "APSMPI_ALGORITHM",
     .field = FIELD(algorithm),
     .kind = &apsmpi_config_algorithm,
     .default_value = "rsag",
     .scope = APSMPI_SCOPE_WIRE,
     .valid = "rsag, ring",
     .doc =
         "`rsag`: contributions encoded once, summed in FP32 by the segment's owner, the sum encoded once and gathered "
         "(docs/algorithm.md); `ring`: a pipelined ring, kept for comparison, which sums in the wire format at every "
         "hop of a ring (or, below `APSMPI_CHUNK_SIZE`, in one MPI collective with a decode-add-encode op) with "
         "`ceil(log2 N)` binades of headroom; its error grows with the rank count"},
    {.name = "APSMPI_RSAG_WINDOW",
     .field = FIELD(rsag_window),
     .kind = &apsmpi_config_count,
     .hi = 64,
     .default_value = "4",
     .scope = APSMPI_SCOPE_RANK,
     .valid = "0 to 64",
     .doc =
         "rsag's messages in flight per rank at most: `N` (1 to 64): each piece to every owner before the next piece, "
         "contributions and results in the order they are ready, `N` at a time; `0`: all at once, each segment's "
         "pieces in turn; the results are the same bits either way. The node path's parts "
         "across fewer than 8 nodes keep 1 in flight (any `N` but 0): the node's ranks share its link; across 8 nodes "
         "or more, `N`"},
    {.name = "APSMPI_TWOLEVEL_FROM",
     .field = FIELD(twolevel_from),
     .kind = &apsmpi_config_count,
     .hi = 1 << 24,
     .default_value = "256",
     .scope = APSMPI_SCOPE_WIRE,
     .valid = "0 to 16777216",
     .doc = "an allreduce with `APSMPI_ALGORITHM=rsag` over at least this many ranks (a node path's part: nodes) "
            "takes the two-level schedule instead of rsag: groups of about the square root of the ranks, "
            "reduce-scatter within each group, the groups' partial sums across them, the results gathered within "
            "(docs/algorithm.md); 2(M-1)+2(G-1) messages a rank instead of 2(N-1), the same bytes, three roundings "
            "a value instead of two. Calls of at most 2^18 elements (a node path's part: its own), mostly latency, "
            "take it from a quarter of this number. `0`: never. Below the default (256 nodes, 64 for small calls, "
            "from the simulator: docs/design.md) nothing changes; a small value tries it on a few ranks"},
    {.name = "APSMPI_INTRANODE",
     .field = FIELD(intranode),
     .kind = &apsmpi_config_intranode,
     .default_value = "pass",
     .scope = APSMPI_SCOPE_WIRE,
     .valid = "pass, compress",
     .doc =
         "`pass`: a communicator whose ranks all share one node is handed to MPI uncompressed (the statistics line and "
         "`APSMPI_LOG_LEVEL=info` say so); `compress`: compressed there too. Use `compress` only to try the library on "
         "one machine (demos, tests, the training comparison of `scripts/main.sh`), where it costs CPU and saves "
         "nothing"},
    {.name = "APSMPI_PROGRESS_THREAD",
     .field = FIELD(progress_thread),
     .kind = &apsmpi_config_switch,
     .default_value = "1",
     .scope = APSMPI_SCOPE_RANK,
     .valid = APSMPI_ON_OFF_VALID,
     .doc = "`1`: when the job's thread level is `MPI_THREAD_MULTIPLE`, a thread makes the non-blocking and persistent "
            "reductions progress while the job computes; at lower levels (and with `0`) they progress only inside the "
            "job's MPI test and wait calls"},
    {.name = "APSMPI_TEST_NODE_OF_RANK",
     .field = FIELD(test_node_of_rank),
     .kind = &apsmpi_config_node_map,
     .scope = APSMPI_SCOPE_WIRE,
     .valid = "node numbers (0 to 65535) of world ranks 0, 1, ..., separated by commas",
     .doc = "for tests and emulated clusters only: the node of each world rank, `0,0,1,1,1` (rank 0 and 1 on node 0, "
            "...), "
            "instead of the nodes MPI finds (`MPI_COMM_TYPE_SHARED`); one entry per rank, no more, no fewer"},
    {.name = "APSMPI_TEST_FAIL",
     .field = FIELD(test_fail),
     .kind = &apsmpi_config_fault,
     .scope = APSMPI_SCOPE_RANK,
     .valid = APSMPI_FAULT_VALID,
     .doc = "for tests only: `SITE:RANK:CALL` makes the CALL-th pass (from 1) of a step fail on world rank RANK (`*`: "
            "every rank), to test the failure paths; SITE: `codec`, `sumop`, `keyval` (setup at `MPI_Init`), "
            "`dup_malloc`, `dup_attr` (the private communicator of rsag and the ring), `agree_alloc` (the memory of a "
            "call's agreement: the job ends), `agree` (the reduction that agrees on a call's scales), `rsag_send`, "
            "`ring_send` (a message of rsag, of the ring), `device_setup`, `device_alloc`, `device_op` (a thread's GPU "
            "streams and events, a GPU buffer, a GPU operation)"},
};

_Static_assert(sizeof config_table_rows / sizeof config_table_rows[0] <= APSMPI_CONFIG_MAX_ROWS,
               "raise APSMPI_CONFIG_MAX_ROWS (config.h)");

#endif
