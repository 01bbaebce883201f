"""remote_code.py: the pipeline's code files (ROUGE engine included, no project import left) and its registration in
a saved folder, which `pipeline(TASK, model=folder, trust_remote_code=True)` then loads from the folder's code."""

import json
import shutil

import pytest
from transformers import pipeline

from modeling_qbert import TASK, QBertProcessor, QueryFocusedSummarizationPipeline
from modeling_qbert.remote_code import custom_pipelines, pipeline_code_files, save_pipeline_code
from wikiref_dataset.metrics.standalone import standalone_source

DOCUMENT = ["The king was born in the city.", "A river runs in the city.", "The cat sat on the mat."]
# The ROUGE engine the selection rules count with: the package wikiref_dataset/rouge/ made flat (standalone.py).
ENGINE_FILES = ["_rouge_bootstrap.py", "_rouge_config.py", "_rouge_counts.py", "_rouge_results.py", "_rouge_scorer.py",
                "_rouge_stemmer.py", "_rouge_tokens.py", "_rouge_wordnet_exceptions.py", "rouge.py"]


def test_pipeline_code_files_are_standalone():
    files = pipeline_code_files()
    assert set(files) == {"pipeline_qfs.py", "inference.py", "processing_qbert.py", "configuration_qbert.py",
                          "selection.py", *ENGINE_FILES,
                          "text.py", "spacy_components.py", "_spacy_import.py"}  # the sentence splitter, for raw text
    assert "from .rouge import RougeConfig, RougeScorer" in files["selection.py"]
    assert "from .selection import (\n    BUDGETS,\n    CLUSTER_RULES,\n    ClusterSentences," in files["pipeline_qfs.py"]
    assert "        from .text import default_pipeline" in files["processing_qbert.py"]
    for name, text in files.items():
        assert standalone_source(text, name) == text  # nothing left to rewrite, no project import outside `try`


def test_saved_folder_loads_the_pipeline_from_its_own_code(tiny_qbert_dir, tmp_path):
    shutil.copytree(tiny_qbert_dir, tmp_path, dirs_exist_ok=True)
    saved = QBertProcessor.from_pretrained(tmp_path)
    saved.packing = "sentences"  # as the sentence-encoder recipe saves it: not what the model's config alone gives
    saved.save_pretrained(tmp_path)
    assert "from wikiref_dataset.text import" in (tmp_path / "processing_qbert.py").read_text()  # as save_pretrained
    written = save_pipeline_code(tmp_path)
    assert written == sorted([*ENGINE_FILES, "_spacy_import.py", "inference.py", "pipeline_qfs.py", "processing_qbert.py",
                              "selection.py", "spacy_components.py", "text.py"]) + ["config.json"]
    assert "from .text import default_pipeline" in (tmp_path / "processing_qbert.py").read_text()  # made relative
    assert save_pipeline_code(tmp_path) == ["config.json"]  # twice in a row: nothing left to write
    assert json.loads((tmp_path / "config.json").read_text())["custom_pipelines"] == custom_pipelines()
    remote = pipeline(TASK, model=str(tmp_path), trust_remote_code=True)
    assert type(remote).__module__.startswith("transformers_modules.")
    with pytest.raises(ValueError, match="trust_remote_code=True"):  # transformers' rule for custom pipelines
        pipeline(TASK, model=str(tmp_path))
    # where the package is installed, its class skips the folder's code (as evaluate_duc and summarize_cli do)
    local = pipeline(TASK, model=str(tmp_path), pipeline_class=QueryFocusedSummarizationPipeline)
    assert type(local).__module__ == "modeling_qbert.pipeline_qfs"
    assert type(local.model).__module__ == "modeling_qbert.modeling_qbert"
    # the folder's saved processor serves both (the remote one is another import of the same code file)
    for summarize in (remote, local):
        assert (summarize.processor.packing, summarize.processor.max_length) == ("sentences", 128)
    query = ["The king", "Early life"]
    assert remote(query=query, documents=[DOCUMENT])["summary"] == local(query=query, documents=[DOCUMENT])["summary"]
    text = "Dr. Smith was born in the city. He was king in 1950! A river runs there."  # split by the folder's text.py
    assert remote(query=query, documents=[text]) == local(query=query, documents=[text])
    assert [s["text"] for s in remote(query=query, documents=[text])["sentences"]] == [
        "Dr. Smith was born in the city.", "He was king in 1950!", "A river runs there."]
