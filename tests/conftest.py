import os

import pytest
from hypothesis import HealthCheck, settings

# One profile for everyone: no per-example deadline (the machine is shared and noisy); CI runs
# derandomized so that a failure there reproduces locally with the same examples.
settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=60
)
settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=60,
    derandomize=True, print_blob=True,
)
settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture(scope="session")
def spark():
    """One Spark session (local mode, two cores) for every test that needs one: the job's, and
    the report benchmark's."""
    from kafkalite.jobs.report import session

    s = session("local[2]", app="kafkalite-tests")
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()
