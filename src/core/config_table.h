/* config_table.h: every APSMPI_* variable in one table: name, field, parser and bounds, default, scope, valid values, doc. */
#ifndef APSMPI_CONFIG_TABLE_H
#define APSMPI_CONFIG_TABLE_H

#include "core/fault.h" /* APSMPI_FAULT_VALID */

/* Loading (config.c), the cross-rank digest, the line of the info log and of the statistics,
 * and README's configuration table (tests/unit/print_config_table.c, checked by
 * tests/readme_config.sh) all come from this table. A new variable is one row here, one
 * field in apsmpi_config, and its line in README.
 *
 * X(name, field, parser, lo, hi, default, scope, valid values, doc):
 *   parser: parse_<parser> in config.c (bounds lo..hi for the numeric ones);
 *   default: the value when the variable is unset (NULL: none);
 *   scope:  APSMPI_SCOPE_RANK     may differ between ranks;
 *           APSMPI_SCOPE_JOB      must be equal on all ranks (it changes a collective
 *                                 behaviour, such as the statistics at MPI_Finalize);
 *           APSMPI_SCOPE_WIRE     must be equal on all ranks when calls are compressed
 *                                 (it changes what goes on the wire). */
#define APSMPI_SCOPE_RANK 0
#define APSMPI_SCOPE_JOB 1
#define APSMPI_SCOPE_WIRE 2

#define APSMPI_MAX_ELEMENTS (1ull << 30)
#define APSMPI_ELEMENTS_VALID(lo) "an element count from " lo " to 1073741824 (suffix k, m or g allowed)"

/* what a switch accepts (config.c's on_off), said in its error */
#define APSMPI_ON_OFF_VALID "1, 0 (also on/off, yes/no, true/false)"

#define APSMPI_CONFIG_TABLE(X)                                                                                         \
    X(APSMPI_ENABLE, enabled, on_off, 0, 0, "1", APSMPI_SCOPE_JOB, APSMPI_ON_OFF_VALID,                                \
      "`0` passes every call to MPI unchanged")                                                                        \
    X(APSMPI_FORMAT, format, format, 0, 0, "e4m3", APSMPI_SCOPE_WIRE,                                                  \
      "fp32, fp16, bf16, e5m2, e4m3, e4m3ieee, eXmY (2<=X<=8, 0<=Y<=13, X+Y<=15)",                                     \
      "`fp32` (no compression), `fp16`, `bf16`, `e5m2` (OCP FP8 E5M2), `e4m3` (OCP FP8 E4M3FN: no inf, max 448), "     \
      "`e4m3ieee` (IEEE-like E4M3, max 240, as in CPD), or `eXmY`: 1 sign, X exponent and Y mantissa bits, "           \
      "2<=X<=8, 0<=Y<=13, X+Y<=15, IEEE-like (subnormals, top exponent for inf/NaN)")                                  \
    X(APSMPI_SCALING, scaling, scaling, 0, 0, "block", APSMPI_SCOPE_WIRE, "block, aps, none",                          \
      "`block`: APS with one agreed exponent per block of `APSMPI_BLOCK_SIZE` elements (fused buckets of layers of "   \
      "very different magnitude keep their small layers); `aps`: one exponent per call, as in the APS paper when "     \
      "each call is one layer; `none`: no scaling, values are cast as they are")                                       \
    X(APSMPI_BLOCK_SIZE, block_size, size, 1, APSMPI_MAX_ELEMENTS, "4096", APSMPI_SCOPE_WIRE,                          \
      APSMPI_ELEMENTS_VALID("1"), "elements per scaling block (1 to 2^30; suffix `k`, `m`, `g` allowed)")              \
    X(APSMPI_ROUNDING, stochastic, rounding, 0, 0, "nearest", APSMPI_SCOPE_WIRE, "nearest, stochastic",                \
      "`nearest` (ties to even) or `stochastic`: unbiased, from a counter-based generator keyed by (seed, rank, "      \
      "call, element), so a run repeats bit for bit")                                                                  \
    X(APSMPI_SEED, seed, u64, 0, UINT64_MAX, "0", APSMPI_SCOPE_WIRE, "an unsigned 64-bit integer",                     \
      "seed of the stochastic rounding (unsigned 64-bit)")                                                             \
    X(APSMPI_MIN_BYTES, min_bytes, size, 0, UINT64_MAX >> 1, "65536", APSMPI_SCOPE_WIRE,                               \
      "a byte count (suffix k, m or g allowed)",                                                                       \
      "calls with fewer FP32 bytes than this pass through (suffix `k`, `m`, `g` allowed)")                             \
    X(APSMPI_MAX_BYTES, max_bytes, size, 0, UINT64_MAX >> 1, "0", APSMPI_SCOPE_WIRE,                                   \
      "a byte count (suffix k, m or g allowed), 0 for no limit",                                                       \
      "calls with more FP32 bytes than this pass through; `0`: no upper limit (suffix `k`, `m`, `g` allowed)")         \
    X(APSMPI_COMM_INCLUDE, comm_include, path, 0, 0, NULL, APSMPI_SCOPE_WIRE, "comma-separated glob patterns",         \
      "comma-separated glob patterns (`*`, `?`, `[...]`): only calls on a communicator whose name "                    \
      "(`MPI_Comm_set_name`; `MPI_COMM_WORLD` is `MPI_COMM_WORLD`, an unnamed one has the empty name) matches one "    \
      "are "                                                                                                           \
      "compressed; the job must name its communicators alike on every rank")                                           \
    X(APSMPI_COMM_EXCLUDE, comm_exclude, path, 0, 0, NULL, APSMPI_SCOPE_WIRE, "comma-separated glob patterns",         \
      "comma-separated glob patterns: calls on a communicator whose name matches one pass through (checked after "     \
      "`APSMPI_COMM_INCLUDE`)")                                                                                        \
    X(APSMPI_CHUNK_SIZE, chunk_size, size, 0, APSMPI_MAX_ELEMENTS, "256k", APSMPI_SCOPE_WIRE,                          \
      APSMPI_ELEMENTS_VALID("0 (no pipeline)"),                                                                        \
      "calls of more elements than this are pipelined: sent in pieces (messages) of this many elements, so that "      \
      "the codec works while earlier pieces travel; smaller calls go in one piece per segment. `0`: never "            \
      "pipelined (suffix `k`, `m`, `g` allowed)")                                                                      \
    X(APSMPI_STATS, stats, on_off, 0, 0, "0", APSMPI_SCOPE_JOB, APSMPI_ON_OFF_VALID,                                   \
      "`1`: at `MPI_Finalize`, calls compressed and passed through, bytes before and after, the fraction of "          \
      "non-zero inputs flushed to zero, codec time")                                                                   \
    X(APSMPI_LOG_LEVEL, log_level, level, 0, 0, "warn", APSMPI_SCOPE_RANK, "error, warn, info, debug",                 \
      "`error`, `warn`, `info` (one line at start with the settings), `debug`")                                        \
    X(APSMPI_CODEC_ISA, codec_isa, codec_isa, 0, 0, "auto", APSMPI_SCOPE_RANK, "auto, scalar, avx2, avx512",           \
      "the instruction set of the host codec's loops: `auto` (the best this CPU has, found once at start), "           \
      "`scalar` (portable C), `avx2` (with F16C), `avx512` (F, BW, VL, DQ); every level sends the same bits; a "       \
      "level this CPU lacks stops the job")                                                                            \
    X(APSMPI_DEVICE_PLUGIN, device_plugin, path, 0, 0, NULL, APSMPI_SCOPE_RANK, "a loadable device plugin",            \
      "path of the device plugin to use instead of `libapsmpi_cuda.so` (beside `libapsmpi.so`, else in "               \
      "`$pkglibdir`; the tests use it for a mock GPU); one that does not load stops the job at `MPI_Init`")            \
    X(APSMPI_ALGORITHM, algorithm, algorithm, 0, 0, "rsag", APSMPI_SCOPE_WIRE, "rsag, ring",                           \
      "`rsag`: contributions encoded once, summed in FP32 by the segment's owner, the sum encoded once and gathered "  \
      "(below); `ring`: the previous algorithm, kept for comparison, which sums in the wire format at every hop of a " \
      "ring (or, below `APSMPI_CHUNK_SIZE`, in one MPI collective with a decode-add-encode op) with `ceil(log2 N)` "   \
      "binades of headroom; its error grows with the rank count")                                                      \
    X(APSMPI_RSAG_WINDOW, rsag_window, size, 0, 64, "2", APSMPI_SCOPE_RANK, "0 to 64",                                 \
      "rsag's messages in flight per rank at most: `N` (1 to 64): each piece to every owner before the next piece, "   \
      "contributions and results in the order they are ready, `N` at a time; `0`: all at once, each segment's "        \
      "pieces in turn (the earlier schedule); the results are the same bits either way")                               \
    X(APSMPI_INTRANODE, intranode, intranode, 0, 0, "pass", APSMPI_SCOPE_WIRE, "pass, compress",                       \
      "`pass`: a communicator whose ranks all share one node is handed to MPI uncompressed (the statistics line and "  \
      "`APSMPI_LOG_LEVEL=info` say so); `compress`: compressed there too. Use `compress` only to try the library on "  \
      "one machine (demos, tests, the training comparison of `scripts/main.sh`), where it costs CPU and saves "        \
      "nothing")                                                                                                       \
    X(APSMPI_TEST_NODE_OF_RANK, test_node_of_rank, node_map, 0, 0, NULL, APSMPI_SCOPE_WIRE,                            \
      "node numbers (0 to 65535) of world ranks 0, 1, ..., separated by commas",                                       \
      "for tests and emulated clusters only: the node of each world rank, `0,0,1,1,1` (rank 0 and 1 on node 0, ...), " \
      "instead of the nodes MPI finds (`MPI_COMM_TYPE_SHARED`); one entry per rank, no more, no fewer")                \
    X(APSMPI_TEST_FAIL, test_fail, fault, 0, 0, NULL, APSMPI_SCOPE_RANK, APSMPI_FAULT_VALID,                           \
      "for tests only: `SITE:RANK:CALL` makes the CALL-th pass (from 1) of a step fail on world rank RANK (`*`: "      \
      "every rank), to test the failure paths; SITE: `codec`, `sumop`, `keyval` (setup at `MPI_Init`), "               \
      "`dup_malloc`, `dup_attr` (the private communicator of rsag and the ring), `agree_alloc` (the memory of a "      \
      "call's agreement: the job ends), `agree` (the reduction that agrees on a call's scales), `rsag_send`, "         \
      "`ring_send` (a message of rsag, of the ring), `device_setup`, `device_alloc`, `device_op` (a thread's GPU "     \
      "streams and events, a GPU buffer, a GPU operation)")

#endif
