#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs a command (an mpirun of typejit ranks with TYPEJIT_STATS=1) and checks one counter summed
# over the stats lines of every rank:  stat_sum.sh NAME EXPECTED -- COMMAND...
# Exit status: the command's when it failed, else 1 when the sum is not EXPECTED.
set -u
name=$1
expected=$2
shift 3
err=$(mktemp)
"$@" 2>"$err"
rc=$?
if [ $rc -ne 0 ]; then
    cat "$err" >&2
    rm -f "$err"
    exit $rc
fi
sum=$(awk -v name="$name" '/^typejit\[[0-9-]+\]: stats / {
        for (i = 1; i <= NF; i++) if (index($i, name "=") == 1) s += substr($i, length(name) + 2)
    } END { print s + 0 }' "$err")
lines=$(grep -c '^typejit\[[0-9-]*\]: stats ' "$err")
if [ "$lines" -eq 0 ] || [ "$sum" -ne "$expected" ]; then
    echo "$name summed over $lines stats lines is $sum, $expected expected:"
    cat "$err"
    rm -f "$err"
    exit 1
fi
echo "$name summed over $lines stats lines: $sum"
rm -f "$err"
exit 0
