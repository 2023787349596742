#!/bin/sh
# Runs a command and checks its stderr: --silent demands none; --expect REGEX demands a line
# matching the extended regular expression REGEX (once per --expect); --once REGEX demands
# exactly one such line (a message that must not repeat). Exit status: the command's, or 1 when
# the stderr check fails.
set -u
silent=0
expects=""
onces=""
while [ $# -gt 0 ]; do
    case "$1" in
    --silent) silent=1; shift ;;
    --expect) expects="$expects
$2"; shift 2 ;;
    --once) onces="$onces
$2"; shift 2 ;;
    --) shift; break ;;
    *) break ;;
    esac
done
err=$(mktemp)
"$@" 2>"$err"
rc=$?
# A skipped test (77: no device) says why on stdout; its stderr is not checked.
if [ $rc -eq 77 ]; then
    rm -f "$err"
    exit 77
fi
status=$rc
if [ $rc -eq 0 ] && [ $silent -eq 1 ] && [ -s "$err" ]; then
    echo "unexpected output on stderr:" ; cat "$err"; status=1
fi
printf '%s\n' "$expects" | while IFS= read -r re; do
    [ -z "$re" ] && continue
    if ! grep -Eq -- "$re" "$err"; then
        echo "stderr has no line matching: $re"; cat "$err"; exit 1
    fi
done || status=1
printf '%s\n' "$onces" | while IFS= read -r re; do
    [ -z "$re" ] && continue
    n=$(grep -Ec -- "$re" "$err")
    if [ "$n" -ne 1 ]; then
        echo "stderr has $n lines matching (exactly 1 expected): $re"; cat "$err"; exit 1
    fi
done || status=1
[ $rc -ne 0 ] && cat "$err" >&2
rm -f "$err"
exit $status
