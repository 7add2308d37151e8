import os

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
