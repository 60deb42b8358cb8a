"""What the planted zombie needs: a list of children left unreaped on purpose,
and a process that lives past the zombie's grace after its test, even when
that test was its last (pytest reaps nothing, but its exit hands the zombie
to init). pytest_sessionfinish runs after the last test's end, in the process
that ran the tests (pytest, or each pytest-xdist worker)."""
import time

import pytest

_never_waited = []


@pytest.fixture
def never_waited():
    return _never_waited


def pytest_sessionfinish(session):
    if _never_waited:
        time.sleep(2)  # 1 s grace, and a margin
