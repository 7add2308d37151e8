"""The report on a real standalone Spark cluster: a Master and a Worker started from the pyspark
package itself on 127.0.0.1, the job run with --master spark://..., the same tables as local mode."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request

import pytest

from kafkalite_bench.ports import free_port
from tests.support.wait import wait_for

from .test_report import _line

pytestmark = [pytest.mark.spark, pytest.mark.integration]


T0 = 1_780_000_000.0


def _spark_class() -> str:
    import pyspark

    return os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-class")


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as r:
            return int(json.loads(r.read()).get("aliveworkers", 0))
    except (OSError, ValueError):
        return 0


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_NO_DAEMONIZE": "1"}
    port, ui, worker_ui = free_port(), free_port(), free_port()
    work = tmp_path_factory.mktemp("spark-work")
    master = subprocess.Popen(
        [_spark_class(), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
         "--port", str(port), "--webui-port", str(ui)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"spark://127.0.0.1:{port}"
    worker = subprocess.Popen(
        [_spark_class(), "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
         "--cores", "1", "--memory", "1g", "--webui-port", str(worker_ui), "--work-dir", str(work)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # The Master's status page lists the Worker once it has registered.
        assert wait_for(lambda: _alive_workers(ui) == 1, timeout=90)
        yield url
    finally:
        for p in (worker, master):
            p.terminate()
        for p in (worker, master):
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)


def test_the_report_on_a_standalone_cluster_matches_local_mode(tmp_path, spark, standalone):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "requests-1-1.jsonl").write_text("".join(
        _line(18, 3, ms, processor=ms % 3, at=T0 + ms) for ms in range(1, 301)))
    local_out, cluster_out = tmp_path / "local", tmp_path / "cluster"
    from kafkalite.jobs import report

    report.run(spark, str(logs), str(local_out), progress=lambda _: None)
    # 2 shuffle partitions, as local mode has (report.session): a cluster keeps Spark's 200, here
    # 200 tasks of almost nothing per shuffle on the Worker's one core (a third of the job's time).
    # Still a multi-partition shuffle; the tables do not depend on the count.
    submit = "--conf spark.sql.shuffle.partitions=2 pyspark-shell"
    done = subprocess.run([sys.executable, "-m", "kafkalite", "report", "--logs", str(logs), "--out",
                           str(cluster_out), "--master", standalone], capture_output=True, text=True,
                          timeout=240, env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1",
                                            "PYSPARK_SUBMIT_ARGS": submit})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "300 requests" in done.stdout
    for name in ("by_api", "per_minute", "slowest", "by_client", "by_processor", "controller_queue"):
        a = spark.read.parquet(str(local_out / name)).collect()
        b = spark.read.parquet(str(cluster_out / name)).collect()
        key = sorted if name != "slowest" else list
        assert key(map(tuple, a)) == key(map(tuple, b)), name
    shutil.rmtree(cluster_out)
