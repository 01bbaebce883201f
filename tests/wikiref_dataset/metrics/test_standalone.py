"""standalone.py: the ROUGE engine and the DUC ROUGE module as code files for copies published without the package."""

import json
import re
import subprocess
import sys
from pathlib import Path

import evaluate
import pytest
from not_installed import prelude

from wikiref_dataset.metrics import DUC_ROUGE_PATH
from wikiref_dataset.metrics.standalone import (
    PROJECT_PACKAGES,
    StandaloneError,
    duc_rouge_space_files,
    engine_source,
    model_module_files,
    rouge_engine_files,
    standalone_source,
)
from wikiref_dataset.rouge import RougeScorer

ENGINE_FILES = {"rouge.py", "_rouge_bootstrap.py", "_rouge_config.py", "_rouge_counts.py", "_rouge_results.py",
                "_rouge_scorer.py", "_rouge_stemmer.py", "_rouge_tokens.py", "_rouge_wordnet_exceptions.py"}
PACKAGE = Path(__file__).resolve().parents[3] / "wikiref_dataset"

PREDICTIONS = ["The children were running.\nThey said it was better.", "Dogs bark at night in the old town."]
REFERENCES = [["The child runs and says it is good.", "Children ran."], ["At night the dogs of the town bark."]]


def test_standalone_source_makes_published_imports_relative_and_refuses_others():
    assert standalone_source("from wikiref_dataset.rouge import RougeConfig\n") == "from .rouge import RougeConfig\n"
    assert standalone_source("from wikiref_dataset.text import default_pipeline\n") == (
        "from .text import default_pipeline\n")  # the sentence splitter travels with model folders
    # the engine's modules have their flat names in a copy (rouge/counts.py is _rouge_counts.py)
    assert standalone_source("from wikiref_dataset.rouge.counts import ngram_counts\n") == (
        "from ._rouge_counts import ngram_counts\n")
    with pytest.raises(StandaloneError, match="imports wikiref_dataset.rouge.nothing"):
        standalone_source("from wikiref_dataset.rouge.nothing import x\n")
    with pytest.raises(StandaloneError, match="x.py, line 1: imports wikiref_dataset.wikiref.curation"):
        standalone_source("from wikiref_dataset.wikiref.curation import curate\n", "x.py")
    with pytest.raises(StandaloneError, match="imports modeling_qbert"):
        standalone_source("def f():\n    import modeling_qbert\n")
    optional = "try:\n    from wikiref_dataset.oracle import ExtractiveOracle\nexcept ImportError:\n    pass\n"
    assert standalone_source(optional) == optional  # an import inside `try` is optional


def test_model_module_files_need_nothing_but_their_own_files():
    files = model_module_files()
    assert set(files) == ENGINE_FILES | {"selection.py", "text.py", "spacy_components.py", "_spacy_import.py"}
    for name, text in files.items():
        assert standalone_source(text, name) == text
        imported = set(re.findall(r"^\s*from \.(\S+) import", text, flags=re.MULTILINE))
        assert {f"{module}.py" for module in imported} <= set(files), name  # what transformers copies is there


def test_engine_files_are_the_package_made_flat():
    files = rouge_engine_files()
    assert set(files) == ENGINE_FILES
    assert files["_rouge_stemmer.py"] == (PACKAGE / "rouge" / "stemmer.py").read_text()  # imports none of its siblings
    init = (PACKAGE / "rouge" / "__init__.py").read_text()
    assert "from .scorer import AnalyzedSummary, RougeScorer, rouge\n" in init
    assert files["rouge.py"] == init.replace("from .", "from ._rouge_")  # only its imports renamed
    assert "from ._rouge_tokens import (\n" in files["_rouge_scorer.py"]


def test_engine_source_refuses_relative_imports_a_flat_copy_cannot_follow(tmp_path):
    for line in ("from ..text import TextPipeline", "from . import counts", "from .nowhere import x"):
        path = tmp_path / "module.py"
        path.write_text(f"def f():\n    {line}\n")
        with pytest.raises(StandaloneError, match="module.py, line 2: a relative import"):
            engine_source(path)


def test_flat_engine_scores_the_same_where_the_package_is_not_installed(tmp_path):
    folder = tmp_path / "copy_of_engine"  # a package of the flat files, imported where wikiref_dataset cannot be
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    for name, text in rouge_engine_files().items():
        (folder / name).write_text(text, encoding="utf-8")
    script = prelude(PROJECT_PACKAGES) + (
        "import json\n"
        "from copy_of_engine.rouge import RougeScorer\n"
        "print('RESULT ' + json.dumps(RougeScorer().evaluate(json.loads(sys.argv[1]), json.loads(sys.argv[2])).to_dict()))\n")
    completed = subprocess.run([sys.executable, "-c", script, json.dumps(PREDICTIONS), json.dumps(REFERENCES)],
                               cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr[-4000:]
    result = json.loads(completed.stdout.split("RESULT ", 1)[1])
    assert result == RougeScorer().evaluate(PREDICTIONS, REFERENCES).to_dict()


def test_wordnet_module_carries_the_map_and_its_licence():
    text = rouge_engine_files()["_rouge_wordnet_exceptions.py"]
    namespace = {}
    exec(text, namespace)
    assert "children\tchild" in namespace["WORDNET_EXCEPTIONS"].splitlines()
    assert "WordNet 2.0 Copyright 2003 by Princeton University" in text


def test_space_module_loads_from_its_files_and_scores_the_same(tmp_path):
    folder = tmp_path / "duc_rouge"
    folder.mkdir()
    for name, text in duc_rouge_space_files().items():
        (folder / name).write_text(text, encoding="utf-8")
    module = (folder / "duc_rouge.py").read_text()
    # evaluate copies only what the module imports itself, from import lines without a trailing comment
    for line in ("from .rouge import RougeScorer", "from ._rouge_stemmer import RougeStemmer",
                 "from ._rouge_wordnet_exceptions import WORDNET_EXCEPTIONS"):
        assert f"\n{line}\n" in module
    imported = set(re.findall(r"^from \.(\w+) import [\w, ]+$", module, flags=re.MULTILINE))
    assert {f"{name}.py" for name in imported} == ENGINE_FILES  # every file of the engine, by the module itself
    copy = evaluate.load(str(folder), experiment_id="standalone")
    assert type(copy).__module__.endswith(".duc_rouge") and "metrics" in type(copy).__module__
    expected = evaluate.load(DUC_ROUGE_PATH).compute(predictions=PREDICTIONS, references=REFERENCES, resamples=50)
    assert copy.compute(predictions=PREDICTIONS, references=REFERENCES, resamples=50) == expected
