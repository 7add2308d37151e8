"""What ``kafkalite configs`` does once its options are parsed (kafkalite/cli/configs.py): Kafka's
ConfigCommand over kafkalite's AdminClient, printing what kafka-configs.sh prints."""

from __future__ import annotations

from dataclasses import dataclass

import click

from kafkalite.clients.admin import BROKER, BROKER_LOGGER, GROUP, TOPIC, AdminClient, AdminError, ConfigEntry
from kafkalite.common.properties import load_properties_file
from kafkalite.protocol import error_codes as E

RESOURCE_TYPES = {"topics": TOPIC, "brokers": BROKER, "broker-loggers": BROKER_LOGGER, "groups": GROUP}
# What --describe shows without --all: the configs set on the entity itself (Kafka's filter).
DYNAMIC_SOURCE = {"topics": "DYNAMIC_TOPIC_CONFIG", "brokers": "DYNAMIC_BROKER_CONFIG",
                  "broker-loggers": "DYNAMIC_BROKER_LOGGER_CONFIG", "groups": "GROUP_CONFIG"}


@dataclass(frozen=True)
class Entity:
    type: str  # topics, brokers, broker-loggers
    name: str | None  # None: every topic or broker; "" the brokers' cluster-wide default

    @property
    def default(self) -> bool:
        return self.name == ""


def entity(entity_type: str | None, entity_name: str | None, entity_default: bool, topic: str | None,
           broker: str | None, broker_defaults: bool, broker_logger: str | None,
           group: str | None = None) -> Entity:
    """The one entity the options name, checked as Kafka's ConfigCommand checks them."""
    options = (("topics", topic, topic is not None), ("brokers", broker, broker is not None),
               ("brokers", "", broker_defaults), ("broker-loggers", broker_logger, broker_logger is not None),
               ("groups", group, group is not None))
    named = [(t, n) for t, n, given in options if given]
    if entity_type is not None or entity_name is not None or entity_default:
        if entity_type is None:
            raise click.UsageError("--entity-type must be specified with --entity-name or --entity-default")
        if entity_name is not None and entity_default:
            raise click.UsageError("--entity-name and --entity-default exclude each other")
        named.append((entity_type, "" if entity_default else entity_name))
    if len(named) != 1:
        raise click.UsageError("Name exactly one entity: --entity-type (with --entity-name or "
                               "--entity-default), --topic, --broker, --broker-defaults or --broker-logger")
    kind, name = named[0]
    if name == "" and kind != "brokers":
        raise click.UsageError(f"--entity-default is for brokers, not {kind}")
    if kind in ("brokers", "broker-loggers") and name and not name.isdigit():
        raise click.UsageError(f"The entity name for {kind} must be a valid integer broker id, but it "
                               f"is: {name}")
    return Entity(kind, name)


def describe(admin: AdminClient, target: Entity, describe_all: bool) -> None:
    if target.name is not None:
        names = [target.name]
    elif target.type == "topics":
        names = admin.list_topics()
    elif target.type == "brokers":
        names = [str(b) for b in sorted(admin.describe_cluster().brokers)]
    else:
        raise click.UsageError(f"--entity-name is required for {target.type}")
    singular = target.type[:-1]
    for name in names:
        entries = admin.describe_configs(RESOURCE_TYPES[target.type], name)
        if not describe_all:
            wanted = "DYNAMIC_DEFAULT_BROKER_CONFIG" if name == "" else DYNAMIC_SOURCE[target.type]
            entries = [e for e in entries if e.source_name == wanted]
        if name == "":
            click.echo(f"{'All' if describe_all else 'Default'} configs for brokers in the cluster are:")
        else:
            click.echo(f"{'All' if describe_all else 'Dynamic'} configs for {singular} {name} are:")
        for e in sorted(entries, key=lambda e: e.name):
            click.echo(f"  {line(e)}")


def line(e: ConfigEntry) -> str:
    """``name=value sensitive=false synonyms={SOURCE:name=value, ...}`` as kafka-configs.sh prints."""
    from kafkalite.clients.admin import CONFIG_SOURCES

    synonyms = ", ".join(f"{CONFIG_SOURCES.get(source, 'UNKNOWN')}:{name}={_text(value)}"
                         for name, value, source in e.synonyms)
    return f"{e.name}={_text(e.value)} sensitive={str(e.sensitive).lower()} synonyms={{{synonyms}}}"


def _text(value: str | None) -> str:
    return "null" if value is None else value


def configs_to_add(text: str | None, path: str | None) -> dict[str, str]:
    """--add-config's K1=V1,K2=[V2,V3] (a list value's brackets dropped) and --add-config-file's
    properties, as Kafka's parseConfigsToBeAdded reads them."""
    out: dict[str, str] = dict(load_properties_file(path)) if path else {}
    if text:
        for item in _split_outside_brackets(text):
            name, sep, value = item.partition("=")
            if not sep or not name.strip():
                raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--add-config")
            value = value.strip()
            if value.startswith("[") and value.endswith("]"):
                value = value[1:-1]
            out[name.strip()] = value
    return out


def _split_outside_brackets(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(depth - 1, 0)
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def configs_to_delete(text: str | None) -> list[str]:
    return [n.strip() for n in (text or "").split(",") if n.strip()]


def alter(admin: AdminClient, target: Entity, add: dict[str, str], delete: list[str]) -> None:
    if target.name is None:
        raise click.UsageError("--alter needs --entity-name (or, for brokers, --entity-default)")
    if not add and not delete:
        raise click.UsageError("--alter needs --add-config, --add-config-file or --delete-config")
    both = sorted(set(add) & set(delete))
    if both:
        raise click.UsageError(f"Invalid alter: {', '.join(both)} both added and deleted")
    resource = RESOURCE_TYPES[target.type]
    if delete:
        # Kafka's check: only a config set on the entity itself can be deleted.
        wanted = "DYNAMIC_DEFAULT_BROKER_CONFIG" if target.default else DYNAMIC_SOURCE[target.type]
        present = {e.name for e in admin.describe_configs(resource, target.name, synonyms=False)
                   if e.source_name == wanted}
        invalid = [name for name in delete if name not in present]
        if invalid:
            raise AdminError(E.INVALID_CONFIG, f"Invalid config(s): {','.join(invalid)}")
    admin.incremental_alter_configs(resource, target.name, add, delete)
    if target.default:
        click.echo("Completed updating default config for brokers in the cluster.")
    else:
        click.echo(f"Completed updating config for {target.type[:-1]} {target.name}.")
