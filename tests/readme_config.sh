#!/bin/bash
# readme_config.sh: docs/configuration.md's table is the table of src/core/config_table.h, row for row (tests/unit/print_config_table prints it); README's short table gives the same defaults; and each row is written out there under its variable's name, for grep and tags.
: "${top_builddir:?run through make check}"
srcdir="$(dirname "$0")/.."
DOC="$srcdir/docs/configuration.md"
README="$srcdir/README.md"
TABLE="$srcdir/src/core/config_table.h"
want=$("$top_builddir/tests/unit/print_config_table") || exit 1
# the table that starts with the header line, to its last row; no APSMPI_* row anywhere else
header=$(echo "$want" | head -1)
got=$(awk -v h="$header" '$0 == h {on = 1} on && !/^\|/ {exit} on' "$DOC")
others=$(grep -c '^| `APSMPI_' "$DOC")
[ "$others" -eq "$(echo "$want" | grep -c '^| `APSMPI_')" ] || got="$got
(docs/configuration.md has $others rows of APSMPI_* variables in all)"
if [ "$want" != "$got" ]; then
    echo "FAILED: docs/configuration.md's table differs from src/core/config_table.h (replace it with the output of tests/unit/print_config_table):"
    diff <(echo "$want") <(echo "$got")
    exit 1
fi
# README's short table of the settings a user touches first (header "| variable | default |
# meaning |"): each variable one of the table's, with the table's default
while IFS='|' read -r _ name default _; do
    name=$(echo "$name" | tr -d ' `') default=$(echo "$default" | sed 's/^ *//; s/ *$//')
    row=$(echo "$want" | grep -F "| \`$name\` |") || {
        echo "FAILED: README names $name, which src/core/config_table.h does not have"
        exit 1
    }
    want_default=$(echo "$row" | awk -F'|' '{ gsub(/^ +| +$/, "", $3); print $3 }')
    if [ "$default" != "$want_default" ]; then
        echo "FAILED: README gives $name the default $default; src/core/config_table.h: $want_default"
        exit 1
    fi
done < <(awk '$0 == "| variable | default | meaning |" {on = 1} on && !/^\|/ {exit} on' "$README" | grep '^| `APSMPI_')
[ -n "$(awk '$0 == "| variable | default | meaning |"' "$README")" ] || {
    echo "FAILED: README has no table of settings (header '| variable | default | meaning |')"
    exit 1
}
# Findable by name: every variable's row written out as one line '{.name = "APSMPI_X",' in the
# table, its field as FIELD(member) and its kind as &apsmpi_config_<kind> (no names made by
# the preprocessor, which grep and tags cannot find)
names=$(echo "$want" | sed -n 's/^| `\(APSMPI_[A-Z0-9_]*\)`.*/\1/p')
for name in $names; do
    n=$(grep -cE "^ *\{\.name = \"$name\",$" "$TABLE")
    if [ "$n" != 1 ]; then
        echo "FAILED: $name is not written out once as '{.name = \"$name\",' in src/core/config_table.h ($n times)"
        exit 1
    fi
done
rows=$(echo "$names" | wc -l)
fields=$(grep -cE '^ *\.field = FIELD\([a-z_0-9]+\),$' "$TABLE")
kinds=$(grep -cE '^ *\.kind = &apsmpi_config_[a-z_0-9]+,$' "$TABLE")
if [ "$fields" != "$rows" ] || [ "$kinds" != "$rows" ]; then
    echo "FAILED: src/core/config_table.h has $rows rows but $fields '.field = FIELD(member),' and $kinds '.kind = &apsmpi_config_KIND,' lines"
    exit 1
fi
echo "ok: docs/configuration.md lists every APSMPI_* variable of the table, and no other; README's defaults are the table's; each row written out by name"
