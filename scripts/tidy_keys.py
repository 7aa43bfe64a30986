#!/usr/bin/env python3
"""Prints one line per library translation unit of a build: "<key> <source path>".

The key is a SHA-256 over everything clang-tidy's verdict on the unit depends on: the clang-tidy
version, the project's .clang-tidy, the unit's compile command, and the path and content of every
file the compiler read for it (the dependency file the build wrote beside the object file). Paths
in the checkout are taken relative to it, so another clone of the same commit, wherever it lies,
gets the same keys.
scripts/check-tidy.sh keeps the keys of clean units and skips them on the next run, as a compiler
cache skips a compile. A unit whose dependency file is missing (not built yet) gets the key "-",
which is never cached.

    scripts/tidy_keys.py BUILD_DIR ROOT
"""
import functools
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys

LIBRARY = re.compile(r"^(nn|parallel|iterators|ui)/.*\.cpp$")


def dependencies(depfile):
    """The prerequisites of a GCC -MD dependency file (target: dep dep \\ ...)."""
    with open(depfile, encoding="utf-8", errors="replace") as f:
        text = f.read().replace("\\\n", " ")
    rules = [line.split(":", 1)[1] for line in text.splitlines() if ":" in line]
    # Escaped spaces in paths are rare here; shlex honours the backslash escapes GCC writes.
    return sorted({dep for rule in rules for dep in shlex.split(rule)})


def inside(path, root):
    """A path relative to the checkout when it lies in it; absolute otherwise (a system header's
    path relative to the checkout would depend on where the clone is)."""
    relative = os.path.relpath(path, root)
    return path if relative.startswith("..") else relative


@functools.lru_cache(maxsize=None)
def file_digest(path):
    """SHA-256 of a file's content, read once per run (units share most of their headers)."""
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).digest()


def main():
    build, root = (os.path.realpath(p) for p in sys.argv[1:3])
    common = hashlib.sha256()
    common.update(subprocess.run(["clang-tidy", "--version"], capture_output=True,
                                 check=True).stdout)
    with open(os.path.join(root, ".clang-tidy"), "rb") as f:
        common.update(f.read())

    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        entries = json.load(f)
    seen = set()
    for entry in entries:
        source = os.path.relpath(entry["file"], root)
        if not LIBRARY.match(source) or source in seen:
            continue
        seen.add(source)
        args = shlex.split(entry["command"])
        obj = args[args.index("-o") + 1] if "-o" in args else None
        depfile = os.path.join(entry["directory"], obj + ".d") if obj else None
        if depfile is None or not os.path.exists(depfile):
            print("-", entry["file"])
            continue
        key = common.copy()
        key.update(entry["command"].replace(root, "<root>").encode())
        for dep in dependencies(depfile):
            path = os.path.normpath(os.path.join(entry["directory"], dep))
            key.update(inside(path, root).encode() + b"\0")
            key.update(file_digest(path))
        print(key.hexdigest(), entry["file"])


if __name__ == "__main__":
    main()
