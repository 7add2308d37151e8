"""The SCRAM math and messages (kafkalite/common/scram.py) against RFC 7677's test vector (the
one Kafka's ScramFormatterTest uses too), Kafka's message grammar, and kafka-python's client."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalite.common import scram
from kafkalite.common.scram import (
    SCRAM_SHA_256,
    SCRAM_SHA_512,
    ClientFinalMessage,
    ClientFirstMessage,
    ScramClient,
    ScramCredential,
    ScramError,
    ScramServer,
    ServerFinalMessage,
    ServerFirstMessage,
)

# RFC 7677 section 3 (user "user", password "pencil").
C1 = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
S1 = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
C2 = (b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
      b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
S2 = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"


def test_rfc7677_client_side() -> None:
    client = ScramClient(SCRAM_SHA_256, "user", "pencil", nonce="rOprNGfwEbeRWgbNEkqO")
    assert client.first() == C1
    assert client.final(S1) == C2
    client.verify(S2)
    with pytest.raises(ScramError, match="Invalid server signature"):
        client.verify(b"v=" + base64.b64encode(b"\0" * 32))


def test_rfc7677_server_side_from_stored_keys_only() -> None:
    credential = SCRAM_SHA_256.credential("pencil", SALT, 4096)
    server = ScramServer(SCRAM_SHA_256, {"user": credential}.get, nonce=SERVER_NONCE)
    assert server.evaluate(C1) == S1
    assert server.evaluate(C2) == S2
    assert server.complete and server.authorization_id == "user"


def test_rfc7677_proof_math() -> None:
    # Kafka's ScramFormatterTest: the stored key recomputed from the proof and the signature.
    first, sf = ClientFirstMessage.parse(C1), ServerFirstMessage.parse(S1)
    final = ClientFinalMessage.parse(C2)
    salted = SCRAM_SHA_256.salted_password("pencil", sf.salt, sf.iterations)
    message = scram.auth_message(first, sf, final)
    assert scram.client_proof(SCRAM_SHA_256, salted, message) == final.proof
    server_key = SCRAM_SHA_256.server_key(salted)
    expected = ServerFinalMessage.parse(S2).server_signature
    assert scram.server_signature(SCRAM_SHA_256, server_key, message) == expected
    stored = SCRAM_SHA_256.stored_key(SCRAM_SHA_256.client_key(salted))
    assert SCRAM_SHA_256.hash(scram.xor(SCRAM_SHA_256.hmac(stored, message), final.proof)) == stored


def test_wrong_password_and_unknown_user_refused_with_kafkas_messages() -> None:
    credential = SCRAM_SHA_256.credential("pencil", SALT, 4096)
    server = ScramServer(SCRAM_SHA_256, {"user": credential}.get)
    client = ScramClient(SCRAM_SHA_256, "user", "wrong")
    challenge = server.evaluate(client.first())
    with pytest.raises(ScramError, match=r"^Invalid client credentials$"):
        server.evaluate(client.final(challenge))
    assert server.failed
    with pytest.raises(ScramError, match=r"^Authentication failed: Invalid user credentials$"):
        ScramServer(SCRAM_SHA_256, {}.get).evaluate(ScramClient(SCRAM_SHA_256, "nobody", "x").first())


def test_server_checks_as_kafka() -> None:
    credential = SCRAM_SHA_512.credential("pw", b"salt", 4096)
    lookup = {"alice": credential, "few": SCRAM_SHA_512.credential("pw", b"s", 100)}.get
    with pytest.raises(scram.ScramAuthenticationError, match="authorization id that is different"):
        ScramServer(SCRAM_SHA_512, lookup).evaluate(b"n,a=bob,n=alice,r=abc")
    with pytest.raises(ScramError, match=r"^Iterations 100 is less than the minimum 4096 for SCRAM-SHA-512$"):
        ScramServer(SCRAM_SHA_512, lookup).evaluate(b"n,,n=few,r=abc")
    with pytest.raises(ScramError, match=r"^Invalid SCRAM client first message format: y,,n=alice,r=abc$"):
        ScramServer(SCRAM_SHA_512, lookup).evaluate(b"y,,n=alice,r=abc")
    with pytest.raises(ScramError, match=r"^Token Authentication failed: Invalid tokenId : alice$"):
        ScramServer(SCRAM_SHA_512, lookup).evaluate(b"n,,n=alice,r=abc,tokenauth=true")
    server = ScramServer(SCRAM_SHA_512, lookup)
    server.evaluate(b"n,a=alice,n=alice,r=abc")  # authzid equal to the user is fine
    with pytest.raises(ScramError, match=r"^Invalid client nonce in the final client message.$"):
        server.evaluate(b"c=biws,r=abcWRONG,p=" + base64.b64encode(b"\0" * 64))


def test_unknown_extensions_are_kept_in_the_auth_message() -> None:
    # Kafka ignores extensions it does not know but rebuilds client-first-bare with them.
    credential = SCRAM_SHA_256.credential("pw", b"salt", 4096)
    client = ScramClient(SCRAM_SHA_256, "u", "pw", extensions={"foo": "bar"})
    assert client.first().endswith(b",foo=bar")
    server = ScramServer(SCRAM_SHA_256, {"u": credential}.get)
    client.verify(server.evaluate(client.final(server.evaluate(client.first()))))
    assert server.complete


def test_sasl_name_escaping() -> None:
    assert scram.sasl_name("a=b,c") == "a=3Db=2Cc"
    assert scram.username("a=3Db=2Cc") == "a=b,c"
    with pytest.raises(ScramError, match="Invalid username"):
        scram.username("a=b")
    credential = SCRAM_SHA_256.credential("pw", b"salt", 4096)
    server = ScramServer(SCRAM_SHA_256, {"we,ird=": credential}.get)
    client = ScramClient(SCRAM_SHA_256, "we,ird=", "pw")
    client.verify(server.evaluate(client.final(server.evaluate(client.first()))))
    assert server.authorization_id == "we,ird="


def test_message_grammar() -> None:
    assert ClientFirstMessage.parse(b"n,,m=x,n=u,r=n1").saslname == "u"  # reserved m= accepted
    assert ClientFirstMessage.parse(b"n,,n=u,r=n1,a=b,c=d").extensions == (("a", "b"), ("c", "d"))
    for bad in (b"p=tls,,n=u,r=n", b"n,,n=u", b"n,,n=u,r=a,b", b"n,,n=u,r=n o"):
        with pytest.raises(ScramError):
            ClientFirstMessage.parse(bad)
    with pytest.raises(ScramError, match="invalid iterations 0"):
        ServerFirstMessage.parse(b"r=n,s=c2FsdA==,i=0")
    with pytest.raises(ScramError):
        ClientFinalMessage.parse(b"c=biws,r=n,p=notbase64!")
    assert ServerFinalMessage.parse(b"e=other-error").error == "other-error"


def test_credential_text_form() -> None:
    credential = SCRAM_SHA_512.credential("pw", b"0123456789", 8192)
    assert ScramCredential.from_text(credential.to_text()) == credential
    assert credential.to_text().startswith("salt=MDEyMzQ1Njc4OQ==,stored_key=")


@settings(max_examples=25, deadline=None)
@given(user=st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7e, exclude_characters=",="),
                    min_size=1, max_size=12),
       password=st.text(min_size=1, max_size=12), sha512=st.booleans())
def test_kafka_python_client_logs_in(user: str, password: str, sha512: bool) -> None:
    """kafka-python's own SCRAM client against the server, for both mechanisms (it does not escape
    , and = in names: Kafka would refuse those too)."""
    from kafka.net.sasl.scram import ScramClient as KafkaPythonScram

    mechanism = SCRAM_SHA_512 if sha512 else SCRAM_SHA_256
    server = ScramServer(mechanism, {user: mechanism.credential(password, b"salty", 4096)}.get)
    client = KafkaPythonScram(user, password, mechanism.name)
    client.process_server_first_message(server.evaluate(client.first_message()))
    client.process_server_final_message(server.evaluate(client.final_message()))
    assert server.authorization_id == user
