#!/bin/sh
# simgrid_missing.sh: stands in for the simulator's test when configure found no SimGrid: says why, and skips.
echo "SKIP: the network simulator (sim/) was not built: configure found no SimGrid (install libsimgrid-dev)"
exit 77
