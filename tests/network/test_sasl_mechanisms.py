"""The SCRAM and OAUTHBEARER servers in the SaslAuthenticator (no I/O): the exchanges, Kafka's
messages, re-authentication's rules, the session lifetime, and the unsecured JWS validator."""

from __future__ import annotations

import base64
import json

import pytest

from kafkalite.common.scram import SCRAM_SHA_256, SCRAM_SHA_512, ScramClient
from kafkalite.network.sasl import (
    CredentialCache,
    SaslAuthenticator,
    SaslSettings,
    SaslState,
    UnsecuredValidatorOptions,
    session_lifetime_ms,
    validate_unsecured_jws,
)
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.error_codes import SASL_AUTHENTICATION_FAILED, UNSUPPORTED_SASL_MECHANISM
from kafkalite.protocol.messages import sasl_authenticate, sasl_handshake

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")


def cache() -> CredentialCache:
    c = CredentialCache()
    c.set("alice", 1, SCRAM_SHA_256.credential("a-pw", b"salt-a", 4096))
    c.set("alice", 2, SCRAM_SHA_512.credential("a-pw-512", b"salt-b", 8192))
    return c


def authenticator(reauth_ms: int = 0, previous: tuple[str, str] | None = None) -> SaslAuthenticator:
    return SaslAuthenticator(SaslSettings(MECHANISMS, {"bob": "b-pw"}, cache(), reauth_ms), previous=previous)


def handshake(auth: SaslAuthenticator, mechanism: str, version: int = 1):
    return auth.on_request(ApiKey.SASL_HANDSHAKE, version, sasl_handshake.REQUEST(mechanism=mechanism))


def token(auth: SaslAuthenticator, data: bytes, version: int = 2):
    return auth.on_request(ApiKey.SASL_AUTHENTICATE, version, sasl_authenticate.REQUEST(auth_bytes=data))


@pytest.mark.parametrize(("mechanism", "password"), [(SCRAM_SHA_256, "a-pw"), (SCRAM_SHA_512, "a-pw-512")])
def test_scram_takes_two_tokens(mechanism, password) -> None:
    auth = authenticator()
    assert handshake(auth, mechanism.name).body.error_code == 0
    client = ScramClient(mechanism, "alice", password)
    step = token(auth, client.first())
    assert not step.failed and auth.state is SaslState.AUTHENTICATE
    step = token(auth, client.final(step.body.auth_bytes))
    client.verify(step.body.auth_bytes)
    assert auth.complete and auth.principal == "User:alice" and step.body.session_lifetime_ms == 0


def test_scram_with_the_other_mechanisms_password_fails_without_saying_why() -> None:
    auth = authenticator()
    handshake(auth, "SCRAM-SHA-512")
    client = ScramClient(SCRAM_SHA_512, "alice", "a-pw")
    step = token(auth, client.final(token(auth, client.first()).body.auth_bytes))
    assert step.failed and step.error_code == SASL_AUTHENTICATION_FAILED
    assert step.body.error_message == ("Authentication failed during authentication due to invalid "
                                       "credentials with SASL mechanism SCRAM-SHA-512")
    assert step.reason == "Invalid client credentials"  # logged, not sent


def test_scram_over_v0_bare_tokens() -> None:
    auth = authenticator()
    handshake(auth, "SCRAM-SHA-256", version=0)
    client = ScramClient(SCRAM_SHA_256, "alice", "a-pw")
    step = auth.on_token(client.first())
    assert step.token.startswith(b"r=")
    step = auth.on_token(client.final(step.token))
    client.verify(step.token)
    assert auth.complete


def test_session_lifetime_from_connections_max_reauth_ms() -> None:
    auth = authenticator(reauth_ms=60000)
    handshake(auth, "PLAIN")
    step = token(auth, b"\0bob\0b-pw")
    assert step.body.session_lifetime_ms == 60000 and auth.session_lifetime_ms == 60000
    v0 = authenticator(reauth_ms=60000)
    handshake(v0, "PLAIN")
    assert token(v0, b"\0bob\0b-pw", version=0).body.session_lifetime_ms == 0  # v0 cannot say it


def test_session_lifetime_rule() -> None:
    assert session_lifetime_ms(0, None, 1000) == 0
    assert session_lifetime_ms(500, None, 1000) == 500
    assert session_lifetime_ms(0, 3000, 1000) == 2000
    assert session_lifetime_ms(500, 3000, 1000) == 500
    assert session_lifetime_ms(5000, 3000, 1000) == 2000


def test_reauthentication_keeps_mechanism_and_principal() -> None:
    auth = authenticator(previous=("User:bob", "PLAIN"))
    with pytest.raises(Exception, match="unexpected request"):
        auth.on_request(ApiKey.API_VERSIONS, 3, None)
    auth = authenticator(previous=("User:bob", "PLAIN"))
    step = handshake(auth, "SCRAM-SHA-256")
    assert step.failed and step.error_code == UNSUPPORTED_SASL_MECHANISM
    assert "not supported for re-authentication of mechanism 'PLAIN'" in step.reason
    auth = authenticator(previous=("User:alice", "PLAIN"))
    handshake(auth, "PLAIN")
    step = token(auth, b"\0bob\0b-pw")
    assert step.failed
    assert step.body.error_message == ("Cannot change principals during re-authentication from "
                                       "User:alice: User:bob")
    auth = authenticator(previous=("User:bob", "PLAIN"))
    handshake(auth, "PLAIN")
    step = token(auth, b"\0bob\0b-pw")
    assert not step.failed and auth.complete


def test_credential_cache_replaces_users_whole() -> None:
    c = cache()
    before = c.user("alice")
    c.set("alice", 1, None)
    assert set(before) == {1, 2} and set(c.user("alice")) == {2}  # a reader's dict is not changed
    c.set("alice", 2, None)
    assert c.users() == [] and c.get("SCRAM-SHA-512", "alice") is None


# --- OAUTHBEARER ---------------------------------------------------------------------------------

def part(d: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()


def jws(claims: dict, header: dict | None = None, signature: str = "") -> str:
    return f"{part(header or {'alg': 'none'})}.{part(claims)}.{signature}"


NOW_MS = 1_700_000_000_000
OPTIONS = UnsecuredValidatorOptions()


def test_a_good_token() -> None:
    principal, expiry, scope = validate_unsecured_jws(
        jws({"sub": "alice", "iat": 1_699_999_000, "exp": 1_700_000_100, "scope": "a b"}), OPTIONS, NOW_MS)
    assert (principal, expiry, scope) == ("alice", 1_700_000_100_000, ("a", "b"))


@pytest.mark.parametrize(("token", "message"), [
    (jws({"sub": "a", "exp": 1_700_000_100}, header={"alg": "HS256"}), "must have 'none' for an algorithm"),
    (jws({"sub": "a", "exp": 1_700_000_100}, signature="c2ln"), "must not contain a digital signature"),
    (jws({"sub": "a"}), "No expiration time in JWT"),
    (jws({"exp": 1_700_000_100}), "No principal name in JWT claim: sub"),
    (jws({"sub": " ", "exp": 1_700_000_100}), "No principal name in JWT claim: sub"),
    (jws({"sub": "a", "exp": 1_700_000_000}), "was on or after the Expiration Time value"),
    (jws({"sub": "a", "exp": 1_700_000_100, "iat": 1_700_000_050}), "was after the indicated time"),
    (jws({"sub": "a", "exp": 1_699_999_000, "iat": 1_699_999_500}), "on or after the Expiration"),
    ("a.b", "must have 3 dot-separated"),
    ("a..b", "contains '..'"),
    ("!!!.e30.", "malformed"),
])
def test_refused_tokens(token: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        validate_unsecured_jws(token, OPTIONS, NOW_MS)


def test_clock_skew_and_required_scope() -> None:
    token = jws({"sub": "a", "exp": 1_700_000_000, "scope": ["read"]})
    assert validate_unsecured_jws(token, UnsecuredValidatorOptions(allowable_clock_skew_ms=1), NOW_MS)
    with pytest.raises(ValueError, match="missing a required scope") as info:
        validate_unsecured_jws(jws({"sub": "a", "exp": 1_700_000_100, "scope": "read"}),
                               UnsecuredValidatorOptions(required_scope=("write",)), NOW_MS)
    assert info.value.args[1] == "write"


def test_oauthbearer_exchange_and_its_error_answer() -> None:
    auth = authenticator()
    handshake(auth, "OAUTHBEARER")
    step = token(auth, b"n,,\x01auth=Bearer " + jws({"sub": "a"}).encode() + b"\x01\x01")
    assert not step.failed and json.loads(step.body.auth_bytes) == {"status": "invalid_token"}
    step = token(auth, b"\x01")
    assert step.failed and step.body.error_message == '{"status":"invalid_token"}'
    for bad, why in [(b"n,,\x01auth=Basic abc\x01\x01", "Invalid scheme"),
                     (b"n,,\x01foo=bar\x01\x01", "'auth' not specified"),
                     (b"y,,\x01auth=Bearer a\x01\x01", "Invalid OAUTHBEARER client first message")]:
        auth = authenticator()
        handshake(auth, "OAUTHBEARER")
        step = token(auth, bad)
        assert step.failed and why in step.reason
        assert "invalid credentials with SASL mechanism OAUTHBEARER" in step.body.error_message
