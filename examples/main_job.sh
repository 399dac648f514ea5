#!/usr/bin/env bash
# The main job: train a classifier on real Fashion-MNIST through mskernel's IR, pass
# pipeline and runtime, on the CPU, and report test accuracy.  Installs what it needs.
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
.venv/bin/python -m pip install -q -e .
exec .venv/bin/python examples/main_job.py --data "$DATA" "$@"
