"""The table of known distributions (what the "install it" message may name) agrees with the
plugins of this repository: every namespace a plugin registers is listed under its
distribution, and the table names no distribution the repository does not have."""

import tomllib
from pathlib import Path

from mskernel.hooks.distributions import KNOWN_DISTRIBUTIONS
from mskernel.hooks.host import host

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"


def repository_distributions() -> set[str]:
    return {tomllib.loads((d / "pyproject.toml").read_text())["project"]["name"]
            for d in PLUGINS.iterdir() if (d / "pyproject.toml").exists()}


def test_the_table_names_only_distributions_of_this_repository():
    assert set(KNOWN_DISTRIBUTIONS) <= repository_distributions()


def test_every_namespace_a_plugin_of_this_repository_registers_is_in_the_table():
    host().load_external()
    ours = repository_distributions()
    checked = 0
    for record in host().plugin_records():
        if record.distribution not in ours or record.status != "ok":
            continue
        provided = {tag.partition(":")[2] for tag in record.provides
                    if tag.startswith("namespace:")}
        assert provided <= set(KNOWN_DISTRIBUTIONS.get(record.distribution, ())), \
            record.distribution
        checked += 1
    assert checked >= 3  # nn, data and autodiff are installed in every test environment
