#!/bin/bash
# docs_check.sh: README.md and docs/ stay true: every path and apsmpi_*/APSMPI_* name they mention exists, every link resolves, the glossary's words keep one meaning in the code, and README stays a front door of at most 200 lines.
# Run by make check (srcdir from the script's place); DOCS_CHECK_FILES overrides the files read.
srcdir=$(cd "$(dirname "$0")/.." && pwd)
cd "$srcdir" || exit 1
files=${DOCS_CHECK_FILES:-"README.md docs/*.md apps/train/README.md"}
fail=0
bad() {
    echo "FAILED: $*"
    fail=1
}

# 1. Paths: src/..., scripts/..., tests/..., results/..., docs/..., apps/..., kernels/..., wrappers/...
# as written in the text (without a trailing dot, comma, colon or bracket). A path exists when it
# is a file or folder, a glob that matches one, a {a,b} alternation whose every branch exists, or
# a program that the build makes (named in Makefile.am, or built from PATH.c / PATH.in / ...).
exists() {
    local p=$1
    case $p in
    *{*,*}*)
        local pre=${p%%\{*} rest=${p#*\{}
        local alts=${rest%%\}*} post=${rest#*\}} a
        IFS=, read -ra list <<<"$alts"
        for a in "${list[@]}"; do exists "$pre$a$post" || return 1; done
        return 0 ;;
    esac
    [ -e "$p" ] && return 0
    case $p in *'*'* | *'?'*) compgen -G "$p" >/dev/null && return 0 ;; esac
    local ext
    for ext in c cc cu F90 in sh py; do [ -e "$p.$ext" ] && return 0; done
    grep -qE "(^|[[:space:]])\\\$?\(?[a-z_]*\)?/?$p([[:space:]]|\\\\|$)" Makefile.am && return 0
    return 1
}
for f in $files; do
    [ -f "$f" ] || { bad "$f does not exist"; continue; }
    # code spans and plain text alike; a placeholder in capitals (FOLDER, seedK) is not a path
    grep -oE '(^|[^A-Za-z0-9_./$-])(src|scripts|tests|results|docs|apps|kernels|wrappers)/[A-Za-z0-9_.*?{},/-]*' "$f" |
        sed -E 's/^[^a-z]//; s/[.,:;]+$//; s/\)$//' | sort -u | while read -r p; do
        [[ $p =~ [A-Z]{3,} ]] && continue       # DEST, FOLDER: words of a usage line
        case $p in src/cuda-sim/*) continue ;; esac # GPGPU-Sim's own source (docs/gpusim.md)
        case $p in results/main | results/main/*) continue ;; esac # what scripts/main.sh writes
        exists "$p" || echo "$f: $p"
    done
done >"${TMPDIR:-/tmp}/docs_check.$$"
if [ -s "${TMPDIR:-/tmp}/docs_check.$$" ]; then
    while read -r line; do bad "no such path: $line"; done <"${TMPDIR:-/tmp}/docs_check.$$"
fi
rm -f "${TMPDIR:-/tmp}/docs_check.$$"

# 2. Markdown links to files of the repository, relative to the page
for f in $files; do
    dir=$(dirname "$f")
    grep -oE '\]\([^)#]+' "$f" | sed 's/^](//' | sort -u | while read -r target; do
        case $target in http://* | https://* | mailto:*) continue ;; esac
        [ -e "$dir/$target" ] || echo "FAILED: $f links to $target, which is not there"
    done
done | grep . && fail=1

# 3. Names: every apsmpi_* and APSMPI_* word of the docs is somewhere in the sources or the build
names=$(cat $files | grep -oE '\b(apsmpi|APSMPI)_[A-Za-z0-9_]*[A-Za-z0-9]' | sort -u)
sources=$(git ls-files src wrappers kernels apps tests scripts configure.ac Makefile.am 2>/dev/null)
[ -n "$sources" ] || sources=$(find src wrappers kernels apps tests scripts configure.ac Makefile.am -type f)
for n in $names; do
    # echo | xargs: the file list is long; grep -l stops at the first file that has it
    echo "$sources" | xargs grep -lw -- "$n" 2>/dev/null | grep -q . || bad "$n is named in the docs but nowhere in the sources"
done

# 4. The glossary (docs/layers.md): one meaning per word in the code (comments and strings
#    stripped, so only identifiers count).
#    chunk: only the user's name for a piece, APSMPI_CHUNK_SIZE and its field chunk_size.
#    part:  only the node path's share of a batch: identifiers with "part" live in the node
#           path (node_path.*, node_plan.*, where its part reduction is declared) and where
#           the part reduction is made (entry/reduction.h, entry/reductions.c).
#    owner: the rank whose segment it is; whoever hands an operation its memory is its
#           provider, so the layers that give memory (state/, entry/) name no "owner" but the
#           ones listed in owner_known (each a FILE:IDENTIFIER still to be renamed).
code_of() { gcc -fpreprocessed -dD -E -P -x c "$1" 2>/dev/null | sed -E 's/"([^"\\]|\\.)*"/""/g'; }
owner_known=${DOCS_CHECK_OWNER_KNOWN-}
for f in $(git ls-files 'src/*.c' 'src/*.h' 2>/dev/null || find src -name '*.[ch]'); do
    words=$(code_of "$f" | grep -oE '\b[A-Za-z_][A-Za-z0-9_]*\b' | sort -u)
    for w in $(echo "$words" | grep -iE 'chunk'); do
        case $w in APSMPI_CHUNK_SIZE | chunk_size) ;; *) bad "$f: '$w': 'chunk' is only APSMPI_CHUNK_SIZE (a piece is a piece)" ;; esac
    done
    case $f in
    src/algo/node_path.* | src/algo/node_plan.* | src/entry/reduction.h | src/entry/reductions.c) ;;
    *)
        for w in $(echo "$words" | grep -E '(^|_)parts?(_|$)'); do
            bad "$f: '$w': 'part' is the node path's word only"
        done ;;
    esac
    case $f in src/state/* | src/entry/*)
        for w in $(echo "$words" | grep -iE 'owner'); do
            case " $owner_known " in *" $f:$w "*) ;; *) bad "$f: '$w': an owner is the rank of a segment; memory comes from a provider" ;; esac
        done ;;
    esac
done

# 5. README.md is the front door: at most 200 lines, with its sections (install and run,
#    results, limits, the docs' index); the rest lives in docs/.
lines=$(wc -l <README.md)
[ "$lines" -le 200 ] || bad "README.md has $lines lines; at most 200 (move the detail to docs/)"
for h in '## The two commands' '## Preload it' '## Results today' '## Supported MPIs' '## Limits' '## Documentation'; do
    grep -qx -- "$h" README.md || bad "README.md lacks its section '$h'"
done

[ $fail = 0 ] || exit 1
echo "ok: the paths, links and names of README.md and docs/ exist; chunk, part and owner keep their meaning in src/; README.md is $lines lines"
