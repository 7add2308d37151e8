"""SCRAM credentials as the controller keeps them (Kafka's ScramControlManager): checked, stored
as salted keys (salt, StoredKey, ServerKey, iterations; never a password, nor the SaltedPassword
a client sends) and pushed to every broker as AlterUserScramCredentials (see
protocol/messages/alter_user_scram_credentials.py for the push's form). Brokers answer
DescribeUserScramCredentials and authenticate SCRAM logins from what they were pushed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafkalite.common.scram import MECHANISMS_BY_TYPE, ScramCredential
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import alter_user_scram_credentials as ausc

MAX_ITERATIONS = 16384  # ScramControlManager.MAX_ITERATIONS
TWICE = "A user credential cannot be altered twice in the same request"
CLEAR_ALL = ("", 0)  # a pushed deletion (name, mechanism) that clears every credential first

# user -> mechanism type -> credential
Credentials = dict[str, dict[int, ScramCredential]]


def _check_name_and_mechanism(name: str, mechanism: int) -> tuple[int, str] | None:
    if not name:
        return E.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    if mechanism not in MECHANISMS_BY_TYPE:
        return E.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    return None


def check_alter(request: Any, credentials: Mapping[str, Mapping[int, ScramCredential]]
                ) -> tuple[dict[str, Any], dict[str, Any], dict[str, tuple[int, str]]]:
    """Kafka's alterCredentials checks: (user -> deletion, user -> upsertion, user -> error). A
    user named in more than one deletion or upsertion is DUPLICATE_RESOURCE."""
    deletions: dict[str, Any] = {}
    upsertions: dict[str, Any] = {}
    errors: dict[str, tuple[int, str]] = {}
    for d in request.deletions:
        if d.name in errors:
            continue
        if deletions.pop(d.name, None) is not None:
            errors[d.name] = (E.DUPLICATE_RESOURCE, TWICE)
            continue
        error = _check_name_and_mechanism(d.name, d.mechanism)
        if error is None and d.mechanism not in credentials.get(d.name, {}):
            error = (E.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist")
        if error is not None:
            errors[d.name] = error
        else:
            deletions[d.name] = d
    for u in request.upsertions:
        if u.name in errors:
            continue
        if deletions.pop(u.name, None) is not None or upsertions.pop(u.name, None) is not None:
            errors[u.name] = (E.DUPLICATE_RESOURCE, TWICE)
            continue
        error = _check_name_and_mechanism(u.name, u.mechanism)
        if error is None:
            if u.iterations < MECHANISMS_BY_TYPE[u.mechanism].min_iterations:
                error = (E.UNACCEPTABLE_CREDENTIAL, "Too few iterations")
            elif u.iterations > MAX_ITERATIONS:
                error = (E.UNACCEPTABLE_CREDENTIAL, "Too many iterations")
        if error is not None:
            errors[u.name] = error
        else:
            upsertions[u.name] = u
    return deletions, upsertions, errors


class ScramControl:
    """The controller's credentials (read on its event thread; each user's dict replaced whole)."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.credentials: Credentials = {}

    def load(self) -> None:
        self.credentials = self.store.load_scram_credentials()

    def alter(self, request: Any) -> tuple[list[tuple[str, int, str | None]], list[str]]:
        """Apply an AlterUserScramCredentials request: its results (user, error code, message) as
        Kafka orders them (deletions, upsertions, then errors) and the users changed. Raises
        ApiError (NOT_CONTROLLER) if the write fails (nothing changed then)."""
        deletions, upsertions, errors = check_alter(request, self.credentials)
        new: Credentials = {}
        for name, d in deletions.items():
            mine = dict(new.get(name, self.credentials.get(name, {})))
            mine.pop(d.mechanism, None)
            new[name] = mine
        for name, u in upsertions.items():
            mine = dict(new.get(name, self.credentials.get(name, {})))
            mechanism = MECHANISMS_BY_TYPE[u.mechanism]
            mine[u.mechanism] = mechanism.credential_from_salted(u.salted_password, u.salt, u.iterations)
            new[name] = mine
        for name, mine in new.items():
            self.store.set_scram_credentials(name, mine)
        for name, mine in new.items():
            if mine:
                self.credentials[name] = mine
            else:
                self.credentials.pop(name, None)
        results: list[tuple[str, int, str | None]] = [(name, E.NONE, None)
                                                      for name in (*deletions, *upsertions)]
        results += [(name, code, message) for name, (code, message) in errors.items()]
        return results, list(new)

    def push_body(self, users: list[str] | None) -> Any:
        """The push of ``users``' complete credentials (None: every user's, clearing first)."""
        Q = ausc.REQUEST
        deletions = [Q["deletions"](name=CLEAR_ALL[0], mechanism=CLEAR_ALL[1])] if users is None else []
        upsertions = []
        for name in (sorted(self.credentials) if users is None else users):
            mine = self.credentials.get(name, {})
            for mechanism_type in MECHANISMS_BY_TYPE:
                c = mine.get(mechanism_type)
                if c is None:
                    if users is not None:
                        deletions.append(Q["deletions"](name=name, mechanism=mechanism_type))
                    continue
                upsertions.append(Q["upsertions"](
                    name=name, mechanism=mechanism_type, iterations=c.iterations, salt=c.salt,
                    salted_password=c.stored_key + c.server_key))
        return Q(deletions=deletions, upsertions=upsertions)
