import os
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

from gpcbench.fold_server import IDLE_VARIABLE

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture(autouse=True, scope="session")
def _one_blas_thread():
    """Numerical tests run with one BLAS thread: reproducible timings and no oversubscription
    when pytest runs one worker per CPU."""
    with threadpool_limits(1):
        yield


# Fold servers started by the tests' pipeline runs exit soon after their last fold.
os.environ.setdefault(IDLE_VARIABLE, "10")
