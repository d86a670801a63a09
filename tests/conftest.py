"""Hypothesis profiles: "ci" (no deadline, numba JIT on first call would trip one) is the default; "dev" is faster."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", deadline=None, print_blob=True, max_examples=60,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, max_examples=20)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
