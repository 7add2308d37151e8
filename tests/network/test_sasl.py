"""The SASL/PLAIN authenticator without I/O: the users file, PLAIN tokens, and the state table
walked by hypothesis."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.network.sasl import (
    API_VERSIONS,
    INVALID_CREDENTIALS,
    SASL_AUTHENTICATE,
    SASL_HANDSHAKE,
    TRANSITIONS,
    IllegalSaslState,
    SaslAuthenticator,
    SaslConfigError,
    SaslState,
    check_plain,
    load_users,
)
from kafkalite.protocol.error_codes import SASL_AUTHENTICATION_FAILED, UNSUPPORTED_SASL_MECHANISM
from kafkalite.protocol.messages import sasl_authenticate, sasl_handshake

USERS = {"alice": "secret", "bob": "b=ob"}


def test_users_file_skips_comments_and_keeps_equals_in_passwords(tmp_path):
    f = tmp_path / "users"
    f.write_text("# users\n\nalice=secret\n  bob = b=ob\n")
    assert load_users(f) == {"alice": "secret", "bob": " b=ob"}


@pytest.mark.parametrize("text, where", [("alice\n", "line 1"), ("ok=1\n=nameless\n", "line 2")])
def test_a_malformed_users_file_names_the_line(tmp_path, text, where):
    f = tmp_path / "users"
    f.write_text(text)
    with pytest.raises(SaslConfigError, match=where):
        load_users(f)


def test_a_missing_users_file_is_a_config_error(tmp_path):
    with pytest.raises(SaslConfigError, match=re.escape("cannot read sasl.plain.users.file")):
        load_users(tmp_path / "absent")


@pytest.mark.parametrize("token, message", [
    (b"\0alice\0wrong", INVALID_CREDENTIALS),
    (b"\0mallory\0secret", INVALID_CREDENTIALS),
    (b"alice\0secret", "expected 3 tokens"),
    (b"\0\0secret", "username not specified"),
    (b"\0alice\0", "password not specified"),
    (b"\0alice\0\xff", "not UTF-8"),
    (b"bob\0alice\0secret", "authorization id"),
])
def test_bad_plain_tokens_get_kafkas_messages(token, message):
    with pytest.raises(ValueError, match=message):
        check_plain(token, USERS)


def test_good_plain_tokens_name_the_user():
    assert check_plain(b"\0alice\0secret", USERS) == "alice"
    assert check_plain(b"bob\0bob\0b=ob", USERS) == "bob"


@given(st.binary(max_size=64))
def test_any_token_is_a_user_or_a_value_error(token):
    try:
        assert check_plain(token, USERS) in USERS
    except ValueError:
        pass


REQUESTS = {
    API_VERSIONS: None,
    SASL_HANDSHAKE: sasl_handshake.REQUEST(mechanism="PLAIN"),
    SASL_AUTHENTICATE: sasl_authenticate.REQUEST(auth_bytes=b"\0alice\0secret"),
    3: None,  # Metadata: never allowed before authentication
}


@given(st.lists(st.sampled_from(sorted(REQUESTS)), max_size=6))
def test_every_sequence_follows_the_transition_table(keys):
    auth = SaslAuthenticator(["PLAIN"], USERS)
    for key in keys:
        expected = TRANSITIONS.get((auth.state, key))
        if expected is None:
            with pytest.raises(IllegalSaslState):
                auth.on_request(key, 1, REQUESTS[key])
            return
        step = auth.on_request(key, 1, REQUESTS[key])
        assert auth.state is expected
        assert step.handlers == (key == API_VERSIONS)
        assert not step.failed
    assert auth.complete == (auth.state is SaslState.COMPLETE)


def test_unknown_mechanism_fails_with_the_enabled_list():
    auth = SaslAuthenticator(["PLAIN"], USERS)
    step = auth.on_request(SASL_HANDSHAKE, 1, sasl_handshake.REQUEST(mechanism="GSSAPI"))
    assert step.failed and step.error_code == UNSUPPORTED_SASL_MECHANISM
    assert step.body.mechanisms == ["PLAIN"]
    assert auth.state is SaslState.FAILED


def test_wrong_password_fails_and_nothing_more_is_allowed():
    auth = SaslAuthenticator(["PLAIN"], USERS)
    auth.on_request(SASL_HANDSHAKE, 1, REQUESTS[SASL_HANDSHAKE])
    step = auth.on_request(SASL_AUTHENTICATE, 1, sasl_authenticate.REQUEST(auth_bytes=b"\0alice\0x"))
    assert step.failed and step.error_code == SASL_AUTHENTICATION_FAILED
    assert step.body.error_message == INVALID_CREDENTIALS
    with pytest.raises(IllegalSaslState):
        auth.on_request(SASL_AUTHENTICATE, 1, REQUESTS[SASL_AUTHENTICATE])


def test_v0_handshake_wants_a_bare_token_not_a_request():
    auth = SaslAuthenticator(["PLAIN"], USERS)
    auth.on_request(SASL_HANDSHAKE, 0, REQUESTS[SASL_HANDSHAKE])
    with pytest.raises(IllegalSaslState):
        auth.on_request(SASL_AUTHENTICATE, 1, REQUESTS[SASL_AUTHENTICATE])
    assert not auth.on_token(b"\0alice\0secret").failed
    assert auth.complete and auth.principal == "User:alice"
    with pytest.raises(IllegalSaslState):
        auth.on_token(b"\0alice\0secret")
