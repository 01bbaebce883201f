"""Fixtures of the training-script tests (the shared tiny models and datasets are in tests/conftest.py)."""

import datasets
import pytest


@pytest.fixture(autouse=True)
def _isolated_caches(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf_cache"))


@pytest.fixture(autouse=True)
def _one_torch_thread(one_thread):
    """Every training-script test runs with one torch thread (``one_thread`` in tests/conftest.py)."""
