#!/usr/bin/env python3
"""Plots and tables of the CPU benchmarks (bench_pack_cpu's and bench_commit's CSV).

    plot_cpu.py cpu_pack.csv OUTDIR [--commit commit.csv]
        write OUTDIR/cpu_pack.png (GB/s against run length, engine and MPI, one panel per
        object size, pack and unpack) and, with --commit, OUTDIR/cpu_commit.png
    plot_cpu.py --table cpu_pack.csv [--commit commit.csv]
        print the tables as Markdown

Lines starting with '#' in the CSV files are comments and are skipped.
"""
import csv
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


def plot_pack(rows, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted({int(r["object_bytes"]) for r in rows})
    ops = ["pack", "unpack"]
    fig, axes = plt.subplots(len(ops), len(sizes), figsize=(4.2 * len(sizes), 3.4 * len(ops)),
                             squeeze=False)
    for i, op in enumerate(ops):
        for j, size in enumerate(sizes):
            ax = axes[i][j]
            pts = sorted((int(r["run_bytes"]), float(r["engine_GBps"]), float(r["mpi_GBps"]))
                         for r in rows if r["op"] == op and int(r["object_bytes"]) == size)
            if not pts:
                ax.set_visible(False)
                continue
            runs = [p[0] for p in pts]
            ax.plot(runs, [p[1] for p in pts], marker="o", label="typejit engine")
            ax.plot(runs, [p[2] for p in pts], marker="s", label="Open MPI PMPI_" + op.title())
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"{op}, {size_label(size)} packed")
            ax.set_xlabel("contiguous run (B), pitch 512 B")
            ax.set_ylabel("GB/s (packed bytes)")
            ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(f"{outdir}/cpu_pack.png", dpi=90)
    plt.close(fig)


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


def table_pack(rows):
    """One table per direction: a row per run length, engine / MPI / ratio per object size."""
    sizes = sorted({int(r["object_bytes"]) for r in rows})
    runs = sorted({int(r["run_bytes"]) for r in rows})
    cell = {(r["op"], int(r["object_bytes"]), int(r["run_bytes"])): r for r in rows}
    for op in ("pack", "unpack"):
        head = " | ".join(f"{size_label(s)}: engine, MPI GB/s, ratio" for s in sizes)
        print(f"| {op}: run (B) | {head} |")
        print("| ---: |" + " ---: |" * len(sizes))
        for run in runs:
            vals = []
            for s in sizes:
                r = cell.get((op, s, run))
                vals.append("" if r is None else
                            f"{float(r['engine_GBps']):.3g}, {float(r['mpi_GBps']):.3g}, "
                            f"**{float(r['ratio']):.2f}x**")
            print(f"| {run} | " + " | ".join(vals) + " |")
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
    if len(argv) == 2 and argv[0] == "--table":
        table_pack(load(argv[1]))
        if commit:
            print()
            table_commit(load(commit))
        return 0
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    plot_pack(load(argv[0]), argv[1])
    if commit:
        rows = load(commit)
        if rows:
            plot_commit(rows, argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
