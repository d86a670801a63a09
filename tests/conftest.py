"""Hypothesis profiles: "ci" (no deadline, numba JIT on first call would trip one) is the default; "dev" is faster.
Session fixtures hold what several full-lane tests price from the shipped rows once (each took 25 s a test, which
put the suite past 10 minutes on 2 cores: 607 s of pytest on 2026-12-06): read them, never change them."""

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", deadline=None, print_blob=True, max_examples=60,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, max_examples=20)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

MAX_WORKERS = 4     # each worker prices the session fixtures and compiles the numba kernels once


def pytest_xdist_auto_num_workers(config) -> int:
    """Workers for `-n auto` (pyproject addopts): the CPUs this process may run on, at most MAX_WORKERS. xdist's own
    count is the host's physical cores (psutil), which ignores a container's CPU set: a 2-CPU container on a large
    host would start one worker per host core (found by review)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(MAX_WORKERS, cpus))


@pytest.fixture(scope="session")
def shipped_prepared():
    """The shipped rows as the joint fit prepares them (calibration.usable(load_rows())): the rows it can price and
    why the others are left out."""
    from simulator.calibration import usable
    from simulator.validation import load_rows
    return usable(load_rows())


@pytest.fixture(scope="session")
def shipped_report():
    """The in-sample validation of the shipped rows (`specroof validate`'s report)."""
    from simulator import validate
    return validate()
