"""Render docs/configuration.md from the settings table.

Regenerate with ``python -m kafkalite.server.config_docs > docs/configuration.md``; a test fails
when the committed file differs from what this renders.
"""

from __future__ import annotations

import sys

from kafkalite.common.config_def import Setting
from kafkalite.server.config import GROUPS, SETTINGS
from kafkalite.storage.config import TOPIC_SETTINGS


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return f"`{text}`" if text else '`""`'


def _default(setting: Setting) -> str:
    if setting.default is None:
        return "null"
    return _code(setting.render(setting.default))


def _name(setting: Setting) -> str:
    parts = [_code(setting.name)]
    if not setting.kafka:
        parts.append("(kafkalite)")
    if setting.aliases:
        parts.append("<br>alias " + ", ".join(_code(a) for a in setting.aliases))
    return " ".join(parts)


TOPIC_LEVEL = """
## Topic-level settings

A topic can override the broker's `log.*` settings for its own logs. The overrides are given when
the topic is created (CreateTopics' configs: `kafka-topics.sh --create --config segment.bytes=1048576`,
confluent-kafka's `NewTopic(..., config={...})`, kafka-python's `NewTopic(topic_configs={...})`)
and checked as Kafka checks them: an unknown name or an invalid value refuses the topic with
`INVALID_CONFIG` and the reason, a null value with `INVALID_REQUEST`. The controller keeps them
with the topic (in its store, through restarts, until the topic is deleted). A broker learns a
topic's overrides from the controller when it first hosts a partition of the topic (LeaderAndIsr
carries none): it asks with DescribeConfigs, 5 seconds at most a try, before the partition's log
is made; the controller's own node reads them directly. A broker that restarts loads its logs
with its defaults and gives them their topic's overrides as soon as the controller's LeaderAndIsr
brings the topic; one that cannot reach the controller makes the log with its defaults (with a
warning) and applies the overrides once it learns them (at the topic's next LeaderAndIsr or
DescribeConfigs). DescribeConfigs on any broker shows
every setting below for a topic, the overrides as `DYNAMIC_TOPIC_CONFIG` and the others with the
broker setting they come from (`DYNAMIC_BROKER_CONFIG` / `DYNAMIC_DEFAULT_BROKER_CONFIG` if changed
while running, `STATIC_BROKER_CONFIG` if set in the broker's configuration, else `DEFAULT_CONFIG`).
AlterConfigs and IncrementalAlterConfigs change a topic's overrides later: the controller stores the
new set and pushes it to every broker, whose logs of the topic take it at once (docs/configs.md).

| Name | Type | Default from | Meaning |
| --- | --- | --- | --- |
"""

BY_HAND = """
## Starting brokers by hand

The controllers form a Raft quorum (KRaft) over the `__cluster_metadata` log; its leader is the
active controller. `controller.quorum.voters` (`id@host:port,...`, each voter's controller
listener) names the voters; a single node with no controller settings is a quorum of one.

- A node runs the controller if `controller.quorum.voters` lists its `node.id` (without voters: if
  `controller.quorum.bootstrap.servers` is empty or names one of its own listeners). Without
  `process.roles` that decides its roles; with it, Kafka's checks apply: a controller must be a
  voter, a broker-only node must not be one and needs voters or bootstrap servers, a controller-only
  node (`process.roles=controller`) has only controller listeners, and in a quorum of several
  voters every voter needs a listener in `controller.listener.names`.
- Brokers find the active controller among the voters (or the bootstrap servers): a voter that is
  not active answers NOT_CONTROLLER and the broker moves on; the active one's id comes with its
  UpdateMetadata. In a quorum of several voters every voter needs the same `cluster.id`.
- On the controller, the listeners named in `controller.listener.names` take the brokers'
  registrations and heartbeats (beside the privileged listener) and are not advertised to clients.
- A broker that has never joined a cluster and has no `cluster.id` adopts the controller's cluster id
  at its first registration and keeps it in `meta.properties` under its first log directory. A broker
  whose `meta.properties` names another cluster than the controller's, or another id than a
  configured `cluster.id`, stops with one line that names both ids and the file.
- A broker prints `is up` once it is registered with the controller; until then it prints that it is
  waiting for the controller at the configured address.

A worked example, three brokers on one machine (each in its own terminal, in any order):

```sh
# Broker 1 runs the controller; its CONTROLLER listener takes the brokers' registrations.
kafkalite broker --override node.id=1 --override log.dirs=/tmp/kl/1 \\
  --override listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093 \\
  --override listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT \\
  --override controller.listener.names=CONTROLLER \\
  --override controller.quorum.bootstrap.servers=127.0.0.1:9093
# Brokers 2 and 3: the same address names another node, so they run no controller. (A quorum of
# three: give every node controller.quorum.voters=1@127.0.0.1:9093,2@...,3@... and a CONTROLLER
# listener, and the same cluster.id.)
kafkalite broker --override node.id=2 --override log.dirs=/tmp/kl/2 \\
  --override listeners=PLAINTEXT://127.0.0.1:9094 \\
  --override controller.quorum.bootstrap.servers=127.0.0.1:9093
kafkalite broker --override node.id=3 --override log.dirs=/tmp/kl/3 \\
  --override listeners=PLAINTEXT://127.0.0.1:9096 \\
  --override controller.quorum.bootstrap.servers=127.0.0.1:9093
```

Broker 2, started first, prints `kafkalite broker 2 is waiting for the controller at
127.0.0.1:9093 ...`; once broker 1 is up, every broker prints `kafkalite broker N is up:
bootstrap.servers=... (cluster id ...)` with the same cluster id, and `kcat -L -b 127.0.0.1:9094`
lists the three brokers with broker 1 as the controller. The controller sends its requests to each
broker's listener of the same name as its own inter-broker listener (here `PLAINTEXT`), so every
broker needs one. The same settings work in `server.properties` files: Kafka's own sample for a
combined node (`process.roles=broker,controller`, `controller.quorum.voters=1@localhost:9093`,
`controller.listener.names=CONTROLLER`) starts a kafkalite controller as it is.
`tests/server/test_started_by_hand.py` runs this example.
"""


def render_markdown() -> str:
    """The whole of docs/configuration.md."""
    out = [
        "# Broker configuration",
        "",
        "<!-- Generated by `python -m kafkalite.server.config_docs > docs/configuration.md`;"
        " do not edit by hand. -->",
        "",
        "The broker reads a Java `.properties` file and `--override key=value` options, later ones",
        "winning. Names, types, defaults and meanings are Apache Kafka's; settings marked *(kafkalite)*",
        "exist only in kafkalite. *null* means unset.",
        "",
        "A Kafka `server.properties` loads as it is: the settings Kafka defines that kafkalite does not",
        "act on (the ones not listed below, such as `log.retention.hours` or",
        "`offsets.topic.replication.factor`, and Kafka's per-listener `listener.name.<listener>.<setting>`",
        "forms) are accepted and listed once at startup, in one warning: `These configurations '[...]'",
        "were supplied but are not used yet.` A name that neither kafkalite nor Kafka defines stops the",
        "broker with an error that suggests the closest name (`did you mean ...?`). Every unknown name",
        "and invalid value of the file and the overrides is reported at once, one a line.",
        "",
        "Types are parsed as Kafka parses them: `list` is comma separated (an empty value is an empty",
        "list); `map` is `key:value` entries separated by commas.",
        "",
        "The update mode is Kafka's (DynamicBrokerConfig): `read-only` settings are read from the",
        "configuration at startup only; `per-broker` ones may also be changed while the broker runs,",
        "with AlterConfigs / IncrementalAlterConfigs of one broker id; `cluster-wide` ones also at the",
        "cluster default (the empty broker name), for every broker at once. See docs/configs.md.",
    ]
    for group, title in GROUPS:
        settings = [s for s in SETTINGS if s.group == group]
        if not settings:
            continue
        out += [
            "",
            f"## {title}",
            "",
            "| Name | Type | Default | Valid values | Update mode | Meaning |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for s in settings:
            valid = s.validator.describe() if s.validator is not None else ""
            out.append(
                f"| {_name(s)} | {s.type} | {_cell(_default(s))} | {_cell(valid)} | {s.update_mode} "
                f"| {_cell(s.doc)} |"
            )
    topic_rows = [
        f"| {_code(t.name)} | {t.type} | {', '.join(_code(n) for n in t.synonym_names)} | {_cell(t.doc)} |"
        for t in TOPIC_SETTINGS
    ]
    return "\n".join(out) + "\n" + TOPIC_LEVEL + "\n".join(topic_rows) + "\n" + BY_HAND


def main() -> None:
    sys.stdout.write(render_markdown())


if __name__ == "__main__":
    main()
