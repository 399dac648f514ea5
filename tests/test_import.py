"""``import mskernel`` stays cheap: it imports no plugin and does not create the plugin host.
What it does import, and how long it takes, is printed (times are never asserted; the
figure to quote comes from ``benchmarks/import_time.py``)."""

import json
import os
import subprocess
import sys
from pathlib import Path


pytest_plugins = ["plugin_sandbox"]  # the `sandbox` fixture (tests/plugins/fixtures)
REPO = Path(__file__).resolve().parents[1]

PROBE = """
import json, sys, time
before = set(sys.modules)
start = time.perf_counter()
import mskernel
seconds = time.perf_counter() - start
new = sorted(set(sys.modules) - before)
host = sys.modules.get("mskernel.hooks.host")
print(json.dumps({"seconds": seconds, "modules": new,
                  "host_created": getattr(host, "_host", None) is not None}))
"""


def test_import_mskernel_loads_no_plugin_and_no_host(sandbox, capsys):
    sandbox.install_demo()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MSKERNEL_")}
    env["PYTHONPATH"] = os.pathsep.join([str(sandbox.root), str(REPO)])
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                         text=True, check=True).stdout
    seen = json.loads(out)
    assert not [m for m in seen["modules"] if m.startswith("mskernel_")]
    assert seen["host_created"] is False
    third_party = sorted({m.split(".")[0] for m in seen["modules"]}
                         - set(sys.stdlib_module_names) - {"mskernel"})
    with capsys.disabled():
        print(f"\nimport mskernel: {seen['seconds'] * 1000:.2f} ms in a fresh interpreter; "
              f"{len(seen['modules'])} modules, third-party: {', '.join(third_party) or 'none'}")
