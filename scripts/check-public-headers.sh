#!/usr/bin/env bash
# Checks cmake/PublicHeaders.cmake, the list of installed headers: every header it names exists,
# and every in-tree header that a listed header includes ("nn/...", "iterators/...", "parallel/...",
# "ui/...", or <dl4cpp/X> for the umbrella header's folder; config.h, generated at configure time,
# excepted) is listed too, so that no installed header includes one that is not installed.
# Lists what is missing and exits non-zero.
#
#   scripts/check-public-headers.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The list's entries: the indented paths ending in .h, both sets (library and ui) together.
mapfile -t listed < <(sed -n 's/^  \([A-Za-z0-9_/.-]*\.h\)$/\1/p' cmake/PublicHeaders.cmake | sort -u)
if [[ ${#listed[@]} -eq 0 ]]; then
  echo "check-public-headers: no header found in cmake/PublicHeaders.cmake" >&2
  exit 1
fi

# An in-tree path is the source tree's file; <dl4cpp/X> is include/dl4cpp/X.
included_headers() {
  sed -n -e 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\(\(nn\|iterators\|parallel\|ui\)\/[^"]*\)".*/\1/p' \
    -e 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<dl4cpp\/\([^>]*\)>.*/include\/dl4cpp\/\1/p' "$1"
}

declare -A is_listed=()
for header in "${listed[@]}"; do is_listed["$header"]=1; done

problems=()
for header in "${listed[@]}"; do
  if [[ ! -f "$header" ]]; then
    problems+=("$header is listed but does not exist")
    continue
  fi
  while read -r included; do
    [[ "$included" == include/dl4cpp/config.h ]] && continue
    [[ -n "${is_listed[$included]:-}" ]] || problems+=("$header includes $included, which is not listed")
  done < <(included_headers "$header")
done

if [[ ${#problems[@]} -gt 0 ]]; then
  echo "check-public-headers: cmake/PublicHeaders.cmake is not closed under #include:" >&2
  printf '  %s\n' "${problems[@]}" >&2
  exit 1
fi
echo "check-public-headers: ${#listed[@]} installed headers, closed under #include"
