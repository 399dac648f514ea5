#!/usr/bin/env bash
# Run mskernel-ascend on a machine with an Ascend NPU and the CANN toolkit, and record what
# ran on the hardware.  From the repository root:
#
#     bash benchmarks/ascend/run_on_npu.sh            # CANN in /usr/local/Ascend
#     ASCEND_TOOLKIT=/opt/Ascend/ascend-toolkit/latest bash benchmarks/ascend/run_on_npu.sh
#
# 1. sources CANN's set_env.sh (pyACL on PYTHONPATH, atc on PATH, libascendcl.so on
#    LD_LIBRARY_PATH) and prints `npu-smi info`;
# 2. installs the core and the plugins into .venv-npu;
# 3. runs the plugin's tests and `mskernel plugins info ascend` (the backend must say
#    "available");
# 4. runs benchmarks/ascend/npu_check.py: LeNet-5 through ATC and ACL in each precision
#    mode, against float32 and against ascend-emulate (appends to results_npu.jsonl);
# 5. trains the main job for one epoch with MSKERNEL_BACKENDS=ascend,cpu.
# Paste the output into plugins/ascend/README.md's table of what ran on real hardware.
set -euo pipefail
cd "$(dirname "$0")/../.."
TOOLKIT="${ASCEND_TOOLKIT:-/usr/local/Ascend/ascend-toolkit/latest}"
if [ ! -f "$TOOLKIT/set_env.sh" ]; then
  echo "no CANN toolkit at $TOOLKIT (set ASCEND_TOOLKIT to its 'latest' directory)" >&2
  exit 2
fi
# shellcheck disable=SC1091
source "$TOOLKIT/set_env.sh"
npu-smi info
python3.11 -m venv .venv-npu
# shellcheck disable=SC1091
source .venv-npu/bin/activate
python -m pip install -q -e . -e sdk -e plugins/autodiff -e plugins/nn -e plugins/data \
  -e plugins/onnx -e './plugins/ascend[test]'
python -m pytest -q plugins/ascend/tests
mskernel plugins info ascend
python benchmarks/ascend/npu_check.py
MSKERNEL_BACKENDS=ascend,cpu python examples/lenet_fashion_mnist.py --epochs 1
