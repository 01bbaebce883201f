"""Fixtures shared by the model-side tests."""

import pytest
import torch


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny matrices: one thread is much faster than two on a busy 2-core machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
