#!/bin/bash
# mx_loops_zen4_runs.sh: results/codec/mx_loops_zen4.md's runs, as CSV (scripts/bench/mx_loops_rounds.sh gives the columns): 11 rounds, each at 4 Mi floats (the bench's default, half the 32 MiB L3 of this machine for in and out) and at 32 Mi (past it), the levels alternating, --reps 21. HEADER=0 leaves out the header line (a second commit's runs appended).
exec "$(dirname "$0")/../../scripts/bench/mx_loops_rounds.sh" 11 4194304 33554432
