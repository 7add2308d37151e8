"""Kafka's UUIDs: the zero UUID (Uuid.ZERO_UUID, "none") and new random ids in Kafka's base64url
form (22 characters, as kafka-storage random-uuid prints them)."""

from __future__ import annotations

import base64
import uuid

ZERO_UUID = uuid.UUID(int=0)


def new_base64_uuid() -> str:
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
