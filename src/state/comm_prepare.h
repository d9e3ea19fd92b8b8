/* comm_prepare.h: makes, where the job's own call is collective anyway, everything the requests on a communicator will need, so that no request makes a collective of its own. */
#ifndef APSMPI_COMM_PREPARE_H
#define APSMPI_COMM_PREPARE_H

#include <mpi.h>

/* A non-blocking or persistent reduction must not wait in MPI when it starts (MPI makes them
 * local: ranks may start them on several communicators in different orders). What a
 * communicator's reductions need that only a collective makes (its node layout, its node and
 * cross-node communicators, the private duplicates rsag and the node path send on) is
 * therefore made here, at a point where every rank of comm is in a collective call of the
 * job's anyway: MPI_Init for MPI_COMM_WORLD, the job's MPI_Comm_dup, _dup_with_info, _split,
 * _split_type, _create and _create_group for the communicator they make, and the first
 * eligible blocking reduction on any other. A request on a communicator that was not
 * prepared (made another way, or a rank could not prepare it) passes through to MPI, counted
 * (stats.h: APSMPI_STAT_PASS_UNPREPARED). Collective over comm; does nothing where the
 * library compresses nothing, on MPI_COMM_NULL, an intercommunicator or one rank, and on a
 * communicator prepared already. The ranks agree on the outcome: comm is prepared on all of
 * them or on none. Returns MPI_SUCCESS or an MPI error code. */
int apsmpi_comm_prepare(MPI_Comm comm);

#endif
