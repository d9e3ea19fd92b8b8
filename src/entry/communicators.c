/* communicators.c: the job's communicator constructors (MPI_Comm_dup, _split, _create, ...): the next definition's call (next_calls.h), then the new communicator prepared for requests while every rank of it is in the call. */
#include "entry/entry_points.h"
#include "entry/next_calls.h"
#include "state/comm_prepare.h"

/* The new communicator *newcomm (read after the call that made it), made by the MPI's own call with result rc, prepared for the requests
 * that will run on it (state/comm_prepare.h): every rank of it is in this call, so the
 * collectives that takes meet no other. A failure to prepare it is not the job's: its
 * requests then go to MPI uncompressed. */
static int prepared(int rc, const MPI_Comm *newcomm)
{
    if (rc == MPI_SUCCESS)
        apsmpi_comm_prepare(*newcomm);
    return rc;
}

int apsmpi_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    return prepared(APSMPI_NEXT(Comm_dup)(comm, newcomm), newcomm);
}

int apsmpi_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    return prepared(APSMPI_NEXT(Comm_dup_with_info)(comm, info, newcomm), newcomm);
}

int apsmpi_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    return prepared(APSMPI_NEXT(Comm_split)(comm, color, key, newcomm), newcomm);
}

int apsmpi_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    return prepared(APSMPI_NEXT(Comm_split_type)(comm, split_type, key, info, newcomm), newcomm);
}

int apsmpi_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    return prepared(APSMPI_NEXT(Comm_create)(comm, group, newcomm), newcomm);
}

int apsmpi_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    return prepared(APSMPI_NEXT(Comm_create_group)(comm, group, tag, newcomm), newcomm);
}
