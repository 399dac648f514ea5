"""The plugin API is ``mskernel_sdk.__all__``, and every public signature in it is held by a
snapshot: changing one must be a visible decision.

After a deliberate change, regenerate the snapshot with
``MSKERNEL_SDK_UPDATE_SNAPSHOT=1 python -m pytest sdk/tests/test_facade.py`` and review the
diff (and the SDK's version) before committing it.
"""

from __future__ import annotations

import inspect
import os
import re
import types
from pathlib import Path
from typing import Any

import mskernel_sdk

SNAPSHOT = Path(__file__).with_name("facade.txt")


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
    from mskernel.hooks.versions import satisfies

    spec = mskernel_sdk.core_requirement().removeprefix("mskernel")
    assert satisfies(__version__, spec)
    major, minor = (int(p) for p in __version__.split(".")[:2])
    next_series = f"{major}.{minor + 1}" if major == 0 else f"{major + 1}.0"
    assert not satisfies(next_series, spec)
