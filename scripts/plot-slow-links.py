#!/usr/bin/python3
"""Draws docs/images/slow-links.png from scripts/bench-slow-links.sh's JSON: test accuracy against
training time (evaluations left out), one panel per link, one line per mode, the target accuracy
as a dashed line.

    scripts/plot-slow-links.py [--in FILE] [--out FILE]

Runs with Debian's python3 and python3-matplotlib, hence /usr/bin/python3 in the first line.
"""
import argparse
import json
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("error: matplotlib is missing: install Debian's python3-matplotlib")
matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--in", dest="source",
                    default="bench/results/slow-links-avx512-intel-xeon-processor.json")
parser.add_argument("--out", default="docs/images/slow-links.png")
args = parser.parse_args()

data = json.load(open(args.source))
links = []
for run in data["runs"]:
    link = (run["rate"], run["delay"])
    if link not in links:
        links.append(link)

styles = {"sg-plain": ("black", "-"), "sg-compressed": ("black", "--")}
colours = {"1": "#1b9e77", "4": "#d95f02", "16": "#7570b3", "64": "#e7298a"}
for k, colour in colours.items():
    styles[f"avg-k{k}"] = (colour, "-")
    styles[f"outer-k{k}"] = (colour, ":")
labels = {"sg-plain": "shared gradients", "sg-compressed": "shared gradients, compressed"}
for k in colours:
    labels[f"avg-k{k}"] = f"averaging k={k}"
    labels[f"outer-k{k}"] = f"averaging k={k} + Nesterovs(0.7, 0.9)"

fig, axes = plt.subplots(1, len(links), figsize=(5.5 * len(links), 4.2), sharey=True, squeeze=False)
for ax, link in zip(axes[0], links):
    for run in data["runs"]:
        if (run["rate"], run["delay"]) != link or not run["evaluations"]:
            continue
        seconds = [e[1] for e in run["evaluations"]]
        accuracy = [100 * e[2] for e in run["evaluations"]]
        colour, line = styles.get(run["mode"], ("grey", "-"))
        ax.plot(seconds, accuracy, color=colour, linestyle=line, marker=".",
                label=labels.get(run["mode"], run["mode"]))
    ax.axhline(100 * data["target_accuracy"], color="grey", linestyle="--", linewidth=0.8)
    rate, delay = link
    ax.set_title(f"{rate}" + ("" if delay == "none" else f", {delay} delay"))
    ax.set_xlabel("training time (s)")
    ax.grid(color="#e4e4e4")
axes[0][0].set_ylabel("test accuracy (%)")
axes[0][0].set_ylim(40, 90)
axes[0][-1].legend(fontsize=7, loc="lower right")
fig.suptitle(f"Batch-norm network on Fashion-MNIST, 2 ranks over a tbf-limited veth "
             f"({data['train_examples']} examples, global batch {data['global_batch']})",
             fontsize=10)
fig.tight_layout()
fig.savefig(args.out, dpi=90)
print("plot-slow-links: wrote", args.out)
