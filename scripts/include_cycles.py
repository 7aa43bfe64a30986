#!/usr/bin/env python3
"""Finds include cycles between the source tree's folders (scripts/check-include-cycles.sh runs it).

The graph is read from the compile commands (CMake's compile_commands.json): every translation
unit they list is scanned for #include lines, each include is resolved as the compiler would
(quoted: the including file's folder, then -iquote; both kinds: -I, -isystem, -idirafter, in
the command's order), and every header reached is scanned the same way, with the search path of
the translation unit that reached it. A header that no translation unit reaches (a CUDA source's
header in a build without CUDA, say) is scanned with the library's own search path, so the graph
does not depend on which optional parts this build enabled. Every #include line counts, whatever
#if it sits under: a layering rule holds for every configuration.

Files outside the source tree (system and third-party headers) and inside the build folder
(config.h, generated) are not nodes. A node is a folder of the layout: a top-level folder
(iterators, parallel, ui, samples, test, ...), or, under nn/, one of its subfolders (nn/tensor,
nn/backend, nn/conf, ...), each with everything below it (nn/backend/cpu is part of nn/backend,
nn/earlystopping/termination of nn/earlystopping, iterators/image of iterators); a file directly
in nn/ would be the node nn. A folder and its own subfolders are one unit: they may include each
other (a backend's facade picks among its device subfolders, which implement it). An edge A -> B
means some file in A includes some file in B.

Prints each strongly connected set of two or more folders, with cycles that together cover all
its edges, one example include per arrow, and exits 1 if there is any; prints a summary and
exits 0 otherwise. --graph prints the folder graph (edges with counts) instead.

  scripts/include_cycles.py BUILD_DIR [--graph] [--root SOURCE_DIR]

SOURCE_DIR defaults to the repository this script is in (test/scripts/include_cycles_test.py
points it at small trees of its own).
"""

import collections
import json
import os
import re
import shlex
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def parse_command(entry):
    args = entry.get("arguments") or shlex.split(entry["command"])
    directory = entry.get("directory", ".")
    quote, normal = [], []
    i = 0
    while i < len(args):
        arg = args[i]
        for flag, target in (("-iquote", quote), ("-isystem", normal), ("-idirafter", normal),
                             ("-I", normal)):
            if arg == flag and i + 1 < len(args):
                target.append(os.path.normpath(os.path.join(directory, args[i + 1])))
                i += 1
                break
            if arg.startswith(flag) and len(arg) > len(flag):
                target.append(os.path.normpath(os.path.join(directory, arg[len(flag):])))
                break
        i += 1
    return os.path.normpath(os.path.join(directory, entry["file"])), tuple(quote), tuple(normal)


class Graph:
    def __init__(self, root, build):
        self.root = root
        self.build = build
        self.file_edges = {}  # file -> set of included in-tree files
        self.includes_cache = {}

    def in_tree(self, path):
        return (path.startswith(self.root + os.sep) and
                not path.startswith(self.build + os.sep) and os.path.isfile(path))

    def include_lines(self, path):
        if path not in self.includes_cache:
            found = []
            with open(path, encoding="utf-8", errors="replace") as f:
                for line in f:
                    m = INCLUDE.match(line)
                    if m:
                        found.append((m.group(1), m.group(2)))
            self.includes_cache[path] = found
        return self.includes_cache[path]

    def resolve(self, including, kind, name, quote, normal):
        dirs = ([os.path.dirname(including)] + list(quote) if kind == '"' else []) + list(normal)
        for d in dirs:
            candidate = os.path.normpath(os.path.join(d, name))
            if os.path.isfile(candidate):
                return candidate
        return None  # a system header

    def scan(self, start, quote, normal):
        seen = set()
        stack = [start]
        while stack:
            path = stack.pop()
            if path in seen:
                continue
            seen.add(path)
            targets = self.file_edges.setdefault(path, set())
            for kind, name in self.include_lines(path):
                target = self.resolve(path, kind, name, quote, normal)
                if target is None or not target.startswith(self.root + os.sep):
                    continue
                if target.startswith(self.build + os.sep):
                    continue
                targets.add(target)
                stack.append(target)


def tarjan(nodes, succ):
    index, low, on_stack, stack, result = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        work = [(v, iter(sorted(succ.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(succ.get(w, ())))))
                    advanced = True
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == node:
                        break
                result.append(sorted(component))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return result


def shortest_path(succ, start, goal, allowed):
    previous = {start: None}
    queue = collections.deque([start])
    while queue:
        v = queue.popleft()
        if v == goal:
            path = []
            while v is not None:
                path.append(v)
                v = previous[v]
            return path[::-1]
        for w in sorted(succ.get(v, ())):
            if w in allowed and w not in previous:
                previous[w] = v
                queue.append(w)
    return None


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = os.path.realpath(sys.argv[1])
    root = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    if "--root" in sys.argv[2:]:
        root = os.path.realpath(sys.argv[sys.argv.index("--root") + 1])
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        commands = json.load(f)

    graph = Graph(root, build)
    library_path = None
    for entry in commands:
        source, quote, normal = parse_command(entry)
        if not graph.in_tree(source):
            continue
        graph.scan(source, quote, normal)
        rel = os.path.relpath(source, root)
        if library_path is None and rel.startswith("nn" + os.sep):
            library_path = (quote, normal)
    if library_path is None:
        sys.exit("include_cycles: no library source (nn/...) in the compile commands")
    # Headers that no translation unit of this build reaches, with the library's search path.
    for folder in ("nn", "iterators", "parallel", "ui", "include", "samples", "bench", "test"):
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for name in files:
                path = os.path.join(dirpath, name)
                if name.endswith((".h", ".cuh", ".cu", ".cpp")) and path not in graph.file_edges:
                    graph.scan(path, *library_path)

    def folder(path):
        parts = os.path.relpath(os.path.dirname(path), root).split(os.sep)
        return "/".join(parts[:2] if parts[0] == "nn" else parts[:1])

    example = {}  # (folder, folder) -> (file, file)
    count = collections.Counter()
    succ = collections.defaultdict(set)
    nodes = set()
    for source, targets in sorted(graph.file_edges.items()):
        nodes.add(folder(source))
        for target in sorted(targets):
            a, b = folder(source), folder(target)
            if a == b:
                continue
            count[(a, b)] += 1
            example.setdefault((a, b), (os.path.relpath(source, root), os.path.relpath(target, root)))
            succ[a].add(b)

    if "--graph" in sys.argv[2:]:
        for (a, b), n in sorted(count.items()):
            print(f"{a} -> {b}  ({n} includes, e.g. {example[(a, b)][0]} includes {example[(a, b)][1]})")
        return 0

    components = [c for c in tarjan(nodes, succ) if len(c) > 1]
    if not components:
        print(f"check-include-cycles: {len(nodes)} folders, {len(count)} folder edges, no cycle "
              f"({len(graph.file_edges)} files)")
        return 0

    in_cycles = sum(len(c) for c in components)
    print(f"check-include-cycles: {in_cycles} of {len(nodes)} folders are in include cycles "
          f"({len(components)} strongly connected set(s)):", file=sys.stderr)
    for component in components:
        members = set(component)
        print(f"\n  {len(component)} folders: {', '.join(component)}", file=sys.stderr)
        covered, printed = set(), set()
        for a in component:
            for b in sorted(succ[a] & members):
                if (a, b) in covered:
                    continue
                back = shortest_path(succ, b, a, members)
                cycle = [a] + back  # a -> b -> ... -> a
                arrows = list(zip(cycle, cycle[1:]))
                covered.update(arrows)
                key = frozenset(arrows)
                if key in printed:
                    continue
                printed.add(key)
                print(f"  cycle: {' -> '.join(cycle)}", file=sys.stderr)
                for x, y in arrows:
                    src, dst = example[(x, y)]
                    print(f"    {x} -> {y}: {src} includes {dst} ({count[(x, y)]} in all)",
                          file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
