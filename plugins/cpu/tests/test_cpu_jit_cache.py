"""The JIT cache of generated fused-elementwise code (mskernel_cpu.jit_cache) loads nothing
this user did not compile: a planted shared object whose constructor would write a marker file
never runs — planted with a consistent digest but by another owner, group-writable, in a
directory others can write, behind a symlink, or with bytes that do not match its name — and
each refusal says why in a warning.  Every scenario runs in a fresh process (a library loaded
once stays loaded, so the victim must not have loaded the legitimate one first)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mskernel_cpu import fusion_codegen

pytestmark = pytest.mark.skipif(fusion_codegen.compiler() is None,
                                reason="no C++ compiler for generated code")

#: A victim process: compiles a fused chain on the cpu backend and reports what happened.
VICTIM = textwrap.dedent("""
    import json, os, warnings
    import numpy as np
    from mskernel.hooks.host import host
    from mskernel.ir import GraphBuilder, tensor_type
    from mskernel.runtime import CompileOptions, compile_graph
    from mskernel_cpu import fusion_codegen, jit_cache

    foreign = os.environ.get("FOREIGN_FILES")
    if foreign:  # files under this name report another owner, as chown to another user would
        real_fstat = jit_cache.os.fstat

        def fstat(fd):
            info = real_fstat(fd)
            if os.readlink(f"/proc/self/fd/{fd}").endswith(foreign):
                return os.stat_result((info.st_mode, info.st_ino, info.st_dev, info.st_nlink,
                                       info.st_uid + 1, info.st_gid, info.st_size,
                                       int(info.st_atime), int(info.st_mtime),
                                       int(info.st_ctime)))
            return info
        jit_cache.os.fstat = fstat

    b = GraphBuilder("chain")
    x = b.input(tensor_type("f64", (3, 7)), "x")
    graph = b.build([b.op("exp", b.op("neg", b.op("tanh", x)))])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (executable,) = compile_graph(graph, backends=["cpu"], options=CompileOptions(
            opt_level=2, fallback="deny")).executables
    cpu = host().backends.get("cpu")
    data = np.linspace(-1, 1, 21).reshape(3, 7)
    (out,) = executable.run([cpu.to_device(data, graph.inputs[0].type)])
    print(json.dumps({
        "describe": executable.describe(),
        "stats": fusion_codegen.JIT_STATS,
        "warnings": [str(w.message) for w in caught],
        "correct": bool(np.allclose(out.to_host(), np.exp(-np.tanh(data)), rtol=1e-12)),
    }))
""")

#: A shared object that announces being loaded, exporting the symbol the kernel looks up.
PLANTED = textwrap.dedent("""
    #include <cstdio>
    #include <cstdint>
    __attribute__((constructor)) static void planted() {
      if (FILE* f = std::fopen(MARKER, "w")) { std::fputs("ran", f); std::fclose(f); }
    }
    extern "C" __attribute__((visibility("default"))) int mskernel_fused_0(
        const void* const*, void*, int64_t, int64_t, char*, int64_t) { return 0; }
""")


def victim(cache_home: Path, **env: str) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", VICTIM], capture_output=True, text=True, timeout=300,
        env={**os.environ, "XDG_CACHE_HOME": str(cache_home), fusion_codegen.JIT_ENV: "1",
             **env})
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def planted_library(tmp_path_factory) -> tuple[Path, Path]:
    """(the planted object, the marker its constructor writes)."""
    root = tmp_path_factory.mktemp("planted")
    marker = root / "marker"
    source = root / "planted.cpp"
    source.write_text(PLANTED)
    library = root / "planted.so"
    subprocess.run([fusion_codegen.compiler(), "-shared", "-fPIC", f'-DMARKER="{marker}"',
                    str(source), "-o", str(library)], check=True, capture_output=True)
    return library, marker


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    """The cache home of a victim that compiled its object into an empty cache."""
    home = tmp_path_factory.mktemp("pristine")
    report = victim(home)
    assert report["stats"]["compiled"] == 1 and "generated C++" in report["describe"]
    return home


@pytest.fixture
def cache(tmp_path, pristine) -> Path:
    """A copy of the pristine cache (modes kept): ``key-<k>.ref`` and its object."""
    shutil.copytree(pristine / "mskernel", tmp_path / "mskernel")
    return tmp_path / "mskernel" / "cpu-jit"


def plant(cache: Path, library: Path) -> str:
    """Put ``library`` where the victim's key leads, as a consistent pair: its bytes under
    their digest, the key's reference naming that digest.  Returns the digest."""
    (ref,) = cache.glob("key-*.ref")
    data = library.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    planted = cache / f"obj-{digest}.so"
    planted.write_bytes(data)
    planted.chmod(0o500)
    ref.write_text(digest + "\n")
    return digest


def assert_refused(report: dict, marker: Path, reason: str) -> None:
    assert not marker.exists(), "the planted library ran"
    assert any(reason in w for w in report["warnings"]), report["warnings"]
    assert report["correct"] and "generated C++" in report["describe"]


def test_the_cache_directory_is_created_private_and_reused(tmp_path, cache):
    for directory in (cache, cache.parent):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    report = victim(tmp_path)
    assert report["stats"] == {"compiled": 0, "cached": 1, "refused": 0, "failed": 0}
    assert report["correct"] and not report["warnings"]


def test_a_consistent_pair_owned_by_someone_else_is_refused(cache, planted_library):
    library, marker = planted_library
    digest = plant(cache, library)
    report = victim(cache.parent.parent, FOREIGN_FILES=f"obj-{digest}.so")
    assert_refused(report, marker, "is owned by uid")
    assert report["stats"]["refused"] == 1 and report["stats"]["compiled"] == 1


def test_a_group_writable_object_is_refused(cache, planted_library):
    library, marker = planted_library
    digest = plant(cache, library)
    (cache / f"obj-{digest}.so").chmod(0o575)
    assert_refused(victim(cache.parent.parent), marker, "is writable by group")


def test_bytes_that_do_not_match_their_name_are_refused(cache, planted_library):
    library, marker = planted_library
    (legitimate,) = cache.glob("obj-*.so")
    legitimate.chmod(0o700)
    legitimate.write_bytes(library.read_bytes())  # the name's digest, other bytes
    assert_refused(victim(cache.parent.parent), marker, "holds other bytes")


def test_a_symlinked_object_is_refused(cache, planted_library):
    library, marker = planted_library
    digest = plant(cache, library)
    obj = cache / f"obj-{digest}.so"
    obj.unlink()
    obj.symlink_to(library)
    assert_refused(victim(cache.parent.parent), marker, "cannot open")


@pytest.mark.parametrize("mode, reason", [(0o777, "is writable by group and others"),
                                          (0o703, "is writable by others")])
def test_a_directory_others_can_write_is_refused_and_compiled_privately(
        cache, planted_library, mode, reason):
    library, marker = planted_library
    plant(cache, library)
    cache.chmod(mode)
    report = victim(cache.parent.parent)
    assert_refused(report, marker, reason)
    assert any("for this process instead" in w for w in report["warnings"])
    assert report["stats"]["compiled"] == 1  # privately


def test_a_symlinked_directory_is_refused(tmp_path, cache, planted_library):
    library, marker = planted_library
    plant(cache, library)
    elsewhere = tmp_path / "elsewhere"
    cache.rename(elsewhere)
    cache.symlink_to(elsewhere)
    assert_refused(victim(cache.parent.parent), marker, "is a symlink")
