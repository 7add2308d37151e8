"""The ``kafkalite`` command: start-up errors, signals, and ``python -m kafkalite``."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys

import pytest
from click.testing import CliRunner

from kafkalite.cli import main
from kafkalite.server.broker import stop_on_signals
from tests.support.broker_process import BrokerProcess, free_port, wait_exit
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration


def run_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kafkalite", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_python_dash_m_is_the_command():
    out = run_cli("--help")
    assert out.returncode == 0
    assert "broker" in out.stdout and "bench" in out.stdout


@pytest.mark.parametrize(("override", "named"), [
    ("no.such.setting=1", "no.such.setting"),
    ("num.io.threads=zero", "num.io.threads"),
    ("num.network.threads=0", "num.network.threads"),
    ("listeners=NOPE://127.0.0.1:9", "NOPE"),
])
def test_bad_setting_stops_startup_naming_it(tmp_path, override, named):
    result = CliRunner().invoke(main, ["broker", "--override", "node.id=1", "--override",
                                       f"log.dirs={tmp_path}", "--override", override])
    assert result.exit_code != 0
    assert named in result.output


def test_bad_config_file_setting(tmp_path):
    props = tmp_path / "server.properties"
    props.write_text("# a comment\nnode.id=1\nlog.dirs=/tmp/x\nsocket.request.max.byte=5\n")
    result = CliRunner().invoke(main, ["broker", "--config", str(props)])
    assert result.exit_code != 0
    assert "socket.request.max.byte" in result.output


def test_port_in_use_stops_startup(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = run_cli("broker", "--override", "node.id=1", "--override", f"log.dirs={tmp_path}",
                      "--override", f"listeners=PLAINTEXT://127.0.0.1:{port}")
    assert out.returncode != 0
    assert "cannot start the broker" in out.stderr and "in use" in out.stderr


def test_port_zero_binds_a_free_port_and_logs_it(tmp_path):
    b = BrokerProcess(tmp_path, "listeners=PLAINTEXT://127.0.0.1:0")
    try:
        b.wait_started()
        pattern = re.compile(r"Listening on PLAINTEXT://127\.0\.0\.1:(\d+)")
        bound = [m for line in b.lines if (m := pattern.search(line))]
        assert bound and int(bound[0].group(1)) > 0
    finally:
        assert b.stop() == 0


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="Linux's SCHED_BATCH")
@pytest.mark.parametrize("batch", [True, False])
def test_the_broker_threads_run_under_sched_batch_unless_turned_off(tmp_path, batch):
    b = BrokerProcess(tmp_path, f"threads.sched.batch={str(batch).lower()}").wait_started()
    try:
        tids = [int(t) for t in os.listdir(f"/proc/{b.proc.pid}/task")]
        assert len(tids) > 10  # Processors, handlers, the controller's and the log's threads
        want = os.SCHED_BATCH if batch else os.SCHED_OTHER
        assert {os.sched_getscheduler(t) for t in tids} == {want}
    finally:
        assert b.stop() == 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_stops_gracefully(tmp_path, sig):
    b = BrokerProcess(tmp_path).wait_started()
    b.signal(sig)
    assert wait_exit(b.proc, 20) == 0
    b.stop()
    assert any("shut down" in line for line in b.lines)


def test_sigusr1_prints_every_threads_stack_and_the_broker_goes_on(tmp_path):
    with BrokerProcess(tmp_path) as b:
        b.signal(signal.SIGUSR1)
        # One stack per thread (acceptor, processors, handlers...), not only the main thread's.
        dumped = wait_for(lambda: sum(line.startswith("Thread 0x") for line in b.lines) >= 3, timeout=30)
        assert dumped, f"exit code {b.proc.poll()}; output ends with:\n" + "\n".join(b.lines[-40:])
        socket.create_connection(("127.0.0.1", b.port), timeout=5).close()  # still serving
        assert b.proc.poll() is None


def test_second_signal_forces_exit(monkeypatch):
    """In-process: the first SIGTERM asks for a graceful stop, the second exits at once."""
    exits, stops = [], []
    monkeypatch.setattr(os, "_exit", lambda code: exits.append(code))
    with stop_on_signals(lambda: stops.append(1)):
        os.kill(os.getpid(), signal.SIGTERM)
        assert stops == [1] and exits == []
        os.kill(os.getpid(), signal.SIGTERM)
        assert exits == [1]
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL or callable(signal.getsignal(signal.SIGTERM))


def test_free_port_helper_gives_bindable_port():
    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


@pytest.mark.parametrize("group", [(), ("bench",)])
def test_command_summaries_are_whole_sentences(group):
    out = CliRunner().invoke(main, [*group, "--help"], terminal_width=80)
    assert out.exit_code == 0
    commands = out.output.split("Commands:")[1]
    assert "..." not in commands
    # Each summary ends its sentence (wrapped lines continue it).
    summaries = re.split(r"\n  (?=\S)", commands.strip())
    assert len(summaries) >= 4 and all(" ".join(s.split()).endswith(".") for s in summaries)


def test_the_benchmarks_are_installed_as_kafkalite_bench(tmp_path):
    """From outside the repository: bench/ imports by the project's name, and no package called
    plain ``bench`` is installed."""
    found = subprocess.run([sys.executable, "-c", "import importlib.util, kafkalite_bench.cli; "
                            "print(importlib.util.find_spec('bench'))"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (found.returncode, found.stdout.strip()) == (0, "None"), found.stderr
    out = subprocess.run([sys.executable, "-m", "kafkalite", "bench", "--help"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "network-history" in out.stdout


def test_bench_without_its_extra_says_which_to_install(tmp_path):
    # kio is what the codec benchmark imports first; a shadowing package makes it missing.
    (tmp_path / "kio").mkdir()
    (tmp_path / "kio" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'kio'\", name='kio')\n")
    out = subprocess.run([sys.executable, "-m", "kafkalite", "bench", "codec", "--seconds", "0.01"],
                         capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines() == [
        "Error: kafkalite bench needs the bench extra (module 'kio' is missing): "
        "pip install 'kafkalite[bench]'"]
