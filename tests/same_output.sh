#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs two commands (separated by an argument `::`) and succeeds when both succeed and print the
# same standard output, which it prints once: "the same with and without typejit". When the first
# command skips (exit status 77: what it needs is missing), so does the script, with its output.
set -u
first=""
while [ $# -gt 0 ] && [ "$1" != "::" ]; do
    first="$first $(printf '%s' "$1" | sed "s/'/'\\\\''/g; s/^/'/; s/\$/'/")"
    shift
done
[ $# -gt 0 ] || { echo "usage: $0 COMMAND... :: COMMAND..." >&2; exit 2; }
shift
a=$(eval "$first")
rc=$?
if [ $rc -eq 77 ]; then
    printf '%s\n' "$a"
    exit 77
fi
[ $rc -eq 0 ] || { echo "same_output.sh: the first command failed" >&2; exit 1; }
b=$("$@") || { echo "same_output.sh: the second command failed" >&2; exit 1; }
if [ "$a" != "$b" ]; then
    printf 'same_output.sh: the outputs differ:\n%s\n---\n%s\n' "$a" "$b" >&2
    exit 1
fi
printf '%s\n' "$a"
