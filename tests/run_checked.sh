#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs a command and checks its exit status and output, so that a test never needs ctest's
# PASS_REGULAR_EXPRESSION (under which ctest ignores the exit status: a crash, in MPI_Finalize
# too, would pass). Options:
#   --silent        stderr must be empty (when the command succeeded)
#   --expect RE     stderr must have a line matching the extended regular expression RE
#   --once RE       stderr must have exactly one such line (a message that must not repeat)
#   --stdout RE     stdout must have a line matching RE (each option may be repeated)
#   --status N      the exit status the command must have (default 0)
# Exit status: 0 when every check holds, 77 when the command skipped (no device), else 1 (or the
# command's own status when that was the only failed check). Every failed check says why on
# stdout, starting with "run_checked:".
set -u
silent=0
expects=""
onces=""
stdouts=""
want=0
while [ $# -gt 0 ]; do
    case "$1" in
    --silent) silent=1; shift ;;
    --expect) expects="$expects
$2"; shift 2 ;;
    --once) onces="$onces
$2"; shift 2 ;;
    --stdout) stdouts="$stdouts
$2"; shift 2 ;;
    --status) want=$2; shift 2 ;;
    --) shift; break ;;
    *) break ;;
    esac
done
err=$(mktemp)
out=$(mktemp)
"$@" >"$out" 2>"$err"
rc=$?
cat "$out"
# A skipped test (77: no device) says why on stdout; its output is not checked.
if [ $rc -eq 77 ] && [ "$want" -ne 77 ]; then
    rm -f "$err" "$out"
    exit 77
fi
status=0
if [ $rc -ne "$want" ]; then
    if [ $rc -gt 128 ] && [ $rc -lt 160 ]; then
        echo "run_checked: the command died of signal $((rc - 128)) (exit status $rc)"
    else
        echo "run_checked: the command exited with status $rc (expected $want)"
    fi
    status=$([ $rc -ne 0 ] && echo $rc || echo 1)
fi
if [ $rc -eq "$want" ] && [ $silent -eq 1 ] && [ -s "$err" ]; then
    echo "run_checked: unexpected output on stderr:"; cat "$err"; status=1
fi
printf '%s\n' "$expects" | while IFS= read -r re; do
    [ -z "$re" ] && continue
    if ! grep -Eq -- "$re" "$err"; then
        echo "run_checked: stderr has no line matching: $re"; cat "$err"; exit 1
    fi
done || status=1
printf '%s\n' "$onces" | while IFS= read -r re; do
    [ -z "$re" ] && continue
    n=$(grep -Ec -- "$re" "$err")
    if [ "$n" -ne 1 ]; then
        echo "run_checked: stderr has $n lines matching (exactly 1 expected): $re"; cat "$err"
        exit 1
    fi
done || status=1
printf '%s\n' "$stdouts" | while IFS= read -r re; do
    [ -z "$re" ] && continue
    if ! grep -Eq -- "$re" "$out"; then
        echo "run_checked: stdout has no line matching: $re"; exit 1
    fi
done || status=1
[ $rc -ne "$want" ] && cat "$err" >&2
rm -f "$err" "$out"
exit $status
