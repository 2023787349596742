#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The layers of the library, checked from its #include lines and from the calls of its
objects (docs/architecture.md).

Each folder is one layer and may include headers of its own layer and of lower layers only;
layers of one rank are siblings and include none of each other's headers. Modules (a .c with
its .h; a NAME_internal.h belongs to module NAME) include each other without cycles. Every file
of a layer is named in its row of the layer table of docs/architecture.md (a module by its .c,
a header of its own by its .h), so that a reader finds each concept by its file name.

With a build folder, the same rules hold for the calls: every undefined symbol of a library
object (nm) is resolved to the module that defines it; a module calls (or reads the variables
of) its own layer and lower layers only, never a sibling of its rank, and no circle of calls
runs between modules. Calls made through function pointers a lower layer was handed (hooks,
callbacks) are not symbols and are not seen: the hooks are declared interfaces.

    check_layers.py SOURCE_DIR [BUILD_DIR [NM]]
Prints every violation and exits 1 if there is any.
"""
import os
import re
import subprocess
import sys

# Rank of each layer folder, lowest first; a layer includes headers of lower ranks only.
LAYERS = {
    "src/util": 0,
    "src/gpu": 1,
    "src/type": 1,
    "cache": 1,
    "jit": 2,
    "src/kernels": 3,
    "src/move": 4,
    "src/calls": 5,
    "src/interpose": 6,
    "src/tools": 7,
}
# How an include path names its folder ("gpu/cuda.h" -> src/gpu).
INCLUDE_ROOTS = {"util": "src/util", "gpu": "src/gpu", "type": "src/type", "cache": "cache",
                 "jit": "jit", "kernels": "src/kernels", "move": "src/move",
                 "calls": "src/calls",
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


def cycles(edges):
    """One circle through each strongly connected set of modules of @edges (Tarjan), as text."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(circle(edges, set(group), min(group)))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            strong(v)
    return out


def circle(edges, group, start):
    """A shortest path from @start back to itself inside @group, as "a -> b -> a"."""
    prev, todo = {start: None}, [start]
    while todo:
        nxt = []
        for v in todo:
            for w in sorted(edges.get(v, ())):
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return " -> ".join(reversed(path)) + " -> " + start
                if w in group and w not in prev:
                    prev[w] = v
                    nxt.append(w)
        todo = nxt
    return start


def library_objects(build):
    """Source path (relative to the source folder) -> object file, for the library's own objects:
    the folders of the layers, compiled for the library and the command (not the copies the
    tests and variant builds compile)."""
    found = {}
    for dirpath, _, files in os.walk(build):
        if ".dir" not in dirpath or "CMakeFiles" not in dirpath:
            continue
        for name in files:
            if not name.endswith(".c.o"):
                continue
            obj = os.path.join(dirpath, name)
            rel = os.path.relpath(obj, build)
            cmake_dir, _, inside = rel.partition("CMakeFiles" + os.sep)
            inside = inside.split(os.sep, 1)[1] if os.sep in inside else ""
            if inside.startswith("__") or "variant" in rel:
                continue
            src = os.path.normpath(os.path.join(cmake_dir, inside[: -len(".o")]))
            if os.path.dirname(src) in LAYERS:
                found.setdefault(src, obj)
    return found


def symbols(nm, obj):
    """The global symbols @obj defines and those it needs, as nm -P reads them."""
    out = subprocess.run([nm, "-P", obj], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind.isupper() and kind not in "NU":
            defined.add(name)
    return defined, undefined


def call_edges(root, build, nm):
    """Module -> modules whose symbols it uses, and the uses that break the layers."""
    objects = library_objects(build)
    problems = []
    if not objects:
        return {}, [f"no objects of the library under {build}"]
    owner, needs = {}, {}
    for src, obj in sorted(objects.items()):
        defined, undefined = symbols(nm, obj)
        for name in defined:
            owner.setdefault(name, src)
        needs[src] = undefined
    edges = {}
    for src, undefined in sorted(needs.items()):
        layer = os.path.dirname(src)
        for name in sorted(undefined):
            target = owner.get(name)
            if target is None:
                continue  # the system MPI, the C library, the driver's loader
            tlayer = os.path.dirname(target)
            if tlayer != layer and LAYERS[tlayer] >= LAYERS[layer]:
                problems.append(f"{src} calls {name} of {target}: layer {tlayer} is not below "
                                f"{layer}")
            a, b = module_of(src), module_of(target)
            if a != b:
                edges.setdefault(a, set()).add(b)
    return edges, problems


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
    problems += ["include cycle: " + c for c in cycles(edges)]
    calls = None
    if len(sys.argv) > 2:
        calls, found = call_edges(root, sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "nm")
        problems += found
        problems += ["circle of calls: " + c for c in cycles(calls)]
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"layers: {len(edges)} modules, includes follow the layers, no cycles, every file "
          "named in the layer table" +
          (f"; {sum(len(v) for v in calls.values())} calls between {len(calls)} modules follow "
           "the layers, no circles" if calls is not None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
