#!/bin/bash
# fortran.sh: Fortran jobs of all three bindings (mpif.h, `use mpi`, `use mpi_f08`) are intercepted: compressed, in place, non-blocking, pass-through bit-exact, stats, settings checked.
. "$top_builddir/tests/mpi/env.sh"
[ -n "$FORTRAN_CHECK" ] || { echo "SKIP: no MPI Fortran compiler (configure found no working MPIFC)"; exit 77; }

np=3
tol=$("$FUZZ" --bound e4m3 $np)
# worst_between LOW HIGH: the last run's largest relative error lies in (LOW, HIGH]
worst_between() { awk -v lo="$1" -v hi="$2" '/^worst / {w = $2 + 0; found = 1} END {exit !(found && w > lo && w <= hi)}' "$TMPOUT/out"; }

for binding in mpifh mpi f08; do
    prog="${FORTRAN_CHECK}_$binding"
    expect "$binding: plain MPI sums to FP32 rounding" with_checksum mpi $np no -- "$prog"
    expect "... within FP32 rounding" worst_between -1 1e-6
    plain=$(checksum)

    # compressed (e4m3, well above FP32 rounding but within the format's bound), MPI_IN_PLACE
    # included; the DOUBLE PRECISION sum and the REAL maximum reach MPI as they were
    expect "$binding: preloaded, the REAL sums are compressed" mpi $np yes APSMPI_STATS=1 -- "$prog"
    expect "... within the e4m3 bound $tol" worst_between 1e-4 "$tol"
    expect "... the calls apsmpi does not compress are bit-exact" test -n "$plain" -a "$(checksum)" = "$plain"
    expect "... the stats line counts 7 compressed calls per rank (3 non-blocking) and 2 passed" \
        grep -q "calls compressed $((7 * np)), passed through $((2 * np)),.*requests (MPI_I\*, persistent) $((3 * np));" \
        "$TMPOUT/err"

    expect_fail "$binding: an invalid setting stops the job at MPI_Init" "APSMPI_FORMAT='e9m2' is not valid" \
        mpi $np yes APSMPI_FORMAT=e9m2 -- "$prog"
    expect "$binding: APSMPI_ENABLE=0 passes everything through" mpi $np yes APSMPI_ENABLE=0 -- "$prog"
    expect "... within FP32 rounding" worst_between -1 1e-6
done
finish
