/* sumop.h: the MPI reduction op and datatype that sum packed low-precision data, one pair per format. */
#ifndef APSMPI_SUMOP_H
#define APSMPI_SUMOP_H

#include <mpi.h>
#include "core/codec.h"

/* The MPI datatype of one packing group and the commutative MPI_Op that sums such groups
 * with the codec. MPI_User_function carries no user pointer, so each op is a libffi closure
 * bound to its codec. Created once per codec (thread-safe); 0 or an MPI error code. */
int apsmpi_sumop_get(const apsmpi_codec *codec, MPI_Op *op, MPI_Datatype *type);

/* Frees every op and datatype made so far. Call before MPI_Finalize. */
void apsmpi_sumop_free_all(void);

#endif
