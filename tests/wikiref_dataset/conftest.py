"""Fixtures shared by the ROUGE engine's tests."""

import pytest


@pytest.fixture(params=["plain", "numpy"])
def rouge_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Force one of the ROUGE scorer's two ways of tokenizing and counting: plain Python (what it uses for a few short
    texts) or numpy (for everything else). Both must give the same numbers."""
    import wikiref_dataset.rouge.counts as counts_module
    import wikiref_dataset.rouge.scorer as scorer_module

    limit = 1 << 40 if request.param == "plain" else 0
    monkeypatch.setattr(scorer_module, "_SMALL_BYTES", limit)  # tokenizing
    monkeypatch.setattr(counts_module, "_SMALL_TOKENS", limit)  # counting
    return request.param
