"""``kafkalite bench sasl``: SASL handshakes per second on one broker (a ``kafkalite broker``
process), SCRAM-SHA-256 and SCRAM-SHA-512 against PLAIN.

One client thread logs in again and again, each time on a new connection: connect, SaslHandshake
v1, SaslAuthenticate (PLAIN: one token; SCRAM: client-first, client-final, and the server's
signature checked), close. The client computes the SaltedPassword (PBKDF2, the user's
iterations) once and only the proof per login, so that what is timed is the broker's side and
the round trips; a real client pays PBKDF2 at every login (its cost is shown too). The broker
never runs PBKDF2 at login: it keeps StoredKey and ServerKey.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from kafkalite.clients.blocking import BlockingClient
from kafkalite.common.scram import (
    MECHANISMS,
    ClientFinalMessage,
    ClientFirstMessage,
    ScramMechanism,
    ServerFinalMessage,
    ServerFirstMessage,
    auth_message,
    client_proof,
    secure_random_string,
    server_signature,
)
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import alter_user_scram_credentials as ausc
from kafkalite.protocol.messages import sasl_authenticate, sasl_handshake

from .markdown import machine, write_section
from .ports import free_port

Say = Callable[[str], None]
KINDS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
USER, PASSWORD = "bench", "bench-secret"


class _Login:
    """One mechanism's logins against the broker's SASL port."""

    def __init__(self, port: int, mechanism: str, iterations: int) -> None:
        self.port = port
        self.mechanism = mechanism
        self.scram: ScramMechanism | None = MECHANISMS.get(mechanism)
        self.salted: bytes | None = None
        self.iterations = iterations

    def once(self) -> None:
        client = BlockingClient("127.0.0.1", self.port, "sasl-bench", 10)
        try:
            r = client.send_and_receive(ApiKey.SASL_HANDSHAKE, 1,
                                        sasl_handshake.REQUEST(mechanism=self.mechanism))
            if r.error_code:
                raise RuntimeError(f"SaslHandshake: error {r.error_code}")
            if self.scram is None:
                self._authenticate(client, f"\0{USER}\0{PASSWORD}".encode())
            else:
                self._scram(client, self.scram)
        finally:
            client.close()

    def _authenticate(self, client: BlockingClient, token: bytes) -> bytes:
        r = client.send_and_receive(ApiKey.SASL_AUTHENTICATE, 2, sasl_authenticate.REQUEST(auth_bytes=token))
        if r.error_code:
            raise RuntimeError(f"SaslAuthenticate: {r.error_message}")
        return bytes(r.auth_bytes)

    def _scram(self, client: BlockingClient, mechanism: ScramMechanism) -> None:
        first = ClientFirstMessage(USER, secure_random_string())
        server_first = ServerFirstMessage.parse(self._authenticate(client, first.to_bytes()))
        if self.salted is None:  # once: a real client pays this at every login
            self.salted = mechanism.salted_password(PASSWORD, server_first.salt, server_first.iterations)
        final = ClientFinalMessage(first.gs2_header.encode(), server_first.nonce)
        message = auth_message(first, server_first, final)
        proof = client_proof(mechanism, self.salted, message)
        signed = ClientFinalMessage(final.channel_binding, final.nonce, proof)
        answer = ServerFinalMessage.parse(self._authenticate(client, signed.to_bytes()))
        expected = server_signature(mechanism, mechanism.server_key(self.salted), message)
        if answer.server_signature != expected:
            raise RuntimeError("the server's signature does not verify")


def _start_broker(directory: str) -> tuple[subprocess.Popen, int, int]:
    plain_port, sasl_port = free_port(), free_port()
    users = os.path.join(directory, "users.properties")
    with open(users, "w") as f:
        f.write(f"{USER}={PASSWORD}\n")
    overrides = {
        "node.id": "1", "log.dirs": os.path.join(directory, "logs"),
        "listeners": f"PLAINTEXT://127.0.0.1:{plain_port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT",
        "sasl.enabled.mechanisms": ",".join(KINDS), "sasl.plain.users.file": users,
    }
    args = [sys.executable, "-m", "kafkalite", "broker"]
    for k, v in overrides.items():
        args += ["--override", f"{k}={v}"]
    log = open(os.path.join(directory, "broker.log"), "w")
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", sasl_port), timeout=1).close()
            return proc, plain_port, sasl_port
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("the broker did not start") from None
            time.sleep(0.05)


def _create_users(plain_port: int, sasl_port: int, iterations: int) -> None:
    Q = ausc.REQUEST
    upsertions = []
    for name in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        m = MECHANISMS[name]
        salt = os.urandom(24)
        salted = m.salted_password(PASSWORD, salt, iterations)
        upsertions.append(Q["upsertions"](name=USER, mechanism=m.mechanism_type, iterations=iterations,
                                          salt=salt, salted_password=salted))
    client = BlockingClient("127.0.0.1", plain_port, "sasl-bench-admin", 30)
    try:
        # Two upsertions for one user are DUPLICATE_RESOURCE (Kafka's rule): one request each.
        for u in upsertions:
            r = client.send_and_receive(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0,
                                        Q(deletions=[], upsertions=[u]))
            if any(x.error_code for x in r.results):
                raise RuntimeError(f"AlterUserScramCredentials: {r.results}")
    finally:
        client.close()
    deadline = time.monotonic() + 30
    for name in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        while True:  # pushed to the broker's SocketServer when its controller has stored them
            try:
                _Login(sasl_port, name, iterations).once()
                break
            except (RuntimeError, OSError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)


def _measure(login: _Login, seconds: float) -> tuple[float, float]:
    """(logins per second, median ms per login) over ``seconds``."""
    times = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = time.perf_counter()
        login.once()
        times.append(time.perf_counter() - t0)
    return len(times) / sum(times), statistics.median(times) * 1000


def run(seconds: float, rounds: int, iterations: int, write_md: str | None, command: str,
        say: Say = print) -> str:
    results: dict[str, list[tuple[float, float]]] = {k: [] for k in KINDS}
    with tempfile.TemporaryDirectory(prefix="sasl-bench-") as d:
        proc, plain_port, sasl_port = _start_broker(d)
        try:
            _create_users(plain_port, sasl_port, iterations)
            logins = {k: _Login(sasl_port, k, iterations) for k in KINDS}
            for login in logins.values():
                _measure(login, min(seconds, 0.5))  # warm-up
            for r in range(rounds):
                for kind in KINDS if r % 2 == 0 else tuple(reversed(KINDS)):
                    rate, median = _measure(logins[kind], seconds)
                    results[kind].append((rate, median))
                    say(f"round {r + 1}/{rounds} {kind}: {rate:,.0f} logins/s, median {median:.2f} ms")
        finally:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    pbkdf2 = {}
    for name in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        t0 = time.perf_counter()
        MECHANISMS[name].salted_password(PASSWORD, b"0" * 24, iterations)
        pbkdf2[name] = (time.perf_counter() - t0) * 1000
    body = _section(results, seconds, rounds, iterations, pbkdf2, command)
    if write_md:
        write_section(write_md, "sasl", body)
        say(f"wrote {write_md}")
    return body


def _section(results: dict[str, list[tuple[float, float]]], seconds: float, rounds: int, iterations: int,
             pbkdf2: dict[str, float], command: str) -> str:
    text = (f"## SASL: SCRAM-SHA-256 and SCRAM-SHA-512 logins against PLAIN\n\nCommand: `{command}`  \n"
            f"Machine: {machine()}.  \nMeasured: {time.strftime('%Y-%m-%d %H:%M')}. One `kafkalite broker` "
            f"process; one client thread logging in on a new connection each time (connect, "
            f"SaslHandshake v1, SaslAuthenticate: PLAIN one token, SCRAM two with the server's signature "
            f"checked, close) for {seconds:g} s per mechanism, {rounds} rounds in turn, medians. SCRAM "
            f"credentials at {iterations} iterations; the client's PBKDF2 is computed once, not timed "
            "(the broker keeps StoredKey and ServerKey and never runs PBKDF2 at a login).\n\n")
    text += ("| mechanism | logins/s | median ms per login | rate vs PLAIN | median time vs PLAIN |\n"
             "| --- | ---: | ---: | ---: | ---: |\n")
    plain = statistics.median(r for r, _ in results["PLAIN"])
    plain_ms = statistics.median(m for _, m in results["PLAIN"])
    for kind in KINDS:
        rate = statistics.median(r for r, _ in results[kind])
        ms = statistics.median(m for _, m in results[kind])
        text += f"| {kind} | {rate:,.0f} | {ms:.2f} | {rate / plain:.2f}x | {ms / plain_ms:.2f}x |\n"
    load = os.getloadavg()[0]
    text += (f"\nLoad average when written: {load:.1f} (other jobs on the machine make the rates, which "
             "count every slow login, vary more than the medians). "
             "A real SCRAM client also pays PBKDF2 at every login: "
             + ", ".join(f"{k} {v:.1f} ms" for k, v in pbkdf2.items())
             + f" at {iterations} iterations on this machine (Python's hashlib).\n")
    return text
