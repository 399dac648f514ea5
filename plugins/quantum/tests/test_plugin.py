"""The plugin as the core sees it: discovered from its entry point, healthy, providing the
``mskernel.quantum`` namespace, and cheap to import."""

import json
import subprocess
import sys

import mskernel
from mskernel.hooks import plugin_host


def test_plugin_record_is_ok():
    (record,) = [r for r in plugin_host().plugin_records() if r.name == "quantum"]
    assert record.status == "ok", record.reason
    assert record.distribution == "mskernel-quantum"
    assert set(record.provides) == {"namespace:quantum", "ops:quantum.*", "rules:quantum.*",
                                    "host_kernels:quantum.*"}


def test_namespace_is_the_api_module():
    from mskernel_quantum import api

    assert mskernel.quantum is api
    for name in ("Circuit", "Simulator", "Hamiltonian", "H", "X", "CNOT", "RX", "PhaseShift",
                 "U3", "Rxx", "Ryy", "Rzz", "UnivMathGate"):
        assert hasattr(mskernel.quantum, name), name


def test_loading_the_plugin_imports_no_simulator_code():
    probe = ("import json, sys, mskernel_quantum.plugin; "
             "print(json.dumps(sorted(m for m in sys.modules if m.startswith('mskernel_'))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout
    loaded = json.loads(out)
    assert "mskernel_quantum._native" not in loaded
    assert "mskernel_quantum.simulator" not in loaded
