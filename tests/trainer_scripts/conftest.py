"""Fixtures of the training-script tests (the shared tiny models and datasets are in tests/conftest.py)."""

import datasets
import pytest
import torch


@pytest.fixture(autouse=True)
def _isolated_caches(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf_cache"))


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny matrices: one thread is much faster than two on a busy 2-core machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
