# t/cli_tap.sh - what the TAP shell tests of the cltopk command share, sourced
# by t/cli.sh and t/cli_codec.sh after they set cli_tap_name (the prefix of the
# temporary directory): the command ($CLTOPK, else ./tools/cltopk), a temporary
# directory $tmp (under $CLTOPK_TEST_TMPDIR, else $TMPDIR, else /tmp; it also
# holds the kernel cache) removed at exit, and the TAP helpers ok, skip, diag,
# run, fails, succeeds and rows.  The test ends with: echo "1..$n"; [ $failed -eq 0 ]

CLTOPK=${CLTOPK:-./tools/cltopk}
LC_ALL=C
export LC_ALL

if ! [ -x "$CLTOPK" ]; then
    echo "Bail out! $CLTOPK not found: run from the build directory after make"
    exit 1
fi

tmp=$(mktemp -d "${CLTOPK_TEST_TMPDIR:-${TMPDIR:-/tmp}}/${cli_tap_name:-cli}.XXXXXX") || {
    echo "Bail out! mktemp -d failed"
    exit 1
}
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
CLTOPK_CACHE_DIR=$tmp/cache
export CLTOPK_CACHE_DIR
# the binary cache on (make check turns it off for the test programs): each of
# the many commands would otherwise measure the planner's constants again
unset CLTOPK_CACHE
unset CLTOPK_DEVICE

# cltopk_on DEV ARGS...: the command with ARGS (which name --device DEV).  On an OpenCL device
# LeakSanitizer is turned off for that one command (AddressSanitizer and UBSan
# stay on): its tracer, which stops every thread at exit to scan for leaks,
# crashed on POCL's worker threads on the CI machine ("Tracer caught signal 11",
# no leak reported) in runs where the same command passes elsewhere.  Leaks
# stay checked on the cpu device, which runs the same host code.
cltopk_on() {
    _dev=$1
    shift
    case $_dev in
    cpu) "$CLTOPK" "$@" ;;
    *) env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$CLTOPK" "$@" ;;
    esac
}

n=0
failed=0
ok() { # ok STATUS DESCRIPTION: STATUS 0 passes
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        failed=$((failed + 1))
    fi
}
skip() {
    n=$((n + 1))
    echo "ok $n # SKIP $1"
}
diag() {
    printf '%s\n' "$@" | sed 's/^/# /'
}
# run CMD...: output to $tmp/out, errors to $tmp/err, status in $rc
run() {
    "$@" > "$tmp/out" 2> "$tmp/err"
    rc=$?
}
# fails EXPECTED_STATUS PATTERN DESCRIPTION CMD...: the command exits with that
# status and says PATTERN on stderr
fails() {
    want=$1 pat=$2 desc=$3
    shift 3
    run "$@"
    if [ "$rc" -eq "$want" ] && grep -q -- "$pat" "$tmp/err"; then
        ok 0 "$desc"
    else
        ok 1 "$desc"
        diag "exit status $rc (wanted $want), stderr:" "$(cat "$tmp/err")"
    fi
}
# succeeds PATTERN DESCRIPTION CMD...: the command exits 0 and prints PATTERN
succeeds() {
    pat=$1 desc=$2
    shift 2
    run "$@"
    succeeded "$pat" "$desc"
}
# succeeded PATTERN DESCRIPTION: the last run exited 0 and printed PATTERN
succeeded() {
    if [ "$rc" -eq 0 ] && grep -q -- "$1" "$tmp/out"; then
        ok 0 "$2"
    else
        ok 1 "$2"
        diag "exit status $rc, stdout and stderr:" "$(cat "$tmp/out" "$tmp/err")"
    fi
}
# the rows of a topk/select table as "index value"
rows() {
    awk 'f { print $2, $3 } /^ *rank +index +value$/ { f = 1 }' "$@"
}

