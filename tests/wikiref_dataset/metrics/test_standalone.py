"""standalone.py: the ROUGE engine and the DUC ROUGE module as code files for copies published without the package."""

import re

import evaluate
import pytest

from wikiref_dataset.metrics import DUC_ROUGE_PATH
from wikiref_dataset.metrics.standalone import (
    StandaloneError,
    duc_rouge_space_files,
    model_module_files,
    rouge_engine_files,
    standalone_source,
)

PREDICTIONS = ["The children were running.\nThey said it was better.", "Dogs bark at night in the old town."]
REFERENCES = [["The child runs and says it is good.", "Children ran."], ["At night the dogs of the town bark."]]


def test_standalone_source_makes_published_imports_relative_and_refuses_others():
    assert standalone_source("from wikiref_dataset.rouge import RougeConfig\n") == "from .rouge import RougeConfig\n"
    assert standalone_source("from wikiref_dataset.text import default_pipeline\n") == (
        "from .text import default_pipeline\n")  # the sentence splitter travels with model folders
    with pytest.raises(StandaloneError, match="x.py, line 1: imports wikiref_dataset.wikiref.curation"):
        standalone_source("from wikiref_dataset.wikiref.curation import curate\n", "x.py")
    with pytest.raises(StandaloneError, match="imports modeling_qbert"):
        standalone_source("def f():\n    import modeling_qbert\n")
    optional = "try:\n    from wikiref_dataset.oracle import ExtractiveOracle\nexcept ImportError:\n    pass\n"
    assert standalone_source(optional) == optional  # an import inside `try` is optional


def test_model_module_files_need_nothing_but_their_own_files():
    files = model_module_files()
    assert set(files) == {"rouge.py", "_rouge_stemmer.py", "_rouge_wordnet_exceptions.py", "selection.py", "text.py",
                          "_spacy_import.py"}
    for name, text in files.items():
        assert standalone_source(text, name) == text
        imported = set(re.findall(r"^\s*from \.(\S+) import", text, flags=re.MULTILINE))
        assert {f"{module}.py" for module in imported} <= set(files), name  # what transformers copies is there


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
    copy = evaluate.load(str(folder), experiment_id="standalone")
    assert type(copy).__module__.endswith(".duc_rouge") and "metrics" in type(copy).__module__
    expected = evaluate.load(DUC_ROUGE_PATH).compute(predictions=PREDICTIONS, references=REFERENCES, resamples=50)
    assert copy.compute(predictions=PREDICTIONS, references=REFERENCES, resamples=50) == expected
