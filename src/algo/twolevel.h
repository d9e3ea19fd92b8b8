/* twolevel.h: the two-level schedule for allreduces over many ranks: reduce-scatter within groups, the groups' partial sums across them, the results gathered within the groups. */
#ifndef APSMPI_TWOLEVEL_H
#define APSMPI_TWOLEVEL_H

/* apsmpi_twolevel, an algorithm of algo/algorithm.h, planned by algo/twolevel_plan.h (the
 * groups, stripes and cells, every message; unit-tested without MPI).
 *
 * An allreduce over N ranks as G groups of about sqrt(N) (M): (1) each rank encodes every
 * stripe of the buffer once with the agreed scales and sends it to the stripe's owner in its
 * group, which sums the group's contributions in fp32; (2) the owners of one stripe, one per
 * group, sum it across groups: each encodes its group's partial sum of another group's cell
 * once, with scales from the partial itself, and sends it there; the cell's owner adds them to
 * its own in fp32, encodes the final sum once, and sends it to the stripe's other owners; (3)
 * each owner sends its stripe's finals, the bytes as received, to the rest of its group. Every
 * rank decodes the same bytes, so all get the same bits; three roundings a value instead of
 * rsag's two, and 2(M-1) + 2(G-1) messages a rank instead of 2(N-1), for the same bytes.
 *
 * Chosen instead of rsag for an allreduce over at least APSMPI_TWOLEVEL_FROM ranks (the node
 * path's parts across nodes count the nodes; apsmpi_twolevel_chosen). Runs on the private
 * duplicate of the call's communicator, on its own range of tags, with rsag's window
 * (apsmpi_rsag_in, rsag.h) on its sends. Resumable: progress encodes while it waits for
 * contributions, and without op->blocking returns when it would have to wait. */
#include "algo/algorithm.h"

extern const apsmpi_algorithm apsmpi_twolevel;

#endif
