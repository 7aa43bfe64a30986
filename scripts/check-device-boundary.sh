#!/usr/bin/env bash
# Checks that device kinds stay behind the facade: outside nn/backend/, library and sample code
# neither calls into a device's implementation (cpu::, cuda::) nor branches on a device's kind
# (isCpu(), DeviceType::); it asks nn/backend/Devices.h or goes through Backend instead.
# nn/tensor/Device.h, which defines the kinds, is the one exception. Lists the offending lines
# and exits non-zero.
#
#   scripts/check-device-boundary.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

pattern='cuda::|cpu::|isCpu\(\)|DeviceType::'
if offending=$(git grep --untracked -n -E "$pattern" -- \
    'nn/*' 'parallel/*' 'iterators/*' 'samples/*' 'include/*' \
    ':!:nn/backend/*' ':!:nn/tensor/Device.h'); then
  echo "check-device-boundary: device-specific code outside nn/backend/ (use nn/backend/Devices.h):" >&2
  printf '%s\n' "$offending" | sed 's/^/  /' >&2
  exit 1
fi
echo "check-device-boundary: no cpu:: or cuda:: call, isCpu() or DeviceType:: outside nn/backend/"
