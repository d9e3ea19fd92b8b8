/* job_store.h: the job's residuals of error feedback (APSMPI_ERROR_FEEDBACK): one store for every thread, set up at MPI_Init, reported and emptied at MPI_Finalize. */
#ifndef APSMPI_FEEDBACK_JOB_STORE_H
#define APSMPI_FEEDBACK_JOB_STORE_H

#include <mpi.h>
#include <stddef.h>
#include "feedback/residuals.h"

/* Sets up the store of at most max_bytes of residuals; 0, or -1 without memory. */
int apsmpi_feedback_store_init(size_t max_bytes);

/* The store, or NULL when error feedback is off. */
apsmpi_residual_store *apsmpi_feedback_store(void);

/* Counts a call whose contribution went without its residual because its input is GPU memory
 * (error feedback keeps host residuals only: the owner's sum, encoded on the host, keeps its). */
void apsmpi_feedback_note_device_input(void);

/* Sums the store's statistics over comm and prints one line on its rank 0: the residuals and
 * the memory they hold, the residual's norm against the inputs', what was dropped or refused.
 * Collective (a rank without the store counts zeros). */
void apsmpi_feedback_store_report(MPI_Comm comm);

/* Drops every residual. */
void apsmpi_feedback_store_free(void);

#endif
