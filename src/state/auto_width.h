/* auto_width.h: the job's APSMPI_FORMAT=auto state: its ladder, each rung's codec, the store of the buckets' widths, the statistics per width. */
#ifndef APSMPI_AUTO_WIDTH_H
#define APSMPI_AUTO_WIDTH_H

#include <mpi.h>
#include <stdint.h>
#include "core/codec.h"
#include "core/config.h"
#include "core/width_controller.h"

/* Makes the codec of every rung of cfg->ladder below FP32 (at the codec level cfg->codec_isa)
 * and the empty store; 0, or -1 (nothing kept). For MPI_Init, when cfg->format.ladder; cfg
 * stays (the ladder is read from it until apsmpi_auto_free). */
int apsmpi_auto_init(const apsmpi_config *cfg);
void apsmpi_auto_free(void);

/* The codec of a rung (NULL for FP32, or before apsmpi_auto_init). */
const apsmpi_codec *apsmpi_auto_codec(int rung);

/* The job's ladder (NULL before apsmpi_auto_init). */
const apsmpi_ladder *apsmpi_auto_ladder(void);

/* The store of the buckets' states (NULL before apsmpi_auto_init). */
apsmpi_width_store *apsmpi_auto_store(void);

/* The job freed comm: its buckets' states go (state/comm_info.c's attribute says so). */
void apsmpi_auto_forget_comm(MPI_Comm comm);

/* Counts one call that went on rung: its fp32 bytes and bytes on the wire, its error (the
 * largest share flushed of its measured encodings), whether that was over the budget, and the
 * controller's move after it (enum apsmpi_width_move); measured 0: the call had no measure. */
void apsmpi_auto_count(int rung, uint64_t bytes_in, uint64_t bytes_wire, int measured, double error, int exceeded,
                       int move);

/* One statistics line on comm's rank 0, per width: calls, bytes, the error's largest and
 * mean, calls over the budget, raises and lowerings, and whether every rank made the same calls
 * on each width. Collective. */
void apsmpi_auto_report(MPI_Comm comm, double budget);

#endif
