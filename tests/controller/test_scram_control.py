"""The controller's SCRAM credentials (controller/scram.py): Kafka's ScramControlManager checks,
the salted keys written to the metadata log (and nothing else) and loaded again, and the pushes a
broker applies."""

from __future__ import annotations

import os

from kafkalite.common.scram import SCRAM_SHA_256, SCRAM_SHA_512
from kafkalite.controller import records as R
from kafkalite.controller.scram import ScramControl
from kafkalite.network.sasl import CredentialCache
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import alter_user_scram_credentials as ausc
from kafkalite.server.handlers.scram import apply_push, describe
from tests.support.fake_raft import MetadataLog

Q = ausc.REQUEST


def upsert(name: str, mechanism: int = 1, iterations: int = 4096, password: str = "pw") -> object:
    m = SCRAM_SHA_256 if mechanism == 1 else SCRAM_SHA_512
    salt = os.urandom(16)
    salted = m.salted_password(password, salt, iterations) if mechanism in (1, 2) else b"x"
    return Q["upsertions"](name=name, mechanism=mechanism, iterations=iterations, salt=salt,
                           salted_password=salted)


def delete(name: str, mechanism: int = 1) -> object:
    return Q["deletions"](name=name, mechanism=mechanism)


def test_checks_as_kafka() -> None:
    control = ScramControl(MetadataLog().store())
    deletions = [delete("ghost"), delete("d"), delete("d", 2), delete("x", 9)]
    upsertions = [upsert(""), upsert("few", iterations=4095), upsert("many", iterations=16385),
                  upsert("bad", mechanism=3), upsert("ok"), upsert("ok", 2), upsert("fine", 2)]
    results, changed = control.alter(Q(deletions=deletions, upsertions=upsertions))
    by_user = {u: (c, m) for u, c, m in results}
    assert by_user == {
        "fine": (E.NONE, None),
        "ghost": (E.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"),
        "d": (E.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"),
        "x": (E.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
        "": (E.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
        "few": (E.UNACCEPTABLE_CREDENTIAL, "Too few iterations"),
        "many": (E.UNACCEPTABLE_CREDENTIAL, "Too many iterations"),
        "bad": (E.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
        "ok": (E.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request"),
    }
    assert changed == ["fine"] and set(control.credentials) == {"fine"}


def test_only_salted_keys_are_stored_and_they_load_again() -> None:
    log = MetadataLog()
    control = ScramControl(log.store())
    u = upsert("alice", 2, 8192, password="very-secret")
    results, _ = control.alter(Q(deletions=[], upsertions=[u]))
    assert results == [("alice", E.NONE, None)]
    expected = SCRAM_SHA_512.credential_from_salted(u.salted_password, u.salt, 8192)
    assert control.credentials == {"alice": {2: expected}}
    assert log.records() == [R.USER_SCRAM_CREDENTIAL_RECORD(
        name="alice", mechanism=2, salt=u.salt, stored_key=expected.stored_key,
        server_key=expected.server_key, iterations=8192)]
    assert not any(u.salted_password in e.data for e in log.entries)
    again = ScramControl(log.store())  # a new active controller
    again.load()
    assert again.credentials == control.credentials
    # Deleting the last mechanism removes the user.
    results, changed = again.alter(Q(deletions=[delete("alice", 2)], upsertions=[]))
    assert results == [("alice", E.NONE, None)] and changed == ["alice"] and again.credentials == {}
    assert log.records()[-1] == R.REMOVE_USER_SCRAM_CREDENTIAL_RECORD(name="alice", mechanism=2)
    assert log.store().load_scram_credentials() == {}


def test_pushes_rebuild_the_brokers_cache() -> None:
    control = ScramControl(MetadataLog().store())
    control.alter(Q(deletions=[], upsertions=[upsert("a", 1), upsert("b", 2)]))
    control.alter(Q(deletions=[], upsertions=[upsert("a", 2)]))
    broker = CredentialCache()
    broker.set("stale", 1, SCRAM_SHA_256.credential("x", b"s", 4096))
    apply_push(broker, control.push_body(None))  # full state: clears first
    assert broker.users() == ["a", "b"]
    assert broker.user("a") == control.credentials["a"] and broker.user("b") == control.credentials["b"]
    control.alter(Q(deletions=[delete("a", 1)], upsertions=[]))
    apply_push(broker, control.push_body(["a"]))  # one user's complete set
    assert set(broker.user("a")) == {2} and broker.users() == ["a", "b"]
    response = describe(broker, ["b", "nobody", "a", "a"])
    got = {r.user: (r.error_code, [(c.mechanism, c.iterations) for c in r.credential_infos])
           for r in response.results}
    assert got == {"b": (E.NONE, [(2, 4096)]), "nobody": (E.RESOURCE_NOT_FOUND, []),
                   "a": (E.DUPLICATE_RESOURCE, [])}
    assert {r.user for r in describe(broker, None).results} == {"a", "b"}
