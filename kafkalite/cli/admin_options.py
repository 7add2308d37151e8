"""What the operators' commands share (``kafkalite topics``, ``configs``, ``consumer-groups``,
``leader-election``, ``reassign-partitions``): Kafka's connection options, the admin client they
open, errors as one line and a non-zero exit, and tables printed as Kafka's tools print them.
The admin client (kafkalite/clients/admin.py) is imported only when a command runs."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from kafkalite.common.properties import load_properties_file

if TYPE_CHECKING:
    from kafkalite.clients.admin import AdminClient

# The --command-config properties the admin client acts on (Kafka's client settings).
CLIENT_PROPERTIES = ("client.id", "default.api.timeout.ms", "request.timeout.ms", "security.protocol",
                     "sasl.mechanism", "sasl.jaas.config", "ssl.truststore.location",
                     "ssl.keystore.location", "ssl.key.password", "ssl.endpoint.identification.algorithm",
                     "ssl.truststore.type", "ssl.keystore.type")


def connection_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--bootstrap-server and --command-config, as Kafka's tools name them."""
    f = click.option("--command-config", type=click.Path(dir_okay=False, exists=True), default=None,
                     help="A properties file of admin client settings: client.id, "
                          "default.api.timeout.ms, request.timeout.ms, security.protocol, sasl.mechanism "
                          "(PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), sasl.jaas.config, ssl.truststore.location, "
                          "ssl.keystore.location (PEM), ssl.endpoint.identification.algorithm.")(f)
    return click.option("--bootstrap-server", required=True, metavar="HOST:PORT[,...]",
                        help="The cluster's brokers to connect to (any Kafka-protocol cluster).")(f)


@contextmanager
def admin_client(bootstrap_server: str, command_config: str | None, what: str) -> Iterator[AdminClient]:
    """An AdminClient for the command's run; any error it raises ends the command with one line,
    "Error: " and Kafka's error (its name, then its message), and exit code 1."""
    from kafkalite.clients.admin import AdminClient, AdminError
    from kafkalite.clients.security import client_security_from_properties
    from kafkalite.common.errors import ConfigError

    props = load_properties_file(command_config) if command_config else {}
    unknown = sorted(set(props) - set(CLIENT_PROPERTIES))
    if unknown:
        click.echo(f"WARN: --command-config settings not used: {', '.join(unknown)}", err=True)
    for key in ("ssl.truststore.type", "ssl.keystore.type"):
        if props.get(key, "PEM").upper() != "PEM":
            raise click.ClickException(f"{key}={props[key]}: only PEM stores are supported")
    try:
        security = client_security_from_properties(props)
    except ConfigError as e:
        raise click.ClickException(f"--command-config: {e}") from None
    try:
        client = AdminClient(bootstrap_server, client_id=props.get("client.id", f"kafkalite-{what}-command"),
                             timeout=int(props.get("default.api.timeout.ms", "60000")) / 1000,
                             request_timeout=int(props.get("request.timeout.ms", "30000")) / 1000,
                             security=security)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--bootstrap-server") from None
    try:
        yield client
    except (AdminError, OSError) as e:
        message = str(e) if isinstance(e, AdminError) else f"{type(e).__name__}: {e}"
        raise click.ClickException(message) from None
    finally:
        client.close()


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], widths: Sequence[int] = ()) -> str:
    """Left-aligned columns, one space apart, each as wide as its widest cell (or its minimum in
    ``widths``), the last one unpadded: the tables of kafka-consumer-groups.sh."""
    cells = [[str(c) for c in row] for row in [headers, *rows]]
    width = [max([widths[i] if i < len(widths) else 0, *(len(r[i]) for r in cells)])
             for i in range(len(headers))]
    return "\n".join(" ".join(c.ljust(width[i]) if i < len(row) - 1 else c for i, c in enumerate(row))
                     for row in cells)


def one_action(actions: dict[str, bool]) -> str:
    """The one action flag given (Kafka's "Command must include exactly one action")."""
    chosen = [name for name, on in actions.items() if on]
    if len(chosen) != 1:
        names = ", ".join(f"--{n}" for n in actions)
        raise click.UsageError(f"Command must include exactly one action: {names}")
    return chosen[0]


def topic_partition(topic: str, partition: int) -> str:
    """Kafka's TopicPartition as it prints: ``topic-0``."""
    return f"{topic}-{partition}"
