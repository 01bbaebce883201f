"""Fixtures of the web tests: shared data paths, WARC builder, local HTTP server (helpers in web_testing.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from web_testing import LocalServer, WarcBuilder, serve

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "web"
REALDATA = Path(__file__).resolve().parents[4] / "shared" / "realdata"


@pytest.fixture(scope="session")
def web_fixtures() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def realdata() -> Path:
    """``../shared/realdata`` beside the project; tests using it skip when it is absent."""
    if not REALDATA.is_dir():
        pytest.skip("../shared/realdata is not present")
    return REALDATA


@pytest.fixture
def warc_builder() -> Callable[[], WarcBuilder]:
    return WarcBuilder


@pytest.fixture
def local_server() -> Iterator[LocalServer]:
    with serve() as server:
        yield server
