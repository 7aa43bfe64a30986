#!/usr/bin/env bash
# scripts/fuzz.sh model_loader_fuzz [seconds], under the name docs/getting-started.md and
# docs/model-format.md use.
exec "$(dirname "${BASH_SOURCE[0]}")/fuzz.sh" model_loader_fuzz "$@"
