#!/usr/bin/env bash
# Checks that every C++ and CUDA source in the repository is formatted with the project's
# .clang-format (Debian 12's clang-format 14, installed by scripts/install-deps.sh). Lists the files
# that differ and exits non-zero; `scripts/check-format.sh --fix` formats them in place.
#
#   scripts/check-format.sh [--fix]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

command -v clang-format >/dev/null 2>&1 || {
  echo "check-format: clang-format not found; run scripts/install-deps.sh" >&2
  exit 1
}

mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.h' '*.hpp' '*.cpp' '*.cu' '*.cuh' ':!:test/data/**')
if [[ "${1:-}" == "--fix" ]]; then
  clang-format -i "${files[@]}"
  exit 0
fi

unformatted=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || unformatted+=("$f")
done
if [[ ${#unformatted[@]} -gt 0 ]]; then
  echo "check-format: ${#unformatted[@]} file(s) differ from .clang-format (scripts/check-format.sh --fix):" >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
