#!/usr/bin/python3
"""Draws docs/images/throughput.png from two benchmark outputs of one machine and ISA level
(by default the Xeon's at avx512, the ones docs/performance.md shows):

  left:  bench/results/parallel-lenet-<level>-<machine>.json (bench/parallel_lenet.cpp):
         ParallelWrapper's samples/s against averagingFrequency, one line per training mode,
         worker count and batch per worker; the single model at 1 and 2 threads as reference lines;
  right: bench/results/peers-lenet-<level>-<machine>.json (scripts/bench-peers.sh): dl4cpp and
         libtorch at each thread count, medians with min-max bars, and the median of the pairwise
         ratios.

    scripts/plot-bench.py [--parallel FILE] [--peers FILE] [--out FILE]

Runs with Debian's python3 and python3-matplotlib (scripts/install-peers.sh), hence the
/usr/bin/python3 in the first line: another python3 on PATH may lack matplotlib.
"""
import argparse
import json
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("error: matplotlib is missing: run scripts/install-peers.sh (Debian's python3-matplotlib)")
matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402


def plot_parallel(ax, rows):
    singles = {r["threadsPerWorker"]: r["samplesPerSecond"] for r in rows if r["workers"] == 0}
    for threads, sps in sorted(singles.items()):
        ax.axhline(sps, linestyle="--", linewidth=1, color="grey" if threads == 1 else "black")
        ax.annotate(f"single model, {threads} thread{'s' if threads > 1 else ''}", (1, sps),
                    xytext=(2, 3), textcoords="offset points", fontsize=7)
    # Independent single models trained side by side: the ceiling for the wrapper's scaling.
    for r in rows:
        if r["mode"] == "independent models":
            ax.axhline(r["samplesPerSecond"], linestyle=":", linewidth=1, color="tab:red")
            ax.annotate(f"{r['workers']} independent models", (1, r["samplesPerSecond"]),
                        xytext=(2, -9), textcoords="offset points", fontsize=7, color="tab:red")
    series = {}
    for r in rows:
        if r["workers"] == 0 or r["mode"] == "independent models":
            continue
        key = (r["mode"], r["workers"], r["batchPerWorker"])
        series.setdefault(key, []).append((r["averagingFrequency"], r["samplesPerSecond"]))
    markers = {"averaging": "o", "shared gradients": "s", "averaging, pinned": "^"}
    for (mode, workers, batch), points in sorted(series.items()):
        points.sort()
        xs, ys = zip(*points)
        label = f"{mode}, {workers} worker{'s' if workers > 1 else ''} x batch {batch}"
        ax.plot(xs, ys, marker=markers.get(mode, "x"), linestyle="-" if len(xs) > 1 else "none", label=label)
    ax.set_xscale("log")
    ax.set_xticks([1, 3, 10])
    ax.set_xticklabels(["1", "3", "10"])
    ax.set_xlabel("averagingFrequency k")
    ax.set_ylabel("samples/s (median)")
    ax.set_title("dl4cpp ParallelWrapper, LeNet, 1 thread per worker", fontsize=9)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=6, loc="lower right")


def plot_peers(ax, report):
    results = report["results"]
    libraries = ("dl4cpp", "libtorch")
    width = 0.38
    for i, lib in enumerate(libraries):
        xs = [j + (i - 0.5) * width for j in range(len(results))]
        med = [e[lib]["samples_per_s"]["median"] for e in results]
        low = [m - e[lib]["samples_per_s"]["min"] for m, e in zip(med, results)]
        high = [e[lib]["samples_per_s"]["max"] - m for m, e in zip(med, results)]
        version = results[0][lib]["version"]
        ax.bar(xs, med, width, yerr=[low, high], capsize=3, label=f"{lib} {version}")
    for j, e in enumerate(results):
        top = max(e[lib]["samples_per_s"]["max"] for lib in libraries)
        q = e["ratio_dl4cpp_to_libtorch"]["median"]
        ax.annotate(f"dl4cpp/libtorch {q:.2f}x", (j, top), xytext=(0, 4), textcoords="offset points", ha="center", fontsize=8)
    ax.set_xticks(range(len(results)))
    ax.set_xticklabels([f"{e['threads']} thread{'s' if e['threads'] > 1 else ''}" for e in results])
    rounds = min(e["rounds"] for e in results)
    ax.set_ylabel("samples/s (median, min-max)")
    ax.set_title(f"LeNet, 1 epoch, batch 128: dl4cpp vs libtorch ({rounds} paired run{'s' if rounds > 1 else ''})",
                 fontsize=9)
    ax.set_ylim(bottom=0, top=1.35 * max(e[lib]["samples_per_s"]["max"] for e in results for lib in libraries))
    ax.legend(fontsize=7, loc="upper right")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parallel", default="bench/results/parallel-lenet-avx512-xeon.json")
    parser.add_argument("--peers", default="bench/results/peers-lenet-avx512-xeon.json")
    parser.add_argument("--out", default="docs/images/throughput.png")
    args = parser.parse_args()
    with open(args.parallel) as f:
        parallel = json.load(f)
    with open(args.peers) as f:
        peers = json.load(f)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    plot_parallel(left, parallel)
    plot_peers(right, peers)
    machine = peers.get("machine", {})
    level = peers.get("isa_cap", "native")
    fig.suptitle(f"{machine.get('cpu', '')}, {machine.get('cores', '?')} cores, {level} level, real MNIST",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
