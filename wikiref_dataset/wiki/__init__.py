"""WikiRef from a Wikipedia dump: pages (:mod:`.dump`), plain text (:mod:`.plaintext`, its inline templates
:mod:`.templates`), statements and their citations (:mod:`.spans`, :mod:`.statements`, :mod:`.citations`), the
datatrove step (:mod:`.steps`) and the CLI (:mod:`.cli`)."""

import importlib
from typing import Any

# Exports load on first use, so that `wikiref` can register the statements command (.cli) without importing the
# wikitext and dump parsers (mwparserfromhell, mwxml: the build extra).
_EXPORTS = {"Citation": "citations", "DumpError": "dump", "WikiPage": "dump", "iter_pages": "dump",
            "Statement": "statements", "StatementConfig": "statements", "StatementExtractor": "statements"}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)


__all__ = ["Citation", "DumpError", "Statement", "StatementConfig", "StatementExtractor", "WikiPage", "iter_pages"]
