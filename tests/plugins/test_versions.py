"""Reading a plugin's requirement on the core from its metadata: version specifiers,
requirement lines and environment markers."""

import sys

import pytest

from mskernel.hooks.versions import marker_holds, release, requirement_on, satisfies


@pytest.mark.parametrize("version, spec, expected", [
    ("0.1.0", "", True),
    ("0.1.0", ">=0.1,<1", True),
    ("1.0", ">=0.1,<1", False),
    ("0.1", "==0.1.0", True),
    ("0.1.1", "!=0.1.0", True),
    ("0.1.0", "!=0.1", False),
    ("1.4.7", "~=1.4.5", True),
    ("1.5.0", "~=1.4.5", False),
    ("1.9", "~=1.4", True),
    ("2.0", "~=1.4", False),
    ("2", "~=2.0.0", True),
    ("0.4.2", "==0.4.*", True),
    ("0.5.0", "==0.4.*", False),
    ("0.5.0", "!=0.4.*", True),
    ("1.0.0rc1", ">=1.0", True),  # pre-release suffixes are ignored
    ("0.9", "> 0.8 , <= 0.9", True),
    ("0.9", ">0.9", False),
])
def test_satisfies(version, spec, expected):
    assert satisfies(version, spec) is expected


@pytest.mark.parametrize("spec", [">=1.*", "~=1", "=>1", "1.0"])
def test_satisfies_rejects_what_it_cannot_read(spec):
    with pytest.raises(ValueError):
        satisfies("1.0", spec)


def test_release_reads_the_numeric_part():
    assert release("v2.13.0+cpu") == (2, 13, 0)
    with pytest.raises(ValueError, match="not a version"):
        release("latest")


@pytest.mark.parametrize("lines, expected", [
    ([], None),
    (["numpy>=1.26", "pluggy"], None),
    (["mskernel"], ""),
    (["mskernel>=1,<2"], ">=1,<2"),
    (["Mskernel (>=0.1)"], ">=0.1"),
    (["mskernel[cli]>=0.3 ; python_version >= '3.8'"], ">=0.3"),
    (["mskernel-nn>=0.1", "mskernel_cpu>=2"], None),  # other distributions of the family
    (["mskernel>=1; extra == 'test'"], None),  # only needed by an optional extra
    (["mskernel>=1", "mskernel<1.5; extra != 'legacy'"], ">=1,<1.5"),
    (["mskernel>=9; python_version < '3'"], None),  # a marker that does not hold here
    (["mskernel @ https://example.org/mskernel-0.1.0-py3-none-any.whl"], ""),
])
def test_requirement_on_the_core(lines, expected):
    assert requirement_on(lines, "mskernel") == expected


def test_requirement_on_normalizes_the_distribution_name():
    assert requirement_on(["mskernel_NN>=0.2"], "mskernel-nn") == ">=0.2"


@pytest.mark.parametrize("marker, expected", [
    ('python_version >= "3.8"', True),
    ('python_version < "3.8"', False),
    (f'python_full_version == "{".".join(map(str, sys.version_info[:3]))}"', True),
    (f'sys_platform == "{sys.platform}" and os_name != "never"', True),
    ('sys_platform == "never" or (implementation_name == "cpython" and extra == "")',
     sys.implementation.name == "cpython"),
    ('extra == "gpu"', False),
    ('"linux" in sys_platform', "linux" in sys.platform),
    ('"never" not in sys_platform', True),
])
def test_marker_holds(marker, expected):
    assert marker_holds(marker) is expected


@pytest.mark.parametrize("marker", ['gpu_count > "1"', 'python_version >=', '(os_name == "posix"',
                                    'os_name ~= "posix"'])
def test_marker_that_cannot_be_read_is_an_error(marker):
    with pytest.raises(ValueError):
        marker_holds(marker)
