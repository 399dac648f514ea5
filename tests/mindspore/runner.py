"""Run one port as its own program and keep some of its results:

    python runner.py OUT.npz NAME,NAME... PORT.py [ARGS...]

runs ``PORT.py`` as ``__main__`` (with ``ARGS`` as its command line, its folder first on the
path, as ``python PORT.py ARGS`` would), then saves the module-level variables ``NAME`` to
``OUT.npz`` as arrays — a tensor as its values, a number as a 0-d array, a tuple or list as
``NAME.0``, ``NAME.1`` …, a dict as ``NAME.key``."""

import runpy
import sys
from pathlib import Path

import numpy as np


def arrays(name, value):
    if isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            yield from arrays(f"{name}.{i}", item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from arrays(f"{name}.{key}", item)
    elif value is not None:
        array = np.asarray(value)
        if array.dtype == object:
            raise TypeError(f"{name} is a {type(value).__name__}, not numbers or tensors")
        yield name, array


def main():
    out, names, port, *args = sys.argv[1:]
    sys.argv = [port, *args]
    sys.path.insert(0, str(Path(port).resolve().parent))
    scope = runpy.run_path(port, run_name="__main__")
    np.savez(out, **{key: array for name in names.split(",") if name
                     for key, array in arrays(name, scope[name])})


if __name__ == "__main__":
    main()
