#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every source file of the project says its licence: an SPDX-License-Identifier line naming the
licence of LICENSE (BSD-3-Clause) within its first three lines.

    check_licence.py SOURCE_DIR

Source files are the C, CUDA, Fortran, CMake, shell and Python files, the type descriptions, the
linker map and the configured templates under the project's folders, and the scripts in .ci/ and
bench/ that have no extension; build folders, results and documentation are not. Prints every
file without the line and exits 1 if there is any.
"""
import os
import re
import sys

TAG = "SPDX-License-Identifier: BSD-3-Clause"
FOLDERS = ["src", "jit", "cache", "include", "templates", "tests", "bench", "cmake", ".ci"]
SOURCE = re.compile(r"(\.(c|h|cu|f90|F90|cmake|sh|py|types|map|in)|^CMakeLists\.txt)$")
SCRIPTS = {".ci/run", ".ci/install-deps", "bench/kernel-quality"}


def sources(root):
    yield "CMakeLists.txt"
    for folder in FOLDERS:
        for top, dirs, files in os.walk(os.path.join(root, folder)):
            dirs[:] = [d for d in dirs if not d.startswith("build") and d != "__pycache__"]
            for name in files:
                rel = os.path.relpath(os.path.join(top, name), root)
                if SOURCE.search(name) or rel in SCRIPTS:
                    yield rel


def main():
    root = sys.argv[1]
    missing = []
    count = 0
    for rel in sorted(sources(root)):
        count += 1
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            head = "".join(f.readline() for _ in range(3))
        if TAG not in head:
            missing.append(rel)
    for rel in missing:
        print(f"{rel}: no '{TAG}' line in its first three lines")
    print(f"{count} source files, {len(missing)} without the licence line")
    return 1 if missing or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
