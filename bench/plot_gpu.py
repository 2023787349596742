#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Plots and the short table of the GPU sweep (bench_gpu_pack's CSV).

    plot_gpu.py gpu_pack.csv OUTDIR          write gpu_pack_2d.png and gpu_pack_3d.png
    plot_gpu.py --table gpu_pack.csv gpu_small.csv   print the headline table
"""
import csv
import sys
from collections import defaultdict


def load(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def plot(rows, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted({int(r["bytes"]) for r in rows if r["kind"] == "2d"})
    dirs = ["pack-d2d", "unpack-d2d", "pack-d2mapped", "unpack-mapped2d"]
    pick = [s for s in sizes if s in (1024, 1 << 20, 4 << 20, 64 << 20)] or sizes[-3:]
    fig, axes = plt.subplots(len(dirs), len(pick), figsize=(4 * len(pick), 3.2 * len(dirs)),
                             squeeze=False)
    for i, d in enumerate(dirs):
        for j, s in enumerate(pick):
            ax = axes[i][j]
            for method in ("jit", "generic", "memcpy2d", "copy"):
                pts = sorted((int(r["run"]), float(r["GBps"])) for r in rows
                             if r["kind"] == "2d" and r["direction"] == d and r["method"] == method
                             and int(r["bytes"]) == s)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=method)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"{d}, {s // 1024} KiB")
            ax.set_xlabel("contiguous run (B), pitch 512 B")
            ax.set_ylabel("GB/s (packed bytes)")
            ax.grid(True, alpha=0.3)
    axes[0][0].legend()
    fig.tight_layout()
    fig.savefig(f"{outdir}/gpu_pack_2d.png", dpi=90)

    halo = [r for r in rows if r["kind"] == "3d" and r["direction"] == "pack-d2d"]
    if halo:
        fig, ax = plt.subplots(figsize=(12, 4))
        names = sorted({(r["object"], r["count"]) for r in halo})
        for k, method in enumerate(("jit", "generic", "copy")):
            vals = []
            for n in names:
                v = [float(r["floor_fraction"]) for r in halo
                     if (r["object"], r["count"]) == n and r["method"] == method]
                vals.append(v[0] if v else 0)
            ax.bar([x + 0.28 * k for x in range(len(names))], vals, width=0.28, label=method)
        ax.set_xticks([x + 0.28 for x in range(len(names))])
        ax.set_xticklabels([f"{n} x{c}" for n, c in names], rotation=90, fontsize=7)
        ax.set_ylabel("fraction of sector floor")
        ax.legend()
        fig.tight_layout()
        fig.savefig(f"{outdir}/gpu_pack_3d.png", dpi=90)


def table(rows, small):
    by = defaultdict(dict)
    for r in rows:
        by[(r["kind"], r["object"], r["run"], r["count"], r["direction"])][r["method"]] = r
    print("\n| object | run | count | direction | jit GB/s | floor | generic GB/s | jit/generic | memcpy2d GB/s | jit/memcpy2d |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for key, m in sorted(by.items()):
        kind, obj, run, count, d = key
        if "jit" not in m:
            continue
        if kind == "2d" and obj not in ("2d-1024B", "2d-4194304B", "2d-67108864B"):
            continue
        j = m["jit"]
        g = m.get("generic")
        c2 = m.get("memcpy2d")
        jt = float(j["time_us"])
        cells = [obj, run, count, d, f"{float(j['GBps']):.1f}", f"{float(j['floor_fraction']):.2f}"]
        cells += [f"{float(g['GBps']):.1f}", f"{float(g['time_us']) / jt:.2f}"] if g else ["-", "-"]
        cells += [f"{float(c2['GBps']):.1f}", f"{float(c2['time_us']) / jt:.2f}"] if c2 else ["-", "-"]
        print("| " + " | ".join(cells) + " |")
    if small:
        print("\n| bytes | run | MPI_Pack us | launch+sync us | kernel us | typejit host us |")
        print("| --- | --- | --- | --- | --- | --- |")
        for r in small:
            print(f"| {r['small_bytes']} | {r['run']} | {r['mpi_pack_us']} | {r['launch_sync_us']} | "
                  f"{r['kernel_us']} | {r['typejit_host_us']} |")


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--table":
        rows = load(sys.argv[2])
        small = load(sys.argv[3]) if len(sys.argv) > 3 else []
        table(rows, small)
    elif len(sys.argv) == 3:
        plot(load(sys.argv[1]), sys.argv[2])
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
