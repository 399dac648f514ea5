"""The IR stands alone: given an op lookup of its own, it builds, verifies, prints, parses,
saves and loads graphs without the op set, the plugin host or any layer above it."""

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROBE = r'''
import json, sys
from dataclasses import dataclass

from mskernel.errors import InferError, UnknownOpError, VerifyError
from mskernel.ir import Graph, GraphBuilder, Node, OpLookup, OpSchema, parse_graph, print_graph, verify
from mskernel.ir import load_model, save_model, tensor_type
from mskernel.ir.types import TensorType


@dataclass(frozen=True)
class Schema:
    """An op with one float attribute, returning its input's type."""

    name: str
    owner: str = "tiny-ops"
    effectful: bool = False

    def bind_attrs(self, attrs, *, loc=None):
        unknown = set(attrs) - {"factor"}
        if unknown:
            raise InferError(f"unknown attributes {sorted(unknown)}")
        return {"factor": float(attrs.get("factor", 1.0))}

    def infer_outputs(self, input_types, attrs, *, regions=(), loc=None):
        if len(input_types) != 1 or not isinstance(input_types[0], TensorType):
            raise InferError(f"op '{self.name}' takes one tensor")
        return (input_types[0],), False

    def infer_types(self, input_types, attrs, *, regions=(), loc=None):
        return self.infer_outputs(input_types, attrs, regions=regions, loc=loc)[0]


class TinyOps:
    def __init__(self):
        self.ops = {n: Schema(n) for n in ("scale", "shift")}

    def get(self, name):
        if name not in self.ops:
            raise UnknownOpError(f"unknown op '{name}'")
        return self.ops[name]


ops: OpLookup[OpSchema] = TinyOps()
b = GraphBuilder("tiny", ops)
x = b.input(tensor_type("f32", (2, 3)), "x")
y = b.op("scale", x, factor=3.0)
graph = b.build([b.op("shift", y)])
verify(graph, ops)
text = print_graph(graph)
again = parse_graph(text, ops)
assert print_graph(again) == text

try:  # an op the lookup does not define is the verifier's error, naming it
    verify(Graph(again.inputs, (Node("nope", again.inputs, (), {}),), (), "bad"), ops)
    raise AssertionError("verify accepted an unknown op")
except VerifyError as exc:
    assert "unknown op 'nope'" in str(exc), exc

save_model(sys.argv[1], graph, {}, registry=ops)
model = load_model(sys.argv[1], registry=ops)
assert print_graph(model.graph) == text and model.requires == {"tiny-ops": None}
print(json.dumps({"text": text, "modules": sorted(m for m in sys.modules if m.startswith("mskernel"))}))
'''


def test_the_ir_builds_verifies_prints_parses_and_stores_with_a_lookup_of_its_own(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MSKERNEL_")}
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "tiny.mskernel")],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert "= scale(%0) {factor=3.0}" in seen["text"]
    above_the_ir = [m for m in seen["modules"] if m.startswith(
        ("mskernel.ops", "mskernel.passes", "mskernel.runtime", "mskernel.frontend",
         "mskernel.hooks.host"))]
    assert above_the_ir == []
