"""20 tests of 0.1 s each: about 2 s of test time, no dependencies besides pytest."""
import time

import pytest


@pytest.mark.parametrize("i", range(20))
def test_sleep(i):
    time.sleep(0.1)
    assert i >= 0
