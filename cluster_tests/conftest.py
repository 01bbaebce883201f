"""The cluster tests reuse the suite's tiny fixtures (a random tiny BERT, the converted DUC fixture years, a tiny
WikiRef folder) from the conftest files of ``tests/``, loaded by path: ``tests`` is not a package, and an installed
distribution may ship a top-level ``tests`` of its own."""

import importlib.util
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_suite = _load("wikiref_suite_conftest", TESTS / "conftest.py")
_training = _load("wikiref_training_conftest", TESTS / "trainer_scripts" / "conftest.py")
duc_years, one_thread, tiny_bert_dir = _suite.duc_years, _suite.one_thread, _suite.tiny_bert_dir
tiny_wikiref = _training.tiny_wikiref
