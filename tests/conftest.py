"""Shared test fixtures: where the project's own fixtures and the optional ../shared data live."""

from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED = PROJECT_ROOT.parent / "shared"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="session")
def rouge_golden() -> Path:
    """``../shared/rouge_golden``: the ROUGE-1.5.5 golden vectors; tests using it skip when it is absent."""
    path = SHARED / "rouge_golden"
    if not (path / "items.jsonl").is_file():
        pytest.skip("../shared/rouge_golden is not present")
    return path
