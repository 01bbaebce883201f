"""The project modules that published copies carry as code files, for loading where this package is not installed.

A Hub Space (``evaluate.load("org/duc_rouge")``) and a model folder or repo loaded with ``trust_remote_code=True`` can
only carry Python files that their loaders copy next to the module they import: ``evaluate`` copies the files the
metric module imports relatively (``from .rouge import …``, at the start of a line, not recursively); transformers
copies the relative imports of each code file, recursively. So a published copy gets

* ``rouge.py`` and ``_rouge_stemmer.py``: the ROUGE engine's own source, unchanged (it only imports itself
  relatively);
* ``_rouge_wordnet_exceptions.py``: the WordNet 2.0 exception map that ``_rouge_stemmer`` reads from
  ``wikiref_dataset/data/`` in the package, as a string constant (code files cannot carry data files), with its
  licence;
* for a model folder also ``selection.py`` (the selection rules), ``text.py`` and ``_spacy_import.py`` (the project's
  one sentence splitter, which needs spaCy and nothing else: a published pipeline splits raw text with the rules the
  training data was split with, and imports it only for raw text);
* the code that uses them, with ``from wikiref_dataset.<module> import …`` rewritten to ``from .<module> import …``
  (:func:`standalone_source`); any other import of the project's packages is refused.

Each module stays in one place in the package; these copies are made when a folder is saved or published.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from . import DUC_ROUGE_PATH

PACKAGE_DIR = Path(__file__).resolve().parents[1]
ENGINE_MODULES = ("rouge", "_rouge_stemmer")
MODEL_MODULES = ("selection", "text", "_spacy_import")
"""The modules a published model folder carries besides the ROUGE engine (``modeling_qbert.remote_code``)."""
PUBLISHED_MODULES = ENGINE_MODULES + MODEL_MODULES
WORDNET_MODULE = "_rouge_wordnet_exceptions"
PROJECT_PACKAGES = ("wikiref_dataset", "modeling_qbert", "trainer_scripts")
_PUBLISHED_IMPORT = re.compile(r"^(\s*)from\s+wikiref_dataset\.(" + "|".join(PUBLISHED_MODULES) + r")\s+import\b",
                            flags=re.MULTILINE)


class StandaloneError(ValueError):
    """A code file that would still need this package once published."""


def wordnet_exceptions_module() -> str:
    """``_rouge_wordnet_exceptions.py``: the packaged exception map as ``WORDNET_EXCEPTIONS`` (the TSV text), with
    the WordNet licence, which must appear on all copies."""
    data = PACKAGE_DIR / "data"
    table = (data / "wordnet-2.0-exceptions.tsv").read_text(encoding="utf-8")
    licence = (data / "WORDNET-LICENSE.txt").read_text(encoding="utf-8").rstrip().splitlines()
    header = ['"""WordNet 2.0 inflection exceptions for the ROUGE-1.5.5 stemmer (``_rouge_stemmer.py``), generated from',
              'wikiref_dataset/data/wordnet-2.0-exceptions.tsv of the wikiref package; licence below."""', ""]
    return "\n".join(header + [f"# {line}".rstrip() for line in licence] + ["", f"WORDNET_EXCEPTIONS = {table!r}", ""])


def standalone_source(text: str, where: str = "code file") -> str:
    """``text`` with its imports of the published modules (:data:`PUBLISHED_MODULES`) made relative; raises
    :class:`StandaloneError` if it still imports one of the project's packages outside a ``try`` block (an import
    inside ``try`` is an optional one)."""
    text = _PUBLISHED_IMPORT.sub(r"\1from .\2 import", text)
    for node in _required_imports(ast.parse(text)):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        for name in names:
            if getattr(node, "level", 0) == 0 and name.split(".")[0] in PROJECT_PACKAGES:
                raise StandaloneError(f"{where}, line {node.lineno}: imports {name}, which a published copy cannot "
                                      f"import (only {', '.join(PUBLISHED_MODULES)} are shipped as code files)")
    return text


def _required_imports(node: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    if isinstance(node, ast.Try):
        return []
    found = [node] if isinstance(node, (ast.Import, ast.ImportFrom)) else []
    for child in ast.iter_child_nodes(node):
        found += _required_imports(child)
    return found


def rouge_engine_files() -> dict[str, str]:
    """``{file name: source}`` of the engine's code files (:data:`ENGINE_MODULES` and the WordNet module)."""
    files = {f"{name}.py": standalone_source((PACKAGE_DIR / f"{name}.py").read_text(encoding="utf-8"), name)
             for name in ENGINE_MODULES}
    files[f"{WORDNET_MODULE}.py"] = wordnet_exceptions_module()
    return files


def model_module_files() -> dict[str, str]:
    """``{file name: source}`` of every module a published model folder's code may import from this package: the
    ROUGE engine (:func:`rouge_engine_files`) and :data:`MODEL_MODULES`, their project imports made relative."""
    files = {f"{name}.py": standalone_source((PACKAGE_DIR / f"{name}.py").read_text(encoding="utf-8"),
                                             f"wikiref_dataset/{name}.py")
             for name in MODEL_MODULES}
    return {**rouge_engine_files(), **files}


def duc_rouge_space_files(module_name: str = "duc_rouge") -> dict[str, str]:
    """The DUC ROUGE metric as a Space's code files: ``{module_name}.py`` (the module, importing the engine
    relatively) and the engine's files. ``evaluate`` copies only the files the module imports itself, so the
    module also imports the engine's own dependencies (the stemmer and the WordNet map); no comment may follow those
    import lines (evaluate reads one as a ``# From: URL`` of an external file)."""
    source = (Path(DUC_ROUGE_PATH) / "duc_rouge.py").read_text(encoding="utf-8")
    text = standalone_source(source, "duc_rouge.py")
    last = list(re.finditer(r"^from \.rouge import .*$", text, flags=re.MULTILINE))
    if not last:
        raise StandaloneError("duc_rouge.py: no `from wikiref_dataset.rouge import …` line to make relative")
    extra = ("\n# evaluate copies only the files this module imports itself: the engine's own imports, for the copy\n"
             "from ._rouge_stemmer import RougeStemmer\n"
             f"from .{WORDNET_MODULE} import WORDNET_EXCEPTIONS")
    end = last[-1].end()
    return {f"{module_name}.py": text[:end] + extra + text[end:], **rouge_engine_files()}


__all__ = ["StandaloneError", "standalone_source", "rouge_engine_files", "model_module_files", "duc_rouge_space_files",
           "wordnet_exceptions_module", "ENGINE_MODULES", "MODEL_MODULES", "PUBLISHED_MODULES", "WORDNET_MODULE"]
