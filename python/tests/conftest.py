"""Every PE runs the same tests in the same order (collectives need it):
run as `oshrun -n N python3 -m pytest -p no:cacheprovider python/tests`."""
import numpy as np
import pytest

import shoal


@pytest.fixture(scope="session", autouse=True)
def started():
    shoal.init()
    yield
    shoal.barrier_all()


@pytest.fixture(autouse=True)
def in_step():
    """Each test starts and ends with every PE at the same point."""
    shoal.barrier_all()
    yield
    shoal.barrier_all()


@pytest.fixture
def me():
    return shoal.my_pe()


@pytest.fixture
def npes():
    return shoal.n_pes()


def ring(me, npes, step=1):
    return (me + step) % npes


np.set_printoptions(linewidth=200)
