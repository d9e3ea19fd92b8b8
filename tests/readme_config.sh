#!/bin/bash
# readme_config.sh: README's configuration table is the table of src/core/config_table.c, row for row (tests/unit/print_config_table prints it).
: "${top_builddir:?run through make check}"
README="$(dirname "$0")/../README.md"
want=$("$top_builddir/tests/unit/print_config_table") || exit 1
# the table that starts with the header line, to its last row; no APSMPI_* row anywhere else
header=$(echo "$want" | head -1)
got=$(awk -v h="$header" '$0 == h {on = 1} on && !/^\|/ {exit} on' "$README")
others=$(grep -c '^| `APSMPI_' "$README")
[ "$others" -eq "$(echo "$want" | grep -c '^| `APSMPI_')" ] || got="$got
(README has $others rows of APSMPI_* variables in all)"
if [ "$want" != "$got" ]; then
    echo "FAILED: README's configuration table differs from src/core/config_table.c (replace it with the output of tests/unit/print_config_table):"
    diff <(echo "$want") <(echo "$got")
    exit 1
fi
echo "ok: README lists every APSMPI_* variable of the table, and no other"
