#!/bin/sh
# t/fuzz.sh [SECONDS] - a bounded libFuzzer run of t/fuzz_codec (default 60 s),
# for CI: ./configure --enable-fuzzer CC=clang && make && make fuzz
# The seed corpus is made here by `cltopk pack` (every codec, small columns of
# several distributions); crashes are written to $FUZZ_ARTIFACTS (default the
# current directory) and fail the run.
set -eu
FUZZ=${FUZZ:-./t/fuzz_codec}
CLTOPK=${CLTOPK:-./tools/cltopk}
secs=${1:-60}
[ -x "$FUZZ" ] || { echo "fuzz.sh: $FUZZ not built (configure --enable-fuzzer CC=clang)" >&2; exit 1; }
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
i=0
for dist in uniform increasing equal few special; do
    for cnt in 1 130 600 2100; do
        i=$((i + 1))
        "$CLTOPK" gen -t i32 -n $cnt -d $dist -s $i "$corpus/v$i" 2> /dev/null
        for codec in for dfor rfor; do
            "$CLTOPK" pack -c $codec --binary "$corpus/v$i" "$corpus/p$i.$codec" > /dev/null
        done
        rm -f "$corpus/v$i"
    done
done
exec "$FUZZ" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=4096 \
    -artifact_prefix="${FUZZ_ARTIFACTS:-./}" "$corpus"
