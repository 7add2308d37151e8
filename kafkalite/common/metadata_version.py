"""Kafka's MetadataVersion (inter.broker.protocol.version) up to 3.9: the releases, how many
internal versions (IVs) each has, and Kafka's parser (MetadataVersion.fromVersionString), in one
place for the settings' validation and the controller's choice of request versions."""

from __future__ import annotations

import re

# Kafka's MetadataVersion up to 3.9: each release and how many internal versions (IVs) it has.
_RELEASE_IVS: dict[str, int] = {
    "0.8.0": 0, "0.8.1": 0, "0.8.2": 0, "0.9.0": 0, "0.10.0": 2, "0.10.1": 3, "0.10.2": 1,
    "0.11.0": 3, "1.0": 1, "1.1": 1, "2.0": 2, "2.1": 3, "2.2": 2, "2.3": 2, "2.4": 2, "2.5": 1,
    "2.6": 1, "2.7": 3, "2.8": 2, "3.0": 2, "3.1": 1, "3.2": 1, "3.3": 4, "3.4": 1, "3.5": 3,
    "3.6": 3, "3.7": 5, "3.8": 1, "3.9": 1,
}
_IBP_RE = re.compile(r"(?P<release>[0-9]+(?:\.[0-9]+)*?)(?:-IV(?P<iv>[0-9]+))?")

IbpKey = tuple[int, int, int, int]


def parse_ibp(text: str) -> IbpKey:
    """An orderable key for an inter.broker.protocol.version as Kafka's MetadataVersion.fromVersionString
    reads it: "3.9", "3.9-IV0", "0.10.2", "2.8.1" (patch ignored); a release without "-IVn" means
    its last internal version ("2.8" is 2.8-IV1). ValueError for anything else."""
    match = _IBP_RE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"unknown inter.broker.protocol.version {text!r}")
    segments = match["release"].split(".")
    keep = 3 if segments[0] == "0" else 2
    release = ".".join(segments[:keep])
    if match["iv"] is not None and len(segments) > keep:
        raise ValueError(f"unknown inter.broker.protocol.version {text!r}")
    ivs = _RELEASE_IVS.get(release)
    if ivs is None:
        raise ValueError(f"unknown inter.broker.protocol.version {text!r}")
    if match["iv"] is None:
        iv = max(ivs - 1, 0)
    else:
        iv = int(match["iv"])
        if iv >= ivs:
            raise ValueError(f"unknown inter.broker.protocol.version {text!r}")
    nums = [int(s) for s in release.split(".")] + [0]
    return nums[0], nums[1], nums[2], iv


def is_metadata_version(text: str) -> bool:
    try:
        parse_ibp(text)
    except ValueError:
        return False
    return True
