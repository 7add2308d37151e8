"""One Spark session for all the job's tests (local mode, two cores, few shuffle partitions)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    from kafkalite.jobs.report import session

    s = session("local[2]", app="kafkalite-tests")
    s.conf.set("spark.sql.shuffle.partitions", "4")
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()
