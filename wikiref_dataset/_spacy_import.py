"""Import spaCy without letting thinc import torch, where torch is not imported yet and no installed package needs
thinc's torch layers. :mod:`wikiref_dataset.text` imports this module before spaCy.

thinc (spaCy's machine-learning library) imports torch at import time only to offer its torch layers, which the blank
pipeline, the lookup lemmatizer and the CNN pipelines (``en_core_web_sm``) never use. That import was half of the
start-up time of every ``wikiref`` command that reads text (2.2 s of 4.4 s on a 2-core machine) and ~200 MiB in each
build worker. torch itself stays importable afterwards: only thinc's own ``has_torch`` flag is off. Where torch is
already imported (the training scripts), or spacy-transformers / spacy-curated-transformers is installed (transformer
pipelines run through thinc's torch layers), spaCy is imported as usual.
"""

from __future__ import annotations

import importlib.util
import sys

__all__: list[str] = []

TRANSFORMER_PACKAGES = ("spacy_transformers", "spacy_curated_transformers")


def _import_spacy_without_torch() -> None:
    if "spacy" in sys.modules or "torch" in sys.modules:
        return
    if any(importlib.util.find_spec(name) is not None for name in TRANSFORMER_PACKAGES):
        return
    sys.modules["torch"] = None  # type: ignore[assignment]  # `import torch` raises ImportError while this is set
    try:
        import spacy  # noqa: F401
    finally:
        if "torch" in sys.modules and sys.modules["torch"] is None:
            del sys.modules["torch"]


_import_spacy_without_torch()
