#!/bin/sh
# t/layers.sh - the rules of docs/DESIGN.md ("Layers"), checked on the built
# library's objects with nm:
#   1. no function name is defined in two files (static namesakes included);
#   2. a file calls only files of its own layer or of layers below it;
#   3. an algorithm file calls no other algorithm file;
#   4. nothing below the API layer calls the public API (the exported names);
#   5. no two files call each other, directly or around a loop;
#   6. libcltopk_mpi, where built, calls only the library's exported names.
# Layers, bottom first: base (lib/base.c, lib/tune.c), runtime, algorithms,
# plan, api.  A file missing from the map below fails the test: every new file
# is placed on purpose.
LC_ALL=C
export LC_ALL
archive=${LAYERS_ARCHIVE:-.libs/libcltopk.a}
n=0
failed=0
ok() {
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
if ! command -v nm >/dev/null 2>&1 || ! [ -f "$archive" ]; then
    echo "1..0 # SKIP nm or the static library ($archive) is missing (--disable-static?)"
    exit 0
fi
tmp=$(mktemp -d "${CLTOPK_TEST_TMPDIR:-${TMPDIR:-/tmp}}/layers.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# member:type:name for every text symbol and every undefined reference
nm -A "$archive" 2>/dev/null | awk '
    { split($1, p, ":"); m = p[2]; sub(/^libcltopk_la-|^libcpu_[a-z0-9]+_la-/, "", m); sub(/\.o$/, "", m) }
    NF == 3 && ($2 == "T" || $2 == "t") { s = $3; sub(/\..*/, "", s); print m, "D", s }
    NF == 3 && $2 == "U" { print m, "U", $3 }' | sort -u > "$tmp/syms"
# exported names (the public API): those of the shared library, else none
shared=$(dirname "$archive")/libcltopk.so
if [ -f "$shared" ]; then
    nm -D --defined-only "$shared" | awk 'NF == 3 && $2 == "T" { print $3 }' | sort -u
fi > "$tmp/global"
# the layer of each file (member names are file names without the directory)
layer_of() {
    case $1 in
    base|tune|expr) echo 0 ;;
    context|device|program|cachefile|staging|chunk|winners|rselect|devsort|measure|consts|heap|isa|isa_scalar|isa_avx2|isa_avx512|radix|bitonic|bitpack|rowscpu|rowsdev|knndev|querycpu|querydev|indexcpu|indexdev) echo 1 ;;
    algo_*) echo 2 ;;
    table|plan|rowseach) echo 3 ;;
    request|topk|bench|codec|rows|query|index|kernels) echo 4 ;;
    *) echo x ;;
    esac
}
: > "$tmp/layers"
for m in $(awk '{ print $1 }' "$tmp/syms" | sort -u); do
    echo "$m $(layer_of "$m")" >> "$tmp/layers"
done
bad=$(awk '$2 == "x" { print $1 }' "$tmp/layers")
ok "$([ -z "$bad" ] && echo 0 || echo 1)" "every file of the library has a layer${bad:+ (missing: $bad)}"

# 1. a name defined in two files (the per-instruction-set files compile one
# source, cpu/isa_body.h, and count as that one file)
dups=$(awk '$2 == "D" { f = $1; sub(/^isa_(scalar|avx2|avx512)$/, "isa_body", f); print $3, f }' "$tmp/syms" | sort -u | awk '{ c[$1]++; f[$1] = f[$1] " " $2 } END { for (s in c) if (c[s] > 1) print s ":" f[s] }' | sort)
ok "$([ -z "$dups" ] && echo 0 || echo 1)" "no function name is defined in two files"
[ -z "$dups" ] || echo "$dups" | sed 's/^/# /'

# ... and in the sources, where the compiler may have inlined a static
# function away: definitions start at column 0 with their type
src=${srcdir:-.}
srcdups=$(for f in "$src"/lib/*.c "$src"/cpu/*.c; do
        case $f in */isa_avx2.c|*/isa_avx512.c|*/isa_scalar.c) continue ;; esac
        awk -v f="$(basename "$f")" '
            /^[a-z_][a-z_0-9 *]*[ *]\**[a-z_][a-z_0-9]*\(/ && !/;[ \t]*$/ && !/^(return|else|if|for|while|typedef)/ {
                s = $0; sub(/\(.*/, "", s); sub(/.*[ *]/, "", s); print s, f }' "$f"
    done | sort -u | awk '{ c[$1]++; f[$1] = f[$1] " " $2 } END { for (s in c) if (c[s] > 1) print s ":" f[s] }' | sort)
ok "$([ -z "$srcdups" ] && echo 0 || echo 1)" "no function name is defined in two source files"
[ -z "$srcdups" ] || echo "$srcdups" | sed 's/^/# /'

# file -> file edges through undefined references
awk '$2 == "D" { print $3, $1 }' "$tmp/syms" | sort -u > "$tmp/defs"
awk '{ print $1 }' "$tmp/defs" | sort -u > "$tmp/defs.names"
awk '$2 == "U" { print $3, $1 }' "$tmp/syms" | sort -u > "$tmp/uses"
join "$tmp/uses" "$tmp/defs" | awk '$2 != $3 { print $2, $3, $1 }' | sort -u > "$tmp/edges"
awk 'NR == FNR { L[$1] = $2; next } { print $1, L[$1], $2, L[$2], $3 }' "$tmp/layers" "$tmp/edges" > "$tmp/ledges"

# 2. calls go down or sideways
up=$(awk '$2 != "x" && $4 != "x" && $4 > $2 { print $1 " -> " $3 " (" $5 ")" }' "$tmp/ledges")
ok "$([ -z "$up" ] && echo 0 || echo 1)" "no file calls a layer above its own"
[ -z "$up" ] || echo "$up" | sed 's/^/# /'

# 3. algorithm files call no other algorithm file
side=$(awk '$2 == 2 && $4 == 2 { print $1 " -> " $3 " (" $5 ")" }' "$tmp/ledges")
ok "$([ -z "$side" ] && echo 0 || echo 1)" "algorithm files call only the bottom layer and the runtime"
[ -z "$side" ] || echo "$side" | sed 's/^/# /'

# 4. the public entry points (exported names of files above the bottom layer,
# whose public helpers -- status and type names, versions -- are plain
# functions) are called only from the API layer
pub=$(awk 'NR == FNR { g[$1] = 1; next } $2 < 4 && $4 > 0 && ($5 in g) { print $1 " -> " $5 }' "$tmp/global" "$tmp/ledges")
ok "$([ -z "$pub" ] && echo 0 || echo 1)" "nothing below the API layer calls the public entry points"
[ -z "$pub" ] || echo "$pub" | sed 's/^/# /'

# 5. no loops among files: repeatedly drop files that call no remaining file
awk '{ print $1, $3 }' "$tmp/edges" | sort -u > "$tmp/g"
while :; do
    awk '{ print $2 }' "$tmp/g" | sort -u > "$tmp/callees"
    awk '{ print $1 }' "$tmp/g" | sort -u > "$tmp/callers"
    comm -23 "$tmp/callees" "$tmp/callers" > "$tmp/sinks"
    [ -s "$tmp/sinks" ] || break
    awk 'NR == FNR { s[$1] = 1; next } !($2 in s)' "$tmp/sinks" "$tmp/g" > "$tmp/g2"
    mv "$tmp/g2" "$tmp/g"
done
ok "$([ -s "$tmp/g" ] && echo 1 || echo 0)" "no two files call each other, directly or around a loop"
[ -s "$tmp/g" ] && sed 's/^/# in a loop: /' "$tmp/g"

# 6. libcltopk_mpi (where built) sits above the whole library: of the core
# library's names it calls only the exported ones, the public API
mpi_archive=$(dirname "$archive")/libcltopk_mpi.a
if [ -f "$mpi_archive" ] && [ -f "$shared" ]; then
    inner=$(nm "$mpi_archive" 2>/dev/null | awk '$1 == "U" { print $2 }' | sort -u |
        comm -12 - "$tmp/defs.names" | comm -23 - "$tmp/global")
    ok "$([ -z "$inner" ] && echo 0 || echo 1)" "libcltopk_mpi calls only the public API of libcltopk"
    [ -z "$inner" ] || echo "$inner" | sed 's/^/# /'
fi

echo "1..$n"
[ "$failed" -eq 0 ]
