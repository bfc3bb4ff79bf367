#!/usr/bin/env python3
"""Runs one pytest file for ctest (python/CMakeLists.txt).

usage: run_pytest.py TEST_FILE [pytest arguments]
Exit status: pytest's; 77 (ctest: skipped) when pytest or NumPy is not installed, or when every
test of the file skipped (test_gpu.py without a GPU), so a skip is never reported as a pass.
"""
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print(f"skipped: {e.name} is not installed (python3 -m pip install pytest numpy scipy)")
    sys.exit(77)


class Outcomes:
    """Counts the tests that ran (passed or failed) and those that skipped."""

    def __init__(self):
        self.ran = 0
        self.skipped = 0

    def pytest_runtest_logreport(self, report):
        if report.when == "call":
            self.ran += 1
        elif report.skipped:
            self.skipped += 1

    def pytest_collectreport(self, report):
        if report.skipped:
            self.skipped += 1


def main():
    outcomes = Outcomes()
    rc = pytest.main(["-q", "-rs", "-p", "no:cacheprovider", *sys.argv[1:]], plugins=[outcomes])
    if rc in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED) and outcomes.ran == 0 \
            and outcomes.skipped > 0:
        print("skipped: every test skipped")
        sys.exit(77)
    sys.exit(int(rc))


# Guarded: a process a test spawns (Dask's LocalCluster) imports this main module again.
if __name__ == "__main__":
    main()
