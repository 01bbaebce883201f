"""The pipeline's code files and registration in a saved Q-BERT folder, for loading without this package.

``save_pretrained`` already copies the model's and the processor's code files and writes ``auto_map``, so
``AutoModel`` / ``AutoProcessor`` load a folder or Hub repo with ``trust_remote_code=True`` anywhere. For

    pipeline("query-focused-summarization", model="org/qbert", trust_remote_code=True)

transformers reads ``custom_pipelines`` in ``config.json`` (``{task: {"impl": "module.Class", "pt": [auto
class]}}``), imports ``impl`` from the repo and copies the files it imports relatively, recursively
(``dynamic_module_utils.get_cached_module_file``); every absolute import outside a ``try`` must be an installed
library. :func:`save_pipeline_code` adds that entry and the files: ``pipeline_qfs.py`` and its relative imports
(``inference.py``, ``processing_qbert.py``, …), with their imports of the project's evaluation and text modules made
relative and those modules shipped beside them (``wikiref_dataset.metrics.standalone``): the selection rules
(``selection.py``), the ROUGE engine they count with, and the sentence splitter (``text.py``, which needs spaCy alone,
imported only for documents given as raw text). The code files ``save_pretrained`` copied (``processing_qbert.py``)
get the same relative imports. Every Q-BERT folder the training scripts save goes through it, and
``trainer_scripts/push_to_hub.py`` checks what it publishes the same way.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

PACKAGE_DIR = Path(__file__).resolve().parent
PIPELINE_MODULE = "pipeline_qfs"
_RELATIVE_IMPORT = re.compile(r"^\s*(?:from\s+\.(\S+)\s+import|import\s+\.(\S+)\s*$)", flags=re.MULTILINE)


def relative_imports(text: str) -> list[str]:
    """The module names a code file imports relatively, found as transformers finds them (a line regex, so an
    import inside ``try`` or a function counts too)."""
    return sorted({first or second for first, second in _RELATIVE_IMPORT.findall(text)})


def custom_pipelines() -> dict[str, dict[str, Any]]:
    """The ``custom_pipelines`` entry of ``config.json`` for the query-focused-summarization pipeline."""
    from .pipeline_qfs import TASK, QueryFocusedSummarizationPipeline

    impl = f"{QueryFocusedSummarizationPipeline.__module__.rsplit('.', 1)[-1]}.{QueryFocusedSummarizationPipeline.__name__}"
    return {TASK: {"impl": impl, "pt": ["AutoModel"], "type": "text"}}


def pipeline_code_files() -> dict[str, str]:
    """``{file name: source}`` of the pipeline module and everything it imports relatively, as published: this
    package's files (project imports of the ROUGE engine made relative) and the engine's files."""
    from wikiref_dataset.metrics.standalone import model_module_files, standalone_source

    engine = model_module_files()
    files: dict[str, str] = {}
    pending = [PIPELINE_MODULE]
    while pending:
        name = f"{pending.pop()}.py"
        if name in files:
            continue
        if name in engine:
            files[name] = engine[name]
        elif (PACKAGE_DIR / name).is_file():
            files[name] = standalone_source((PACKAGE_DIR / name).read_text(encoding="utf-8"), f"modeling_qbert/{name}")
        else:
            raise FileNotFoundError(f"{name}: imported by the pipeline's code but neither in modeling_qbert nor among "
                                    "the modules a model folder carries (wikiref_dataset.metrics.standalone)")
        pending += relative_imports(files[name])
    return files


def with_custom_pipelines(config: dict[str, Any]) -> dict[str, Any]:
    """A copy of a ``config.json`` dict with the pipeline's ``custom_pipelines`` entry added."""
    return {**config, "custom_pipelines": {**(config.get("custom_pipelines") or {}), **custom_pipelines()}}


def missing_pipeline_code(folder: str | Path) -> dict[str, str]:
    """The pipeline's code files a saved folder lacks (a code file saved with the model stays: it belongs to those
    weights)."""
    return {name: text for name, text in pipeline_code_files().items() if not (Path(folder) / name).is_file()}


def standalone_code_files(folder: str | Path) -> dict[str, str]:
    """The folder's own code files (``*.py``) that still import a published module of the project absolutely, with
    those imports made relative (``standalone_source``): ``save_pretrained`` copies ``processing_qbert.py`` as it is
    in the package."""
    from wikiref_dataset.metrics.standalone import standalone_source

    changed = {}
    for path in sorted(Path(folder).glob("*.py")):
        original = path.read_text(encoding="utf-8")
        text = standalone_source(original, str(path))
        if text != original:
            changed[path.name] = text
    return changed


def save_pipeline_code(folder: str | Path) -> list[str]:
    """Make a saved Q-BERT folder loadable with ``pipeline(TASK, model=folder, trust_remote_code=True)``, raw text
    included, where this package is not installed: write the pipeline's code files it lacks, make its code files'
    project imports relative and add the ``custom_pipelines`` entry of ``config.json``. Returns the files written."""
    folder = Path(folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    written = []
    for name, text in {**standalone_code_files(folder), **missing_pipeline_code(folder)}.items():
        (folder / name).write_text(text, encoding="utf-8")
        written.append(name)
    (folder / "config.json").write_text(json.dumps(with_custom_pipelines(config), indent=2, sort_keys=True) + "\n",
                                        encoding="utf-8")
    return sorted(written) + ["config.json"]


__all__ = [
    "PIPELINE_MODULE",
    "custom_pipelines",
    "missing_pipeline_code",
    "pipeline_code_files",
    "relative_imports",
    "save_pipeline_code",
    "standalone_code_files",
    "with_custom_pipelines",
]
