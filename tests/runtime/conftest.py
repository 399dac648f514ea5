"""A second backend for partitioning tests: the reference semantics under another name,
claiming only some ops (and optionally some dtypes), with its own device arrays."""

import pytest

from mskernel.runtime import Capabilities, OpSupport
from mskernel.runtime.reference import ReferenceBackend


class SubsetBackend(ReferenceBackend):
    def __init__(self, name, ops, dtypes=None):
        super().__init__()
        self.name = name
        self._caps = Capabilities.uniform(ops, OpSupport(dtypes=dtypes))

    def capabilities(self):
        return self._caps


@pytest.fixture
def subset_backend():
    return SubsetBackend
