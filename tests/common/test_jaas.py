"""Kafka's sasl.jaas.config text (kafkalite/common/jaas.py), with Kafka's own examples."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.common.jaas import JaasConfigError, parse_jaas_config

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"


def test_plain_login_module_with_broker_credentials_and_users() -> None:
    # Kafka's documentation, "Configuring Kafka Brokers" for SASL/PLAIN.
    module = parse_jaas_config(f'''{PLAIN} required
        username="admin"
        password="admin-secret"
        user_admin="admin-secret"
        user_alice="alice-secret";''')
    assert module.class_name == PLAIN and module.flag == "required"
    assert (module.username, module.password) == ("admin", "admin-secret")
    assert module.users == {"admin": "admin-secret", "alice": "alice-secret"}
    assert "admin-secret" not in repr(module)


def test_scram_login_module_unquoted_values_escapes_and_comments() -> None:
    module = parse_jaas_config(
        'org.apache.kafka.common.security.scram.ScramLoginModule REQUIRED /* flag case */ '
        'username=broker // the user\n password="p\\"w\\\\d=;" tokenauth=false;')
    assert module.flag == "required"
    assert module.options == {"username": "broker", "password": 'p"w\\d=;', "tokenauth": "false"}


@pytest.mark.parametrize("text, says", [
    ("", "contains 0 login modules"),
    (f"{PLAIN} required; {PLAIN} required;", "contains 2 login modules"),
    (f"{PLAIN} required username=a", "does not end with ';'"),
    (f"{PLAIN} mandatory username=a;", "invalid control flag"),
    (f"{PLAIN};", "no control flag"),
    (f'{PLAIN} required username "a";', "expected name=value"),
    (f'{PLAIN} required username="a;', "cannot read"),
    ('= required;', "expected a login module class name"),
])
def test_malformed_text_is_refused_saying_why(text: str, says: str) -> None:
    with pytest.raises(JaasConfigError, match=says):
        parse_jaas_config(text)


@given(st.dictionaries(st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True),
                       st.text(st.characters(blacklist_categories=("Cs",)), max_size=20), max_size=5))
def test_quoted_values_round_trip(options: dict[str, str]) -> None:
    def quote(v: str) -> str:
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    text = f"{PLAIN} optional " + " ".join(f"{k}={quote(v)}" for k, v in options.items()) + ";"
    assert dict(parse_jaas_config(text).options) == options
