#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every setting, counter and flag the code has is documented (every TYPEJIT_*
variable, tool flag and output format is documented; the README names them and points to the
reference in docs/).

    check_docs.py SOURCE_DIR [TYPEJIT_COMMAND]

Checks, from the source itself:
- every TYPEJIT_* variable the library reads (a string literal "TYPEJIT_X" in src/, cache/, jit/)
  is a row of docs/settings.md and is named in the README as a link to docs/settings.md, and
  every TYPEJIT_* row of docs/settings.md is a variable the library reads;
- with the typejit command: the settings `typejit settings` prints (the library's table) are the
  rows of docs/settings.md, in its order, each with the same default and values (the cells
  without their backquotes), and the library names no TYPEJIT_* variable outside that table;
- the stats line of docs/output.md holds exactly the counters of TJ_STATS_LIST
  (src/util/counters.h), in its order, and each counter is explained on that page;
- every option of the typejit command (a string literal "--x" in src/tools/) is in
  docs/tool.md, and the README points to docs/tool.md and docs/output.md;
- every option of halo3d (bench/halo3d.c) is in docs/halo3d.md;
- every FAKECUDA_* knob the test driver reads (tests/fakecuda/) is a row of docs/testing.md.
Prints every omission and exits 1 if there is any.
"""
import os
import re
import subprocess
import sys


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def sources(root, folders, exts=(".c", ".h")):
    for folder in folders:
        for dirpath, _, names in os.walk(os.path.join(root, folder)):
            for name in sorted(names):
                if name.endswith(exts):
                    yield os.path.join(dirpath, name)


def literals(paths, pattern):
    """The string literals of @paths that are exactly a match of @pattern."""
    found = set()
    rx = re.compile(r'"(' + pattern + r')"')
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as f:
            found.update(rx.findall(f.read()))
    return found


def mentioned(text, word):
    """Whether @word stands in @text as a whole word (options: not part of a longer one)."""
    return re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", text) is not None


def table_rows(text, prefix):
    """The names in the first cell of the table rows of @text that start with @prefix."""
    return set(re.findall(r"^\| `(" + prefix + r"[A-Z0-9_]+)` \|", text, re.M))


def printed_settings(command):
    """(name, default, values) of each setting `typejit settings` prints, in its order."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("TYPEJIT_")}
    out = subprocess.run([command, "settings"], env=env, check=True, capture_output=True,
                         text=True).stdout
    return re.findall(r"^(TYPEJIT_[A-Z0-9_]+)\n    .*\n    default: (.*)\n    values:  (.*)$",
                      out, re.M)


def setting_cells(text):
    """(name, default, values) of each TYPEJIT_* row of @text, backquotes dropped."""
    rows = re.findall(r"^\| `(TYPEJIT_[A-Z0-9_]+)` \| (.*?) \| (.*?) \| ", text, re.M)
    return [(n, d.replace("`", ""), v.replace("`", "")) for n, d, v in rows]


def main():
    root = sys.argv[1]
    problems = []
    readme = read(root, "README.md")

    # Settings.
    settings = literals(sources(root, ["src", "cache", "jit"]), r"TYPEJIT_[A-Z0-9_]+")
    if len(settings) < 10:
        problems.append(f"found only {len(settings)} TYPEJIT_* variables in the source")
    page = read(root, "docs/settings.md")
    rows = table_rows(page, "TYPEJIT_")
    for name in sorted(settings - rows):
        problems.append(f"{name}: read by the library, but no row of docs/settings.md")
    for name in sorted(rows - settings):
        problems.append(f"{name}: a row of docs/settings.md, but the library does not read it")
    for name in sorted(settings):
        if f"[`{name}`](docs/settings.md" not in readme:
            problems.append(f"{name}: not named in README.md as a link to docs/settings.md")
    if len(sys.argv) > 2:
        table = printed_settings(sys.argv[2])
        if len(table) < 10:
            problems.append(f"typejit settings printed only {len(table)} settings")
        for name in sorted(settings - {n for n, _, _ in table}):
            problems.append(f"{name}: named in the library, but not in its settings table "
                            "(src/util/config.c)")
        cells = setting_cells(page)
        if [n for n, _, _ in cells] != [n for n, _, _ in table]:
            problems.append("the rows of docs/settings.md are\n    " +
                            " ".join(n for n, _, _ in cells) +
                            "\n  but typejit settings prints\n    " +
                            " ".join(n for n, _, _ in table))
        documented = {n: (d, v) for n, d, v in cells}
        for name, default, values in table:
            if name in documented and documented[name] != (default, values):
                d, v = documented[name]
                problems.append(f"{name}: docs/settings.md says default \"{d}\", values "
                                f"\"{v}\"; typejit settings says default \"{default}\", values "
                                f"\"{values}\"")

    # Counters of the stats line.
    stats = read(root, "src/util/counters.h")
    block = re.search(r"#define TJ_STATS_LIST\(_X\)(.*?)\n\n", stats, re.S)
    counters = re.findall(r"_X\((\w+)\)", block.group(1)) if block else []
    if len(counters) < 10:
        problems.append(f"found only {len(counters)} counters in TJ_STATS_LIST")
    page = read(root, "docs/output.md")
    line = re.search(r"```\ntypejit\[RANK\]: stats (.*?)```", page, re.S)
    shown = re.findall(r"(\w+)=N", line.group(1)) if line else []
    if shown != counters:
        problems.append("the stats line of docs/output.md is\n    " + " ".join(shown) +
                        "\n  but the library prints (src/util/counters.h)\n    " + " ".join(counters))
    rest = page.replace(line.group(0), "") if line else page
    for name in counters:
        if f"`{name}`" not in rest:
            problems.append(f"counter {name}: not explained in docs/output.md")

    # Options of the typejit command and of halo3d.
    for folder, doc in (("src/tools", "docs/tool.md"), ("bench/halo3d.c", "docs/halo3d.md")):
        paths = ([os.path.join(root, folder)] if folder.endswith(".c")
                 else list(sources(root, [folder])))
        options = literals(paths, r"--[a-z][a-z0-9-]*")
        if len(options) < 5:
            problems.append(f"found only {len(options)} options in {folder}")
        text = read(root, doc)
        for opt in sorted(options):
            if not mentioned(text, opt):
                problems.append(f"{opt}: an option of {folder}, not in {doc}")
    for doc in ("docs/tool.md", "docs/output.md"):
        if f"]({doc})" not in readme:
            problems.append(f"README.md does not link {doc}")

    # The test driver's knobs.
    knobs = set()
    rx = re.compile(r'getenv\("(FAKECUDA_[A-Z0-9_]+)"\)')
    for path in sources(root, ["tests/fakecuda"]):
        with open(path, encoding="utf-8", errors="replace") as f:
            knobs.update(rx.findall(f.read()))
    rows = table_rows(read(root, "docs/testing.md"), "FAKECUDA_")
    for name in sorted(knobs - rows):
        problems.append(f"{name}: read by the test driver, but no row of docs/testing.md")

    for p in problems:
        print("check_docs: " + p)
    print(f"check_docs: {len(settings)} settings"
          f"{' (defaults and values too)' if len(sys.argv) > 2 else ''}, {len(counters)} counters, "
          f"{len(knobs)} test driver knobs checked; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
