"""WikiRef from a Wikipedia dump: pages (:mod:`.dump`), plain text (:mod:`.plaintext`), statements and their
citations (:mod:`.statements`, :mod:`.citations`), the datatrove step (:mod:`.steps`) and the CLI (:mod:`.cli`)."""

from .citations import Citation
from .dump import DumpError, WikiPage, iter_pages
from .statements import Statement, StatementConfig, StatementExtractor

__all__ = ["Citation", "DumpError", "Statement", "StatementConfig", "StatementExtractor", "WikiPage", "iter_pages"]
