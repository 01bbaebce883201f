"""Fixtures shared by the model-side tests."""

import pytest


@pytest.fixture(autouse=True)
def _one_torch_thread(one_thread):
    """Every model-side test runs with one torch thread (``one_thread`` in tests/conftest.py)."""
