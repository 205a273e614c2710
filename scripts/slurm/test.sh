#!/usr/bin/env bash
# test.sh BUILD_DIR - the real-Slurm end-to-end tests (`make test-slurm`, CI): start a test cluster
# (up.sh), run the ctest label `slurm` of BUILD_DIR against it, and always stop exactly what was
# started (down.sh), also on failure or interruption.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: test.sh BUILD_DIR}
export SLURM_TEST_DIR=${SLURM_TEST_DIR:-/tmp/ordo-slurm-test}
export SIM_ROOT=$SLURM_TEST_DIR
cleanup() { "$here/down.sh" || true; }
trap cleanup EXIT
trap 'exit 130' INT TERM
# A cluster left by an interrupted earlier run is stopped first (down.sh stops only its recorded PIDs).
"$here/down.sh" >/dev/null 2>&1 || true
GRES_MODE=typed "$here/up.sh"
. "$SLURM_TEST_DIR/env.sh"
export ORDO_SLURM_SCRIPTS=$here
# The binary under test (ctest's ENVIRONMENT may carry it too; this does not depend on that).
export ORDO_BINARY=${ORDO_BINARY:-$(cd "$build" && pwd)/apps/ordo/ordo}
ctest --test-dir "$build" -L slurm --no-tests=error --output-on-failure -j 1 --timeout 600
