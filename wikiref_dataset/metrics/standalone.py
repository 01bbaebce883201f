"""The project modules that published copies carry as code files, for loading where this package is not installed.

A Hub Space (``evaluate.load("org/duc_rouge")``) and a model folder or repo loaded with ``trust_remote_code=True`` can
only carry Python files that their loaders copy next to the module they import: ``evaluate`` copies the files the
metric module imports relatively (``from .rouge import …``, at the start of a line, not recursively); transformers
copies the relative imports of each code file, recursively. Neither copies a package, so a published copy gets

* the ROUGE engine, the package ``wikiref_dataset/rouge/`` made flat: its ``__init__.py`` as ``rouge.py`` and each
  ``rouge/<module>.py`` as ``_rouge_<module>.py`` (``_rouge_config.py``, ``_rouge_stemmer.py``, …), with their imports
  of each other renamed to match and nothing else changed: the engine imports only itself, relatively
  (:func:`rouge_engine_files`);
* ``_rouge_wordnet_exceptions.py``: the WordNet 2.0 exception map that the stemmer reads from ``wikiref_dataset/data/``
  in the package, as a string constant (code files cannot carry data files), with its licence;
* for a model folder also ``selection.py`` (the selection rules), ``text.py``, ``spacy_components.py`` and
  ``_spacy_import.py`` (the project's one sentence splitter, which needs spaCy and nothing else: a published pipeline
  splits raw text with the rules the training data was split with, and imports it only for raw text);
* the code that uses them, with ``from wikiref_dataset.<module> import …`` rewritten to ``from .<module> import …``
  and ``from wikiref_dataset.rouge.<module> import …`` to ``from ._rouge_<module> import …``
  (:func:`standalone_source`); any other import of the project's packages is refused.

Each module stays in one place in the package; these copies are made when a folder is saved or published.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from . import DUC_ROUGE_PATH

PACKAGE_DIR = Path(__file__).resolve().parents[1]
ENGINE_PACKAGE = "rouge"
"""The ROUGE engine's package in ``wikiref_dataset``, which a published copy carries flat (:func:`engine_modules`)."""
MODEL_MODULES = ("selection", "text", "spacy_components", "_spacy_import")
"""The modules a published model folder carries besides the ROUGE engine (``modeling_qbert.remote_code``)."""
WORDNET_MODULE = "_rouge_wordnet_exceptions"
PROJECT_PACKAGES = ("wikiref_dataset", "modeling_qbert", "trainer_scripts")
_PROJECT_IMPORT = re.compile(r"^(\s*)from\s+wikiref_dataset\.([\w.]+)\s+import\b", flags=re.MULTILINE)
_SIBLING_IMPORT = re.compile(r"^(\s*)from\s+\.(\w+)\s+import\b", flags=re.MULTILINE)


class StandaloneError(ValueError):
    """A code file that would still need this package once published."""


def engine_modules() -> dict[str, Path]:
    """``{module name in a published copy: source file}`` of the ROUGE engine: ``rouge`` for the package's
    ``__init__.py``, ``_rouge_<module>`` for each of its modules."""
    folder = PACKAGE_DIR / ENGINE_PACKAGE
    modules = {ENGINE_PACKAGE: folder / "__init__.py"}
    for path in sorted(folder.glob("*.py")):
        if path.stem != "__init__":
            modules[f"_{ENGINE_PACKAGE}_{path.stem}"] = path
    return modules


ENGINE_MODULES = tuple(engine_modules())
"""The ROUGE engine's module names in a published copy: ``rouge``, ``_rouge_bootstrap``, ``_rouge_config``, …"""
PUBLISHED_MODULES = ENGINE_MODULES + MODEL_MODULES


def published_module(module: str) -> str | None:
    """The name that ``wikiref_dataset.<module>`` has in a published copy (``rouge.counts`` → ``_rouge_counts``,
    ``text`` → ``text``), or ``None`` for a module no copy carries."""
    if module == ENGINE_PACKAGE or module in MODEL_MODULES:
        return module
    package, _, name = module.partition(".")
    flat = f"_{ENGINE_PACKAGE}_{name}"
    return flat if package == ENGINE_PACKAGE and flat in ENGINE_MODULES else None


def wordnet_exceptions_module() -> str:
    """``_rouge_wordnet_exceptions.py``: the packaged exception map as ``WORDNET_EXCEPTIONS`` (the TSV text), with
    the WordNet licence, which must appear on all copies."""
    data = PACKAGE_DIR / "data"
    table = (data / "wordnet-2.0-exceptions.tsv").read_text(encoding="utf-8")
    licence = (data / "WORDNET-LICENSE.txt").read_text(encoding="utf-8").rstrip().splitlines()
    header = ['"""WordNet 2.0 inflection exceptions for the ROUGE-1.5.5 stemmer (``_rouge_stemmer.py``), generated from',
              'wikiref_dataset/data/wordnet-2.0-exceptions.tsv of the wikiref package; licence below."""', ""]
    return "\n".join(header + [f"# {line}".rstrip() for line in licence] + ["", f"WORDNET_EXCEPTIONS = {table!r}", ""])


def _relative_import(match: re.Match[str]) -> str:
    module = published_module(match.group(2))
    return match.group(0) if module is None else f"{match.group(1)}from .{module} import"


def standalone_source(text: str, where: str = "code file") -> str:
    """``text`` with its imports of the published modules (:data:`MODEL_MODULES`, the ROUGE engine and its modules)
    made relative; raises :class:`StandaloneError` if it still imports one of the project's packages outside a ``try``
    block (an import inside ``try`` is an optional one)."""
    text = _PROJECT_IMPORT.sub(_relative_import, text)
    for node in _required_imports(ast.parse(text)):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        for name in names:
            if getattr(node, "level", 0) == 0 and name.split(".")[0] in PROJECT_PACKAGES:
                raise StandaloneError(f"{where}, line {node.lineno}: imports {name}, which a published copy cannot "
                                      f"import (only wikiref_dataset.{ENGINE_PACKAGE} and its modules, "
                                      f"{', '.join(MODEL_MODULES)} are shipped as code files)")
    return text


def _required_imports(node: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    if isinstance(node, ast.Try):
        return []
    found = [node] if isinstance(node, (ast.Import, ast.ImportFrom)) else []
    for child in ast.iter_child_nodes(node):
        found += _required_imports(child)
    return found


def engine_source(path: Path) -> str:
    """One module of the ROUGE engine as its published code file: its imports of its sibling modules
    (``from .counts import …``) renamed to their published names (``from ._rouge_counts import …``). Raises
    :class:`StandaloneError` for a relative import that no published copy could follow (``from .. import``, ``from .
    import x``, a module that is not the engine's)."""
    where = f"wikiref_dataset/{ENGINE_PACKAGE}/{path.name}"

    def rename(match: re.Match[str]) -> str:
        flat = f"_{ENGINE_PACKAGE}_{match.group(2)}"
        return f"{match.group(1)}from .{flat} import" if flat in ENGINE_MODULES else match.group(0)

    text = _SIBLING_IMPORT.sub(rename, path.read_text(encoding="utf-8"))
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.level and (
                node.level > 1 or node.module not in (*ENGINE_MODULES, WORDNET_MODULE)):
            raise StandaloneError(f"{where}, line {node.lineno}: a relative import of {'.' * node.level}"
                                  f"{node.module or ''}, which a flat published copy of the engine cannot follow")
    return standalone_source(text, where)


def rouge_engine_files() -> dict[str, str]:
    """``{file name: source}`` of the engine's code files (:data:`ENGINE_MODULES` and the WordNet module)."""
    files = {f"{name}.py": engine_source(path) for name, path in engine_modules().items()}
    files[f"{WORDNET_MODULE}.py"] = wordnet_exceptions_module()
    return files


def model_module_files() -> dict[str, str]:
    """``{file name: source}`` of every module a published model folder's code may import from this package: the
    ROUGE engine (:func:`rouge_engine_files`) and :data:`MODEL_MODULES`, their project imports made relative."""
    files = {f"{name}.py": standalone_source((PACKAGE_DIR / f"{name}.py").read_text(encoding="utf-8"),
                                             f"wikiref_dataset/{name}.py")
             for name in MODEL_MODULES}
    return {**rouge_engine_files(), **files}


def _first_export(text: str, name: str) -> str:
    """The first name in the ``__all__`` of a module's source."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and any(getattr(target, "id", None) == "__all__" for target in node.targets):
            return ast.literal_eval(node.value)[0]
    raise StandaloneError(f"{name}.py: no __all__ to name an import of it by")


def duc_rouge_space_files(module_name: str = "duc_rouge") -> dict[str, str]:
    """The DUC ROUGE metric as a Space's code files: ``{module_name}.py`` (the module, importing the engine
    relatively) and the engine's files. ``evaluate`` copies only the files the module imports itself, so the
    module also imports every other file of the engine (one name of each, and the WordNet map); no comment may follow
    those import lines (evaluate reads one as a ``# From: URL`` of an external file)."""
    source = (Path(DUC_ROUGE_PATH) / "duc_rouge.py").read_text(encoding="utf-8")
    text = standalone_source(source, "duc_rouge.py")
    last = list(re.finditer(rf"^from \.{ENGINE_PACKAGE} import .*$", text, flags=re.MULTILINE))
    if not last:
        raise StandaloneError(f"duc_rouge.py: no `from wikiref_dataset.{ENGINE_PACKAGE} import …` line to make relative")
    engine = rouge_engine_files()
    imports = [f"from .{name} import {_first_export(engine[f'{name}.py'], name)}"
               for name in ENGINE_MODULES if name != ENGINE_PACKAGE]
    extra = ("\n# evaluate copies only the files this module imports itself: the engine's own imports, for the copy\n"
             + "\n".join(imports + [f"from .{WORDNET_MODULE} import WORDNET_EXCEPTIONS"]))
    end = last[-1].end()
    return {f"{module_name}.py": text[:end] + extra + text[end:], **engine}


__all__ = ["StandaloneError", "standalone_source", "engine_source", "engine_modules", "published_module",
           "rouge_engine_files", "model_module_files", "duc_rouge_space_files", "wordnet_exceptions_module",
           "ENGINE_PACKAGE", "ENGINE_MODULES", "MODEL_MODULES", "PUBLISHED_MODULES", "WORDNET_MODULE"]
