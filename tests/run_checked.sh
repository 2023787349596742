#!/bin/sh
# Runs a command and checks its stderr: --silent demands none; --expect REGEX demands a line
# matching the extended regular expression REGEX (once per --expect). Exit status: the command's,
# or 1 when the stderr check fails.
set -u
silent=0
expects=""
while [ $# -gt 0 ]; do
    case "$1" in
    --silent) silent=1; shift ;;
    --expect) expects="$expects
$2"; shift 2 ;;
    --) shift; break ;;
    *) break ;;
    esac
done
err=$(mktemp)
"$@" 2>"$err"
rc=$?
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
[ $rc -ne 0 ] && cat "$err" >&2
rm -f "$err"
exit $status
