#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every message the docs quote as typejit's output is one the code can print.

    check_messages.py SOURCE_DIR

A quote is a code span or a line of a fenced code block, in README.md or docs/*.md, that begins
- with a log line's prefix, `typejit[RANK]:` or `typejit:` (then, after an optional level
  `error:`, `warning:`, `info:` or `debug:`, the message);
- with the `typejit` command's, `typejit COMMAND:` or `typejit COMMAND SUBCOMMAND:`;
- with `cache DIR:`, a line `typejit cache` prints;
- or with a label of `typejit inspect`'s output (`strided:`, `footprint:`, ...: the labels its
  printf formats in src/tools/inspect.c begin with).
Its whitespace runs count as one space, `...` stands for any text, and in a code block the text
from three spaces and a `(` to the end of the line is a comment on that line. A log line's
message (the text after its prefix and level) of fewer than two words, such as `LEVEL:
message`, describes the format and is not checked, nor is a prefix or label alone (`cache
DIR:`), nor the stats line (check_docs.py checks that one).

A quote passes when it matches, from its first character to its last, one line of a format
string of the sources (the C string literals of src/, cache/ and jit/, adjacent literals joined,
split at newlines), each printf conversion (%s, %d, %lld, %.*s, ...) standing for any text, or
such a line after the text of format lines that end in a conversion (a message made of several:
`typejit inspect: %s` of `column %d: %s` of `expected '%c' %s, found %s`; at most three). A
line matched alone must say something of its own: a label (`footprint:  %s`), or at least eight
literal characters holding a word, past a leading `typejit` and command word (`%s: %s` and
`typejit %s: %s` would pass anything). A line of `typejit inspect` whose label is an argument
(`%sW=%d%s%s (%s)`) is matched by inspect.c's lines of three literal characters or more.
Prints every quote that matches no format and exits 1 if there is any.
"""
import functools
import glob
import os
import re
import sys

CONVERSION = re.compile(r"%[-+ #0]*(?:\*|\d+)?(?:\.(?:\*|\d+))?(?:hh|h|ll|l|j|z|t|L)?"
                        r"[diouxXeEfgGcspaA]")
STAR = "\0"  # any text, in a pattern
LOG_PREFIX = re.compile(r"typejit(?:\[[^\]\s]*\])?: (?:(?:error|warning|info|debug|LEVEL): )?")
COMMAND_PREFIX = re.compile(r"typejit [a-z]+(?: [a-z]+)?:(?: |$)")
CACHE_PREFIX = re.compile(r"cache \S+:(?: |$)")
COMMENT = re.compile(r" {3,}\(.*$")


def c_strings(text):
    """The string literals of C source @text, adjacent ones joined, escapes decoded."""
    out, i, n = [], 0, len(text)
    current, joinable = None, False
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == "'":
            j = i + 1
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            joinable = False
            if current is not None:
                out.append(current)
                current = None
            continue
        if c == '"':
            j, s = i + 1, []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n:
                    e = text[j + 1]
                    s.append({"n": "\n", "t": "\t", "0": "\0"}.get(e, e))
                    j += 2
                else:
                    s.append(text[j])
                    j += 1
            lit = "".join(s)
            if current is not None and joinable:
                current += lit
            else:
                if current is not None:
                    out.append(current)
                current = lit
            joinable = True
            i = j + 1
            continue
        if not c.isspace():
            joinable = False
            if current is not None:
                out.append(current)
                current = None
        i += 1
    if current is not None:
        out.append(current)
    return out


def squeeze(s):
    return " ".join(s.split())


def format_lines(root):
    """Every line of every string literal of the library's and the command's sources."""
    lines = set()
    for folder in ("src", "cache", "jit"):
        for dirpath, _, names in os.walk(os.path.join(root, folder)):
            for name in names:
                if name.endswith((".c", ".h")):
                    with open(os.path.join(dirpath, name), encoding="utf-8",
                              errors="replace") as f:
                        for lit in c_strings(f.read()):
                            lines.update(squeeze(line) for line in lit.split("\n"))
    return lines


def pattern(fmt):
    """@fmt with each conversion as STAR and %% as %."""
    return CONVERSION.sub(STAR, fmt).replace("%%", "%")


def literal_text(pat):
    """A pattern's literal text, past a leading `typejit` and command word."""
    return re.sub(r"^typejit(?: [a-z]+)?", "", pat.replace(STAR, " "))


def specific(pat):
    """Whether a format line says enough to be matched on its own: a label of its own
    (`footprint:  %s`), or eight literal characters that hold a word (`%s: %s` does not)."""
    if re.match(r"[a-z]+(?: [a-z]+)?:(?: |$)", pat) and not pat.startswith("typejit"):
        return True
    text = literal_text(pat)
    return re.search(r"[A-Za-z]{3}", text) is not None and len("".join(text.split())) >= 8


def regex(pat):
    return re.compile("".join(".*" if ch == STAR else re.escape(ch) for ch in pat), re.S)


def intersect(p, q):
    """Whether some text matches both patterns (STAR: any text)."""
    @functools.lru_cache(maxsize=None)
    def go(i, j):
        if i == len(p) and j == len(q):
            return True
        if i < len(p) and p[i] == STAR and (go(i + 1, j) or (j < len(q) and go(i, j + 1))):
            return True
        if j < len(q) and q[j] == STAR and (go(i, j + 1) or (i < len(p) and go(i + 1, j))):
            return True
        return i < len(p) and j < len(q) and p[i] != STAR and p[i] == q[j] and go(i + 1, j + 1)

    return go(0, 0)


class Formats:
    """The format lines a quote is matched against. A message may be made of several: a line
    whose last conversion is the text of another format (`typejit inspect: %s` of `column %d:
    %s` of `expected '%c' %s, found %s`) prefixes it."""

    def __init__(self, pats):
        self.pats = sorted(p for p in pats if specific(p))
        self.regexes = [regex(p) for p in self.pats]
        # Prefixes: lines ending in a conversion, with a word before it (`typejit %s: %s`).
        self.prefixes = [regex(p[:-1]) for p in sorted(set(pats))
                         if p.endswith(STAR) and re.search(r"[A-Za-z]{3}", p[:-1])]

    def match(self, quote, depth=0):
        if STAR in quote:
            # Both have wildcards: the literal text before the first one of each must agree.
            head = quote.split(STAR, 1)[0]
            for p in self.pats:
                ph = p.split(STAR, 1)[0]
                k = min(len(head), len(ph))
                if head[:k] == ph[:k] and intersect(p, quote):
                    return True
            return False
        if any(rx.fullmatch(quote) for rx in self.regexes):
            return True
        if depth == 3:
            return False
        for rx in self.prefixes:
            for k in range(1, len(quote)):
                if rx.fullmatch(quote, 0, k) and self.match(quote[k:], depth + 1):
                    return True
        return False


def inspect_formats(root):
    """The labels `typejit inspect` begins its output lines with (`strided:`, `key hash:`), and
    the lines of its formats with three literal characters or more: a line whose label is an
    argument (`%sW=%d%s%s (%s)`, `launch:` or the spaces under it) is matched with those."""
    with open(os.path.join(root, "src/tools/inspect.c"), encoding="utf-8") as f:
        lits = c_strings(f.read())
    labels, pats = set(), set()
    for lit in lits:
        for line in lit.split("\n"):
            m = re.match(r"([a-z]+(?: [a-z]+)?):(?: |$)", line)
            if m:
                labels.add(m.group(1) + ":")
            pat = pattern(squeeze(line))
            if len("".join(pat.replace(STAR, "").split())) >= 3:
                pats.add(pat)
    return labels, [regex(p) for p in sorted(pats)]


def quotes(text):
    """(line number, text) of every code span and code block line."""
    prose, inblock = [], False
    for number, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("```"):
            inblock = not inblock
            prose.append("")
        elif inblock:
            yield number, squeeze(COMMENT.sub("", line))
            prose.append("")
        else:
            prose.append(line)
    body = "\n".join(prose)
    for m in re.finditer(r"(`+)(.+?)\1", body, re.S):
        yield body.count("\n", 0, m.start()) + 1, squeeze(m.group(2))


def checked(quote, labels):
    """The text to match of @quote, or None when it is no quote of typejit's output."""
    m = LOG_PREFIX.match(quote + " ")
    if m and not COMMAND_PREFIX.match(quote):
        message = quote[m.end():] if m.end() <= len(quote) else ""
        if len(message.split()) < 2 or message.startswith("stats "):
            return None
        return message
    prefix = COMMAND_PREFIX.match(quote) or CACHE_PREFIX.match(quote)
    if prefix:
        # A prefix alone (`typejit warm:`) names the lines, it quotes none.
        return quote if prefix.end() < len(quote) else None
    label = re.match(r"([a-z]+(?: [a-z]+)?): ", quote)
    if label and label.group(1) + ":" in labels:
        return quote
    return None


def main():
    root = sys.argv[1]
    lines = format_lines(root)
    formats = Formats({pattern(line) for line in lines})
    labels, inspect = inspect_formats(root)
    pages = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs/*.md")))
    problems, count = [], 0
    if len(formats.pats) < 200 or len(labels) < 10:
        problems.append(f"found only {len(formats.pats)} format lines and {len(labels)} "
                        "inspect labels in the source")
    for path in pages:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for number, quote in quotes(text):
            message = checked(quote, labels)
            if message is None:
                continue
            count += 1
            message = message.replace("...", STAR).replace("\u2026", STAR)
            if not formats.match(message) and not (
                    message.split(":")[0] + ":" in labels and
                    any(rx.fullmatch(message) for rx in inspect)):
                problems.append(f"{os.path.relpath(path, root)}:{number}: `{quote}`: no format "
                                "string of the sources prints this")
    for p in problems:
        print("check_messages: " + p)
    print(f"check_messages: {count} quotes checked against {len(formats.pats)} format lines; "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
