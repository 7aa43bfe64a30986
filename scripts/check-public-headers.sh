#!/usr/bin/env bash
# Checks cmake/PublicHeaders.cmake, the list of installed headers: every header it names exists,
# and every <dl4cpp/...> header that a listed header includes is listed too (config.h, generated
# at configure time, excepted), so that no installed header includes one that is not installed.
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

# <dl4cpp/X> is the source tree's X, or include/dl4cpp/X for the umbrella header.
source_path() {
  if [[ -f "$1" ]]; then echo "$1"; else echo "include/dl4cpp/$1"; fi
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
    [[ "$included" == config.h ]] && continue
    path="$(source_path "$included")"
    [[ -n "${is_listed[$path]:-}" ]] || problems+=("$header includes <dl4cpp/$included>, which is not listed")
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<dl4cpp\/\([^>]*\)>.*/\1/p' "$header")
done

if [[ ${#problems[@]} -gt 0 ]]; then
  echo "check-public-headers: cmake/PublicHeaders.cmake is not closed under #include:" >&2
  printf '  %s\n' "${problems[@]}" >&2
  exit 1
fi
echo "check-public-headers: ${#listed[@]} installed headers, closed under #include"
