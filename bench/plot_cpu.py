#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Plots and tables of the CPU benchmarks (bench_pack_cpu's and bench_commit's CSV).

    plot_cpu.py PACK.csv [PACK.csv ...] OUTDIR [--commit commit.csv]
        write OUTDIR/cpu_pack_<mpi>.png for each pack CSV (one run of bench_pack_cpu on one
        MPI): the engine's speed over the system MPI's per shape (run length on the x axis, a
        line per object size, a panel per direction, pitch and count), filled markers where
        TYPEJIT_HOST=auto chooses the engine, and the memcpy ceiling dotted; with --commit,
        OUTDIR/cpu_commit.png
    plot_cpu.py --table PACK.csv [PACK.csv ...] [APPS.csv ...] [--commit commit.csv]
        print the tables as Markdown: the ratios against every MPI side by side, the shapes where
        the engine or auto is behind, and GB/s beside the memcpy ceiling; for the CSV of
        bench_pack_cpu --apps (application layouts), a row per shape with the speed of the
        engine, of TYPEJIT_HOST=auto and of typejit's MPI_Pack/MPI_Unpack over each MPI

Lines starting with '#' in the CSV files are comments and are skipped.
"""
import csv
import re
import sys


def load(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if line.strip() and not line.startswith("#")))


def size_label(n):
    n = int(n)
    if n >= 1 << 20:
        return f"{n >> 20} MiB"
    if n >= 1 << 10:
        return f"{n >> 10} KiB"
    return f"{n} B"


def family(name):
    """openmpi or mpich (file names), from the mpi column."""
    low = name.lower()
    if low.startswith("open mpi"):
        return "openmpi"
    if low.startswith("mpich"):
        return "mpich"
    return re.sub(r"[^a-z0-9]+", "", low)[:16] or "mpi"


def pitch_kind(r):
    return "2x" if int(r["pitch_bytes"]) == 2 * int(r["run_bytes"]) and int(r["pitch_bytes"]) != 512 \
        else "512"


def count_kind(r):
    return "one" if int(r["count"]) == 1 else "many"


PANELS = [("512", "one"), ("512", "many"), ("2x", "one"), ("2x", "many")]


def plot_pack(rows, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mpi = rows[0]["mpi"]
    sizes = sorted({int(r["object_bytes"]) for r in rows})
    cmap = plt.get_cmap("viridis")
    fig, axes = plt.subplots(2, len(PANELS), figsize=(4.3 * len(PANELS), 7.2), squeeze=False)
    for i, op in enumerate(("pack", "unpack")):
        for j, (pitch, count) in enumerate(PANELS):
            ax = axes[i][j]
            for k, size in enumerate(sizes):
                pts = sorted((int(r["run_bytes"]), float(r["ratio"]), r["auto"] == "engine",
                              float(r["memcpy_GBps"]) / float(r["mpi_GBps"]))
                             for r in rows
                             if r["op"] == op and int(r["object_bytes"]) == size
                             and pitch_kind(r) == pitch and count_kind(r) == count)
                if not pts:
                    continue
                color = cmap(k / max(1, len(sizes) - 1))
                runs = [p[0] for p in pts]
                ax.plot(runs, [p[1] for p in pts], color=color, label=size_label(size))
                ax.scatter([p[0] for p in pts if p[2]], [p[1] for p in pts if p[2]], color=color,
                           s=14, zorder=3)
                ax.scatter([p[0] for p in pts if not p[2]], [p[1] for p in pts if not p[2]],
                           facecolors="none", edgecolors=color, s=14, zorder=3)
                ax.plot(runs, [p[3] for p in pts], color=color, linestyle=":", linewidth=0.8)
            ax.axhline(1.0, color="black", linewidth=0.8)
            ax.axhline(2.0, color="red", linewidth=0.8, linestyle="--")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"{op}, pitch {'2x run' if pitch == '2x' else '512 B'}, count {count}",
                         fontsize=9)
            ax.set_xlabel("contiguous run (B)")
            ax.set_ylabel(f"engine speed / {mpi}")
            ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=7, title="packed bytes", title_fontsize=7)
    fig.suptitle(f"typejit CPU engine against {mpi} (filled: TYPEJIT_HOST=auto takes the engine; "
                 "dotted: memcpy of all the bytes, the ceiling)", fontsize=10)
    fig.tight_layout()
    path = f"{outdir}/cpu_pack_{family(mpi)}.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def plot_commit(rows, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r["shape"] for r in rows]
    x = range(len(names))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 5))
    create = [float(r["create_us"]) for r in rows]
    native = [float(r["native_commit_us"]) for r in rows]
    typejit = [float(r["typejit_commit_us"]) for r in rows]
    w = 0.4
    ax1.bar([i - w / 2 for i in x], create, w, label="create", color="0.7")
    ax1.bar([i - w / 2 for i in x], native, w, bottom=create, label="commit, Open MPI")
    ax1.bar([i + w / 2 for i in x], create, w, color="0.7")
    ax1.bar([i + w / 2 for i in x], typejit, w, bottom=create, label="commit, typejit")
    ax1.set_xticks(list(x))
    ax1.set_xticklabels(names, rotation=90, fontsize=7)
    ax1.set_ylabel("microseconds per type")
    ax1.set_title("create + commit (left bar Open MPI, right bar typejit)")
    ax1.legend(fontsize=8)
    for key, label in (("create_commit_ratio", "create+commit"), ("ratio", "create+commit+free"),
                       ("commit_ratio", "commit alone")):
        if key in rows[0]:
            ax2.plot(list(x), [float(r[key]) for r in rows], marker="o", label=label)
    ax2.axhline(3.0, color="red", linestyle="--", linewidth=1, label="target 3x")
    ax2.set_yscale("log")
    ticks = [1, 2, 3, 5, 10, 20, 50]
    ax2.set_yticks(ticks)
    ax2.set_yticklabels([f"{t}x" for t in ticks])
    ax2.set_xticks(list(x))
    ax2.set_xticklabels(names, rotation=90, fontsize=7)
    ax2.set_ylabel("typejit / Open MPI")
    ax2.set_title("slowdown under typejit")
    ax2.grid(True, which="both", alpha=0.3)
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(f"{outdir}/cpu_commit.png", dpi=90)
    plt.close(fig)


def key(r):
    return (r["op"], pitch_kind(r), count_kind(r), int(r["object_bytes"]), int(r["run_bytes"]))


def table_pack(runs):
    """Per direction, pitch and count: a row per run length, a column per object size, each
    cell the engine's speed over each MPI's ("auto" marks where TYPEJIT_HOST=auto keeps the
    system MPI), then the shapes where the engine or auto is behind, then GB/s beside memcpy."""
    names = [rows[0]["mpi"] for rows in runs]
    cells = [{key(r): r for r in rows} for rows in runs]
    sizes = sorted({int(r["object_bytes"]) for rows in runs for r in rows})
    all_runs = sorted({int(r["run_bytes"]) for rows in runs for r in rows})
    who = " / ".join(names)
    print(f"Each cell: the engine's speed over {who} (median per-call time of the system MPI over "
          "the engine's); `(mpi)`: TYPEJIT_HOST=auto leaves that shape to that MPI.")
    print()
    for op in ("pack", "unpack"):
        for pitch, count in PANELS:
            head = " | ".join(size_label(s) for s in sizes)
            print(f"| {op}, pitch {'2x run' if pitch == '2x' else '512 B'}, count {count}: run (B)"
                  f" | {head} |")
            print("| ---: |" + " ---: |" * len(sizes))
            for run in all_runs:
                vals, any_cell = [], False
                for s in sizes:
                    parts = []
                    for c in cells:
                        r = c.get((op, pitch, count, s, run))
                        if r is None:
                            parts.append("-")
                            continue
                        any_cell = True
                        mark = "" if r["auto"] == "engine" else " (mpi)"
                        parts.append(f"{float(r['ratio']):.2f}{mark}")
                    vals.append(" / ".join(parts))
                if any_cell:
                    print(f"| {run} | " + " | ".join(vals) + " |")
            print()
    for name, rows in zip(names, runs):
        behind = [r for r in rows if float(r["ratio"]) < 1.0]
        auto_behind = [r for r in rows if float(r["auto_ratio"]) < 0.95]
        short = [r for r in rows if int(r["run_bytes"]) <= 64]
        two = [r for r in short if float(r["ratio"]) >= 2.0]
        print(f"{name}: {len(rows)} shapes; the engine behind on {len(behind)} "
              f"(auto takes the engine on {sum(r['auto'] == 'engine' for r in behind)} of those); "
              f"auto below 0.95 on {len(auto_behind)}; runs of 1-64 B: 2x or more on "
              f"{len(two)} of {len(short)}")
        print()
        if auto_behind:
            print(f"| {name}: auto below 0.95 | op | pitch | count | engine / MPI |")
            print("| --- | --- | ---: | --- | ---: |")
            for r in auto_behind:
                print(f"| {size_label(r['object_bytes'])}, run {r['run_bytes']} B | {r['op']} | "
                      f"{r['pitch_bytes']} | {count_kind(r)} | {float(r['ratio']):.2f} |")
            print()


def table_gbps(runs, op="pack", pitch="512", count="one"):
    """GB/s of the engine and of every MPI beside memcpy, for one direction, pitch and count."""
    names = [rows[0]["mpi"] for rows in runs]
    cells = [{key(r): r for r in rows} for rows in runs]
    sizes = sorted({int(r["object_bytes"]) for rows in runs for r in rows})
    all_runs = sorted({int(r["run_bytes"]) for rows in runs for r in rows})
    print(f"GB/s, {op}, pitch {'2x run' if pitch == '2x' else '512 B'}, count {count}: engine "
          f"(with the {names[0]} build), " + ", ".join(names) +
          ", a memcpy call per run, one memcpy of all the bytes (the ceiling)")
    print()
    print("| size | run (B) | engine | " + " | ".join(names) + " | memcpy per run | memcpy |")
    print("| --- | ---: | ---: |" + " ---: |" * len(names) + " ---: | ---: |")
    for s in sizes:
        for run in all_runs:
            rs = [c.get((op, pitch, count, s, run)) for c in cells]
            if rs[0] is None:
                continue
            mp = " | ".join("-" if r is None else f"{float(r['mpi_GBps']):.3g}" for r in rs)
            r = rs[0]
            print(f"| {size_label(s)} | {run} | {float(r['engine_GBps']):.3g} | {mp} | "
                  f"{float(r['runs_GBps']):.3g} | {float(r['memcpy_GBps']):.3g} |")
    print()


def table_apps(runs):
    """bench_pack_cpu --apps: a row per shape and direction, for every MPI the system MPI's time
    per call and the speed over it of the engine, of TYPEJIT_HOST=auto's choice and of MPI_Pack
    and MPI_Unpack through the preloaded typejit (its wrappers included)."""
    names = [rows[0]["mpi"] for rows in runs]
    cells = [{(r["shape"], r["op"]): r for r in rows} for rows in runs]
    order = list(dict.fromkeys((r["shape"], r["op"]) for rows in runs for r in rows))
    print("Each cell: the speed over the system MPI (its median time per call over the mover's, "
          "per round): `engine` the CPU engine alone, `auto` what TYPEJIT_HOST=auto chooses "
          "(`mpi`: the system MPI's 1.00), `typejit` MPI_Pack/MPI_Unpack through the preloaded "
          "library, its wrappers included.")
    print()
    head = " | ".join(f"{n}: us | engine | auto | typejit" for n in names)
    print(f"| shape | block | op | {head} |")
    print("| --- | --- | --- |" + " ---: | ---: | ---: | ---: |" * len(names))
    for k in order:
        block = next(c[k]["block"] for c in cells if k in c)
        vals = []
        for c in cells:
            r = c.get(k)
            if r is None:
                vals.append("- | - | - | -")
                continue
            auto = "mpi" if r["auto"] == "mpi" else f"{float(r['auto_ratio']):.2f}"
            tj = f"{float(r['typejit_ratio']):.2f}" if r["typejit_ratio"] else "-"
            us = float(r["mpi_us"])
            vals.append(f"{us:.0f} | " if us >= 100 else f"{us:.3g} | ")
            vals[-1] += f"{float(r['ratio']):.2f} | {auto} | {tj}"
        print(f"| {k[0]} | {block} | {k[1]} | " + " | ".join(vals) + " |")
    print()
    for name, rows in zip(names, runs):
        long_calls = [r for r in rows if float(r["mpi_us"]) >= 0.5]
        auto_behind = [r for r in long_calls if float(r["auto_ratio"]) < 0.95]
        tj_behind = [r for r in long_calls if r["typejit_ratio"] and
                     float(r["typejit_ratio"]) < 0.95]
        print(f"{name}: {len(rows)} calls, {len(long_calls)} of 0.5 us or more; among those auto "
              f"below 0.95 on {len(auto_behind)}, typejit below 0.95 on {len(tj_behind)}" +
              "".join(f"; {r['shape']} {r['op']} {float(r['auto_ratio']):.2f}" for r in auto_behind))
    print()


def table_commit(rows):
    print("| shape | create us | commit us, Open MPI | commit us, typejit | (create+commit) "
          "ratio | (create+commit+free) ratio | commit ratio |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['shape']} | {float(r['create_us']):.3f} | {float(r['native_commit_us']):.3f} | "
              f"{float(r['typejit_commit_us']):.3f} | {float(r.get('create_commit_ratio', 0)):.2f} | "
              f"{float(r['ratio']):.2f} | {float(r['commit_ratio']):.1f} |")


def main(argv):
    commit = None
    if "--commit" in argv:
        i = argv.index("--commit")
        commit = argv[i + 1]
        del argv[i:i + 2]
    if len(argv) >= 2 and argv[0] == "--table":
        loaded = [rows for rows in (load(p) for p in argv[1:]) if rows]
        runs = [rows for rows in loaded if "shape" not in rows[0]]
        apps = [rows for rows in loaded if "shape" in rows[0]]
        if runs:
            table_pack(runs)
            table_gbps(runs)
        if apps:
            table_apps(apps)
        if commit:
            print()
            table_commit(load(commit))
        return 0
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    for path in argv[:-1]:
        rows = load(path)
        if rows and "shape" not in rows[0]:
            print(plot_pack(rows, argv[-1]))
    if commit:
        rows = load(commit)
        if rows:
            plot_commit(rows, argv[-1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
