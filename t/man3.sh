#!/bin/sh
# t/man3.sh - cltopk(3) names every function of the public header (TAP).
srcdir=${srcdir:-.}
header="$srcdir/include/cltopk.h"
page="$srcdir/docs/cltopk.3"
funcs=$(sed -n 's/^CLTOPK_API [^(]*[ *]\(cltopk_[a-z0-9_]*\)(.*/\1/p' "$header" | sort -u)
n=$(printf '%s\n' "$funcs" | grep -c .)
echo "1..$((n + 2))"
if [ "$n" -ge 50 ]; then
    echo "ok 1 - the header declares $n functions"
else
    echo "not ok 1 - only $n functions found in $header (the pattern is broken)"
fi
i=1
for f in $funcs; do
    i=$((i + 1))
    # the name as a word of the page (which escapes no underscores)
    if grep -qw "$f" "$page"; then
        echo "ok $i - $f in cltopk(3)"
    else
        echo "not ok $i - $f missing from cltopk(3)"
    fi
done
i=$((i + 1))
if command -v groff >/dev/null 2>&1; then
    warnings=$(groff -t -man -Tutf8 -ww -z "$page" 2>&1)
    if [ -z "$warnings" ]; then
        echo "ok $i - groff formats cltopk(3) without warnings"
    else
        echo "not ok $i - groff warns:"; printf '%s\n' "$warnings" | sed 's/^/# /'
    fi
else
    echo "ok $i # SKIP groff is not installed"
fi
