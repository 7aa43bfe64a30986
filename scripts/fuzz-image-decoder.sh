#!/usr/bin/env bash
# scripts/fuzz.sh image_decoder_fuzz [seconds]: the PNG and JPEG decoders (iterators/image).
exec "$(dirname "${BASH_SOURCE[0]}")/fuzz.sh" image_decoder_fuzz "$@"
