#!/usr/bin/env bash
# The main job: train LeNet-5 on real Fashion-MNIST with mskernel's nn, autodiff and data
# plugins on the cpu backend (C++ kernels, built here), and report test accuracy and wall
# time.  Installs what it needs.
set -euo pipefail
cd "$(dirname "$0")/.."

DATA=/usr/share/datasets/fashion-mnist
if [ ! -f "$DATA/train-images-idx3-ubyte.gz" ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq dataset-fashion-mnist
fi

PYTHON=${PYTHON:-python3.11}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
# the core, the plugin SDK every plugin imports, and the training plugins
.venv/bin/python -m pip install -q -e . -e sdk -e plugins/autodiff -e plugins/data -e plugins/nn
# The cpu backend: a C++ build (a few minutes the first time; the CMake build folder is kept,
# so a rerun recompiles only what changed).
.venv/bin/python -m pip install -q ./plugins/cpu -Cbuild-dir=.venv/build/mskernel-cpu
exec .venv/bin/python examples/lenet_fashion_mnist.py --data "$DATA" "$@"
