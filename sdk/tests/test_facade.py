"""The plugin API is ``mskernel_sdk.__all__``, and every public signature in it is held by a
snapshot: changing one must be a visible decision.

After a deliberate change, regenerate the snapshot with
``MSKERNEL_SDK_UPDATE_SNAPSHOT=1 python -m pytest sdk/tests/test_facade.py`` and review the
diff (and the SDK's version) before committing it.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
import types
import typing
from pathlib import Path
from typing import Any

import mskernel_sdk

SNAPSHOT = Path(__file__).with_name("facade.txt")
QUALIFIER = re.compile(r"\b(?:[A-Za-z_]\w*\.)+")  # "mskernel.ir.types.TensorType" -> "TensorType"


def _members(cls: type) -> list[str]:
    """Public methods, properties and fields a class defines itself or inherits from
    mskernel (not from object, pydantic or abc)."""
    lines = []
    own = [k for k in cls.__mro__ if k.__module__.split(".")[0] in ("mskernel", "mskernel_sdk")]
    seen: set[str] = set()
    for klass in own:
        for name, value in vars(klass).items():
            if (name.startswith("_") and name != "__call__") or name in seen:
                continue
            seen.add(name)
            if isinstance(value, property):
                lines.append(f"    {name}: property")
            elif isinstance(value, types.MemberDescriptorType):
                lines.append(f"    {name}: slot")
            elif isinstance(value, (staticmethod, classmethod)) or inspect.isfunction(value):
                func = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
                lines.append(f"    def {name}{inspect.signature(func)}")
            else:
                lines.append(f"    {name} = {value!r}")
    fields = getattr(cls, "model_fields", None) or getattr(cls, "__dataclass_fields__", {})
    lines += [f"    field {name}" for name in fields if not name.startswith("_")]
    return sorted(lines)


def render(name: str, obj: Any) -> list[str]:
    if inspect.isclass(obj):
        try:
            signature = str(inspect.signature(obj))
        except (TypeError, ValueError):
            signature = "(...)"
        return [f"class {name}{signature}", *_members(obj)]
    if inspect.isfunction(obj) or isinstance(obj, types.BuiltinFunctionType):
        return [f"def {name}{inspect.signature(obj)}"]
    if typing.get_origin(obj) is not None:  # a type alias: its meaning, without module paths
        return [f"{name} = {QUALIFIER.sub('', repr(obj))}"]
    # Instances are recorded by type and, for plain data, value; an object's default repr
    # names the module its class lives in, which moves between releases of the library
    # that defines it (pluggy's HookimplMarker did).
    plain = isinstance(obj, (str, int, float, bool, tuple, frozenset, type(None)))
    return [f"{name}: {type(obj).__name__}" + (f" = {obj!r}" if plain else "")]


def facade() -> str:
    text = "\n".join(line for name in sorted(mskernel_sdk.__all__)
                     for line in render(name, getattr(mskernel_sdk, name))) + "\n"
    return re.sub(r" at 0x[0-9a-f]+", "", text)  # object addresses differ between runs


def test_public_signatures_match_the_snapshot():
    current = facade()
    if os.environ.get("MSKERNEL_SDK_UPDATE_SNAPSHOT"):
        SNAPSHOT.write_text(current, encoding="utf-8")
    expected = SNAPSHOT.read_text(encoding="utf-8")
    assert current == expected, (
        "the plugin API (mskernel_sdk.__all__) changed; if deliberate, regenerate "
        f"{SNAPSHOT.name} (MSKERNEL_SDK_UPDATE_SNAPSHOT=1) and review its diff")


def test_every_public_attribute_is_in_all():
    modules = {n for n, v in vars(mskernel_sdk).items() if isinstance(v, types.ModuleType)}
    public = {n for n in vars(mskernel_sdk) if not n.startswith("_")} - modules
    assert public == set(mskernel_sdk.__all__)


def test_the_sdks_own_names_are_documented():
    own = [getattr(mskernel_sdk, n) for n in mskernel_sdk.__all__]
    own = [obj for obj in own if getattr(obj, "__module__", "").startswith("mskernel_sdk")]
    assert own and all(obj.__doc__ for obj in own)


def test_core_requirement_pins_the_running_series():
    from mskernel import __version__
    from packaging.requirements import Requirement

    spec = Requirement(mskernel_sdk.core_requirement()).specifier
    assert spec.contains(__version__)
    major, minor = (int(p) for p in __version__.split(".")[:2])
    next_series = f"{major}.{minor + 1}" if major == 0 else f"{major + 1}.0"
    assert not spec.contains(next_series)


IMPORT_PROBE = """
import json, sys, time
before = set(sys.modules)
start = time.perf_counter()
import mskernel_sdk
seconds = time.perf_counter() - start
host = sys.modules.get("mskernel.hooks.host")
print(json.dumps({"seconds": seconds, "modules": sorted(set(sys.modules) - before),
                  "host_created": getattr(host, "_host", None) is not None}))
"""


def test_importing_the_facade_loads_no_plugin_no_host_and_no_pytest(capsys):
    """Every plugin module imports the facade, so importing it must not discover or load
    plugins, nor pull in pytest (the conformance kit's session is loaded by pytest only)."""
    done = subprocess.run([sys.executable, "-c", IMPORT_PROBE], capture_output=True, text=True,
                          check=True, env={k: v for k, v in os.environ.items()
                                           if not k.startswith("MSKERNEL_")})
    seen = json.loads(done.stdout)
    roots = {m.split(".")[0] for m in seen["modules"]}
    assert not {r for r in roots if r.startswith("mskernel_")} - {"mskernel_sdk"}
    assert "pytest" not in roots and "_pytest" not in roots
    assert "mskernel_sdk.kit.session" not in seen["modules"]
    assert seen["host_created"] is False
    with capsys.disabled():
        print(f"\nimport mskernel_sdk: {seen['seconds'] * 1000:.0f} ms in a fresh interpreter, "
              f"{len(seen['modules'])} modules")


def test_core_ops_are_the_cores_own_definitions_by_trait(fresh_host):
    elementwise = mskernel_sdk.core_ops("elementwise")
    assert {"add", "exp", "where", "cast"} <= set(elementwise)
    assert "matmul" not in elementwise and "sum" in mskernel_sdk.core_ops("reduction")
    assert all(op.owner == "mskernel" and op.has_trait("elementwise")
               for op in elementwise.values())

    class acme:  # a plugin's elementwise op is not a core op
        @mskernel_sdk.hookimpl
        def mskernel_register_ops(registry):
            registry.define(mskernel_sdk.OpDef("acme.twice", ("x",), lambda x: x,
                                               lambda x: 2 * x, traits={"elementwise"}))

    mskernel_sdk.register_plugin(acme, "acme")
    assert "acme.twice" in mskernel_sdk.op_registry()
    assert "acme.twice" not in mskernel_sdk.core_ops("elementwise")
    assert "matmul" in mskernel_sdk.core_ops() and "acme.twice" not in mskernel_sdk.core_ops()


def test_the_installed_sdk_is_typed(sdk_site):
    """PEP 561: a plugin's type checker reads the facade's annotations from the package."""
    assert (sdk_site / "mskernel_sdk" / "py.typed").is_file()
