"""Discovery reads entry points and distribution metadata only; no plugin code runs before a
plugin is first needed."""

import json
import os
import subprocess
import sys
from pathlib import Path

from mskernel.hooks.discovery import discover, incompatibility

pytest_plugins = ["plugin_sandbox"]  # the `sandbox` fixture (tests/plugins/fixtures)

REPO = Path(__file__).resolve().parents[2]
RAISES_ON_IMPORT = 'raise RuntimeError("imported during discovery")\n'

PROBE = """
import json, sys
import mskernel, mskernel.ir

before = sorted(m for m in sys.modules if m.startswith("mskernel_"))
host_module = "mskernel.hooks.host" in sys.modules
mskernel.demo  # first use: now the plugins load
after = sorted(m for m in sys.modules if m.startswith("mskernel_"))
print(json.dumps({"before": before, "host_module": host_module, "after": after}))
"""


def test_discovery_reads_metadata_without_importing(sandbox):
    sandbox.install("mskernel-future", {"future": "mskernel_future.plugin"}, version="3.0.0",
                    requires=["numpy>=1.26", 'mskernel>=9; python_version >= "3"',
                              "mskernel-extra>=1; extra == 'all'"],
                    modules={"mskernel_future.plugin": RAISES_ON_IMPORT})
    (candidate,) = [c for c in discover() if c.name == "future"]
    assert (candidate.distribution, candidate.version) == ("mskernel-future", "3.0.0")
    assert candidate.entry_point.value == "mskernel_future.plugin"
    assert candidate.requires[0] == "numpy>=1.26"
    assert "requires mskernel >=9" in incompatibility(candidate, "0.1.0")
    assert incompatibility(candidate, "9.2") is None
    assert sandbox.imported() == []


def test_unreadable_requirement_is_an_incompatibility_not_a_crash(sandbox):
    sandbox.install("mskernel-odd", {"odd": "mskernel_odd.plugin"},
                    requires=["mskernel>=1; os_name === 'posix' or"],
                    modules={"mskernel_odd.plugin": RAISES_ON_IMPORT})
    (candidate,) = [c for c in discover() if c.name == "odd"]
    assert incompatibility(candidate, "0.1.0").startswith(
        "cannot read its requirement on mskernel: ")


def test_importing_mskernel_imports_no_plugin_until_first_use(sandbox):
    sandbox.install_demo()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MSKERNEL_")}
    env["PYTHONPATH"] = os.pathsep.join([str(sandbox.root), str(REPO)])
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                         text=True, check=True).stdout
    seen = json.loads(out)
    assert seen["before"] == []
    assert seen["host_module"] is False
    assert {"mskernel_demo.plugin", "mskernel_demo.api"} <= set(seen["after"])
