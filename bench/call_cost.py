#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""typejit's own instructions per steady call, from the callgrind dumps of bench_call_cost.

    call_cost.py [--top N] [--csv] OUT.LOG CALLGRIND_FILE...

OUT.LOG is bench_call_cost's standard output (its `call_cost scenario=...` lines say how many
calls each dump holds and which process made it); each CALLGRIND_FILE is one dump
(valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=DIR/cg.%p: DIR/cg.PID.K).

typejit's own = the exclusive instructions of the functions of libtypejit.so, plus the inclusive
instructions of what they call outside it, except what the CUDA driver (libcuda, and the kernels
the test driver runs), NVRTC and the MPI library (and the libraries it brings: PMIx, hwloc,
libevent, UCX, libfabric; code callgrind names no object for is the MPI's) do. Printed per scenario and rank, per call, with the driver calls the
program counted, the pthread locks and hash calls typejit's own code made per call, and how many
of its source files ran; --top N lists the N functions of typejit's own that cost the most, and
the files."""
import os
import re
import sys

# Objects whose work is not typejit's own: the driver and its kernels, NVRTC, the MPI.
NOT_OWN = re.compile(
    r"(^libcuda\.so|^libnvrtc|^libnvJitLink|^libmpi|^libopen-(pal|rte)|^libpmix|^libprrte|"
    r"^mca_|^libmpich|^libmpl|^libuc[pstm]|^libfabric|^libhwloc|^libevent|^libpsm|^libibverbs|"
    r"^libimpi|^libmpifort|^libmpi_abi|^libtj_emu_|\.kernel\.so$|^fakecuda)")
OWN = re.compile(r"^libtypejit\.so")


def own_object(path):
    return bool(OWN.match(os.path.basename(path)))


def outside(path):
    base = os.path.basename(path)
    # "???": code of no object callgrind could name (the MPI's, entered through its trampolines).
    return (not own_object(path) and not NOT_OWN.search(base) and "/fakecuda" not in path and
            base != "???")


def parse(path):
    """(description, {function: own cost}, totals of own, driver+MPI called from typejit)."""
    names = {}  # compressed names: (kind, id) -> name
    events = ["Ir"]
    npos = 1
    desc = ""
    ob = fn = ""
    cob = cfn = None
    pending_call = False
    costs = {}
    called_other = 0
    counted = {"locks": 0, "hashes": 0}
    files = set()
    fl = ""
    call_count = 0

    def name(kind, text):
        m = re.match(r"\((\d+)\)(?: (.*))?$", text)
        if not m:
            return text
        key = (kind, m.group(1))
        if m.group(2) is not None:
            names[key] = m.group(2)
        return names.get(key, text)

    def ir(fields):
        vals = fields[npos:]
        i = events.index("Ir")
        return int(vals[i]) if i < len(vals) else 0

    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line[0] == "#":
                continue
            if line.startswith("desc:"):
                desc += line[5:].strip() + "\n"
                continue
            if line.startswith("events:"):
                events = line.split()[1:]
                continue
            if line.startswith("positions:"):
                npos = len(line.split()) - 1
                continue
            key, eq, val = line.partition("=")
            if eq and key in ("ob", "cob"):
                v = name("ob", val)
                if key == "ob":
                    ob = v
                else:
                    cob = v
                continue
            if eq and key in ("fn", "cfn"):
                v = name("fn", val)
                if key == "fn":
                    fn = v
                    cob = cfn = None
                else:
                    cfn = v
                continue
            if eq and key in ("fl", "fi", "fe", "cfi", "cfl"):
                v = name("fl", val)
                if key in ("fl", "fi", "fe"):
                    fl = v
                continue
            if eq and key == "calls":
                pending_call = True
                call_count = int(val.split()[0])
                continue
            if eq and key in ("jump", "jcnd"):
                continue
            if not (line[0].isdigit() or line[0] in "+-*"):
                continue  # a header line
            fields = line.split()
            cost = ir(fields)
            if pending_call:
                pending_call = False
                callee_ob = cob if cob is not None else ob
                if own_object(ob):
                    if re.match(r"pthread_(mutex_lock|rwlock_(rd|wr)lock|spin_lock)", cfn or ""):
                        counted["locks"] += call_count
                    if re.match(r"(XXH|tj_hash)", cfn or ""):
                        counted["hashes"] += call_count
                if own_object(ob) and not own_object(callee_ob):
                    if outside(callee_ob):
                        k = f"{cfn or '?'} (called by {fn})"
                        costs[k] = costs.get(k, 0) + cost
                    else:
                        called_other += cost
                cob = cfn = None
                continue
            if own_object(ob):
                costs[fn] = costs.get(fn, 0) + cost
                if cost and fl.endswith(".c"):
                    # The path inside the tree (a shared compiler cache may name another copy).
                    m = re.search(r"((src|jit|cache)/.*)$", fl)
                    files.add(m.group(1) if m else fl)
    costs = {k: v for k, v in costs.items() if v}
    return desc, costs, sum(costs.values()), called_other, counted, files


def main(argv):
    top = 0
    csv = False
    args = []
    i = 0
    while i < len(argv):
        if argv[i] == "--top" and i + 1 < len(argv):
            top = int(argv[i + 1])
            i += 2
            continue
        if argv[i] == "--csv":
            csv = True
        else:
            args.append(argv[i])
        i += 1
    if len(args) < 2:
        sys.exit(__doc__)
    lines = {}  # (scenario, pid) -> fields
    with open(args[0]) as f:
        for line in f:
            if line.startswith("call_cost "):
                fields = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
                lines[(fields["scenario"], fields.get("pid", ""))] = fields
    rows = []
    for path in args[1:]:
        desc, costs, own, other, counted, files = parse(path)
        m = re.search(r"Client Request: (\S+)", desc)
        if not m:
            continue
        scenario = m.group(1)
        pid = re.search(r"cg\.(\d+)", os.path.basename(path))
        pid = pid.group(1) if pid else ""
        fields = lines.get((scenario, pid), {})
        calls = int(fields.get("calls", 1))
        rows.append((scenario, fields.get("rank", "?"), own / calls, other / calls, fields, costs,
                     calls, counted, files))
    order = ["host_contig", "host_face", "pack", "unpack", "isend", "isend_call", "irecv",
             "sendrecv", "startall", "neighbor"]
    rows.sort(key=lambda r: (order.index(r[0]) if r[0] in order else 99, r[1]))
    if csv:
        print("scenario,rank,own_per_call,driver_and_mpi_per_call,driver_calls_per_call,"
              "waits_per_call,pthread_locks_per_call,hashes_per_call,source_files")
    for scenario, rank, own, other, fields, costs, calls, counted, files in rows:
        dc = int(fields.get("driver_calls", -1))
        waits = int(fields.get("waits", -1))
        per = lambda v: v / calls if v >= 0 else -1
        if csv:
            print(f"{scenario},{rank},{own:.0f},{other:.0f},{per(dc):g},{per(waits):g},"
                  f"{counted['locks'] / calls:g},{counted['hashes'] / calls:g},{len(files)}")
            continue
        extra = " ".join(f"{k}={int(v) / calls:g}" for k, v in fields.items()
                         if k.startswith("cu"))
        print(f"{scenario:9s} rank {rank}: own {own:8.0f} instr/call   driver calls/call {per(dc):g} "
              f"(waits {per(waits):g})   pthread locks/call {counted['locks'] / calls:g}   "
              f"hashes/call {counted['hashes'] / calls:g}   source files {len(files)}   {extra}")
        if top:
            print("    files: " + " ".join(sorted(files)))
        for name, cost in sorted(costs.items(), key=lambda kv: -kv[1])[:top]:
            print(f"    {cost / calls:8.0f}  {name}")


if __name__ == "__main__":
    main(sys.argv[1:])
