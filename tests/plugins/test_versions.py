"""Reading a plugin's requirement on the core from its metadata (``Requires-Dist`` lines with
environment markers) and judging it against the running core, as pip would."""

import sys
from importlib import metadata

import pytest

from mskernel.hooks.discovery import Candidate, incompatibility, requirement_on


def candidate(*requires: str) -> Candidate:
    entry_point = metadata.EntryPoint("acme", "mskernel_acme.plugin", "mskernel.plugins")
    return Candidate("acme", entry_point, "mskernel-acme", "0.3.0", requires)


@pytest.mark.parametrize("lines, expected", [
    ([], None),
    (["numpy>=1.26", "pluggy"], None),
    (["mskernel"], ""),
    (["mskernel>=1,<2"], "<2,>=1"),
    (["Mskernel (>=0.1)"], ">=0.1"),
    (["mskernel[cli]>=0.3 ; python_version >= '3.8'"], ">=0.3"),
    (["mskernel-nn>=0.1", "mskernel_cpu>=2"], None),  # other distributions of the family
    (["mskernel>=1; extra == 'test'"], None),  # only needed by an optional extra
    (["mskernel>=1", "mskernel<1.5; extra != 'legacy'"], "<1.5,>=1"),
    (["mskernel>=9; python_version < '3'"], None),  # a marker that does not hold here
    (["mskernel @ https://example.org/mskernel-0.1.0-py3-none-any.whl"], ""),
    ([f'mskernel>=2; python_full_version == "{".".join(map(str, sys.version_info[:3]))}"'],
     ">=2"),
])
def test_requirement_on_the_core(lines, expected):
    spec = requirement_on(lines, "mskernel")
    assert (None if spec is None else str(spec)) == expected


def test_requirement_on_normalizes_the_distribution_name():
    assert str(requirement_on(["mskernel_NN>=0.2"], "mskernel-nn")) == ">=0.2"


@pytest.mark.parametrize("requirement, core, compatible", [
    ("mskernel>=0.1,<0.2", "0.1.0", True),
    ("mskernel>=0.1,<0.2", "0.2.0", False),
    ("mskernel~=1.4", "1.9", True),
    ("mskernel~=1.4", "2.0", False),
    ("mskernel==0.4.*", "0.4.2", True),
    ("mskernel!=0.4.*", "0.4.2", False),
    ("mskernel>=0.1,<0.2", "0.1.1.dev3", True),  # a development core within the bounds
    ("mskernel>=1.0", "1.0.0rc1", False),  # PEP 440: a release candidate precedes 1.0
    ("mskernel>=1; extra == 'gpu'", "0.1.0", True),
])
def test_compatibility_is_pep_440_on_the_running_core(requirement, core, compatible):
    assert (incompatibility(candidate("numpy", requirement), core) is None) is compatible


def test_an_incompatibility_names_both_sides_and_the_remedy():
    reason = incompatibility(candidate("mskernel>=9,<10"), "0.1.0")
    assert reason == (
        "mskernel-acme 0.3.0 requires mskernel <10,>=9, but mskernel 0.1.0 is installed; "
        "install a mskernel-acme release built for mskernel 0.1.0, or an mskernel that "
        "matches <10,>=9")


@pytest.mark.parametrize("line", ["mskernel>=1; os_name === 'posix' or", "mskernel =>1",
                                  "mskernel>=1; gpu_count > '1'"])
def test_a_requirement_that_cannot_be_read_is_reported(line):
    assert incompatibility(candidate(line), "0.1.0").startswith(
        "cannot read its requirement on mskernel: ")
