#!/usr/bin/env bash
# Virtual environments for the frameworks the quantum benchmarks compare against, under
# $ANCHORS (default $TMPDIR/anchors or /tmp/anchors), at the versions that were measured.
# mskernel-quantum itself is benchmarked from the environment it is installed in
# (MSKERNEL_PYTHON, default the interpreter running run_all.py).
set -euo pipefail
ANCHORS="${ANCHORS:-${TMPDIR:-/tmp}/anchors}"
mkdir -p "$ANCHORS"
mk() { [ -x "$ANCHORS/$1/bin/python" ] || python3.11 -m venv "$ANCHORS/$1"; }
mk venv_mindquantum
"$ANCHORS/venv_mindquantum/bin/pip" install -q mindquantum==0.12.0 numpy==2.4.6
mk venv_qiskit
"$ANCHORS/venv_qiskit/bin/pip" install -q qiskit==2.6.2 qiskit-aer==0.18.2 numpy==2.4.6
mk venv_lightning
"$ANCHORS/venv_lightning/bin/pip" install -q pennylane==0.45.1 pennylane-lightning==0.45.0 \
  numpy==2.4.6
echo "venvs ready under $ANCHORS"
