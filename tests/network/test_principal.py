"""ssl.principal.mapping.rules as Kafka's SslPrincipalMapper (its SslPrincipalMapperTest cases),
and a TLS client certificate's principal mapped by a broker's rules."""

from __future__ import annotations

import ssl

import pytest
import trustme

from kafkalite.common.errors import ConfigError
from kafkalite.network.principal import NoMatchingRule, SslPrincipalMapper, parse_rules
from kafkalite.protocol.messages import api_versions
from kafkalite.server.config import BrokerConfig
from tests.support.brokers import running_broker
from tests.support.wire_client import Client


@pytest.mark.parametrize("rules", [
    "DEFAULT",
    "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/",
    "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT",
    "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/",
    "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L",
    "RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U",
    "RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/",
    "RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/",
])
def test_valid_rules(rules: str) -> None:
    assert parse_rules(rules)


@pytest.mark.parametrize("rules", [
    "default", "DEFAUL", "DEFAULT/L", "DEFAULT/U", "RULE:CN=(.*?),OU=ServiceUsers.*/$1",
    "rule:^CN=(.*?),OU=ServiceUsers.*$/$1/", "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U",
    "RULE:^CN=(.*?),OU=ServiceUsers.*$/L", "RULE:^CN=(.*?),OU=ServiceUsers.*$/U",
    "RULE:^CN=(.*?),OU=ServiceUsers.*$/LU",
])
def test_invalid_rules(rules: str) -> None:
    with pytest.raises(ValueError, match="Invalid rule"):
        parse_rules(rules)


def test_mapping_as_kafka() -> None:
    rules = ("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,"
             "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,"
             "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U,"
             "DEFAULT")
    mapper = SslPrincipalMapper(rules)
    assert mapper.name("CN=Duke,OU=ServiceUsers,O=Org,C=US") == "Duke"
    assert mapper.name("CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US") == "duke@sme"
    assert mapper.name("CN=Duke,OU=JavaSoft,O=Sun Microsystems") == "DUKE"
    assert mapper.name("OU=JavaSoft,O=Sun Microsystems,C=US") == "OU=JavaSoft,O=Sun Microsystems,C=US"
    # A reference to a group the pattern does not have stays literal; \ escapes.
    assert SslPrincipalMapper(r"RULE:^CN=(.*)$/$1-$2\$x/").name("CN=a") == "a-$2$x"
    with pytest.raises(NoMatchingRule, match="No rules apply to CN=x"):
        SslPrincipalMapper("RULE:^CN=y$/$0/").name("CN=x")


def test_a_bad_rule_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as info:
        BrokerConfig({"node.id": "1", "ssl.principal.mapping.rules": "RULE:oops"})
    assert info.value.setting == "ssl.principal.mapping.rules"


@pytest.mark.integration
def test_a_client_certificate_principal_is_mapped(tmp_path) -> None:
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1")
    client_cert = ca.issue_cert("client.example", common_name="Client.Example",
                                organization_unit_name="ServiceUsers")
    paths = {n: tmp_path / f"{n}.pem" for n in ("ca", "server", "client")}
    ca.cert_pem.write_to_path(str(paths["ca"]))
    server.private_key_and_cert_chain_pem.write_to_path(str(paths["server"]))
    client_cert.private_key_and_cert_chain_pem.write_to_path(str(paths["client"]))
    props = {"listeners": "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0,SSL://127.0.0.1:0",
             "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,SSL:SSL",
             "ssl.keystore.location": str(paths["server"]), "ssl.truststore.location": str(paths["ca"]),
             "ssl.client.auth": "required",
             "ssl.principal.mapping.rules": "RULE:^CN=([^,]*),OU=ServiceUsers.*$/svc-$1/L,DEFAULT"}
    with running_broker(tmp_path / "logs", **{k.replace(".", "_"): v for k, v in props.items()}) as broker:
        context = ssl.create_default_context(cafile=str(paths["ca"]))
        context.load_cert_chain(str(paths["client"]))
        client = Client("127.0.0.1", broker.bound_port("SSL"))
        client.sock = context.wrap_socket(client.sock, server_hostname="127.0.0.1")
        with client:
            assert client.call(18, 0, api_versions.REQUEST()).error_code == 0
            principals = {c.principal for p in broker.socket_server.processors
                          if p.listener == "SSL" for c in p.connections.values()}
    assert principals == {"User:svc-client.example"}
