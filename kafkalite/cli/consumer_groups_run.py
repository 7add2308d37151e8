"""What ``kafkalite consumer-groups`` does once its options are parsed (kafkalite/cli/
consumer_groups.py): Kafka's ConsumerGroupCommand over kafkalite's AdminClient, printing the
tables kafka-consumer-groups.sh prints."""

from __future__ import annotations

import datetime
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

import click

from kafkalite.cli.admin_options import table, topic_partition
from kafkalite.clients.admin import EARLIEST, LATEST, AdminClient, AdminError, GroupInfo
from kafkalite.protocol import error_codes as E

MISSING = "-"  # Kafka's MISSING_COLUMN_VALUE
INACTIVE = ("Empty", "Dead")  # the states in which a group's offsets may be reset
REBALANCING = ("PreparingRebalance", "CompletingRebalance", "AssigningRebalance", "Reconciling")

TP = tuple[str, int]
OFFSET_COLUMNS = ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID",
                  "HOST", "CLIENT-ID")


def list_groups(admin: AdminClient, state: str | None) -> None:
    listed = admin.list_groups()
    if state is None:
        for g in listed:
            click.echo(g.group_id)
        return
    wanted = {s.strip().lower() for s in state.split(",") if s.strip()}
    rows = [(g.group_id, g.state) for g in listed if not wanted or g.state.lower() in wanted]
    click.echo(table(("GROUP", "STATE"), rows))


def _describable(admin: AdminClient, group: str) -> GroupInfo | None:
    info = admin.describe_group(group)
    if info.state == "Dead":
        click.echo(f"Error: Consumer group '{group}' does not exist.", err=True)
        return None
    return info


def describe(admin: AdminClient, groups: Sequence[str], what: str) -> bool:
    """Print each group's offsets, members or state; False when one does not exist."""
    ok = True
    for group in groups:
        info = _describable(admin, group)
        if info is None:
            ok = False
            continue
        if what == "state":
            c = info.coordinator
            click.echo("")
            click.echo(table(("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"),
                             [(group, f"{c.host}:{c.port}  ({c.node_id})", info.protocol, info.state,
                               len(info.members))], (0, 0, 20, 15)))
            continue
        _say_state(info)
        if what == "members":
            rows = [(group, m.member_id, m.host, m.client_id, len(m.assignment)) for m in info.members]
            if rows:
                click.echo("")
                click.echo(table(("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"), rows))
            continue
        click.echo("")
        click.echo(table(OFFSET_COLUMNS, offset_rows(admin, info), (0, 0, 10, 15, 15, 15)))
    return ok


def _say_state(info: GroupInfo) -> None:
    if info.state in REBALANCING:
        click.echo(f"\nWarning: Consumer group '{info.group_id}' is rebalancing.")
    elif not info.members:
        click.echo(f"\nConsumer group '{info.group_id}' has no active members.")


def offset_rows(admin: AdminClient, info: GroupInfo) -> list[tuple[object, ...]]:
    """kafka-consumer-groups.sh --describe's rows: each member's partitions (the members with the
    most partitions first), then the partitions with a committed offset but no member."""
    committed = admin.list_group_offsets(info.group_id)
    owners: dict[TP, tuple[str, str, str]] = {}
    for m in sorted(info.members, key=lambda m: -len(m.assignment)):
        for tp in sorted(m.assignment):
            owners[tp] = (m.member_id, m.host, m.client_id)
    partitions = sorted(owners.keys() | committed.keys())
    ends = admin.list_offsets({tp: LATEST for tp in partitions}) if partitions else {}
    rows: list[tuple[object, ...]] = []
    for tp in [*(tp for tp in partitions if tp in owners), *(tp for tp in partitions if tp not in owners)]:
        current = committed.get(tp)
        end = ends.get(tp, -1)
        lag = end - current if current is not None and end >= 0 else None
        member = owners.get(tp, (MISSING, MISSING, MISSING))
        rows.append((info.group_id, tp[0], tp[1], MISSING if current is None else current,
                     MISSING if end < 0 else end, MISSING if lag is None else lag, *member))
    return rows


def delete(admin: AdminClient, groups: Sequence[str]) -> bool:
    results = admin.delete_groups(groups)
    done = [g for g, e in results.items() if e is None]
    failed = {g: e for g, e in results.items() if e is not None}
    quoted = ", ".join(f"'{g}'" for g in done)
    if not failed:
        click.echo(f"Deletion of requested consumer groups ({quoted}) was successful.")
        return True
    click.echo("Error: Deletion of some consumer groups failed:", err=True)
    for g, e in failed.items():
        click.echo(f"* Group '{g}' could not be deleted due to: {e}")
    if done:
        click.echo(f"\nThese consumer groups were deleted successfully: {quoted}")
    return False


# --- reset offsets ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Strategy:
    name: str  # to-earliest, to-latest, to-current, to-offset, to-datetime, by-duration, shift-by
    number: int | None = None  # --to-offset's offset, --shift-by's shift
    text: str | None = None  # --to-datetime's time, --by-duration's duration


_DATETIME = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d{3})"
                       r"(Z|[+-]\d\d(?::?\d\d)?)?")
_DURATION = re.compile(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?")


def parse_datetime(text: str) -> int:
    """Kafka's Utils.getDateTime: yyyy-MM-dd'T'HH:mm:ss.SSS with an optional zone (Z, +hh, +hhmm,
    +hh:mm), UTC without one; epoch milliseconds."""
    m = _DATETIME.fullmatch(text.strip())
    if m is None:
        raise click.BadParameter(f"{text!r} is not YYYY-MM-DDTHH:mm:SS.sss[zone]", param_hint="--to-datetime")
    year, month, day, hour, minute, second, millis = (int(g) for g in m.groups()[:7])
    zone = m.group(8) or "Z"
    offset = datetime.timedelta(0)
    if zone != "Z":
        digits = zone[1:].replace(":", "")
        offset = datetime.timedelta(hours=int(digits[:2]), minutes=int(digits[2:] or 0))
        if zone[0] == "-":
            offset = -offset
    try:
        when = datetime.datetime(year, month, day, hour, minute, second, millis * 1000,
                                 tzinfo=datetime.timezone(offset))
    except ValueError as e:
        raise click.BadParameter(f"{text!r}: {e}", param_hint="--to-datetime") from None
    return int(when.timestamp() * 1000)


def parse_duration(text: str) -> int:
    """An ISO-8601 duration (PnDTnHnMnS) in milliseconds."""
    m = _DURATION.fullmatch(text.strip().upper())
    if m is None or text.strip().upper() in ("P", "PT"):
        raise click.BadParameter(f"{text!r} is not an ISO-8601 duration (PnDTnHnMnS)",
                                 param_hint="--by-duration")
    days, hours, minutes, seconds = (float(g) if g else 0.0 for g in m.groups())
    return int((((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000)


def reset(admin: AdminClient, groups: Sequence[str], topics: Sequence[str], strategy: Strategy,
          execute: bool) -> bool:
    """Compute (and with ``execute`` commit) each group's new offsets, printing them; False when a
    group is active (Kafka resets only Empty or Dead groups)."""
    ok = True
    plans: dict[str, dict[TP, int]] = {}
    for group in groups:
        info = admin.describe_group(group)
        if info.state not in INACTIVE:
            click.echo(f"Error: Assignments can only be reset if the group '{group}' is inactive, but "
                       f"the current state is {info.state}.", err=True)
            ok = False
            continue
        committed = admin.list_group_offsets(group)
        partitions = _partitions(admin, topics, committed)
        plan = plan_offsets(admin, partitions, committed, strategy)
        if execute and plan:
            admin.alter_group_offsets(group, plan)
        plans[group] = plan
    rows = [(g, t, p, o) for g, plan in plans.items() for (t, p), o in sorted(plan.items())]
    if rows:
        click.echo("")
        click.echo(table(("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"), rows, (30, 30, 10, 15)))
    return ok


def _partitions(admin: AdminClient, topics: Sequence[str], committed: dict[TP, int]) -> list[TP]:
    if not topics:
        return sorted(committed)
    out: list[TP] = []
    named: dict[str, list[int] | None] = {}
    for item in topics:
        name, _, listed = item.partition(":")
        try:
            named[name] = [int(p) for p in listed.split(",")] if listed else None
        except ValueError:
            raise click.BadParameter(f"{item!r} is not TOPIC[:P1,P2]", param_hint="--topic") from None
    known = admin.describe_topics([n for n, ps in named.items() if ps is None]) if any(
        ps is None for ps in named.values()) else {}
    for name, ps in named.items():
        out += [(name, p) for p in (ps if ps is not None else sorted(known[name].partitions))]
    return sorted(set(out))


def plan_offsets(admin: AdminClient, partitions: Sequence[TP], committed: dict[TP, int],
                 strategy: Strategy) -> dict[TP, int]:
    """The new offset of each partition, as Kafka's prepareOffsetsToReset computes it."""
    if not partitions:
        return {}
    name = strategy.name
    if name == "to-earliest":
        return admin.list_offsets({tp: EARLIEST for tp in partitions})
    if name == "to-latest":
        return admin.list_offsets({tp: LATEST for tp in partitions})
    if name == "to-current":
        missing = [tp for tp in partitions if tp not in committed]
        ends = admin.list_offsets({tp: LATEST for tp in missing}) if missing else {}
        return {tp: committed[tp] if tp in committed else ends[tp] for tp in partitions}
    if name in ("to-datetime", "by-duration"):
        assert strategy.text is not None
        if name == "to-datetime":
            when = parse_datetime(strategy.text)
        else:
            when = int(time.time() * 1000) - parse_duration(strategy.text)
        found = admin.list_offsets({tp: when for tp in partitions})
        ends = admin.list_offsets({tp: LATEST for tp in partitions if found[tp] < 0}) if any(
            o < 0 for o in found.values()) else {}
        return {tp: found[tp] if found[tp] >= 0 else ends[tp] for tp in partitions}
    assert strategy.number is not None
    if name == "shift-by":
        missing = [tp for tp in partitions if tp not in committed]
        if missing:
            raise AdminError(E.INVALID_REQUEST, f"Cannot shift offset for partition "
                                                f"{topic_partition(*missing[0])} since there is no current "
                                                "committed offset")
        wanted = {tp: committed[tp] + strategy.number for tp in partitions}
    else:
        wanted = {tp: strategy.number for tp in partitions}
    return _within_log(admin, wanted)


def _within_log(admin: AdminClient, wanted: dict[TP, int]) -> dict[TP, int]:
    """Kafka's checkOffsetsRange: an offset outside [log start, log end] moves to the nearer end."""
    starts = admin.list_offsets({tp: EARLIEST for tp in wanted})
    ends = admin.list_offsets({tp: LATEST for tp in wanted})
    out = {}
    for tp, offset in wanted.items():
        if offset > ends[tp]:
            click.echo(f"New offset ({offset}) is higher than latest offset for topic partition "
                       f"{topic_partition(*tp)}. Value will be set to {ends[tp]}", err=True)
            offset = ends[tp]
        elif offset < starts[tp]:
            click.echo(f"New offset ({offset}) is lower than earliest offset for topic partition "
                       f"{topic_partition(*tp)}. Value will be set to {starts[tp]}", err=True)
            offset = starts[tp]
        out[tp] = offset
    return out
