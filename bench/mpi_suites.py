#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Builds and runs MPICH's test/mpi suites against one MPI, alone and with typejit preloaded.

usage: mpi_suites.py build --src TESTMPI --cc MPICC --build DIR [--dirs coll pt2pt] [--dtp]
                           [--gpu [--cuda DIR]]
       mpi_suites.py run   --src TESTMPI --cc MPICC --build DIR --lib LIBTYPEJIT [--rounds 3]
                           [--modes alone,auto,system] [--timeout 180] [--csv FILE] [--logs DIR]
                           [--only REGEX] [--dirs ...] [--dtp] [--gpu] [--env K=V ...]
       mpi_suites.py summary CSV...

`build` writes a Makefile in DIR for every program the folders' testlists name (testlist.in, and
testlist.dtp with --dtp: generated in DIR by the tree's own maint/gentests_dtp.sh when the tree has
none; with --gpu the GPU lists testlist.gpu instead, the programs built with MPICH's CUDA memory
kinds against the CUDA runtime of --cuda) and runs make; a program that does not compile against this MPI (a call of a newer MPI
standard, an MPICH extension) is recorded as not built. `run` runs every listed program with its
list's process count, arguments and environment, in each mode in turn (the order rotated from one
program to the next, so that a change of load hits every mode alike), for several rounds, and
prints one CSV row per run and a summary. A run passes when it exits 0 and its output has a
"No Errors" line, as MPICH's test programs print.
"""
import argparse
import csv
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

NOT_RUN = ("notbuilt", "largetest", "xfail")
FIELDS = ["program", "np", "mode", "round", "seconds", "status", "stderr_bytes"]


def mpi_family(cc):
    """'openmpi' when the compiler wrapper answers Open MPI's --showme, else 'mpich' (hydra)."""
    r = subprocess.run([cc, "--showme:version"], capture_output=True, text=True)
    return "openmpi" if r.returncode == 0 and "Open MPI" in r.stdout + r.stderr else "mpich"


def default_launcher(cc):
    path = shutil.which(cc) or cc
    d, base = os.path.split(path)
    for name in (base.replace("mpicc", "mpiexec", 1), base.replace("mpicc", "mpirun", 1)):
        if os.path.exists(os.path.join(d, name)):
            return os.path.join(d, name)
    sys.exit(f"mpi_suites: no mpiexec beside {path}; give --launcher")


def am_vars(path):
    """The assignments of an automake file, continuation lines joined, += appended."""
    out = {}
    if not os.path.exists(path):
        return out
    text = open(path).read().replace("\\\n", " ")
    for line in text.splitlines():
        m = re.match(r"^\s*([A-Za-z0-9_]+)\s*(\+?=)\s*(.*)$", line)
        if m:
            key, op, val = m.groups()
            val = val.split("#")[0].strip()
            out[key] = (out.get(key, "") + " " + val).strip() if op == "+=" else val
    return out


def list_files(a, d):
    if a.gpu:
        return [f for f in [os.path.join(a.src, d, "testlist.gpu")] if os.path.exists(f)]
    files = [os.path.join(a.src, d, "testlist.in")]
    if a.dtp:
        files.append(os.path.join(a.build, d, "testlist.dtp"))
    return [f for f in files if os.path.exists(f)]


def parse_list(path, d):
    """One dict per test line: dir, name, np, args, env, attrs; @largetest@ lines are skipped."""
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        name = fields[0]
        t = {"dir": d, "name": name, "np": 1, "args": [], "env": [], "attrs": {}, "skip": ""}
        if name.startswith("@"):
            # Substituted by MPICH's configure: @largetest@ programs need tens of GiB.
            t["name"] = re.sub(r"^@[a-z]+@", "", name)
            t["skip"] = "largetest"
        rest = fields[1:]
        if rest and rest[0].isdigit():
            t["np"] = int(rest[0])
            rest = rest[1:]
        for r in rest:
            key, eq, val = r.partition("=")
            if not eq:
                continue  # a bare word (a source path some lines carry): not a setting
            if key == "arg":
                t["args"].append(val)
            elif key == "env":
                t["env"].append(val)
            else:
                t["attrs"].setdefault(key, []).append(val)
        yield t


def tests_of(a):
    for d in a.dirs:
        for f in list_files(a, d):
            yield from parse_list(f, d)


def cmd_build(a):
    family = mpi_family(a.cc)
    os.makedirs(os.path.join(a.build, "include"), exist_ok=True)
    os.makedirs(os.path.join(a.build, "lib"), exist_ok=True)
    if a.dtp:
        missing = [d for d in a.dirs if not os.path.exists(os.path.join(a.src, d, "testlist.dtp"))]
        for d in a.dirs:
            os.makedirs(os.path.join(a.build, d), exist_ok=True)
            given = os.path.join(a.src, d, "testlist.dtp")
            if os.path.exists(given):
                shutil.copy(given, os.path.join(a.build, d, "testlist.dtp"))
        if missing:
            subprocess.run(["bash", os.path.join(a.src, "maint", "gentests_dtp.sh"),
                            "--with-dtpools-datatypes=MPI_INT,MPI_INT:4+MPI_DOUBLE:8"],
                           cwd=a.build, check=True, stdout=subprocess.DEVNULL)

    # The configuration header MPICH's configure would write; strict MPI (no MPICH extensions)
    # for any MPI but MPICH.
    conf = ["HAVE_LONG_DOUBLE", "HAVE_LONG_LONG", "HAVE_LONG_LONG_INT", "HAVE_STRING_H",
            "HAVE_STDARG_H", "HAVE_STDLIB_H", "HAVE_STDINT_H", "HAVE_UNISTD_H", "HAVE_SYS_TIME_H",
            "HAVE_SYS_RESOURCE_H", "HAVE_GETRUSAGE", "HAVE_MPI_WIN_CREATE",
            "HAVE_MPI_TYPE_CREATE_STRUCT", "HAVE_MPI_INIT_THREAD", "HAVE_MPI2_COMBINERS"]
    if family == "mpich":
        conf.append("HAVE_MPI_INTEGER16")  # an optional type Open MPI 4.1 lacks
    if a.gpu:
        conf.append("HAVE_CUDA")  # MPICH's device memory kinds (util/mtest_common.c)
    text = "".join(f"#define {c} 1\n" for c in conf)
    text += "#define POINTERINT_t long\n#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX\n"
    if family != "mpich":
        text += "#define USE_STRICT_MPI 1\n"
    open(os.path.join(a.build, "include", "mpitestconf.h"), "w").write(text)
    open(os.path.join(a.build, "include", "mtest_mpix.h"), "w").write("/* none */\n")
    open(os.path.join(a.build, "dtpoolsconf.h"), "w").write(
        "#define HAVE_STDLIB_H 1\n#define HAVE_STRING_H 1\n#define HAVE_STRDUP 1\n"
        "#define HAVE_MEMSET 1\n")

    # Open MPI 4 hides the MPI-1 functions MPI-3.0 removed behind a static assertion unless asked;
    # its library still has them, and a few test programs and DTPools call them.
    cflags = "-O2 -g -w" + (" -DOMPI_OMIT_MPI1_COMPAT_DECLS=0" if family == "openmpi" else "")
    inc = f"-I{a.build}/include -I{a.src}/include -I{a.src}/dtpools/include -I{a.build}"
    libs = "-lm"
    if a.gpu:
        inc += f" -I{a.cuda}/include"
        libs = f"-L{a.cuda}/lib64 -lcudart -lm"
    lines = [f"CC = {a.cc}", f"CFLAGS = {cflags}", f"INC = {inc}", ""]
    lib_sources = ["util/mtest.c", "util/mtest_common.c", "util/mtest_single.c", "util/dtypes.c"]
    lib_sources += [f"dtpools/src/{f}" for f in sorted(os.listdir(f"{a.src}/dtpools/src"))
                    if f.endswith(".c")]
    objs = []
    for s in lib_sources:
        o = f"{a.build}/lib/{os.path.basename(s)[:-2]}.o"
        extra = "-DDTP_MPI_DATATYPE=MPI_INT" if s.startswith("dtpools") else ""
        lines += [f"{o}: {a.src}/{s}", f"\t$(CC) $(CFLAGS) $(INC) {extra} -c $< -o $@", ""]
        objs.append(o)
    lib = f"{a.build}/lib/libmtest.a"
    lines += [f"{lib}: {' '.join(objs)}", "\trm -f $@ && ar rcs $@ $^", ""]
    targets = []
    for d in a.dirs:
        v = am_vars(os.path.join(a.src, d, "Makefile.am"))
        names = dict.fromkeys(t["name"] for t in tests_of(argparse.Namespace(**{**vars(a),
                                                                               "dirs": [d]})))
        for name in names:
            key = re.sub(r"[^A-Za-z0-9_]", "_", name)
            sources = v.get(f"{key}_SOURCES", f"{name}.c").split()
            if not all(os.path.exists(f"{a.src}/{d}/{s}") for s in sources):
                continue
            flags = v.get(f"{key}_CPPFLAGS", "").replace("$(AM_CPPFLAGS)", "")
            exe = f"{a.build}/{d}/{name}"
            srcs = " ".join(f"{a.src}/{d}/{s}" for s in sources if s.endswith(".c"))
            lines += [
                f"{exe}: {srcs} {lib}",
                "\t@mkdir -p $(@D); rm -f $@.notbuilt",
                f"\t@$(CC) $(CFLAGS) $(INC) {flags} {srcs} {lib} {libs} -o $@ 2> $@.buildlog"
                f" || {{ echo 'not built: {d}/{name}'; rm -f $@; touch $@ $@.notbuilt; }}",
                "",
            ]
            targets.append(exe)
    lines.insert(0, "all: " + " ".join(targets) + "\n")
    open(os.path.join(a.build, "Makefile"), "w").write("\n".join(lines) + "\n")
    r = subprocess.run(["make", "-s", "-k", f"-j{a.jobs}", "-C", a.build])
    notbuilt = sorted(os.path.relpath(t, a.build) for t in targets
                      if os.path.exists(t + ".notbuilt"))
    print(f"{family}: {len(targets) - len(notbuilt)} of {len(targets)} programs built;"
          f" not built: {' '.join(notbuilt) or 'none'}")
    return r.returncode


def launch(a, family, t, mode):
    env = list(t["env"]) + list(a.env)
    if mode != "alone":
        env = [f"LD_PRELOAD={a.lib}"] + ([f"TYPEJIT_HOST={mode}"] if mode != "auto" else []) + env
    cmd = [a.launcher, "-n", str(nprocs(a, t))]
    if family == "openmpi":
        cmd += ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
        for e in env:
            cmd += ["-x", e]
    else:
        for e in env:
            k, _, v = e.partition("=")
            cmd += ["-genv", k, v]
    return cmd + [f"./{t['name']}"] + t["args"]


def descendants(pid):
    """Every process below pid: hydra puts each rank in a session of its own."""
    children = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = open(f"/proc/{d}/stat").read()
            except OSError:
                continue
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            children.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        out += kids
        todo += kids
    return out


def run_one(a, family, t, mode):
    cmd = launch(a, family, t, mode)
    t0 = time.monotonic()
    # typejit's settings reach the ranks through -x / -genv, never the launcher itself.
    p = subprocess.Popen(cmd, cwd=os.path.join(a.build, t["dir"]), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(timeout=a.timeout)
        ok = p.returncode == 0 and re.search(rb"^\s*No [Ee]rrors\s*$", out, re.M)
        status = "pass" if ok else "fail"
    except subprocess.TimeoutExpired:
        for pid in [p.pid] + descendants(p.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        out, err = p.communicate()
        status = "timeout"
    seconds = time.monotonic() - t0
    if a.logs and (status != "pass" or err):
        os.makedirs(a.logs, exist_ok=True)
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", label(t))[:120]
        with open(os.path.join(a.logs, f"{name}.np{nprocs(a, t)}.{mode}.log"), "wb") as f:
            f.write((" ".join(cmd) + f"\nrc={p.returncode} status={status} "
                     f"seconds={seconds:.3f}\n--- stdout\n").encode() + out +
                    b"--- stderr\n" + err)
    return seconds, status, len(err)


def label(t):
    return " ".join([f"{t['dir']}/{t['name']}"] + t["args"] + [f"env={e}" for e in t["env"]])


def nprocs(a, t):
    return min(t["np"], a.maxnp) if a.maxnp else t["np"]


def program(a, t):
    """The CSV's name of a list line; a line whose process count --maxnp lowered says its own."""
    return label(t) + (f" [listed np {t['np']}]" if nprocs(a, t) != t["np"] else "")


def cmd_run(a):
    # Launchers hand their own environment to the ranks: the modes must be all that differs.
    for k in [k for k in os.environ if k.startswith("TYPEJIT_") or k == "LD_PRELOAD"]:
        del os.environ[k]
    family = mpi_family(a.cc)
    a.launcher = a.launcher or default_launcher(a.cc)
    modes = a.modes.split(",")
    tests = list(tests_of(a))
    if a.only:
        tests = [t for t in tests if re.search(a.only, label(t))]
    w = csv.writer(open(a.csv, "w", newline="") if a.csv else sys.stdout)
    w.writerow(FIELDS)
    rows = []

    def emit(row):
        rows.append(row)
        w.writerow(row)
        if a.csv:
            print(f"{row[3]} {row[2]:7s} {row[5]:9s} {row[4]:8.2f} s  {row[0][:90]}",
                  file=sys.stderr, flush=True)

    loads = []
    for rnd in range(1, a.rounds + 1):
        loads.append(open("/proc/loadavg").read().split()[0])
        for i, t in enumerate(tests):
            exe = os.path.join(a.build, t["dir"], t["name"])
            if "xfail" in t["attrs"] and not a.xfail:
                t["skip"] = "xfail"
            if t["skip"] or not os.path.exists(exe) or os.path.exists(exe + ".notbuilt"):
                why = t["skip"] or "notbuilt"
                for m in modes:
                    emit([program(a, t), nprocs(a, t), m, rnd, 0.0, why, 0])
                continue
            k = (i + rnd) % len(modes)
            for m in modes[k:] + modes[:k]:
                seconds, status, errbytes = run_one(a, family, t, m)
                emit([program(a, t), nprocs(a, t), m, rnd, round(seconds, 3), status, errbytes])
    loads.append(open("/proc/loadavg").read().split()[0])
    summarise(rows, sys.stdout if a.csv else sys.stderr)
    print(f"load average (1 min) at the start of each round and at the end: {' '.join(loads)}",
          file=sys.stdout if a.csv else sys.stderr)


def summarise(rows, out):
    modes = sorted(dict.fromkeys(r[2] for r in rows), key=lambda m: m != "alone")
    rounds = sorted({int(r[3]) for r in rows})
    progs = list(dict.fromkeys((r[0], str(r[1])) for r in rows))  # one list line: label and np
    cell = {(r[0], str(r[1]), r[2], int(r[3])): r for r in rows}

    def c(x, m, r):
        return cell[(x[0], x[1], m, r)]

    def p(s=""):
        print(s, file=out)

    ran = [x for x in progs if c(x, modes[0], rounds[0])[5] not in NOT_RUN]
    p(f"\n{len(progs)} programs listed, {len(ran)} run, {len(rounds)} rounds")
    p("| mode | passed, each round | not passed in some round | seconds, each round | median |")
    p("| --- | --- | ---: | --- | ---: |")
    totals = {}
    for m in modes:
        passed = [sum(c(x, m, r)[5] == "pass" for x in ran) for r in rounds]
        bad = [x for x in ran if any(c(x, m, r)[5] != "pass" for r in rounds)]
        tot = [sum(float(c(x, m, r)[4]) for x in ran) for r in rounds]
        totals[m] = statistics.median(tot)
        p(f"| {m} | {' '.join(map(str, passed))} of {len(ran)} | {len(bad)} |"
          f" {' '.join(f'{s:.1f}' for s in tot)} | {totals[m]:.1f} |")
    base = modes[0]
    for m in modes[1:]:
        p(f"{m}/{base}: {totals[m] / totals[base]:.3f}")

    # A program that passes alone in every round but not in some round of another mode, and
    # stderr written under typejit where the program wrote none alone.
    for m in modes[1:]:
        for x in ran:
            alone = [c(x, base, r) for r in rounds]
            other = [c(x, m, r) for r in rounds]
            if all(y[5] == "pass" for y in alone) and any(y[5] != "pass" for y in other):
                p(f"FAILS ONLY UNDER {m}: {x[0]} (np {x[1]}: {' '.join(y[5] for y in other)})")
            if all(int(y[6]) == 0 for y in alone) and any(int(y[6]) > 0 for y in other):
                p(f"STDERR ONLY UNDER {m}: {x[0]} (np {x[1]})")
    for x in ran:
        states = {m: " ".join(c(x, m, r)[5] for r in rounds) for m in modes}
        if any(v != " ".join("pass" for _ in rounds) for v in states.values()):
            p(f"not passed: {x[0]} (np {x[1]}): "
              + "; ".join(f"{m} {v}" for m, v in states.items()))

    def med(x, m):
        return statistics.median(float(c(x, m, r)[4]) for r in rounds)

    if len(modes) < 2:
        return  # nothing to compare the times with
    p("\nlargest differences of the median time (seconds) from " + base)
    p("| program | np | " + " | ".join(modes) + f" | {base}, max-min of rounds |")
    p("| --- | ---: | " + " | ".join("---:" for _ in modes) + " | ---: |")
    diffs = sorted(ran, key=lambda x: -max(abs(med(x, m) - med(x, base)) for m in modes[1:]))
    for x in diffs[:10]:
        spread = [float(c(x, base, r)[4]) for r in rounds]
        p(f"| {x[0][:70]} | {x[1]} | " + " | ".join(f"{med(x, m):.2f}" for m in modes)
          + f" | {max(spread) - min(spread):.2f} |")


def cmd_summary(a):
    rows = []
    for f in a.csv_files:
        rows += [r for r in csv.reader(open(f))][1:]
    summarise(rows, sys.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("build", "run"):
        s = sub.add_parser(name)
        s.add_argument("--src", required=True, help="an MPICH source tree's test/mpi")
        s.add_argument("--cc", required=True, help="the MPI's C compiler wrapper")
        s.add_argument("--build", required=True, help="where the programs are built")
        s.add_argument("--dirs", nargs="+", default=["coll", "pt2pt"])
        s.add_argument("--dtp", action="store_true", help="also the DTPools lists (testlist.dtp)")
        s.add_argument("--jobs", type=int, default=2)
        s.add_argument("--gpu", action="store_true",
                       help="the GPU lists (testlist.gpu) instead, built with MPICH's CUDA memory "
                            "kinds")
    sub.choices["build"].add_argument("--cuda", default="/usr/local/cuda",
                                      help="the CUDA toolkit whose runtime --gpu builds against")
    r = sub.choices["run"]
    r.add_argument("--env", action="append", default=[], metavar="K=V",
                   help="an environment variable every rank gets in every mode (the library "
                        "path of a CUDA runtime and driver, for instance)")
    r.add_argument("--lib", required=True, help="libtypejit.so built against the same MPI")
    r.add_argument("--launcher", help="default: mpiexec beside the compiler")
    r.add_argument("--modes", default="alone,auto,system",
                   help="alone: no typejit; other words: typejit with TYPEJIT_HOST=word (auto: "
                        "the default settings, nothing set)")
    r.add_argument("--rounds", type=int, default=3)
    r.add_argument("--maxnp", type=int,
                   help="run at most this many processes (default: the list's)")
    r.add_argument("--timeout", type=float, default=180, help="seconds a run may take")
    r.add_argument("--csv")
    r.add_argument("--logs", help="keep the output of failed runs and of runs with stderr here")
    r.add_argument("--xfail", action="store_true",
                   help="also the lines MPICH marks xfail= (known to fail or hang there)")
    r.add_argument("--only", help="regular expression on the program and its arguments")
    s = sub.add_parser("summary")
    s.add_argument("csv_files", nargs="+")
    a = ap.parse_args()
    for k in ("src", "build", "lib"):
        if getattr(a, k, None):
            setattr(a, k, os.path.abspath(getattr(a, k)))
    sys.exit({"build": cmd_build, "run": cmd_run, "summary": cmd_summary}[a.cmd](a) or 0)


if __name__ == "__main__":
    main()
