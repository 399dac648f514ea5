#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and no internet: install mskernel and its gpu backend from
# this checkout, run the conformance kit on the gpu backend at 100% core coverage, the gpu
# plugin's tests with the device required (no GPU test may skip), and the anchor benchmarks
# against PyTorch CUDA (eager, torch.compile, torch.compile with CUDA graphs); print the
# ratios.  Installs nothing from the network: every third-party package must already be in
# the Python it runs (see benchmarks/gpu/README.md).  About 10 minutes on an H200.
#
#   bash benchmarks/gpu/run_on_gpu.sh            # everything
#   QUICK=1 bash benchmarks/gpu/run_on_gpu.sh    # a few benchmark steps each
#
# Exits non-zero when a phase fails; every phase runs regardless, and the summary at the end
# says which failed.  Logs go to benchmarks/gpu/logs/.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
LOGS=$ROOT/benchmarks/gpu/logs
mkdir -p "$LOGS"
PYTHON=${PYTHON:-python3}
export PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INDEX=1
declare -A RESULT

phase() {  # phase NAME TIMEOUT_S COMMAND...: run, log, remember the outcome
    local name=$1 limit=$2; shift 2
    echo "=== $name" >&2
    if timeout "$limit" "$@" > >(tee "$LOGS/$name.log") 2>&1; then
        RESULT[$name]=passed
    else
        RESULT[$name]="FAILED (exit $?, see $LOGS/$name.log)"
    fi
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true

# 1. a virtualenv over the machine's Python (its torch with CUDA, CuPy, NumPy ... stay visible)
"$PYTHON" -m venv --system-site-packages "$ROOT/.venv-gpu"
# shellcheck disable=SC1091
. "$ROOT/.venv-gpu/bin/activate"
missing=$(python - <<'PY'
import importlib.util
needed = {"numpy": "numpy", "pluggy": "pluggy", "pydantic": "pydantic", "packaging": "packaging",
          "cupy": "cupy-cuda12x", "pytest": "pytest", "torch": "torch (CUDA build)",
          "setuptools": "setuptools", "scipy": "scipy", "hypothesis": "hypothesis",
          "tqdm": "tqdm", "google.protobuf": "protobuf"}
def missing(module):
    try:
        return importlib.util.find_spec(module) is None
    except ModuleNotFoundError:  # the parent package of a dotted name
        return True
print(" ".join(p for m, p in needed.items() if missing(m)))
PY
)
if [ -n "$missing" ]; then
    echo "missing in $PYTHON: $missing; install them (pip install mskernel-gpu[cuda,test] torch) and rerun" >&2
    exit 2
fi
phase install 300 python -m pip install -q --no-deps --no-build-isolation \
    -e . -e sdk -e plugins/autodiff -e plugins/nn -e plugins/gpu
python - <<'PY'
from mskernel_gpu.probe import probe
print("\n".join(probe().lines()))
PY

# 2. the conformance kit on every core op (composites as their decompositions) and the graphs
phase conformance 300 bash -c "cd \"\$(mktemp -d)\" && python -m pytest -q -p no:cacheprovider \
    --mskernel-backend gpu --mskernel-core-coverage 100 \
    --mskernel-report '$LOGS/conformance.json'"

# 3. the plugin's tests: the GPU-marked ones must run, not skip
phase plugin_tests 240 env MSKERNEL_REQUIRE_GPU=1 python -m pytest -q -rs plugins/gpu/tests

# 4. the anchor benchmarks beside PyTorch CUDA
phase benchmarks 420 python benchmarks/gpu/bench.py ${QUICK:+--quick}

echo "=== summary" >&2
status=0
for name in install conformance plugin_tests benchmarks; do
    echo "$name: ${RESULT[$name]:-not run}"
    [ "${RESULT[$name]:-}" = passed ] || status=1
done
exit $status
