#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The library's mutable state, counted from its objects (docs/architecture.md, "Each layer's
state").

Each layer keeps its mutable state in one structure of its own (src/kernels/state.h and its
kind; the driver layer's in src/gpu/cuda_internal.h), so that a reader finds all of it in one
place and the teardown follows the layers. This counts the variables of static storage that
can be written: objects in .bss, .data, .tbss and .tdata of the library's own objects, but not
.data.rel.ro (const tables that hold pointers). Variables local to a function (NAME.N: flags
of a warning said once, say) are listed apart and not held to the limit. The Fortran entry
points' slots (tj_fslot_*, one per binding, made by a macro and gathered by the linker into one
section) count as one table.

    check_state.py BUILD_DIR LIMIT [OBJDUMP] [--list]
Prints the count (and with --list every variable) and exits 1 when file-scope variables number
more than LIMIT.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_layers import library_objects  # noqa: E402

def variables(objdump, obj):
    """(name, section) of each variable of static storage @obj defines that can be written."""
    out = subprocess.run([objdump, "-t", obj], capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        # ADDRESS FLAGS SECTION SIZE [.hidden] NAME; thread-locals carry no O flag.
        m = re.match(r"^[0-9a-f]+ (.{7}) (\S+)\s+[0-9a-f]+\s+(?:\.hidden )?(\S+)$", line)
        if not m:
            continue
        flags, section, name = m.groups()
        kind = section.split(".")[1] if section.startswith(".") else ""
        if section == "tj_fortran":
            kind = "data"
        if kind not in ("bss", "data", "tbss", "tdata") or section.startswith(".data.rel.ro"):
            continue
        if "O" not in flags and kind not in ("tbss", "tdata"):
            continue
        found.append((name, section))
    return found


def main():
    args = [a for a in sys.argv[1:] if a != "--list"]
    if len(args) < 2:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    build, limit = args[0], int(args[1])
    objdump = args[2] if len(args) > 2 else "objdump"
    file_scope, local, slots = [], [], 0
    for src, obj in sorted(library_objects(build).items()):
        if src.startswith("src/tools"):
            continue
        for name, section in variables(objdump, obj):
            if name.startswith("tj_fslot_"):
                slots += 1
            elif "." in name:
                local.append((src, name))
            else:
                file_scope.append((src, name, section))
    if slots:
        file_scope.append(("src/interpose", "tj_fslot_* (%d Fortran slots, one table)" % slots,
                           "tj_fortran"))
    if "--list" in sys.argv:
        for src, name, section in file_scope:
            print("%s: %s (%s)" % (src, name, section))
        for src, name in local:
            print("%s: %s (in a function)" % (src, name))
    print("mutable variables of static storage: %d at file scope (limit %d), %d in functions"
          % (len(file_scope), limit, len(local)))
    if len(file_scope) > limit:
        print("more than %d: put them in their layer's state structure" % limit)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
