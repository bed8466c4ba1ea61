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

# ------------------------------------------------------------ topk --packed
f=$tmp/big.i32
"$CLTOPK" gen -t i32 -n 100003 -d few -s $seed "$f" 2> /dev/null
"$CLTOPK" topk -t i32 --binary -k 50 --device cpu "$f" > "$tmp/plain.txt" 2>&1
"$CLTOPK" topk -t i32 --binary -k 50 --smallest --device cpu "$f" > "$tmp/plain_s.txt" 2>&1
for codec in for dfor rfor; do
    "$CLTOPK" pack -c $codec --binary "$f" "$f.$codec" > /dev/null
    for dev in cpu $cl_dev; do
        run "$CLTOPK" topk --packed -k 50 --device $dev "$f.$codec"
        rows "$tmp/out" > "$tmp/a"
        rows "$tmp/plain.txt" > "$tmp/b"
        [ $rc -eq 0 ] && [ -s "$tmp/a" ] && cmp -s "$tmp/a" "$tmp/b"
        ok $? "topk --packed ($codec, $dev) = topk of the plain file (ties by position)"
        run "$CLTOPK" topk --packed -k 50 --smallest --device $dev "$f.$codec"
        rows "$tmp/out" > "$tmp/a"
        rows "$tmp/plain_s.txt" > "$tmp/b"
        [ $rc -eq 0 ] && [ -s "$tmp/a" ] && cmp -s "$tmp/a" "$tmp/b"
        ok $? "topk --packed --smallest ($codec, $dev) = topk of the plain file"
    done
    if [ -n "$cl_dev" ]; then
        run "$CLTOPK" unpack --device "$cl_dev" "$f.$codec" "$f.$codec.cl"
        [ $rc -eq 0 ] && cmp -s "$f" "$f.$codec.cl"
        ok $? "unpack on the OpenCL device $cl_dev ($codec) = the input"
    else
        skip "no OpenCL device"
        skip "no OpenCL device"
        skip "no OpenCL device"
    fi
done

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

# ------------------------------------------------------------ bench --unpack
succeeds "^for " "bench --unpack on the cpu device" \
    "$CLTOPK" bench --unpack --device cpu -n 5000 --widths 1,13,32 -c for,dfor,rfor --reps 1
if [ -n "$cl_dev" ]; then
    succeeds "^ *8 " "bench --unpack on $cl_dev with the top-k rows" \
        "$CLTOPK" bench --unpack --device "$cl_dev" -n 70000 --widths 8,32 --reps 1
else
    skip "no OpenCL device"
fi

echo "1..$n"
[ $failed -eq 0 ]
