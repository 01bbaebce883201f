"""The environment `make demo` and `make test` install: every installed Python file is byte-compiled.

Where PYTHONDONTWRITEBYTECODE is set (CI, many containers), a module without its ``.pyc`` is compiled from source by
every process that imports it, and the result is thrown away. pip's ``--no-compile`` install of torch left torch's own
dependencies so (sympy, networkx, jinja2, fsspec, filelock): 2.5 s of every process that loads a model went to
compiling sympy. Skipped outside the environment the Makefile made (its ``.installed`` stamp).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import sysconfig
from pathlib import Path

import pytest

STAMP = Path(sys.prefix) / ".installed"


@pytest.mark.skipif(not STAMP.is_file(), reason="not the environment `make test` installs (no .installed stamp)")
def test_installed_modules_are_byte_compiled():
    purelib = sysconfig.get_paths()["purelib"]
    assert purelib.startswith(sys.prefix), purelib
    files, missing = 0, []
    for folder, _, names in os.walk(purelib):
        for name in names:
            if name.endswith(".py"):
                files += 1
                path = os.path.join(folder, name)
                if not os.path.exists(importlib.util.cache_from_source(path)):
                    missing.append(path)
    assert files > 10_000  # torch, transformers, spaCy, datasets
    # the only files left without bytecode are those this Python cannot compile (torch ships a few for newer ones)
    compiles = []
    for path in missing:
        try:
            compile(Path(path).read_bytes(), path, "exec")
        except SyntaxError:
            continue
        compiles.append(os.path.relpath(path, purelib))
    assert not compiles, f"{len(compiles)} installed modules without bytecode, e.g. {sorted(compiles)[:10]}"
