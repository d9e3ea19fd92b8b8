/* ring_sumop.h: the MPI datatype and reduction op that sum packed low-precision data, for the ring and its one-collective path only (APSMPI_ALGORITHM=ring). */
#ifndef APSMPI_RING_SUMOP_H
#define APSMPI_RING_SUMOP_H

#include <mpi.h>
#include "core/codec.h"

/* Made at MPI_Init only when APSMPI_ALGORITHM=ring is chosen (the default, rsag, never sums
 * in the wire format and makes none): the datatype of one packing group of the codec's format
 * and the commutative MPI_Op that sums such groups with the codec. MPI_User_function carries
 * no user pointer, so the op is a libffi closure bound to the codec. 0 or an MPI error code. */
int apsmpi_ring_sumop_create(const apsmpi_codec *codec);

/* The op and the datatype made by apsmpi_ring_sumop_create. */
MPI_Op apsmpi_ring_sumop(void);
MPI_Datatype apsmpi_ring_group_type(void);

/* Frees them, if made (before MPI_Finalize). */
void apsmpi_ring_sumop_free(void);

#endif
