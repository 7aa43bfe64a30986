#!/usr/bin/env python3
"""Summarises the runs of scripts/bench-peers.sh: medians per library and thread count, and the
dl4cpp/libtorch throughput ratio taken pair by pair (the two runs of the same round).

    summarize-peers.py RUNS.jsonl OUT.json [--cpu ...] [--cores N] [--blas ...]
                       [--load-before ...] [--load-after ...] [--network lenet] [--isa ...]

RUNS.jsonl holds one program line per row (bench/peers/PeerProtocol.h) plus its "round". Fails
when the programs did not train on the same examples in the same order (epoch_order_fnv1a), or
when a round lacks one of the two programs.
"""
import argparse
import datetime
import json
import statistics
import sys

LIBRARIES = ("dl4cpp", "libtorch")
NETWORKS = {"lenet": "LeNet on MNIST",
            "batchnorm": "conv-BN-ReLU x3 (samples/BatchNormConfiguration.h) on Fashion-MNIST",
            "vgg": "VGG-style 3x3 pad-1 convolutions (samples/VggConfiguration.h) on Fashion-MNIST",
            "resnet": "residual network (samples/ResidualConfiguration.h) on Fashion-MNIST",
            "resnet50": "ResNet-50 (nn/zoo/ResNet50.h) at 224x224 on synthetic data"}


def spread(values, digits=4):
    return {k: round(v, digits) for k, v in
            (("median", statistics.median(values)), ("min", min(values)), ("max", max(values)))}


def summarise(runs):
    orders = {r["epoch_order_fnv1a"] for r in runs}
    if len(orders) != 1:
        sys.exit(f"error: the programs trained in different example orders: {sorted(orders)}")
    results = []
    for threads in sorted({r["threads"] for r in runs}):
        by_round = {}
        for r in runs:
            if r["threads"] == threads:
                by_round.setdefault(r["round"], {})[r["library"]] = r
        for rnd, pair in sorted(by_round.items()):
            if set(pair) != set(LIBRARIES):
                sys.exit(f"error: round {rnd} at {threads} thread(s) holds {sorted(pair)}, not both libraries")
        entry = {"threads": threads, "rounds": len(by_round)}
        for lib in LIBRARIES:
            rows = [pair[lib] for pair in by_round.values()]
            entry[lib] = {
                "version": rows[0]["version"],
                "samples_per_s": spread([x["samples_per_s"] for x in rows]),
                "epoch_s": spread([x["epoch_s"] for x in rows]),
                "test_accuracy": spread([x["test_accuracy"] for x in rows]),
                "peak_rss_mib": spread([x["peak_rss_mib"] for x in rows]),
            }
        entry["ratio_dl4cpp_to_libtorch"] = spread(
            [p["dl4cpp"]["samples_per_s"] / p["libtorch"]["samples_per_s"] for p in by_round.values()])
        results.append(entry)
    return results


def print_table(results):
    print(f"\n{'threads':>7} {'library':<9} {'samples/s (median, min-max)':>30} {'accuracy':>9} {'peak RSS':>10}")
    for e in results:
        for lib in LIBRARIES:
            s = e[lib]["samples_per_s"]
            print(f"{e['threads']:>7} {lib:<9} {s['median']:>12,.0f} ({s['min']:,.0f}-{s['max']:,.0f})".ljust(49)
                  + f" {100 * e[lib]['test_accuracy']['median']:>8.2f}% {e[lib]['peak_rss_mib']['median']:>6.0f} MiB")
        q = e["ratio_dl4cpp_to_libtorch"]
        print(f"{e['threads']:>7} {'ratio':<9} dl4cpp/libtorch {q['median']:.2f}x "
              f"(pairs: {q['min']:.2f}-{q['max']:.2f}, {e['rounds']} rounds)")


def markdown_table(results):
    """The table of docs/performance.md, filled from these results."""
    lines = ["| threads | dl4cpp samples/s | libtorch samples/s | dl4cpp / libtorch (pairs) "
             "| test accuracy dl4cpp / libtorch | peak RSS dl4cpp / libtorch |",
             "|---|---|---|---|---|---|"]
    for e in results:
        d, t, q = e["dl4cpp"], e["libtorch"], e["ratio_dl4cpp_to_libtorch"]
        lines.append(
            f"| {e['threads']} | {d['samples_per_s']['median']:,.0f} ({d['samples_per_s']['min']:,.0f}-"
            f"{d['samples_per_s']['max']:,.0f}) | {t['samples_per_s']['median']:,.0f} "
            f"({t['samples_per_s']['min']:,.0f}-{t['samples_per_s']['max']:,.0f}) "
            f"| {q['median']:.2f}x ({q['min']:.2f}-{q['max']:.2f}) "
            f"| {100 * d['test_accuracy']['median']:.2f}% / {100 * t['test_accuracy']['median']:.2f}% "
            f"| {d['peak_rss_mib']['median']:.0f} / {t['peak_rss_mib']['median']:.0f} MiB |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs")
    parser.add_argument("out")
    for flag in ("--cpu", "--cores", "--blas", "--load-before", "--load-after", "--isa"):
        parser.add_argument(flag, default="")
    parser.add_argument("--network", default="lenet")
    args = parser.parse_args()
    with open(args.runs) as f:
        runs = [json.loads(line) for line in f if line.strip()]
    if not runs:
        sys.exit(f"error: {args.runs} holds no runs")
    results = summarise(runs)
    print_table(results)
    print("\nAs markdown (medians, min-max in parentheses):\n")
    print(markdown_table(results))
    report = {
        "benchmark": f"{NETWORKS.get(args.network, args.network)}, "
                     + ("a warm-up step then train_examples / 16 timed steps, batch 16"
                        if args.network == "resnet50" else
                        "1 epoch (train_examples of the runs), batch 128")
                     + ", bench/peers (scripts/bench-peers.sh)",
        "isa_cap": args.isa,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": {"cpu": args.cpu, "cores": int(args.cores) if args.cores else None, "blas": args.blas,
                    "load_average_before": args.load_before, "load_average_after": args.load_after},
        "results": results,
        "runs": runs,
    }
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
