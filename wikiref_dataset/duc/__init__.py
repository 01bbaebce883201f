"""DUC 2005-2007: NIST's folders read into datasets rows and converted folders (:mod:`.reader`), and the
``wikiref duc convert`` parser (:mod:`.cli`). The reader's public names are re-exported here, so
``from wikiref_dataset.duc import load_duc_year`` keeps working."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    """The reader's public names, imported on first use (``DUC_FEATURES`` is itself built lazily by the reader)."""
    from . import reader

    if name in reader.__all__:
        return getattr(reader, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
