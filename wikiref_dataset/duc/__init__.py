"""DUC 2005-2007: NIST's folders read into datasets rows and converted folders (:mod:`.reader`; NIST's files
parsed by :mod:`.nist`), converted years as the evaluation and fine-tuning read them (:mod:`.years`) and the
``wikiref duc convert`` parser (:mod:`.cli`). The public names of the reader and of the years are re-exported here, so
``from wikiref_dataset.duc import load_duc_year`` keeps working."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    """The reader's and the years' public names, imported on first use (``DUC_FEATURES`` is itself built lazily by the
    reader)."""
    from . import years

    if name in years.__all__:
        return getattr(years, name)
    from . import reader

    if name in reader.__all__:
        return getattr(reader, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
