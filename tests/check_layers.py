#!/usr/bin/env python3
"""The layers of the library, checked from its #include lines (docs/architecture.md).

Each folder is one layer and may include headers of its own layer and of lower layers only;
layers of one rank are siblings and include none of each other's headers. Modules (a .c with
its .h; a NAME_internal.h belongs to module NAME) include each other without cycles. Every file
of a layer is named in its row of the layer table of docs/architecture.md (a module by its .c,
a header of its own by its .h), so that a reader finds each concept by its file name.

    check_layers.py SOURCE_DIR
Prints every violation and exits 1 if there is any.
"""
import os
import re
import sys

# Rank of each layer folder, lowest first; a layer includes headers of lower ranks only.
LAYERS = {
    "src/util": 0,
    "src/gpu": 1,
    "src/type": 1,
    "cache": 1,
    "jit": 2,
    "src/kernels": 3,
    "src/send": 4,
    "src/interpose": 5,
    "src/tools": 6,
}
# How an include path names its folder ("gpu/cuda.h" -> src/gpu).
INCLUDE_ROOTS = {"util": "src/util", "gpu": "src/gpu", "type": "src/type", "cache": "cache",
                 "jit": "jit", "kernels": "src/kernels", "send": "src/send",
                 "interpose": "src/interpose"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def module_of(path):
    base = os.path.splitext(path)[0]
    return base[: -len("_internal")] if base.endswith("_internal") else base


def resolve(layer, inc):
    """The repository path of a quoted include seen in folder @layer, or None (typejit.h,
    generated files, files of the tools folder itself)."""
    head, _, rest = inc.partition("/")
    if rest and head in INCLUDE_ROOTS:
        return INCLUDE_ROOTS[head] + "/" + rest
    if not rest:
        return layer + "/" + inc  # the tools include their own headers by bare name
    return None


def table_rows(root):
    """The layer table of docs/architecture.md: folder -> its row's text."""
    rows = {}
    with open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\|\s*\d+\s*\|\s*`([^`]+)/`\s*\|", line)
            if m:
                rows[m.group(1)] = line
    return rows


def unnamed(root, layer, names, rows):
    """The files of @layer its row of the layer table does not name."""
    row = rows.get(layer)
    if row is None:
        return [f"docs/architecture.md has no row for {layer}"]
    missing = []
    stems = {os.path.splitext(n)[0] for n in names}
    for stem in sorted(stems):
        c, h = stem + ".c", stem + ".h"
        named = f"`{c}`" in row if c in names else f"`{h}`" in row
        if not named:
            missing.append(f"{layer}/{c if c in names else h} is not named in the layer table "
                           "of docs/architecture.md")
    return missing


def main():
    root = sys.argv[1]
    problems = []
    edges = {}
    rows = table_rows(root)
    for layer in LAYERS:
        folder = os.path.join(root, layer)
        if not os.path.isdir(folder):
            problems.append(f"layer folder {layer} is missing")
            continue
        problems += unnamed(root, layer, [n for n in os.listdir(folder)
                                          if n.endswith((".c", ".h"))], rows)
        for name in sorted(os.listdir(folder)):
            if not name.endswith((".c", ".h")):
                continue
            path = layer + "/" + name
            with open(os.path.join(root, path), encoding="utf-8") as f:
                text = f.read()
            for inc in INCLUDE.findall(text):
                target = resolve(layer, inc)
                if target is None or not os.path.exists(os.path.join(root, target)):
                    continue
                tlayer = os.path.dirname(target)
                if tlayer != layer and LAYERS[tlayer] >= LAYERS[layer]:
                    problems.append(f"{path} includes {inc}: layer {tlayer} is not below {layer}")
                a, b = module_of(path), module_of(target)
                if a != b:
                    edges.setdefault(a, set()).add(b)
    # Cycles between modules: depth-first search, reporting each cycle found once.
    state, stack, seen_cycles = {}, [], set()

    def visit(m):
        state[m] = 1
        stack.append(m)
        for n in sorted(edges.get(m, ())):
            if state.get(n) == 1:
                cycle = stack[stack.index(n):] + [n]
                key = frozenset(cycle)
                if key not in seen_cycles:
                    seen_cycles.add(key)
                    problems.append("include cycle: " + " -> ".join(cycle))
            elif state.get(n) is None:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(edges):
        if state.get(m) is None:
            visit(m)
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"layers: {len(edges)} modules, includes follow the layers, no cycles, every file "
          "named in the layer table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
