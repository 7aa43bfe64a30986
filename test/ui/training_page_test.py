#!/usr/bin/env python3
"""The live training page in a real browser: runs a training sample with --ui-port 0 and --report,
loads the page in headless Chromium (--dump-dom) once training is done, and checks that every chart
drew the points /stats.json holds: each series' <polyline> has data-points equal to the number of
records with a drawable value and as many coordinate pairs. The page must also have polled /charts
(its script ran). The HTML report is checked the same way, and a screenshot of the page is saved.

  training_page_test.py --sample BIN --out DIR [-- sample arguments...]

Exit status 77 (a CTest skip) when chromium is not installed.
"""
import argparse
import html.parser
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

SKIP = 77
TRAINING_TIMEOUT_S = 120

# Which series each chart draws: fixed ids, or a prefix followed by a layer / worker index.
CHARTS = {
    "score": ["score"],
    "validation": ["accuracy"],
    "learning-rate": ["lr-"],
    "throughput": ["all", "worker-"],
    "time-shares": ["averaging", "barrier", "data-wait"],
    "update-ratio": ["ratio-"],
}


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def expected_points(stats):
    """Series id -> drawable points, computed from /stats.json as the charts should draw them."""
    its = stats["iterations"]

    def count(values, positive=False):
        return sum(1 for v in values if v is not None and (not positive or v > 0))

    expected = {
        "score": count(r["score"] for r in its),
        "accuracy": count(r["accuracy"] for r in stats["validation"]),
        "all": count(r["examplesPerSecond"] for r in its),
        "averaging": count(r["averagingShare"] for r in its),
        "barrier": count(r["barrierShare"] for r in its),
        "data-wait": count(r["dataWaitShare"] for r in its),
    }
    for layer in range(len(stats["layers"])):
        expected[f"lr-{layer}"] = count(
            r["learningRates"][layer] if layer < len(r["learningRates"]) else None for r in its)
        expected[f"ratio-{layer}"] = count(
            (r["ratios"][layer] if layer < len(r["ratios"]) else None
             for r in stats["updateRatios"]), positive=True)
    workers = max((len(r["workerExamplesPerSecond"]) for r in its), default=0)
    for w in range(workers):
        expected[f"worker-{w}"] = count(
            r["workerExamplesPerSecond"][w] if w < len(r["workerExamplesPerSecond"]) else None
            for r in its)
    return {series: n for series, n in expected.items() if n > 0}


class ChartParser(html.parser.HTMLParser):
    """Collects the charts' polylines, the stats revision and the page's poll count."""

    def __init__(self):
        super().__init__()
        self.chart = None
        self.charts = {}  # chart id -> {series id -> (data-points, coordinate pairs)}
        self.revisions = []
        self.polls = None
        self.external = []  # src/href attributes that would load something

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("src", "href"):
            if key in a:
                self.external.append(f"<{tag} {key}={a[key]}>")
        if tag == "svg" and "data-chart" in a:
            self.chart = a["data-chart"]
            self.charts[self.chart] = {}
            _, _, self.width, self.height = (float(v) for v in a["viewbox"].split())
        elif tag == "polyline" and self.chart is not None:
            pairs = [p for p in a.get("points", "").split() if p]
            for p in pairs:
                x, y = (float(v) for v in p.split(","))
                if not (0 <= x <= self.width and 0 <= y <= self.height):
                    fail(f"chart {self.chart}: point {p} outside the view box")
            self.charts[self.chart][a["data-series"]] = (int(a["data-points"]), len(pairs))
        elif tag == "div" and a.get("class") == "stats":
            self.revisions.append(int(a["data-revision"]))
        elif tag == "main" and a.get("id") == "live":
            self.polls = int(a.get("data-polls", "0"))

    def handle_endtag(self, tag):
        if tag == "svg":
            self.chart = None


def check_charts(what, document, stats):
    parser = ChartParser()
    parser.feed(document)
    if parser.external:
        fail(f"{what} loads external resources: {parser.external}")
    if parser.revisions != [stats["revision"]]:
        fail(f"{what} shows stats revision {parser.revisions}, /stats.json has {stats['revision']}")
    if set(parser.charts) != set(CHARTS):
        fail(f"{what} has charts {sorted(parser.charts)}, expected {sorted(CHARTS)}")
    expected = expected_points(stats)
    drawn = {}
    for chart, series in parser.charts.items():
        for series_id, (points, pairs) in series.items():
            if not any(series_id == s or (s.endswith("-") and series_id.startswith(s))
                       for s in CHARTS[chart]):
                fail(f"{what}: chart {chart} draws series {series_id}, which it should not")
            if points != pairs:
                fail(f"{what}: {chart}/{series_id} says {points} points but draws {pairs}")
            drawn[series_id] = points
    if drawn != expected:
        fail(f"{what}: drawn points {drawn}\n  differ from /stats.json's {expected}")
    return parser, drawn


def read_lines(stream, lines):
    for line in stream:
        lines.put(line)
    lines.put(None)


def wait_for(lines, prefix, process, log):
    deadline = time.monotonic() + TRAINING_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=1)
        except queue.Empty:
            continue
        if line is None:
            fail(f"the sample ended (status {process.wait()}) before printing '{prefix}'; "
                 f"output:\n{''.join(log)}")
        log.append(line)
        if line.startswith(prefix):
            return line[len(prefix):].strip()
    fail(f"no '{prefix}' within {TRAINING_TIMEOUT_S} s; output:\n{''.join(log)}")


def chromium(browser, profile, *args):
    # --no-sandbox: Chromium's sandbox refuses to run as root and needs user namespaces, which
    # containers often lack; the page it loads is our own, from this machine.
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               f"--user-data-dir={profile}", *args]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=60)
    if done.returncode != 0:
        fail(f"{' '.join(command)} exited with {done.returncode}:\n{done.stderr[-2000:]}")
    return done.stdout


def main():
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments.add_argument("--sample", required=True)
    arguments.add_argument("--out", required=True)
    arguments.add_argument("sample_args", nargs="*")
    options = arguments.parse_args()

    browser = shutil.which("chromium")
    if browser is None:
        print("skipped: chromium is not installed (Debian's chromium, scripts/install-deps.sh)")
        return SKIP
    os.makedirs(options.out, exist_ok=True)
    report_path = os.path.join(options.out, "report.html")
    screenshot = os.path.join(options.out, "training-page.png")
    for stale in (report_path, screenshot):
        if os.path.exists(stale):
            os.remove(stale)

    started = time.monotonic()
    process = subprocess.Popen(
        [options.sample, "--ui-port", "0", "--ui-linger", str(TRAINING_TIMEOUT_S), "--report",
         report_path, *options.sample_args],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines = queue.Queue()
    threading.Thread(target=read_lines, args=(process.stdout, lines), daemon=True).start()
    log = []
    try:
        url = wait_for(lines, "training page: ", process, log)
        live = json.load(urllib.request.urlopen(url + "stats.json", timeout=10))
        wait_for(lines, "training done;", process, log)
        trained = time.monotonic()
        stats = json.load(urllib.request.urlopen(url + "stats.json", timeout=10))
        if stats["revision"] < live["revision"]:
            fail("the stats revision went backwards")

        with tempfile.TemporaryDirectory(prefix="dl4cpp-chromium-") as profile:
            # The virtual time budget lets the page's script fetch /charts (and poll again).
            dom = chromium(browser, profile, "--virtual-time-budget=3000", "--dump-dom", url)
            page, drawn = check_charts("the page", dom, stats)
            if not page.polls:
                fail("the page never updated itself from /charts (data-polls missing)")
            # 1332 x 1000 CSS pixels (two charts side by side) saved at 999 x 750.
            chromium(browser, profile, "--hide-scrollbars", "--window-size=1332,1000",
                     "--force-device-scale-factor=0.75",
                     "--virtual-time-budget=2000", f"--screenshot={screenshot}", url)
        with open(screenshot, "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                fail(f"{screenshot} is not a PNG")
        with open(report_path, encoding="utf-8") as f:
            report = f.read()
        if "<script" in report:
            fail("the report holds a script")
        check_charts("the report", report, stats)
    finally:
        process.terminate()
        process.wait(timeout=10)

    # The sample's run must have filled every chart, else equal counts prove little.
    if drawn.get("score", 0) < 4 or not drawn.get("accuracy") or not drawn.get("worker-1") \
            or not any(s.startswith("ratio-") for s in drawn):
        fail(f"the run recorded too little to check the charts: {drawn}")
    print(f"the page and the report drew {sum(drawn.values())} points in {len(drawn)} series, "
          f"as /stats.json holds (revision {stats['revision']}); page polled /charts "
          f"{page.polls} time(s); browser checks took {time.monotonic() - trained:.1f} s, "
          f"training {trained - started:.1f} s; screenshot {screenshot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
