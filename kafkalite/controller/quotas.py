"""Client quotas in the controller (Kafka's ClientQuotaControlManager): AlterClientQuotas checked
and applied, stored (the ``client_quotas`` table of store.py) and pushed to every broker as
AlterClientQuotas from the controller's client id (controller.py ``_push_quotas``; a broker that
registers gets them all).

An entity is ((type, name), ...) sorted by type, a None name the type's default entity.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Mapping
from typing import Any

from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import alter_client_quotas as acq

USER, CLIENT_ID, IP = "user", "client-id", "ip"
# Kafka's QuotaConfig key types: user and client-id entities, and ip entities.
CLIENT_KEYS: dict[str, str] = {"producer_byte_rate": "long", "consumer_byte_rate": "long",
                               "request_percentage": "double", "controller_mutation_rate": "double"}
IP_KEYS: dict[str, str] = {"connection_creation_rate": "int"}
_MAX = {"short": 2 ** 15 - 1, "int": 2 ** 31 - 1, "long": 2 ** 63 - 1}
_ARTICLE = {"short": "a SHORT", "int": "an INT", "long": "a LONG"}

Entity = tuple[tuple[str, str | None], ...]
PUSH_VERSION = 1  # the AlterClientQuotas version of the pushes


def validate_entity(parts: list[tuple[str, str | None]]) -> tuple[Entity, str | None]:
    """Kafka's validateEntity and configKeysForEntityType: the entity, or an error message."""
    if not parts:
        return (), "Invalid empty client quota entity"
    seen: dict[str, str | None] = {}
    for kind, name in parts:
        if kind in seen:
            return (), f"Invalid client quota entity, duplicate entity entry {kind}"
        if kind not in (USER, CLIENT_ID, IP):
            return (), f"Unhandled client quota entity type: {kind}"
        seen[kind] = name
        if name is not None and not name:
            return (), f"Empty {kind} not supported"
    if IP in seen and len(seen) > 1:
        return (), "Invalid quota entity combination, IP entity should not be combined with User or ClientId"
    ip = seen.get(IP)
    if ip is not None:
        try:
            ipaddress.ip_address(ip)
        except ValueError:
            return (), f"{ip} is not a valid IP or resolvable host."
    return tuple(sorted(seen.items())), None


def keys_for(e: Entity) -> dict[str, str]:
    return IP_KEYS if any(k == IP for k, _ in e) else CLIENT_KEYS


def validate_value(keys: Mapping[str, str], key: str, value: float) -> str | None:
    """Kafka's validateQuotaKeyValue: an error message, or None."""
    kind = keys.get(key)
    if kind is None:
        return f"Invalid configuration key {key}"
    if not value > 0.0:
        return f"Quota {key} must be greater than 0"
    if kind == "double":
        return None
    if value > _MAX[kind]:
        return f"Proposed value for {key} is too large for {_ARTICLE[kind]}."
    if math.isinf(value) or abs(math.fmod(value, 1.0)) > 1e-6:
        return f"{key} cannot be a fractional value."
    return None


class ClientQuotaControl:
    """The quotas the controller stores: entity -> {key: value}."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.entities: dict[Entity, dict[str, float]] = {}

    def load(self) -> None:
        self.entities = self.store.load_client_quotas()

    def alter(self, entries: list[tuple[list[tuple[str, str | None]], list[tuple[str, float, bool]]]],
              validate_only: bool) -> tuple[list[tuple[int, str | None]], dict[Entity, dict[str, float]]]:
        """Each entry (entity, [(key, value, remove)]) checked and, unless ``validate_only``,
        applied and stored: the (error code, message) of each, and the changed entities' new sets."""
        results: list[tuple[int, str | None]] = []
        changed: dict[Entity, dict[str, float]] = {}
        for parts, ops in entries:
            alterations: dict[str, float | None] = {}
            e, error = validate_entity(parts)
            if error is None:
                keys = keys_for(e)
                for key, value, remove in ops:
                    if key in alterations:
                        error = f"Duplicate quota key {key} not updating quota for this entity {render(e)}"
                        break
                    alterations[key] = None if remove else value
                    if not remove and value is not None:
                        error = validate_value(keys, key, value)
                        if error is not None:
                            break
            if error is not None:
                results.append((E.INVALID_REQUEST, error))
                continue
            results.append((E.NONE, None))
            if validate_only:
                continue
            current = dict(changed.get(e, self.entities.get(e, {})))
            new = dict(current)
            for key, altered in alterations.items():
                if altered is None:
                    new.pop(key, None)
                else:
                    new[key] = altered
            if new != current:
                changed[e] = new
        for e, values in changed.items():
            self.store.set_client_quotas(e, values)
            if values:
                self.entities[e] = values
            else:
                self.entities.pop(e, None)
        return results, changed

    def push_body(self, sets: Mapping[Entity, Mapping[str, float]]) -> Any:
        """AlterClientQuotas with each entity's complete set: its keys set, every other removed."""
        Q = acq.REQUEST
        op, ent = Q["entries"]["ops"], Q["entries"]["entity"]
        entries = []
        for e, values in sets.items():
            keys = keys_for(e)
            ops = [op(key=k, value=float(v), remove=False) for k, v in sorted(values.items())]
            ops += [op(key=k, value=0.0, remove=True) for k in sorted(keys) if k not in values]
            entries.append(Q["entries"](entity=[ent(entity_type=t, entity_name=n) for t, n in e], ops=ops))
        return Q(entries=entries, validate_only=False)


def render(e: Entity) -> str:
    return "ClientQuotaEntity(entries={" + ", ".join(f"{t}={n}" for t, n in e) + "})"
