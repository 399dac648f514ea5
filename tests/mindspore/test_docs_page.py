"""docs/mindspore.md is executable: its Python examples run in order, in one process, in a
fresh interpreter."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "mindspore.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)

RUNNER = '''
import json, sys
blocks = json.load(open(sys.argv[1]))
namespace = {"__name__": "__docs__"}
for line, code in blocks:
    exec(compile("\\n" * (line - 1) + code, sys.argv[2], "exec"), namespace)
print(f"ran {len(blocks)} examples")
'''


def test_python_examples_run_in_order(tmp_path):
    page = PAGE.read_text(encoding="utf-8")
    assert {m.group(1) for m in FENCE.finditer(page)} == {"python"}
    blocks = [(page.count("\n", 0, m.start(2)) + 1, m.group(2)) for m in FENCE.finditer(page)]
    assert len(blocks) >= 6
    (tmp_path / "blocks.json").write_text(json.dumps(blocks))
    (tmp_path / "runner.py").write_text(RUNNER)
    done = subprocess.run([sys.executable, "runner.py", "blocks.json", str(PAGE)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"ran {len(blocks)} examples" in done.stdout
