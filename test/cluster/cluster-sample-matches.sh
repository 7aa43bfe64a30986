#!/usr/bin/env bash
# Runs parallel_lenet_mnist twice on the same data: as 2 MPI ranks x 1 worker (--cluster mpi),
# then as 1 process x 2 workers, and checks that both save the same bytes (the same dealing of
# minibatches, and a sum of two floats in either order). Exits 0 when they do.
#
#   cluster-sample-matches.sh SAMPLE MPIEXEC OUT_PREFIX [SAMPLE ARGS...]
set -euo pipefail
sample="$1" mpiexec="$2" out="$3"
shift 3
"$mpiexec" -np 2 --allow-run-as-root --oversubscribe "$sample" "$@" --cluster mpi --workers 1 \
  --save "$out-2x1.dl4cpp"
"$sample" "$@" --workers 2 --save "$out-1x2.dl4cpp"
cmp "$out-2x1.dl4cpp" "$out-1x2.dl4cpp"
echo "cluster-sample-matches: 2 ranks x 1 worker and 1 process x 2 workers saved identical models"
