"""Run code as if some packages were not installed: :func:`prelude` starts a fresh-process script that does it,
:func:`hide_packages` does it in this process.

The packages are hidden at the import system, as an uninstalled package is absent: one finder replaces the finders on
``sys.meta_path`` and delegates to them except for the hidden top-level names, so that ``import spacy`` raises
``ModuleNotFoundError: No module named 'spacy'`` and ``importlib.util.find_spec("spacy")`` is ``None``. The two
simpler ways break libraries on the way: a finder that raises makes the availability probes of ``datasets`` and
``transformers`` (``find_spec("duckdb")``, ...) raise too, and a ``None`` in ``sys.modules`` reads as "imported" to
``"spacy" in sys.modules`` checks (``datasets`` pickling a function for its cache). Distribution metadata stays
visible (``importlib.metadata``); whatever tests the presence of a package by importing it sees it absent.

Used by tests/trainer_scripts/test_training_stack.py (the core install: no dataset-builder packages),
tests/wikiref_dataset/test_cli.py (the data side without the model side) and tests/trainer_scripts/test_push_to_hub.py
(loading from the Hub without the project).
"""

from __future__ import annotations

import importlib.abc
import os
import sys
from collections.abc import Iterable

__all__ = ["PRELUDE", "NotInstalled", "hide_packages", "loaded", "prelude"]


class NotInstalled(importlib.abc.MetaPathFinder):
    """The one finder on ``sys.meta_path``: the finders it replaced, except for the hidden top-level packages."""

    def __init__(self, hidden: Iterable[str], finders: Iterable[object]) -> None:
        self.hidden = frozenset(hidden)
        self.finders = list(finders)

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in self.hidden:
            return None
        for finder in self.finders:
            find_spec = getattr(finder, "find_spec", None)
            spec = find_spec(name, path, target) if find_spec is not None else None
            if spec is not None:
                return spec
        return None

    def find_distributions(self, *args, **kwargs):
        for finder in self.finders:
            if hasattr(finder, "find_distributions"):
                yield from finder.find_distributions(*args, **kwargs)

    def invalidate_caches(self) -> None:
        for finder in self.finders:
            if hasattr(finder, "invalidate_caches"):
                finder.invalidate_caches()


def hide_packages(names: Iterable[str]) -> None:
    """Make the top-level packages ``names`` not importable in this process from now on; one already imported is an
    error (a fresh interpreter is the place for this)."""
    names = frozenset(names)
    imported = sorted(name for name in names if name in sys.modules)
    if imported:
        raise RuntimeError(f"already imported, cannot be hidden: {imported}")
    sys.meta_path[:] = [NotInstalled(names, sys.meta_path)]


def loaded(names: Iterable[str]) -> list[str]:
    """Which of the top-level packages ``names`` are in ``sys.modules`` (imported, or tried and left there)."""
    return sorted(name for name in names if name in sys.modules)


PRELUDE = r'''
import importlib.util, sys
# by its file: tests/ on sys.path would shadow the project's packages with the test folders of the same names
_spec = importlib.util.spec_from_file_location("not_installed", HELPER)
_helper = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_helper)
_helper.hide_packages(NOT_INSTALLED)
for _name in NOT_INSTALLED:
    try:
        __import__(_name)
    except ModuleNotFoundError:
        continue
    raise SystemExit(f"{_name} is importable: hiding it did not work")
'''
"""The start of a fresh-process script after ``HELPER = <this file>`` and ``NOT_INSTALLED = (...)`` (:func:`prelude`)."""


def prelude(names: Iterable[str]) -> str:
    """The start of a ``python -c`` script that hides the top-level packages ``names`` (:func:`hide_packages`); the
    script reads what is left with ``_helper.loaded(NOT_INSTALLED)``."""
    return f"HELPER = {os.path.abspath(__file__)!r}\nNOT_INSTALLED = {tuple(sorted(set(names)))!r}\n" + PRELUDE
