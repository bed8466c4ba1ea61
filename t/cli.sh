#!/bin/sh
# t/cli.sh - TAP test of the cltopk command: gen -> topk round trips checked
# against sort(1), cpu vs OpenCL agreement, every error path, JSON output, demo.
#
# Run from the build directory (make check does): the command is ./tools/cltopk,
# or $CLTOPK.  Temporary files (and the kernel cache, CLTOPK_CACHE_DIR) live in a
# mktemp -d directory under $CLTOPK_TEST_TMPDIR (else $TMPDIR, else /tmp),
# removed at exit.  The bitonic-vs-cpu comparisons run on $CLTOPK_TEST_DEVICE,
# else on the first OpenCL device `cltopk devices` lists, and are skipped when
# there is none or CLTOPK_TEST_DEVICE=cpu.  python3, when present, parses the
# JSON outputs.

cli_tap_name=cli
. "$(dirname "$0")/cli_tap.sh"

have_python=no
if command -v python3 > /dev/null 2>&1 && python3 -c 'import json' > /dev/null 2>&1; then
    have_python=yes
fi
json_ok() { # json_ok FILE [lines]: one JSON document, or one per line
    if [ "${2:-}" = lines ]; then
        python3 -c 'import json,sys
for line in sys.stdin:
    json.loads(line)' < "$1"
    else
        python3 -c 'import json,sys; json.load(sys.stdin)' < "$1"
    fi
}

# ------------------------------------------------------------ basics
succeeds '^cltopk [0-9]' "--version" "$CLTOPK" --version
succeeds 'topk' "--help lists the commands" "$CLTOPK" --help
for c in devices gen topk select bench tune demo; do
    succeeds "Usage: cltopk $c" "$c --help" "$CLTOPK" $c --help
done
succeeds "Usage: cltopk topk" "help topk" "$CLTOPK" help topk
# cltopk(1) has a section for every command of --help and every mode of bench
# --help, and groff formats it without warnings
page=${srcdir:-.}/tools/cltopk.1
cmds=$("$CLTOPK" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
[ -n "$cmds" ]
ok $? "--help lists the commands in its Commands: block"
for c in $cmds; do
    grep -q -e "^\.SS cltopk $c " -e "^\.SS cltopk $c\$" "$page"
    ok $? "cltopk(1) has a section for $c"
done
for o in $("$CLTOPK" bench --help | sed -n 's/.*cltopk bench --\([a-z]*\) --help.*/\1/p'); do
    grep -q "^\.SS cltopk bench .*\\\\-\\\\-$o[^a-z-]" "$page"
    ok $? "cltopk(1) has a section for bench --$o"
done
if command -v groff > /dev/null 2>&1; then
    w=$(groff -man -ww -z "$page" 2>&1)
    [ -z "$w" ]
    ok $? "groff formats cltopk(1) without warnings"
    [ -z "$w" ] || diag "$w"
else
    skip "no groff: cltopk(1)'s warnings"
fi

succeeds '^  cpu ' "devices lists the cpu device" "$CLTOPK" devices
grep -q '^auto: ' "$tmp/out"
ok $? "devices says what auto picks"
# the OpenCL device to compare with the cpu device: the one auto picks if it is
# an OpenCL device (a GPU where there is one), else the first listed, else none
case ${CLTOPK_TEST_DEVICE:-} in
cpu) cl_dev= ;;
"" | auto)
    pd='^  \([0-9][0-9]*:[0-9][0-9]*\) .*'
    cl_dev=$(sed -n "s/$pd<- auto\$/\\1/p" "$tmp/out" | head -n 1)
    [ -n "$cl_dev" ] || cl_dev=$(sed -n "s/$pd/\\1/p" "$tmp/out" | head -n 1)
    ;;
*) cl_dev=$CLTOPK_TEST_DEVICE ;;
esac
# make check's quick builds (test_quick_builds in t/testlib.h): where make
# check sets CLTOPK_TEST_QUICK=1 and the device is the default one and POCL's,
# its programs are built without optimisation (the same OpenCL C, a third of
# the time to build); make check-full and a named device build them optimised
if [ "${CLTOPK_TEST_QUICK:-}" = 1 ] && [ -z "${CLTOPK_TEST_DEVICE:-}" ] &&
    [ -z "${CLTOPK_BUILD_OPTIONS:-}" ] && [ "${CLTOPK_TEST_FULL:-0}" = 0 ] &&
    [ -n "${CLTOPK_TEST_QUICK_FILES:-}" ] &&
    [ -n "$cl_dev" ] && grep -q "^  $cl_dev  *Portable Computing Language" "$tmp/out"; then
    CLTOPK_BUILD_OPTIONS=-cl-opt-disable
    # every kernel file but the bitonic reducers' (t/local.mk's TEST_QUICK_FILES)
    CLTOPK_BUILD_FILES=$CLTOPK_TEST_QUICK_FILES
    export CLTOPK_BUILD_OPTIONS CLTOPK_BUILD_FILES
    diag "POCL's builds without optimisation (CLTOPK_TEST_QUICK=0: optimised)"
fi
# (after the choice above, which reads the devices listing in $tmp/out)
fails 2 "needs --split" "devices --measure without --split is refused" \
    "$CLTOPK" devices --measure 2
fails 2 "count from 0 to 1000" "devices --measure takes a count" \
    "$CLTOPK" devices --split all --measure many
if [ $have_python = yes ]; then
    run "$CLTOPK" devices --json
    [ $rc -eq 0 ] && json_ok "$tmp/out"
    ok $? "devices --json parses"
else
    skip "devices --json parses: no python3"
fi

# ------------------------------------------------------------ gen
"$CLTOPK" gen -t f32 -n 1000 -s 7 "$tmp/a.f32" &&
    "$CLTOPK" gen -t f32 -n 1000 -s 7 "$tmp/b.f32" &&
    cmp -s "$tmp/a.f32" "$tmp/b.f32"
ok $? "gen is deterministic for a seed"
"$CLTOPK" gen -t f32 -n 1000 -s 8 "$tmp/c.f32" && ! cmp -s "$tmp/a.f32" "$tmp/c.f32"
ok $? "gen differs for another seed"
# the generator itself is fixed (xoshiro256** seeded by splitmix64): a seed in a
# bug report must give the same data on every machine and in every version
printf '12966619160104079557\n9600361134598540522\n10590380919521690900\n' > "$tmp/golden"
"$CLTOPK" gen -t u64 -n 3 -s 1 --text - | cmp -s - "$tmp/golden"
ok $? "gen -t u64 -s 1 gives the known values"

"$CLTOPK" gen -t f64 -n 1K "$tmp/k.f64" && "$CLTOPK" gen -t u32 -n 2^10 "$tmp/k.u32"
size1=$(wc -c < "$tmp/k.f64") size2=$(wc -c < "$tmp/k.u32")
[ "$size1" -eq 8192 ] && [ "$size2" -eq 4096 ]
ok $? "gen -n 1K and 2^10 write 1024 elements ($size1 and $size2 bytes)"

allgood=0
for t in f32 f64 i32 u32 i64 u64; do
    for d in uniform normal increasing decreasing equal few bucket-killer special; do
        "$CLTOPK" gen -t $t -n 300 -d $d --text - > "$tmp/g.txt" || allgood=1
        [ "$(wc -l < "$tmp/g.txt")" -eq 300 ] || allgood=1
    done
done
ok $allgood "gen writes every type and distribution as text"

# text and binary of the same data give the same top-k, bit for bit (NaN payloads
# too; the JSON's first line names the format, the results follow); without
# --text or --binary the name says: binary, text for .txt
allgood=0
for t in f32 f64 i64 u32; do
    topk="$CLTOPK topk -t $t -k 400 --device cpu --json"
    "$CLTOPK" gen -t $t -n 400 -d special -s 3 "$tmp/s.bin" &&
        "$CLTOPK" gen -t $t -n 400 -d special -s 3 --text "$tmp/s.txt" &&
        $topk --binary "$tmp/s.bin" > "$tmp/s1" && $topk --text "$tmp/s.txt" > "$tmp/s2" &&
        grep -q '"format": "binary"' "$tmp/s1" && grep -q '"format": "text"' "$tmp/s2" &&
        tail -n +2 "$tmp/s1" > "$tmp/s1.rows" && tail -n +2 "$tmp/s2" | cmp -s - "$tmp/s1.rows" ||
        { allgood=1; diag "text/binary differ for $t"; }
done
ok $allgood "text and binary inputs of special values agree bit for bit"
$topk "$tmp/s.bin" > "$tmp/s3" && cmp -s "$tmp/s1" "$tmp/s3" &&
    $topk "$tmp/s.txt" > "$tmp/s4" && cmp -s "$tmp/s2" "$tmp/s4"
ok $? "without --text or --binary: binary, and text for a .txt name"

# the format is never guessed from the contents: 8 printable bytes are two
# binary int32 unless --text or a .txt/.csv name says text; the report says which
printf '1234789\n' > "$tmp/p.i32"
run "$CLTOPK" topk -t i32 -k 2 --device cpu "$tmp/p.i32"
printf '0 875770417\n1 171522103\n' > "$tmp/p.want"
rows "$tmp/out" | cmp -s - "$tmp/p.want" &&
    grep -q '^input      2 x i32 (binary: the default; --text reads text), the 2 largest$' "$tmp/out"
ok $? "a binary file of printable bytes is read as binary, and the report says so"
run sh -c '"$1" topk -t i32 -k 2 --device cpu - < "$2"' sh "$CLTOPK" "$tmp/p.i32"
rows "$tmp/out" | cmp -s - "$tmp/p.want"
ok $? "standard input is binary without --text"
run "$CLTOPK" topk -t i32 -k 1 --text --device cpu "$tmp/p.i32"
[ "$(rows "$tmp/out")" = "0 1234789" ] && grep -q '(text: --text)' "$tmp/out"
ok $? "--text reads it as text, and the report says so"
printf '3\n9\n' > "$tmp/p.CSV"
run "$CLTOPK" topk -t i32 -k 1 --device cpu "$tmp/p.CSV"
[ "$(rows "$tmp/out")" = "1 9" ] && grep -q '(text: the .csv name)' "$tmp/out"
ok $? "a .csv name (any case) is text"
run "$CLTOPK" topk -t i32 -k 1 --binary --device cpu "$tmp/p.CSV"
[ "$(rows "$tmp/out")" = "0 171510323" ]
ok $? "--binary reads a .csv name as binary"
"$CLTOPK" gen -t u64 -n 3 -s 1 "$tmp/golden.txt" && cmp -s "$tmp/golden.txt" "$tmp/golden" &&
    "$CLTOPK" gen -t u64 -n 3 -s 1 --binary "$tmp/bin.txt" && [ "$(wc -c < "$tmp/bin.txt")" -eq 24 ]
ok $? "gen writes text for a .txt name, binary with --binary"

# ------------------------------------------------------------ gen's output file
# a failed write never removes a path the command did not create: the output is
# a temporary file renamed over the target at the end; devices and FIFOs are
# written directly
# ------------------------------------------------------------ many rows, kNN
printf '3\n1\n4\n1\n5\n9\n2\n6\n5\n3\n5\n8\n' > "$tmp/r.txt"
run "$CLTOPK" topk -t i32 -k 2 --rows 3 --device cpu "$tmp/r.txt"
[ $rc -eq 0 ] && [ "$(awk '$1 ~ /^[0-9]+$/ && NF == 4 { printf "%s:%s:%s ", $1, $3, $4 }' "$tmp/out")" = \
    "0:2:4 0:0:3 1:1:9 1:3:6 2:3:8 2:0:5 " ]
ok $? "topk --rows 3: the top 2 of each row"
run "$CLTOPK" topk -t i32 -k 1 --rows 2 --ld 7 --smallest --device cpu "$tmp/r.txt"
[ $rc -eq 0 ] && [ "$(awk '$1 ~ /^[0-9]+$/ && NF == 4 { printf "%s:%s ", $3, $4 }' "$tmp/out")" = \
    "1:1 2:3 " ]
ok $? "topk --rows 2 --ld 7 --smallest: rows 7 apart, 5 long"
printf '0\n0\n1\n5\n12\n' > "$tmp/o.txt"
run "$CLTOPK" topk -t i32 -k 2 --segments "$tmp/o.txt" --device cpu "$tmp/r.txt"
[ $rc -eq 0 ] && [ "$(awk '$1 ~ /^[0-9]+$/ && NF == 4 { printf "%s:%s ", $3, $4 }' "$tmp/out")" = \
    "-1:0 -1:0 0:3 -1:0 3:5 1:4 0:9 6:8 " ]
ok $? "topk --segments: an empty and a short segment padded with -1"
fails 1 "not a multiple of 5 rows" "topk --rows that do not divide the file" \
    "$CLTOPK" topk -t i32 -k 1 --rows 5 --device cpu "$tmp/r.txt"
fails 1 "smaller than offsets" "topk --segments with decreasing offsets" \
    sh -c 'printf "0\n5\n2\n" > "$2/bad.txt"; "$1" topk -t i32 -k 1 --segments "$2/bad.txt" --device cpu "$2/r.txt"' sh "$CLTOPK" "$tmp"
fails 2 "goes with --rows" "topk --ld without --rows" \
    "$CLTOPK" topk -t i32 -k 1 --ld 4 --device cpu "$tmp/r.txt"
fails 2 "at least 1 row" "topk --rows 0 is refused (not a single top-k)" \
    "$CLTOPK" topk -t i32 -k 1 --rows 0 --device cpu "$tmp/r.txt"
fails 2 "do not take --packed" "topk --packed --rows is refused" \
    "$CLTOPK" topk -k 1 --packed --rows 2 --device cpu "$tmp/r.txt"
fails 1 "more than ld" "topk --rows --ld: a last row longer than ld" \
    "$CLTOPK" topk -t i32 -k 1 --rows 3 --ld 2 --device cpu "$tmp/r.txt"
: > "$tmp/empty.i32"
run "$CLTOPK" topk -t i32 -k 0 --rows 2 --device cpu "$tmp/empty.i32"
[ $rc -eq 0 ] && grep -q '2 rows x 0 of i32' "$tmp/out"
ok $? "topk --rows 2 of an empty file: two rows of no column, k = 0"
fails 1 "larger than cols = 0" "topk -k 1 --rows 2 of an empty file" \
    "$CLTOPK" topk -t i32 -k 1 --rows 2 --device cpu "$tmp/empty.i32"
succeeds "Usage: cltopk knn" "knn --help" "$CLTOPK" knn --help
succeeds "^-> cpu-heap" "topk --rows --explain on the cpu device" \
    "$CLTOPK" topk -t i32 -k 2 --rows 3 --explain --device cpu "$tmp/r.txt"
printf '0\n0\n1\n1\n' > "$tmp/q.txt"
printf '5\n5\n1\n1\n0\n0\n1\n1\n' > "$tmp/p.txt"
run "$CLTOPK" knn -k 2 -d 2 --device cpu "$tmp/q.txt" "$tmp/p.txt"
[ $rc -eq 0 ] && [ "$(awk '$1 ~ /^[0-9]+$/ && NF == 4 { printf "%s:%s ", $3, $4 }' "$tmp/out")" = \
    "2:0 1:2 1:0 3:0 " ]
ok $? "knn: nearest points, ties by smaller index"
fails 1 "multiples of d" "knn with a dimension that does not divide the files" \
    "$CLTOPK" knn -k 1 -d 3 --device cpu "$tmp/q.txt" "$tmp/p.txt"
for dist in uniform normal clustered; do
    run "$CLTOPK" gen --points 300 --dims 5 --dist $dist -s 3 "$tmp/gp1.f32"
    run "$CLTOPK" gen --points 300 --dims 5 --dist $dist -s 3 "$tmp/gp2.f32"
    run "$CLTOPK" gen --points 300 --dims 5 --dist $dist -s 4 "$tmp/gp3.f32"
    cmp -s "$tmp/gp1.f32" "$tmp/gp2.f32" && ! cmp -s "$tmp/gp1.f32" "$tmp/gp3.f32" &&
        [ "$(wc -c < "$tmp/gp1.f32")" -eq 6000 ]
    ok $? "gen --points 300 --dims 5 --dist $dist: 6000 bytes, the same for a seed only"
done
run "$CLTOPK" gen --points 7 --dims 5 --dist clustered -s 9 "$tmp/gq.f32"
run "$CLTOPK" knn -k 3 -d 5 --device cpu "$tmp/gq.f32" "$tmp/gp1.f32"
[ $rc -eq 0 ] && [ "$(awk '$1 ~ /^[0-9]+$/ && NF == 4' "$tmp/out" | wc -l)" -eq 21 ]
ok $? "knn on gen --points files: 7 queries x 3 neighbours"
fails 2 "uniform, normal or clustered" "gen --points with a tuple distribution" \
    "$CLTOPK" gen --points 10 --dims 2 --dist correlated "$tmp/x.f32"
fails 2 "not both" "gen --points with --tuples" \
    "$CLTOPK" gen --points 10 --tuples 10 --dims 2 "$tmp/x.f32"
if [ -n "$cl_dev" ]; then
    "$CLTOPK" gen -t f32 -n 3000 "$tmp/kp.f32" > /dev/null 2>&1 &&
        "$CLTOPK" gen -t f32 -n 300 -s 9 "$tmp/kq.f32" > /dev/null 2>&1
    a1=$("$CLTOPK" knn -k 7 -d 30 --json --device cpu "$tmp/kq.f32" "$tmp/kp.f32" | sed 's/"device": "[^"]*"//')
    a2=$("$CLTOPK" knn -k 7 -d 30 --json --device "$cl_dev" "$tmp/kq.f32" "$tmp/kp.f32" | sed 's/"device": "[^"]*"//')
    [ -n "$a1" ] && [ "$a1" = "$a2" ]
    ok $? "knn: cpu and $cl_dev agree bit for bit"
else
    skip "knn cpu vs OpenCL: no OpenCL device"
fi

succeeds "x 300 f32 k=5  cpu-heap" "bench --rows on the cpu device" \
    "$CLTOPK" bench --rows 4 -n 300 -k 5 --algo auto,cpu-heap --reps 2 --device cpu
succeeds "auto .*-> cpu-heap" "bench --rows: an auto row says what AUTO ran" \
    "$CLTOPK" bench --rows 4 -n 300 -k 5 --algo auto --reps 1 --device cpu
succeeds "segments (1..50, 2000 elements)" "bench --segments" \
    "$CLTOPK" bench --segments -n 2000 --max-len 50 -k 3 --reps 2 --device cpu
succeeds "knn l2 nq=3 np=500 d=5" "bench --knn" \
    "$CLTOPK" bench --knn -q 3 -p 500 -d 5 -k 4 --reps 2 --device cpu
fails 2 "one of --rows R, --segments and --knn" "bench --rows with --knn is refused" \
    "$CLTOPK" bench --rows 4 --knn --device cpu
succeeds "4 x 300 f32 increasing smallest k=5  auto" "bench --rows --dist --smallest" \
    "$CLTOPK" bench --rows 4 -n 300 -k 5 --reps 1 --dist increasing --smallest --device cpu
fails 2 "unknown distribution 'sideways'" "bench --rows: an unknown --dist is refused" \
    "$CLTOPK" bench --rows 4 -n 300 -k 5 --dist sideways --device cpu
fails 2 "--dist and --smallest are for --rows and --segments" "bench --knn --smallest is refused" \
    "$CLTOPK" bench --knn -q 3 -p 500 -d 5 --smallest --device cpu
# bench --query --paths: path words, each with CLTOPK_QUERY settings after '+'
succeeds "sf+lazy=1 ms" "bench --query --paths with settings after '+'" \
    "$CLTOPK" bench --query -n 4096 -k 5 --q1 0.5 --reps 1 --paths tile,sf+lazy=1 --device cpu
fails 2 "bad --paths 'ti'" "bench --query --paths: an unknown path word" \
    "$CLTOPK" bench --query -n 4096 --paths ti --device cpu
# bench --help points to each mode's own help, and each of those answers
for o in cpu stream rows segments knn query unpack; do
    "$CLTOPK" bench --help | grep -q -- "cltopk bench --$o --help" &&
        "$CLTOPK" bench --$o --help | grep -q "^Usage: cltopk bench --"
    ok $? "bench --help points to bench --$o --help, which answers"
done

# ------------------------------------------------------------ index (issue 15)
succeeds "Usage: cltopk index" "index --help" "$CLTOPK" index --help
run "$CLTOPK" gen --tuples 1000 --dims 3 --dist correlated -s 7 "$tmp/t1.f32"
run "$CLTOPK" gen --tuples 1000 --dims 3 --dist correlated -s 7 "$tmp/t2.f32"
cmp -s "$tmp/t1.f32" "$tmp/t2.f32" && [ "$(wc -c < "$tmp/t1.f32")" -eq 12000 ]
ok $? "gen --tuples 1000 --dims 3: 12000 bytes, the same for a seed"
run "$CLTOPK" gen --tuples 1000 -d 3 --dist correlated -s 7 "$tmp/t3.f32"
cmp -s "$tmp/t1.f32" "$tmp/t3.f32"
ok $? "gen --tuples 1000 -d 3 (the issue's spelling) writes what --dims 3 writes"
fails 2 "a number gives the dimensions" "gen -t f32 -d 3: a number is no distribution" \
    "$CLTOPK" gen -t f32 -n 10 -d 3 "$tmp/x.f32"
fails 2 "correlated, independent or anticorrelated" "gen --tuples: a distribution of gen -t" \
    "$CLTOPK" gen --tuples 10 --dims 2 --dist uniform "$tmp/x.f32"
fails 2 "give --dims" "gen --tuples without --dims" \
    "$CLTOPK" gen --tuples 10 --dist independent "$tmp/x.f32"
"$CLTOPK" gen --tuples 20000 --dims 4 --dist anticorrelated "$tmp/anti.f32" > /dev/null 2>&1
succeeds "20000 tuples x 4 attributes, angle partitioning" "index build" \
    "$CLTOPK" index build --dims 4 --partitioning angle --device cpu "$tmp/anti.f32" "$tmp/anti.cix"
run "$CLTOPK" index query -k 20 --attrs 3,0,2 --weights 1,0.25,2 --device cpu "$tmp/anti.cix"
grep -v '^#' "$tmp/out" > "$tmp/iq1"
run "$CLTOPK" index query -k 20 --attrs 3,0,2 --weights 1,0.25,2 --full --device cpu \
    "$tmp/anti.cix"
grep -v '^#' "$tmp/out" > "$tmp/iq2"
[ "$(wc -l < "$tmp/iq1")" -eq 20 ] && cmp -s "$tmp/iq1" "$tmp/iq2"
ok $? "index query: the index and --full print the same 20 tuples and scores"
if [ -n "$cl_dev" ]; then
    run "$CLTOPK" index query -k 20 --attrs 3,0,2 --weights 1,0.25,2 --device "$cl_dev" \
        "$tmp/anti.cix"
    grep -v '^#' "$tmp/out" > "$tmp/iq3"
    cmp -s "$tmp/iq1" "$tmp/iq3"
    ok $? "index query: cpu and $cl_dev agree bit for bit"
else
    skip "no OpenCL device: index query on both"
fi
# m = 0 (--attrs none, or an empty list): every score 0, tuples 0 .. k-1, by
# the index and by --full, on the cpu device and the OpenCL one
printf '%s\t%s\t0\n' 0 0 1 1 2 2 3 3 4 4 > "$tmp/iq0"
run "$CLTOPK" index query -k 5 --attrs none --device cpu "$tmp/anti.cix"
[ $rc -eq 0 ] && grep -v '^#' "$tmp/out" | cmp -s - "$tmp/iq0" &&
    grep -q '^# tuples evaluated 20000 of 20000 .*full evaluation' "$tmp/out"
ok $? "index query --attrs none: m = 0, tuples 0 .. 4 with score 0"
m0=0
is_m0() { [ $rc -eq 0 ] && grep -v '^#' "$tmp/out" | cmp -s - "$tmp/iq0" || m0=1; }
run "$CLTOPK" index query -k 5 --attrs= --device cpu "$tmp/anti.cix"
is_m0
run "$CLTOPK" index query -k 5 --full --attrs none --weights none --device cpu "$tmp/anti.cix"
is_m0
run "$CLTOPK" index query -k 5 --attrs '' --weights '' --device cpu "$tmp/anti.cix"
is_m0
if [ -n "$cl_dev" ]; then
    run "$CLTOPK" index query -k 5 --attrs '' --device "$cl_dev" "$tmp/anti.cix"
    is_m0
fi
ok $m0 "index query: --attrs '' and --full give the same m = 0 answer${cl_dev:+ (and on $cl_dev)}"
fails 2 "1 weights for 0 attributes" "index query: weights with --attrs none are refused" \
    "$CLTOPK" index query -k 3 --attrs none --weights 1 --device cpu "$tmp/anti.cix"
fails 2 "0 weights for 2 attributes" "index query: --weights none with attributes is refused" \
    "$CLTOPK" index query -k 3 --attrs 0,1 --weights none --device cpu "$tmp/anti.cix"
fails 2 "give --attrs LIST" "index query: no --attrs is still refused" \
    "$CLTOPK" index query -k 3 --device cpu "$tmp/anti.cix"
fails 1 "attr\[1\] = 9" "index query: an attribute out of range" \
    "$CLTOPK" index query -k 3 --attrs 0,9 --device cpu "$tmp/anti.cix"
fails 1 "weights must be finite and >= 0" "index query: a negative weight" \
    "$CLTOPK" index query -k 3 --attrs 0,1 --weights 1,-1 --device cpu "$tmp/anti.cix"
head -c 5000 "$tmp/anti.cix" > "$tmp/cut.cix"
fails 1 "corrupt" "index query: a truncated index file" \
    "$CLTOPK" index query -k 3 --attrs 0 --device cpu "$tmp/cut.cix"
if [ $have_python = yes ]; then
    run "$CLTOPK" index bench --tuples 20000 --dims 4 -m 2,4 -k 4,32 --reps 1 --device cpu --json
    [ $rc -eq 0 ] && [ "$(wc -l < "$tmp/out")" -eq 24 ] && json_ok "$tmp/out" lines
    ok $? "index bench --json: a line per distribution, partitioning, m and k"
else
    skip "index bench --json: no python3"
fi

if [ -w /dev/full ]; then
    ln -s /dev/full "$tmp/full.lnk"
    fails 1 "cannot write '.*full.lnk': No space" \
        "gen: a failed write to a link to /dev/full says so" \
        "$CLTOPK" gen -t f32 -n 100000 "$tmp/full.lnk"
    [ -L "$tmp/full.lnk" ] && [ -c /dev/full ]
    ok $? "gen: the link to /dev/full and the device are still there"
    if [ "$(id -u)" -eq 0 ] && mknod "$tmp/full.dev" c 1 7 2> /dev/null; then
        run "$CLTOPK" gen -t f32 -n 100000 "$tmp/full.dev"
        [ $rc -eq 1 ] && [ -c "$tmp/full.dev" ]
        ok $? "gen: a failed write leaves a device node in place"
    else
        skip "gen onto a device node: not root, or no mknod"
    fi
else
    skip "no /dev/full"
    skip "no /dev/full"
    skip "no /dev/full"
fi
run "$CLTOPK" gen -t u64 -n 1000 /dev/null
[ $rc -eq 0 ] && [ -c /dev/null ]
ok $? "gen: writing to /dev/null succeeds, and it is still a device"
if command -v timeout > /dev/null 2>&1 && mkfifo "$tmp/fifo" 2> /dev/null; then
    timeout 20 cat "$tmp/fifo" > "$tmp/fifo.out" &
    "$CLTOPK" gen -t u64 -n 3 -s 1 --text "$tmp/fifo"
    st=$?
    wait
    [ $st -eq 0 ] && [ -p "$tmp/fifo" ] && cmp -s "$tmp/fifo.out" "$tmp/golden"
    ok $? "gen: a FIFO is written directly and stays a FIFO"
else
    skip "no mkfifo or timeout"
fi
# a failed write leaves the old file as it was, and no temporary behind
"$CLTOPK" gen -t f32 -n 1000 -s 7 "$tmp/keep.f32" && chmod 640 "$tmp/keep.f32" &&
    cp "$tmp/keep.f32" "$tmp/keep.orig"
mkdir "$tmp/lim" && cp "$tmp/keep.f32" "$tmp/lim/keep.f32" && chmod 640 "$tmp/lim/keep.f32"
(ulimit -f 8 && exec "$CLTOPK" gen -t f32 -n 100000 "$tmp/lim/keep.f32") > /dev/null 2> "$tmp/err"
st=$? good=1
[ $st -eq 1 ] && grep -q "cannot write .*keep.f32" "$tmp/err" &&
    cmp -s "$tmp/lim/keep.f32" "$tmp/keep.orig" && [ "$(ls -A "$tmp/lim")" = keep.f32 ] && good=0
ok $good "gen: a write past ulimit -f fails and leaves the old file intact, no temporary"
[ $good -eq 0 ] || diag "exit $st, $(cat "$tmp/err"); $(ls -A "$tmp/lim")"
# a successful write replaces the file and keeps its permissions; a link is
# followed, not replaced
ln -s keep.f32 "$tmp/keep.lnk"
"$CLTOPK" gen -t f32 -n 10 "$tmp/keep.lnk" && [ -L "$tmp/keep.lnk" ] &&
    [ "$(wc -c < "$tmp/keep.f32")" -eq 40 ] &&
    ls -l "$tmp/keep.f32" | grep -q '^-rw-r-----'
ok $? "gen over a link replaces the file it names, keeping its mode 640"
(umask 022 && exec "$CLTOPK" gen -t f32 -n 10 "$tmp/new.f32") && ls -l "$tmp/new.f32" | grep -q '^-rw-r--r--'
ok $? "gen: a new file gets 0666 less the umask"
fails 1 "is a directory" "gen: a directory as output" "$CLTOPK" gen -t f32 -n 10 "$tmp"
if [ "$(id -u)" -ne 0 ]; then
    chmod 444 "$tmp/new.f32"
    fails 1 "cannot write '.*new.f32': Permission denied" "gen: a read-only file is not replaced" \
        "$CLTOPK" gen -t f32 -n 20 "$tmp/new.f32"
    [ "$(wc -c < "$tmp/new.f32")" -eq 40 ]
    ok $? "gen: the read-only file is intact"
else
    skip "root may write any file: a read-only output"
    skip "root may write any file: a read-only output"
fi

# ------------------------------------------------------------ independent check
# expected = the data sorted by value, ties by position, with sort(1)
expect() { # expect FILE SORTFLAGS K: "index value" lines
    awk '{ print NR - 1, $1 }' "$1" | sort -s -k2,2"$2" -k1,1n | head -n "$3"
}
check_topk() { # check_topk TYPE DIST SORTFLAGS K [OPTIONS]
    t=$1 d=$2 sf=$3 k=$4
    shift 4
    "$CLTOPK" gen -t $t -n 2000 -d $d -s 11 --text "$tmp/x.txt" &&
        "$CLTOPK" topk -t $t -k $k --device cpu "$@" "$tmp/x.txt" > "$tmp/x.out"
    st=$?
    expect "$tmp/x.txt" "$sf" "$k" > "$tmp/x.want"
    rows "$tmp/x.out" > "$tmp/x.got"
    if [ $st -eq 0 ] && cmp -s "$tmp/x.want" "$tmp/x.got"; then
        ok 0 "topk $t $d k=$k $* matches sort(1)"
    else
        ok 1 "topk $t $d k=$k $* matches sort(1)"
        diag "$(diff "$tmp/x.want" "$tmp/x.got" | head -n 10)"
    fi
}
check_topk i32 uniform nr 25
check_topk i32 normal n 25 --smallest
check_topk f32 uniform gr 40
check_topk f32 normal g 40 --smallest
check_topk f64 normal gr 33
check_topk u32 few nr 50
check_topk i32 few n 50 --smallest
check_topk f32 equal gr 10

# select = row r of topk
"$CLTOPK" topk -t f32 -k 10 --device cpu "$tmp/x.txt" > "$tmp/t.out" 2>&1 &&
    "$CLTOPK" select -t f32 -r 9 --device cpu "$tmp/x.txt" > "$tmp/r.out" 2>&1
rows "$tmp/t.out" | tail -n 1 > "$tmp/t.last"
rows "$tmp/r.out" > "$tmp/r.row"
cmp -s "$tmp/t.last" "$tmp/r.row"
ok $? "select -r 9 is row 9 of topk -k 10"

# standard input, through a pipe (not a seekable file)
cat "$tmp/x.txt" | "$CLTOPK" topk -t f32 -k 10 --text --device cpu - > "$tmp/t2.out" 2>&1
rows "$tmp/t.out" > "$tmp/t.rows"
rows "$tmp/t2.out" | cmp -s - "$tmp/t.rows"
ok $? "topk reads standard input"

# NaN, infinities and zeros in text
printf '0\n-0\ninf\nnan(0x1)\n-nan\n1\n-inf\n' > "$tmp/sp.txt"
"$CLTOPK" topk -t f32 -k 7 --text --device cpu "$tmp/sp.txt" > "$tmp/sp.out" 2>&1
printf '3 nan(0x1)\n4 -nan\n2 inf\n5 1\n0 0\n1 -0\n6 -inf\n' > "$tmp/sp.want"
rows "$tmp/sp.out" | cmp -s - "$tmp/sp.want"
ok $? "NaN > inf, -0 == 0 (ties by position), NaN payloads kept"
"$CLTOPK" topk -t f32 -k 7 --smallest --text --device cpu "$tmp/sp.txt" > "$tmp/sp.out" 2>&1
printf '6 -inf\n0 0\n1 -0\n5 1\n2 inf\n3 nan(0x1)\n4 -nan\n' > "$tmp/sp.want"
rows "$tmp/sp.out" | cmp -s - "$tmp/sp.want"
ok $? "the same, smallest first"

printf '# comment\n\n 5 \n-2147483648\n0x7fffffff\n' > "$tmp/c.txt"
"$CLTOPK" topk -t i32 -k 3 --text - < "$tmp/c.txt" > "$tmp/c.out" 2>&1
printf '2 2147483647\n0 5\n1 -2147483648\n' > "$tmp/c.want"
rows "$tmp/c.out" | cmp -s - "$tmp/c.want"
ok $? "text input: comments, blank lines, blanks, limits and hex"

printf '' | "$CLTOPK" topk -t i32 -k 0 --text - > /dev/null 2>&1
ok $? "empty input with k = 0"

# ------------------------------------------------------------ OpenCL vs cpu
if [ -n "$cl_dev" ]; then
    # the JSON results (from the second line on) name no device or algorithm
    allgood=0
    for spec in "f32 special 100" "f64 bucket-killer 17" "i64 few 64" "u32 uniform 1" \
        "i32 normal 33"; do
        set -- $spec
        for dir in --largest --smallest; do
            topk="$CLTOPK topk -t $1 -k $3 $dir --binary --json"
            "$CLTOPK" gen -t $1 -n 5000 -d $2 -s 5 "$tmp/cl.bin" &&
                $topk --device cpu --algo cpu-heap "$tmp/cl.bin" > "$tmp/cl1" &&
                $topk --device "$cl_dev" --algo bitonic "$tmp/cl.bin" > "$tmp/cl2" &&
                tail -n +2 "$tmp/cl1" > "$tmp/cl1.rows" &&
                tail -n +2 "$tmp/cl2" | cmp -s - "$tmp/cl1.rows" ||
                { allgood=1; diag "cpu-heap and bitonic on $cl_dev differ: $spec $dir"; }
        done
    done
    ok $allgood "bitonic on $cl_dev agrees with cpu-heap bit for bit"
    select="$CLTOPK select -t i32 -r 16 --smallest --binary"
    $select --device "$cl_dev" --algo bitonic "$tmp/cl.bin" > "$tmp/o1" &&
        $select --device cpu "$tmp/cl.bin" > "$tmp/o2" &&
        rows "$tmp/o1" > "$tmp/o1.rows" && rows "$tmp/o2" | cmp -s - "$tmp/o1.rows"
    ok $? "select with bitonic on $cl_dev agrees with the cpu"
else
    skip "no OpenCL device: bitonic vs cpu-heap"
    skip "no OpenCL device: select with bitonic"
fi

# ------------------------------------------------------------ JSON
if [ $have_python = yes ]; then
    "$CLTOPK" topk -t f32 -k 7 --text --json "$tmp/sp.txt" > "$tmp/j1" 2>&1 && json_ok "$tmp/j1"
    ok $? "topk --json parses (NaN and inf as strings)"
    "$CLTOPK" select -t f32 -r 2 --text --json "$tmp/sp.txt" > "$tmp/j2" 2>&1 && json_ok "$tmp/j2"
    ok $? "select --json parses"
    printf '' | "$CLTOPK" topk -t i32 -k 0 --text --json - > "$tmp/j3" 2>&1 && json_ok "$tmp/j3"
    ok $? "topk --json with k = 0 parses"
    # (the cpu device: the rows' JSON is the point, and POCL's kernel builds
    # for AUTO cost make check some 18 s)
    "$CLTOPK" bench -n 64K -k 1,5000 --algo cpu-heap,auto,cpu-bitonic --dist uniform,special --reps 2 \
        --device cpu --json > "$tmp/j4" 2> "$tmp/err" && json_ok "$tmp/j4" lines &&
        [ "$(wc -l < "$tmp/j4")" -eq 12 ] && grep -q '"status": "unsupported"' "$tmp/j4"
    ok $? "bench --json: one object per row, unsupported rows included"
else
    for _ in 1 2 3 4; do skip "no python3 to parse JSON"; done
fi

# ------------------------------------------------------------ bench, demo
# (on the cpu device: bench --json above ran it on the default device)
succeeds 'cpu-heap' "bench runs" "$CLTOPK" bench -n 2^16 -k 1,32 --reps 2 --device cpu
# auto's row is labelled with the plan cltopk_benchmark follows; the plan gets
# the order only (with --keys-only every auto row failed: unknown flag bits)
succeeds '^uniform  *8  auto -> cpu-heap  *[0-9]' "bench --keys-only --algo auto on the cpu device" \
    "$CLTOPK" bench --device cpu -n 2^12 -k 8 --algo auto --keys-only --smallest --reps 1
if [ -n "$cl_dev" ]; then
    run "$CLTOPK" bench --device "$cl_dev" -n 2^12 -k 8 --algo auto --keys-only --reps 1 --json
    [ $rc -eq 0 ] && grep -q '"algo": "auto", "ran": "[a-z-]*", .*"status": "ok"' "$tmp/out" &&
        ! grep -q '"ran": "auto"' "$tmp/out"
    ok $? "bench --keys-only --algo auto on $cl_dev"
else
    skip "no OpenCL device: bench --keys-only --algo auto"
fi
succeeds 'unsupported: ' "bench prints unsupported rows" \
    "$CLTOPK" bench -n 2^13 -k 5000 --algo cpu-bitonic --reps 1
succeeds 'all results agree' "demo: every device agrees" "$CLTOPK" demo
# bench --cpu: a k it cannot time is a bad command line (it printed an empty
# table, or error rows, with exit 0), and the thread count is the real one
fails 2 "k = 1001 is not between 1 and n = 1000" "bench --cpu: k > n" \
    "$CLTOPK" bench --cpu -n 1000 -k 1001 --no-peers
[ ! -s "$tmp/out" ]
ok $? "bench --cpu: k > n prints no table"
fails 2 "k = 0 is not between 1 and n = 1000" "bench --cpu: k = 0" \
    "$CLTOPK" bench --cpu -n 1000 -k 0 --no-peers
bcpu="$CLTOPK bench --cpu -n 1000 -k 10 --no-peers --reps 1 --dist uniform --algo cpu-heap,auto"
OMP_NUM_THREADS=3 $bcpu > "$tmp/out" 2>&1
grep -q '^threads    3 (OpenMP' "$tmp/out"
ok $? "bench --cpu shows OpenMP's default thread count (OMP_NUM_THREADS=3)"
succeeds '^threads    1 (--threads 1)' "bench --cpu --threads 1 shows 1" $bcpu --threads 1
grep -q '^uniform  *10  auto -> cpu-heap ' "$tmp/out"
ok $? "bench --cpu: auto shows the plan's choice"
if [ -n "$cl_dev" ]; then
    # one candidate, the kernel of u32 k = 1 (built above): quick even on POCL
    succeeds '^ *1  *1  16,64,' "tune prints the best configuration per k" \
        "$CLTOPK" tune --device "$cl_dev" -t u32 -n 4096 -k 1 -b 16 --wg 64 --reps 1
    grep -q 'bcfg_rows\[\]' "$tmp/out"
    ok $? "tune ends with the bcfg_rows[] entries (or says there are none)"
    succeeds 'everything: .* [0-9][0-9]*\.[0-9]' "bench --grid ablation" \
        "$CLTOPK" bench --device "$cl_dev" --grid ablation -n 4096 -k 1 --reps 1
else
    skip "no OpenCL device: tune"
    skip "no OpenCL device: tune's bcfg_rows[] entries"
    skip "no OpenCL device: bench --grid ablation"
fi

# ---- the planner's explanation, sbp-radix and radix-select by name
printf '5\n1\n4\n1\n5\n9\n2\n6\n' > "$tmp/e.txt"
succeeds '^choice: cpu-heap' "topk --explain on the cpu device" \
    "$CLTOPK" topk -k 3 -t i32 --text --explain --device cpu "$tmp/e.txt"
# select --explain is in select --help, and select takes it (its option table
# used to end early)
succeeds '--explain' "select --help lists --explain" "$CLTOPK" select --help
run "$CLTOPK" select -r 2 -t i32 --explain --device cpu "$tmp/e.txt"
[ $rc -eq 0 ] && grep -q '^plan for the selection of rank' "$tmp/out" &&
    grep -q '^choice: cpu-radix' "$tmp/out" && [ "$(rows "$tmp/out")" = "0 5" ]
ok $? "select --explain prints the selection's plan and the element"
[ $rc -eq 0 ] || diag "$(cat "$tmp/err")"
# select with auto reports what the selection's plan chose (it said
# radix-select whatever the plan): on the cpu device and, where there is one,
# an OpenCL device, at a middle rank and a small one
"$CLTOPK" gen -t f32 -n 300000 -s 3 "$tmp/sel.f32"
for d in cpu $cl_dev; do
    run cltopk_on "$d" select -r 150000 --explain --json --device "$d" "$tmp/sel.f32"
    ran=$(sed -n 's/.*"ran": "\([a-z-]*\)".*/\1/p' "$tmp/out")
    [ $rc -eq 0 ] && [ -n "$ran" ] && grep -q "choice: $ran[^a-z-]" "$tmp/out"
    ok $? "select --json on $d: \"ran\" is the selection plan's choice (${ran:-none})"
    [ $rc -eq 0 ] || diag "$(cat "$tmp/err")"
    run cltopk_on "$d" select -r 3 --explain --device "$d" "$tmp/sel.f32"
    chose=$(sed -n 's/^choice: //p' "$tmp/out")
    [ $rc -eq 0 ] && [ -n "$chose" ] && grep -q "^algorithm  auto -> $chose\$" "$tmp/out"
    ok $? "select -r 3 on $d: auto reports the selection plan's choice (${chose:-none})"
    [ $rc -eq 0 ] || diag "$(cat "$tmp/err")"
done
[ -n "$cl_dev" ] || for _ in 1 2; do skip "no OpenCL device: select's reported plan there"; done
fails 2 "unknown option '--packed'" "select has no --packed" \
    "$CLTOPK" select -r 2 -t i32 --packed --device cpu "$tmp/e.txt"
if [ -n "$cl_dev" ]; then
    succeeds 'predicted' "topk --explain on an OpenCL device prints the predictions" \
        "$CLTOPK" topk -k 3 -t i32 --text --explain --device "$cl_dev" "$tmp/e.txt"
    for a in sbp-radix radix-select; do
        succeeds '^ *2  *0  5$' "topk --algo $a" \
            "$CLTOPK" topk -k 3 -t i32 --text --algo $a --device "$cl_dev" "$tmp/e.txt"
    done
else
    for _ in 1 2 3; do skip "no OpenCL device: explain, sbp-radix, radix-select"; done
fi
# ---- end

# ------------------------------------------------------------ errors
printf '1\n2\nabc\n4\n' > "$tmp/bad.txt"
printf '1\n4294967296\n' > "$tmp/big.txt"
printf '12345' > "$tmp/five.bin"
a=$tmp/a.f32
fails 1 "cannot open" "missing file" "$CLTOPK" topk -k 1 "$tmp/nonexistent"
fails 1 "line 3" "bad number names its line" "$CLTOPK" topk -t i32 -k 1 --text "$tmp/bad.txt"
fails 1 "line 2: .*out of range" "u32 out of range" "$CLTOPK" topk -t u32 -k 1 --text "$tmp/big.txt"
text_fails() { # text_fails TYPE CONTENT PATTERN DESCRIPTION: from standard input
    printf "$2" > "$tmp/in.txt"
    fails 1 "$3" "$4" sh -c '"$1" topk -t "$2" -k 1 --text - < "$3"' sh "$CLTOPK" "$1" "$tmp/in.txt"
}
text_fails i32 '2147483648\n' "<stdin> line 1: .*out of range" "i32 out of range"
text_fails u64 '0\n-1\n' "line 2: .*out of range" "negative u64"
text_fails f32 '1e39\n' "line 1: .*out of range" "f32 overflow"
text_fails f64 '1\n2x\n' "line 2: .*not a" "garbage after a number"
text_fails f32 'nan(0x800000)\n' "line 1: .*payload" "f32 NaN payload too wide"
text_fails i32 '1\n5\000abc\n' "<stdin> line 2: a NUL byte" "a NUL byte inside a line"
text_fails i32 '5\000\n' "line 1: a NUL byte" "a NUL byte after a number"
text_fails i32 '5 abc\n' "line 1: .*not an integer" "garbage after an integer"
fails 1 "not a whole number of 4-byte f32 elements .*: give the right -t, or --text" \
    "binary size not a multiple of the type" "$CLTOPK" topk -k 1 --binary "$tmp/five.bin"
fails 1 "larger than" "k > n" "$CLTOPK" topk -t f32 -k 1001 --binary "$a"
fails 1 "out of range" "rank >= n" "$CLTOPK" select -t f32 -r 1000 --binary "$a"
fails 2 "unknown type" "unknown type" "$CLTOPK" topk -t f16 -k 1 "$a"
fails 2 "unknown algorithm" "unknown algorithm" "$CLTOPK" topk --algo quick -k 1 "$a"
fails 2 "unknown option" "unknown option" "$CLTOPK" topk --frobnicate -k 1 "$a"
fails 2 "needs a value" "option without its value" "$CLTOPK" topk "$a" -k
fails 2 "k is missing" "missing -k" "$CLTOPK" topk "$a"
fails 2 "bad k" "malformed k" "$CLTOPK" topk -k 12abc "$a"
fails 2 "input is missing" "missing input" "$CLTOPK" topk -k 1
fails 2 "unknown command" "unknown command" "$CLTOPK" frobnicate
fails 2 "unknown distribution" "gen: unknown distribution" \
    "$CLTOPK" gen -t f32 -n 10 -d zipf "$tmp/z"
fails 2 "bad count" "gen: malformed count" "$CLTOPK" gen -t f32 -n 1Q "$tmp/z"
fails 2 "number of elements is missing" "gen: missing -n" "$CLTOPK" gen -t f32 "$tmp/z"
fails 2 "type is missing" "gen: missing -t" "$CLTOPK" gen -n 10 "$tmp/z"
fails 1 "cannot create" "gen: unwritable output" "$CLTOPK" gen -t f32 -n 10 "$tmp/no/such/dir/z"
fails 2 "repetition" "bench: bad --reps" "$CLTOPK" bench --reps 0
fails 2 "not between 1 and n" "bench: k > n" "$CLTOPK" bench -n 100 -k 1000
fails 2 "unknown grid" "bench: unknown --grid" "$CLTOPK" bench --grid sigmod
fails 2 "drop -t" "bench --grid paper fixes the types" "$CLTOPK" bench --grid paper -t f64
fails 2 "bad B list" "tune: bad -b" "$CLTOPK" tune -b 32
"$CLTOPK" gen -t f32 -n 5000 "$tmp/b5k.f32" 2>/dev/null
fails 1 "takes k <= 4096" "topk: an algorithm beyond its limit" \
    "$CLTOPK" topk --device cpu --algo cpu-bitonic -k 4097 --binary "$tmp/b5k.f32"
fails 1 "OpenCL" "topk: bitonic on the cpu device" \
    "$CLTOPK" topk --device cpu --algo bitonic -k 1 --binary "$a"
fails 1 "cannot open device" "topk: no such device" \
    "$CLTOPK" topk --device no-such-device-anywhere -k 1 --binary "$a"
# --device is parsed strictly: P:D is two plain decimal numbers (cltopk_open's
# %u read these three as 0:0), cpu/gpu/auto in any case, and part of a name
# must name one device
for spec in 4294967296:0 -4294967296:0 +0:0 "0: 0"; do
    fails 2 "bad device '$spec' from --device: P:D is two decimal numbers" \
        "--device '$spec' is refused" "$CLTOPK" topk -k 1 -t i32 --device "$spec" "$tmp/e.txt"
done
succeeds '^device     cpu$' "--device CPU is the cpu device" \
    "$CLTOPK" topk -k 1 -t i32 --device CPU "$tmp/e.txt"
succeeds '^device     cpu$' "CLTOPK_DEVICE=Cpu is the cpu device" \
    env CLTOPK_DEVICE=Cpu "$CLTOPK" topk -k 1 -t i32 "$tmp/e.txt"
succeeds '^auto: cpu$' "devices: CLTOPK_DEVICE=Cpu makes auto the cpu device" \
    env CLTOPK_DEVICE=Cpu "$CLTOPK" devices
succeeds "^auto: fails: bad device '+0:0' from CLTOPK_DEVICE" "devices: a bad CLTOPK_DEVICE shows" \
    env CLTOPK_DEVICE=+0:0 "$CLTOPK" devices
fails 1 "bad device '+0:0' from CLTOPK_DEVICE" \
    "CLTOPK_DEVICE=+0:0 is refused as --device is (exit 1: not the command line)" \
    env CLTOPK_DEVICE=+0:0 "$CLTOPK" topk -k 1 -t i32 --device AUTO "$tmp/e.txt"
# two devices with one name (POCL_DEVICES repeats a driver where POCL is the
# platform; POCL 3 names its pthread devices "pthread-...", POCL 5 and 6
# "cpu-..."): that name, in other case, is ambiguous and refused with the list
run env POCL_DEVICES="pthread pthread" "$CLTOPK" devices
pocl_name() { # the name `cltopk devices` gives device $1 in $tmp/out
    sed -n "s|^  $1   [^/]*/ ||p" "$tmp/out" | sed 's/ *<- auto$//; s/ *$//'
}
n0=$(pocl_name 0:0)
n1=$(pocl_name 0:1)
if [ $rc -eq 0 ] && [ -n "$n0" ] && [ "$n0" = "$n1" ]; then
    amb=$(printf '%s' "$n0" | tr '[:lower:]' '[:upper:]')
    re=$(printf '%s' "$n0" | sed 's/[][\.*^$]/\\&/g')
    fails 2 "from --device is ambiguous" "an ambiguous name ('$amb') is refused" \
        env POCL_DEVICES="pthread pthread" "$CLTOPK" topk -k 1 -t i32 --device "$amb" "$tmp/e.txt"
    grep -q '^  0:0  Portable' "$tmp/err" && grep -q '^  0:1  Portable' "$tmp/err"
    ok $? "... and the matches are listed with their P:D"
    succeeds "^device     .*$re" "one of them by P:D" \
        env POCL_DEVICES="pthread pthread" "$CLTOPK" topk -k 1 -t i32 --device 0:1 "$tmp/e.txt"
    # several devices in one context: the split shown, a top-k over both
    succeeds '^   0:1 .* elements (' "devices --split all: a line a device with its part" \
        env POCL_DEVICES="pthread pthread" "$CLTOPK" devices --split all
    # POCL 5.0 (Ubuntu 24.04) aborted this command once, after its answer,
    # in its own teardown ("pocl_release_dlhandle_cache: Assertion
    # `found->ref_count > 0' failed": the two devices' threads release one
    # kernel library of POCL's cache); cltopk's kernels and programs are
    # released as often as they are made and retained (checked by counting
    # the calls).  That abort, and only it, runs the command again, up to
    # twice; three in a row are a skip that says so
    desc="topk --device 0:0,0:1: a context of both"
    pocl_aborted() { [ "$rc" -eq 134 ] && grep -q "pocl_release_dlhandle_cache: Assertion" "$tmp/err"; }
    for try in 1 2 3; do
        run env POCL_DEVICES="pthread pthread" "$CLTOPK" topk -k 1 -t i32 --algo radix-select \
            --device 0:0,0:1 "$tmp/e.txt"
        pocl_aborted || break
        diag "try $try: POCL aborted in its teardown (pocl_release_dlhandle_cache)"
    done
    if pocl_aborted; then
        skip "$desc: POCL's teardown aborted three times (its dlhandle cache's assertion)"
    else
        succeeded "^device     .*$re.* + .*$re" "$desc"
    fi
    fails 1 "names 0:1 twice" "a device listed twice is refused" \
        env POCL_DEVICES="pthread pthread" "$CLTOPK" topk -k 1 -t i32 --device 0:1,0:1 "$tmp/e.txt"
    # streamed host data (pieces of 4096): each mode's answer is the chunk loop's
    succeeds '^10  *direct .*= mode 0' "bench --stream: every mode gives the chunk loop's answer" \
        env CLTOPK_MAX_CHUNK=4096 "$CLTOPK" bench --stream --device 0:0 -n 2^16 -k 10 --reps 1
else
    skip "no POCL with POCL_DEVICES: an ambiguous device name"
    skip "no POCL with POCL_DEVICES: the matches listed"
    skip "no POCL with POCL_DEVICES: a device by P:D"
    skip "no POCL with POCL_DEVICES: devices --split"
    skip "no POCL with POCL_DEVICES: a context of two devices"
    skip "no POCL with POCL_DEVICES: a device listed twice"
    skip "no POCL: bench --stream"
fi
# ---- query: the top rows of column files by an expression
"$CLTOPK" gen -t i32 -n 5000 -d powerlaw -s 11 "$tmp/rt.bin" 2> /dev/null
"$CLTOPK" gen -t i32 -n 5000 -d powerlaw -s 12 "$tmp/lk.bin" 2> /dev/null
"$CLTOPK" gen -t i64 -n 5000 -d timestamps -s 13 "$tmp/tm.bin" 2> /dev/null
"$CLTOPK" gen -t u32 -n 5000 -d codes -s 14 "$tmp/lg.bin" 2> /dev/null
qcols="--col retweets:i32:$tmp/rt.bin --col likes:i32:$tmp/lk.bin --col time:i64:$tmp/tm.bin --col lang:u32:$tmp/lg.bin"
succeeds '^returned   5$' "query: a weighted sum where a time and a language" \
    "$CLTOPK" query -k 5 $qcols --order 'retweets + 0.5 * likes' \
    --where 'time < 1495000000 and (lang == 0 or lang == 1)' --device cpu
run "$CLTOPK" query -k 5 $qcols --order 'retweets + 0.5 * likes' --where 'time < 1495000000' \
    --device cpu --json
[ $rc -eq 0 ] && grep -q '"count": 5, "results": \[{"row": ' "$tmp/out"
ok $? "query --json: the count and the rows"
fails 1 "at 12: unknown column 'likez'; columns are: retweets, likes, time, lang" \
    "query: an unknown column is named with its position" \
    "$CLTOPK" query -k 5 $qcols --order 'retweets + likez' --device cpu
run "$CLTOPK" query -k 5 $qcols --order 'retweets + 0.5 * likes' --where 'lang == 1' \
    --device cpu --explain
[ $rc -eq 0 ] && grep -q '^order_by   5 operations' "$tmp/out" && grep -q '^-> cpu$' "$tmp/out"
ok $? "query --explain prints the programs and the choice"
succeeds '^ok: the expressions are valid' "query --check reads no file" \
    "$CLTOPK" query --check --col a:f32:/nonexistent --order 'sqrt(a) * 2' --where 'a > 0'
fails 2 "bad --col" "query: a malformed --col" "$CLTOPK" query -k 1 --col a:f32 --order a
fails 1 "every column needs the same number" "query: columns of different lengths" \
    "$CLTOPK" query -k 1 --col a:i32:"$tmp/rt.bin" --col b:i64:"$tmp/lg.bin" --order a \
    --device cpu
if [ -n "$cl_dev" ]; then
    "$CLTOPK" query -k 40 $qcols --order 'likes / (retweets + 1)' --where 'lang != 3' \
        --device cpu --json > "$tmp/q1" 2>&1
    "$CLTOPK" query -k 40 $qcols --order 'likes / (retweets + 1)' --where 'lang != 3' \
        --device "$cl_dev" --json | sed "s/\"device\": \"[^\"]*\"/\"device\": \"cpu\"/" \
        > "$tmp/q2" 2>&1
    cmp -s "$tmp/q1" "$tmp/q2"
    ok $? "query: cpu and $cl_dev agree bit for bit"
else
    skip "no OpenCL device: query on both"
fi

if [ -w /dev/full ]; then
    fails 1 "cannot write" "output to a full disk" \
        sh -c '"$1" topk -k 3 --binary "$2" > /dev/full' sh "$CLTOPK" "$a"
else
    skip "no /dev/full"
fi

echo "1..$n"
[ $failed -eq 0 ]
