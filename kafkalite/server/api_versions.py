"""Which apis and versions the broker serves, per listener: the one table behind both the
ApiVersions answer and the Processors' check of every request."""

from __future__ import annotations

from kafkalite.protocol.schema import Versions

# Served on every listener. Only versions the broker implements fully are listed: clients use
# min(their max, our max), so advertising more than is served breaks them.
DATA_PLANE: dict[int, Versions] = {
    3: Versions.parse("0-12"),  # Metadata
    17: Versions.parse("0-1"),  # SaslHandshake (answered by the Processor while authenticating)
    18: Versions.parse("0-4"),  # ApiVersions
    19: Versions.parse("0-7"),  # CreateTopics (NOT_CONTROLLER unless this broker is the controller)
    20: Versions.parse("0-6"),  # DeleteTopics
    36: Versions.parse("0-2"),  # SaslAuthenticate (likewise)
}

# Controller-to-broker requests: advertised and served only on the privileged listener (the
# control plane listener, else the inter-broker one). Advertising them to clients makes e.g.
# kafka-python guess a wrong broker version.
CONTROL: dict[int, Versions] = {
    4: Versions.parse("0-7"),  # LeaderAndIsr
    5: Versions.parse("0-4"),  # StopReplica
    6: Versions.parse("0-8"),  # UpdateMetadata
}


# Brokers' registration and heartbeats: served by the controller, on its privileged listener
# and on the listeners named by controller.listener.names.
MEMBERSHIP: dict[int, Versions] = {
    62: Versions.parse("0-4"),  # BrokerRegistration
    63: Versions.parse("0-1"),  # BrokerHeartbeat
}


def apis_for(listener: str, privileged: bool, is_controller: bool = False,
             controller_listeners: frozenset[str] = frozenset()) -> dict[int, Versions]:
    table = dict(DATA_PLANE)
    if privileged:
        table.update(CONTROL)
    if is_controller and (privileged or listener in controller_listeners):
        table.update(MEMBERSHIP)
    return dict(sorted(table.items()))
