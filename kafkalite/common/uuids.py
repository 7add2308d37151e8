"""Kafka's UUIDs: the zero UUID (Uuid.ZERO_UUID, "none") and new random ids in Kafka's base64url
form (22 characters, as kafka-storage random-uuid prints them)."""

from __future__ import annotations

import base64
import uuid

ZERO_UUID = uuid.UUID(int=0)


def new_base64_uuid() -> str:
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def uuid_from_base64(value: str) -> uuid.UUID:
    """The UUID of Kafka's base64url form (Uuid.fromString); ValueError if it is not one."""
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (ValueError, TypeError) as e:
        raise ValueError(f"{value!r} is not a base64 UUID") from e
    if len(raw) != 16:
        raise ValueError(f"{value!r} is not a base64 UUID")
    return uuid.UUID(bytes=raw)
