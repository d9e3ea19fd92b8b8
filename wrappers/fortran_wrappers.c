/* fortran_wrappers.c: the Fortran MPI entry points (every name form of mpif.h, `use mpi` and `use mpi_f08`) that a preloaded libapsmpi.so puts in front of the MPI's. */
#include "entry/fortran_entry_points.h"
#include "mpi_signatures.h" /* APSMPI_EXPORT */

/* One exported symbol that hands its arguments to apsmpi_fortran_<lower>, which compresses
 * the call or gives it to the MPI's own Fortran entry. */
#define APSMPI_FORWARD(symbol, lower, binding) \
    APSMPI_EXPORT void symbol(APSMPI_FPARAMS_##lower) { apsmpi_fortran_##lower(binding, APSMPI_FARGS_##lower); }

/* mpif.h and `use mpi`: the four spellings the MPI's own library exports (compilers append
 * no, one or two underscores, or use upper case). */
#define APSMPI_DEFINE_MPIFH(lower, UPPER, Name)                          \
    APSMPI_FORWARD(mpi_##lower, lower, APSMPI_FORTRAN_BINDING_MPIFH)     \
    APSMPI_FORWARD(mpi_##lower##_, lower, APSMPI_FORTRAN_BINDING_MPIFH)  \
    APSMPI_FORWARD(mpi_##lower##__, lower, APSMPI_FORTRAN_BINDING_MPIFH) \
    APSMPI_FORWARD(MPI_##UPPER, lower, APSMPI_FORTRAN_BINDING_MPIFH)
APSMPI_FORTRAN_MPIFH(APSMPI_DEFINE_MPIFH)

/* `use mpi_f08`: one spelling, mpi_<lower>_f08_ (gfortran's name of MPI_<Name>_f08). */
#define APSMPI_DEFINE_F08(lower, UPPER, Name) APSMPI_FORWARD(mpi_##lower##_f08_, lower, APSMPI_FORTRAN_BINDING_F08)
APSMPI_FORTRAN_F08(APSMPI_DEFINE_F08)
