#!/bin/sh
# t/cli_codec.sh - TAP test of cltopk pack / unpack / topk --packed / bench
# --unpack: round trips through the container for every codec and several
# distributions (cmp with the input), topk --packed against topk of the plain
# file (cpu, and the OpenCL device when there is one), and the error paths of a
# damaged file.  Run from the build directory (make check does), like t/cli.sh.

cli_tap_name=cli_codec
. "$(dirname "$0")/cli_tap.sh"

# put byte (octal) at offset of file
poke() {
    printf "\\$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2> /dev/null
}

for c in pack unpack; do
    succeeds "Usage: cltopk $c" "$c --help" "$CLTOPK" $c --help
done
succeeds "bench --unpack" "bench --unpack --help" "$CLTOPK" bench --unpack --help
succeeds "\-\-packed" "topk --help mentions --packed" "$CLTOPK" topk --help

# the OpenCL device, as t/cli.sh chooses it
run "$CLTOPK" devices
case ${CLTOPK_TEST_DEVICE:-} in
cpu) cl_dev= ;;
"" | auto)
    pd='^  \([0-9][0-9]*:[0-9][0-9]*\) .*'
    cl_dev=$(sed -n "s/$pd<- auto\$/\\1/p" "$tmp/out" | head -n 1)
    [ -n "$cl_dev" ] || cl_dev=$(sed -n "s/$pd/\\1/p" "$tmp/out" | head -n 1)
    ;;
*) cl_dev=$CLTOPK_TEST_DEVICE ;;
esac

# ------------------------------------------------------------ round trips
seed=${CLTOPK_TEST_SEED:-$$}
diag "seed $seed"
i=0
for dist in uniform normal increasing decreasing equal few special; do
    for cnt in 1 513 4099; do
        i=$((i + 1))
        f=$tmp/d$i.i32
        "$CLTOPK" gen -t i32 -n $cnt -d $dist -s $((seed + i)) "$f" 2> /dev/null
        for codec in for dfor rfor; do
            run "$CLTOPK" pack -c $codec --binary "$f" "$f.$codec"
            good=$rc
            if [ $good -eq 0 ]; then
                run "$CLTOPK" unpack --device cpu "$f.$codec" "$f.$codec.back"
                good=$rc
                [ $good -eq 0 ] && { cmp -s "$f" "$f.$codec.back"; good=$?; }
            fi
            ok $good "pack -c $codec / unpack: $dist x $cnt round trip"
            [ $good -eq 0 ] || diag "$(cat "$tmp/err")"
        done
    done
done

# text both ways
printf '5\n-3\n5\n5\n2147483647\n-2147483648\n0\n' > "$tmp/t.txt"
run "$CLTOPK" pack -c rfor --text "$tmp/t.txt" "$tmp/t.pk"
run "$CLTOPK" unpack --text "$tmp/t.pk" "$tmp/t.back"
cmp -s "$tmp/t.txt" "$tmp/t.back"
ok $? "pack --text / unpack --text round trip (INT_MIN, INT_MAX, runs)"

# the input format is never guessed: 8 printable bytes are two binary int32
printf '1234789\n' > "$tmp/p.i32"
run "$CLTOPK" pack -c for "$tmp/p.i32" "$tmp/p.pk"
[ $rc -eq 0 ] && grep -q '^for: 2 values (binary input: the default; --text reads text)' "$tmp/out"
ok $? "pack reads a file of printable bytes as binary and says so"
run "$CLTOPK" unpack --device cpu "$tmp/p.pk" "$tmp/p.back"
[ $rc -eq 0 ] && cmp -s "$tmp/p.i32" "$tmp/p.back"
ok $? "... and unpack gives the same bytes back"
run sh -c '"$1" pack -c for "$2" - > "$3"' sh "$CLTOPK" "$tmp/p.i32" "$tmp/p2.pk"
[ $rc -eq 0 ] && cmp -s "$tmp/p.pk" "$tmp/p2.pk" && grep -q '^for: 2 values (binary' "$tmp/err"
ok $? "pack to standard output reports on standard error"
run "$CLTOPK" unpack --device cpu "$tmp/p.pk" "$tmp/p.back.txt"
[ $rc -eq 0 ] && [ "$(cat "$tmp/p.back.txt")" = "$(printf '875770417\n171522103')" ]
ok $? "unpack writes text for a .txt name"
printf '12345' > "$tmp/five.i32"
fails 1 "not a whole number of 4-byte i32 .*: pack reads 32-bit integers only; give --text" \
    "pack: an odd-sized file names no -t (pack has none)" \
    "$CLTOPK" pack -c for "$tmp/five.i32" "$tmp/x"

# ------------------------------------------------------------ output files
# the output is a temporary file renamed over OUT at the end: a failed write
# leaves OUT (and the input) as they were and nothing behind; OUT may be the
# input only with --in-place
mkdir "$tmp/o"
"$CLTOPK" gen -t i32 -n 100000 -d few -s 5 "$tmp/o/col.i32" 2> /dev/null
"$CLTOPK" pack -c for --binary "$tmp/o/col.i32" "$tmp/o/col.pk" > /dev/null
cp "$tmp/o/col.pk" "$tmp/col.pk.orig"
cp "$tmp/o/col.i32" "$tmp/col.i32.orig"
fails 2 "is the input file.*--in-place" "unpack: OUT = IN is refused" \
    "$CLTOPK" unpack --device cpu "$tmp/o/col.pk" "$tmp/o/col.pk"
cmp -s "$tmp/o/col.pk" "$tmp/col.pk.orig"
ok $? "unpack: the refused input is intact"
fails 2 "is the input file" "pack: OUT = IN is refused" \
    "$CLTOPK" pack -c for --binary "$tmp/o/col.i32" "$tmp/o/col.i32"
ln -s col.pk "$tmp/o/col.lnk"
fails 2 "is the input file" "unpack: OUT = IN through a link is refused" \
    "$CLTOPK" unpack --device cpu "$tmp/o/col.lnk" "$tmp/o/col.pk"
fails 2 "standard output is the input" "pack: standard output appending to IN is refused" \
    sh -c '"$1" pack -c for --binary "$2" - >> "$2"' sh "$CLTOPK" "$tmp/o/col.i32"
cmp -s "$tmp/o/col.i32" "$tmp/col.i32.orig"
ok $? "pack: the refused input is intact"
(ulimit -f 8 && exec "$CLTOPK" unpack --device cpu --in-place "$tmp/o/col.pk" "$tmp/o/col.pk") \
    > /dev/null 2> "$tmp/err"
st=$? good=1
[ $st -eq 1 ] && grep -q "cannot write .*col.pk': File too large" "$tmp/err" &&
    cmp -s "$tmp/o/col.pk" "$tmp/col.pk.orig" && good=0
ok $good "unpack --in-place past ulimit -f: fails, the input intact"
[ $good -eq 0 ] || diag "exit $st: $(cat "$tmp/err")"
(ulimit -f 8 && exec "$CLTOPK" pack -c for --binary "$tmp/o/col.i32" "$tmp/o/new.pk") \
    > /dev/null 2> "$tmp/err"
st=$?
[ $st -eq 1 ] && [ ! -e "$tmp/o/new.pk" ]
ok $? "pack past ulimit -f: fails and leaves no partial output"
good=1
[ "$(ls -A "$tmp/o" | tr '\n' ' ')" = "col.i32 col.lnk col.pk " ] && good=0
ok $good "no temporary file left behind"
[ $good -eq 0 ] || diag "$(ls -A "$tmp/o")"
run "$CLTOPK" pack -c for --binary --in-place "$tmp/o/col.i32" "$tmp/o/col.i32"
[ $rc -eq 0 ] && cmp -s "$tmp/o/col.i32" "$tmp/col.pk.orig"
ok $? "pack --in-place replaces the input with its packed column"
run "$CLTOPK" unpack --device cpu --in-place "$tmp/o/col.i32" "$tmp/o/col.i32"
[ $rc -eq 0 ] && cmp -s "$tmp/o/col.i32" "$tmp/col.i32.orig"
ok $? "unpack --in-place gives the original column back"
if [ -w /dev/full ]; then
    fails 1 "cannot write '<stdout>': No space" "unpack to a full standard output blames the output" \
        sh -c '"$1" unpack --device cpu "$2" - > /dev/full' sh "$CLTOPK" "$tmp/col.pk.orig"
    fails 1 "cannot write '<stdout>'" "unpack --text to a full standard output blames the output" \
        sh -c '"$1" unpack --text --device cpu "$2" - > /dev/full' sh "$CLTOPK" "$tmp/col.pk.orig"
else
    skip "no /dev/full"
    skip "no /dev/full"
fi
# binary data is not written to a terminal (as gen refuses it)
if python3 -c 'import pty' > /dev/null 2>&1; then
    on_tty() { # on_tty CMD...: run CMD on a pseudo-terminal; its status in $rc, output in $tmp/tty
        python3 -c 'import os, pty, sys
out = open(sys.argv[1], "wb")
def rd(fd):
    d = os.read(fd, 1024)
    out.write(d)
    return d
st = pty.spawn(sys.argv[2:], rd)
sys.exit(os.WEXITSTATUS(st) if os.WIFEXITED(st) else 128)' "$tmp/tty" "$@" < /dev/null > /dev/null 2>&1
        rc=$?
    }
    on_tty "$CLTOPK" pack -c for --binary "$tmp/col.i32.orig" -
    [ $rc -eq 2 ] && grep -q "refusing to write binary data to a terminal" "$tmp/tty" &&
        [ "$(wc -c < "$tmp/tty")" -lt 300 ]
    ok $? "pack refuses to write binary data to a terminal"
    on_tty "$CLTOPK" unpack --device cpu "$tmp/col.pk.orig" -
    [ $rc -eq 2 ] && grep -q "refusing to write binary data to a terminal.*--text" "$tmp/tty"
    ok $? "unpack refuses to write binary data to a terminal (and names --text)"
    on_tty "$CLTOPK" gen -t i32 -n 10 -
    [ $rc -eq 2 ] && grep -q "refusing to write binary" "$tmp/tty"
    ok $? "gen refuses the same way"
else
    for _ in 1 2 3; do skip "no python3 pty to test a terminal"; done
fi

# ------------------------------------------------------------ topk --packed
f=$tmp/big.i32
"$CLTOPK" gen -t i32 -n 100003 -d few -s $seed "$f" 2> /dev/null
"$CLTOPK" topk -t i32 --binary -k 50 --device cpu "$f" > "$tmp/plain.txt" 2>&1
"$CLTOPK" topk -t i32 --binary -k 50 --smallest --device cpu "$f" > "$tmp/plain_s.txt" 2>&1
for codec in for dfor rfor; do
    "$CLTOPK" pack -c $codec --binary "$f" "$f.$codec" > /dev/null
    for dev in cpu $cl_dev; do
        run cltopk_on $dev topk --packed -k 50 --device $dev "$f.$codec"
        rows "$tmp/out" > "$tmp/a"
        rows "$tmp/plain.txt" > "$tmp/b"
        [ $rc -eq 0 ] && [ -s "$tmp/a" ] && cmp -s "$tmp/a" "$tmp/b"
        ok $? "topk --packed ($codec, $dev) = topk of the plain file (ties by position)"
        run cltopk_on $dev topk --packed -k 50 --smallest --device $dev "$f.$codec"
        rows "$tmp/out" > "$tmp/a"
        rows "$tmp/plain_s.txt" > "$tmp/b"
        [ $rc -eq 0 ] && [ -s "$tmp/a" ] && cmp -s "$tmp/a" "$tmp/b"
        ok $? "topk --packed --smallest ($codec, $dev) = topk of the plain file"
    done
    if [ -n "$cl_dev" ]; then
        run cltopk_on "$cl_dev" unpack --device "$cl_dev" "$f.$codec" "$f.$codec.cl"
        [ $rc -eq 0 ] && cmp -s "$f" "$f.$codec.cl"
        ok $? "unpack on the OpenCL device $cl_dev ($codec) = the input"
    else
        skip "no OpenCL device"
        skip "no OpenCL device"
        skip "no OpenCL device"
    fi
done

# topk --packed refuses the options that make no sense for it, honours
# --explain and reports what auto ran (the plan cltopk_topk_packed follows)
fails 2 "--packed columns hold i32 values: drop -t f32" "topk --packed -t f32 is refused" \
    "$CLTOPK" topk --packed -k 3 -t f32 --device cpu "$f.for"
fails 2 "neither text nor raw binary: drop --text" "topk --packed --text is refused" \
    "$CLTOPK" topk --packed -k 3 --text --device cpu "$f.for"
fails 2 "drop --binary" "topk --packed --binary is refused" \
    "$CLTOPK" topk --packed -k 3 --binary --device cpu "$f.for"
run "$CLTOPK" topk --packed -k 50 -t i32 --device cpu "$f.for"
rows "$tmp/out" > "$tmp/a"
rows "$tmp/plain.txt" > "$tmp/b"
[ $rc -eq 0 ] && cmp -s "$tmp/a" "$tmp/b" && grep -q '^algorithm  auto -> cpu-heap$' "$tmp/out"
ok $? "topk --packed -t i32 is accepted and reports auto -> cpu-heap"
run "$CLTOPK" topk --packed -k 5000 --explain --device cpu "$f.for"
[ $rc -eq 0 ] && grep -q '^choice: cpu-radix$' "$tmp/out" &&
    grep -q '^algorithm  auto -> cpu-radix$' "$tmp/out"
ok $? "topk --packed --explain prints the plan; k = 5000 reports auto -> cpu-radix"
run "$CLTOPK" topk --packed -k 5000 --json --explain --device cpu "$f.for"
[ $rc -eq 0 ] && grep -q '"algorithm": "auto", "ran": "cpu-radix"' "$tmp/out" &&
    grep -q '"plan": "plan for the top-k of n = 100003, k = 5000' "$tmp/out"
ok $? "topk --packed --json has ran and plan"
if [ -n "$cl_dev" ]; then
    run cltopk_on "$cl_dev" topk --packed -k 50 --explain --device "$cl_dev" "$f.for"
    rows "$tmp/out" > "$tmp/a"
    [ $rc -eq 0 ] && cmp -s "$tmp/a" "$tmp/b" && grep -q 'device data' "$tmp/out" &&
        grep -q '^algorithm  auto -> [a-z-]*$' "$tmp/out"
    ok $? "topk --packed --explain on $cl_dev plans for device data and names what ran"
else
    skip "no OpenCL device"
fi

# ------------------------------------------------------------ errors
fails 2 "codec is missing" "pack: no codec" "$CLTOPK" pack "$f" "$tmp/x"
fails 2 "unknown codec" "pack: unknown codec" "$CLTOPK" pack -c pfor "$f" "$tmp/x"
fails 2 "input and the output" "unpack: one operand" "$CLTOPK" unpack "$f.for"
fails 1 "not a packed column" "unpack: not a container" "$CLTOPK" unpack "$f" "$tmp/x"
head -c 100 "$f.for" > "$tmp/trunc.pk"
fails 1 "truncated" "unpack: truncated file" "$CLTOPK" unpack "$tmp/trunc.pk" "$tmp/x"
cp "$f.for" "$tmp/ver.pk"
poke "$tmp/ver.pk" 8 002
fails 1 "version" "unpack: another container version" "$CLTOPK" unpack "$tmp/ver.pk" "$tmp/x"
# block 0's width byte (data word 5) set to 0xFF
cp "$f.for" "$tmp/w.pk"
poke "$tmp/w.pk" 60 377
rm -f "$tmp/x"
fails 1 "width 255" "unpack: a width of 255 is corrupt" "$CLTOPK" unpack --device cpu "$tmp/w.pk" "$tmp/x"
[ ! -e "$tmp/x" ]
ok $? "unpack: nothing written for a corrupt column"
fails 1 "corrupt" "topk --packed: a corrupt column" "$CLTOPK" topk --packed -k 3 --device cpu "$tmp/w.pk"
# a block start off by one (the third block_starts entry)
cp "$f.for" "$tmp/s.pk"
words=$(od -An -t u8 -j 24 -N 8 "$tmp/s.pk" | tr -d ' ')
poke "$tmp/s.pk" $((40 + 4 * words + 8)) 001
fails 1 "block_starts" "unpack: a bad block start" "$CLTOPK" unpack --device cpu "$tmp/s.pk" "$tmp/x"
fails 1 "larger than" "topk --packed: k > count" "$CLTOPK" topk --packed -k 200000 "$f.for"

# the header is checked before anything is allocated from it, and a stream is
# read no further than the header allows (memory bounded by ulimit -v: the
# command must fail on the header, not run out of memory)
# 72 bytes: header (FOR, count 2^32 - 1, 4 data words, 4 starts) + 8 words
{
    printf 'CLTKPACK\001\000\000\000\000\000\000\000\377\377\377\377\000\000\000\000'
    printf '\004\000\000\000\000\000\000\000\004\000\000\000\000\000\000\000'
    printf '\200\000\000\000\004\000\000\000\377\377\377\377\000\000\000\000'
    printf '\004\000\000\000\004\000\000\000\004\000\000\000\004\000\000\000'
} > "$tmp/huge.pk"
[ "$(wc -c < "$tmp/huge.pk")" -eq 72 ]
ok $? "a 72-byte container claiming 2^32 - 1 values"
# (a build with AddressSanitizer cannot run under ulimit -v: then the limit is
# left out, and so are the /dev/zero tests, which need it to stay bounded)
limit_v="ulimit -v 2000000 &&"
(ulimit -v 2000000 && "$CLTOPK" --version || exit 1) > /dev/null 2>&1 || limit_v=
fails 1 "corrupt packed column: 4294967295 values take 33554433 block starts" \
    "unpack: a count the file cannot hold is corrupt (not out of memory)" \
    sh -c "$limit_v"' exec "$1" unpack --device cpu "$2" "$3"' sh "$CLTOPK" \
    "$tmp/huge.pk" "$tmp/x"
fails 1 "'<stdin>': corrupt packed column: 4294967295 values" \
    "unpack: the same from standard input" \
    sh -c "$limit_v"' exec "$1" unpack --device cpu - "$2" < "$3"' sh "$CLTOPK" \
    "$tmp/x" "$tmp/huge.pk"
fails 1 "corrupt packed column: 4294967295 values" "topk --packed: the same" \
    sh -c "$limit_v"' exec "$1" topk --packed -k 1 --device cpu "$2"' sh "$CLTOPK" \
    "$tmp/huge.pk"
if [ -n "$limit_v" ] && command -v timeout > /dev/null 2>&1; then
    fails 1 "'/dev/zero': not a packed column" "unpack /dev/zero: refused on its first 8 bytes" \
        sh -c "$limit_v"' exec timeout 60 "$1" unpack /dev/zero "$2"' sh "$CLTOPK" "$tmp/x"
    fails 1 "'<stdin>': not a packed column" "unpack - < /dev/zero: the same" \
        sh -c "$limit_v"' exec timeout 60 "$1" unpack - "$2" < /dev/zero' sh "$CLTOPK" \
        "$tmp/x"
else
    skip "no timeout(1), or ulimit -v unusable (a sanitizer build)"
    skip "no timeout(1), or ulimit -v unusable (a sanitizer build)"
fi
fails 1 "'<stdin>': corrupt packed column: the input goes on after" \
    "unpack: a stream longer than its header says is corrupt" \
    sh -c '{ cat "$2"; echo more; } | "$1" unpack --device cpu - "$3"' sh "$CLTOPK" \
    "$f.for" "$tmp/x"
fails 1 "'<stdin>': corrupt packed column: truncated" \
    "unpack: a stream shorter than its header says is corrupt" \
    sh -c 'head -c 1000 "$2" | "$1" unpack --device cpu - "$3"' sh "$CLTOPK" "$f.for" "$tmp/x"
run sh -c 'cat "$2" | "$1" unpack --device cpu - "$3"' sh "$CLTOPK" "$f.for" "$tmp/x"
[ $rc -eq 0 ] && cmp -s "$tmp/x" "$f"
ok $? "unpack: a whole stream decodes"
head -c 20 "$f.for" > "$tmp/short.pk"
fails 1 "truncated in its 40-byte header" "unpack: a file cut in its header" \
    "$CLTOPK" unpack "$tmp/short.pk" "$tmp/x"
cp "$f.for" "$tmp/count.pk"
poke "$tmp/count.pk" 16 000
fails 1 "corrupt packed column: .* values take .* block starts" \
    "unpack: a container count that does not match the block starts" \
    "$CLTOPK" unpack "$tmp/count.pk" "$tmp/x"

# ------------------------------------------------------------ bench --unpack
succeeds "^for " "bench --unpack on the cpu device" \
    "$CLTOPK" bench --unpack --device cpu -n 5000 --widths 1,13,32 -c for,dfor,rfor --reps 1
if [ -n "$cl_dev" ]; then
    succeeds "^ *8 " "bench --unpack on $cl_dev with the top-k rows" \
        cltopk_on "$cl_dev" bench --unpack --device "$cl_dev" -n 70000 --widths 8,32 --reps 1
else
    skip "no OpenCL device"
fi

echo "1..$n"
[ $failed -eq 0 ]
