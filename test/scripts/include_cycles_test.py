#!/usr/bin/env python3
"""Tests scripts/include_cycles.py (the folder-cycle check of CI) on small source trees of its own:
a cycle through two folders is found and printed with an include per arrow, through a quoted
include resolved from the including file's folder and one under #if 0; a tree without one passes;
a module and its own subfolder may include each other; the build folder's files are no nodes.

  test/scripts/include_cycles_test.py
"""

import json
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                      "include_cycles.py")


def write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as f:
        f.write(text)


def run(root, sources):
    build = os.path.join(root, "build")
    os.makedirs(build, exist_ok=True)
    commands = [{"directory": build, "file": os.path.join(root, s),
                 "command": f"c++ -I{root} -I{build}/include -c {os.path.join(root, s)}"}
                for s in sources]
    with open(os.path.join(build, "compile_commands.json"), "w", encoding="utf-8") as f:
        json.dump(commands, f)
    result = subprocess.run([sys.executable, SCRIPT, build, "--root", root],
                            capture_output=True, text=True, check=False)
    return result.returncode, result.stdout + result.stderr


def expect(condition, what, output):
    if not condition:
        print(f"FAILED: {what}\n--- output ---\n{output}")
        sys.exit(1)


def main():
    with tempfile.TemporaryDirectory() as root:
        # nn/low -> nn/core and nn/high -> nn/low: a stack. nn/low/sub and nn/low include each
        # other (one module). The build folder's generated header includes nn/high: not a node.
        write(root, "nn/core/Error.h", "#pragma once\n")
        write(root, "nn/low/Low.h", '#pragma once\n#include "nn/core/Error.h"\n#include "sub/Part.h"\n')
        write(root, "nn/low/sub/Part.h", '#pragma once\n#include "nn/low/Low.h"\n')
        write(root, "nn/low/Low.cpp", '#include "Low.h"\n#include <dl4cpp/config.h>\n')
        write(root, "build/include/dl4cpp/config.h", '#include "nn/high/High.h"\n')
        write(root, "nn/high/High.h", '#pragma once\n#include "nn/low/Low.h"\n')
        write(root, "nn/high/High.cpp", '#include "nn/high/High.h"\n#include <vector>\n')
        sources = ["nn/low/Low.cpp", "nn/high/High.cpp"]
        rc, out = run(root, sources)
        expect(rc == 0 and "no cycle" in out, "a stack passes", out)

        # A quoted include found beside the including file, under #if 0: nn/low -> nn/high.
        write(root, "nn/low/Back.h", '#pragma once\n#if 0\n#include "../high/High.h"\n#endif\n')
        write(root, "nn/low/Low.cpp", '#include "Low.h"\n#include "Back.h"\n')
        rc, out = run(root, sources)
        expect(rc == 1, "a cycle through two folders fails", out)
        expect("2 of 3 folders" in out, "the cycle's folders are counted", out)
        expect("nn/high -> nn/low: nn/high/High.h includes nn/low/Low.h" in out,
               "the forward arrow has its include", out)
        expect("nn/low -> nn/high: nn/low/Back.h includes nn/high/High.h" in out,
               "the back arrow has its include", out)
        expect("nn/core" not in out.split("folders:", 1)[1].split("\n", 2)[0],
               "a folder outside the cycle is not listed in it", out)

        # A header no translation unit reaches is still read, with the library's search path.
        write(root, "nn/low/Low.cpp", '#include "Low.h"\n')
        rc, out = run(root, sources)
        expect(rc == 1 and "nn/low/Back.h includes nn/high/High.h" in out,
               "an unreached header's includes count", out)
    print("include_cycles_test: OK")


if __name__ == "__main__":
    main()
