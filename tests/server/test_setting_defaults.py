"""Each setting's default is written once, in its row: a typed view takes it from there
(``fields_from``), and a constructor either takes the value from its caller or the row's default.
This fails when a setting's default of at least five digits appears as an int literal (or a
constant expression of them, ``100 * 1024 * 1024``) anywhere in kafkalite/ outside the
``Setting(...)`` rows, unless ALLOWED says why that number is something else."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Iterator
from pathlib import Path

from kafkalite.server.config import SETTINGS

ROOT = Path(__file__).resolve().parents[2] / "kafkalite"
MIN_DEFAULT = 10_000  # five digits and more: shorter numbers (100, 1000, 3000) coincide too often

INT32_MAX, INT64_MAX = 2**31 - 1, 2**63 - 1
# (module under kafkalite/, value): the numbers that equal some setting's default and are not it.
ALLOWED: dict[tuple[str, int], str] = {
    # The bounds of Kafka's int32 and int64 (max.connections and group.max.size default to
    # Integer.MAX_VALUE, log.cleaner.max.compaction.lag.ms to Long.MAX_VALUE).
    ("clients/blocking.py", INT32_MAX): "correlation ids wrap at the int32 bound",
    ("common/config_def.py", INT32_MAX): "the int type's range",
    ("common/scram.py", INT32_MAX): "a SCRAM iteration count is a Java int (ScramMessages)",
    ("common/config_def.py", INT64_MAX): "the long type's range",
    ("protocol/primitives.py", INT32_MAX): "INT32's range",
    ("protocol/primitives.py", INT64_MAX): "INT64's range",
    ("protocol/frames.py", INT32_MAX): "UNLIMITED_FRAME_SIZE: the largest size a frame declares",
    ("protocol/messages/fetch.py", INT32_MAX): "Fetch's max_bytes field default (Kafka's schema)",
    ("protocol/messages/share_fetch.py", INT32_MAX): "ShareFetch's max_bytes field default (Kafka's schema)",
    ("server/handlers/share.py", INT32_MAX): "ShareFetch v0's MaxRecords: no limit",
    ("server/share/session.py", INT32_MAX): "the share session epoch's wrap (ShareRequestMetadata.nextEpoch)",
    ("protocol/messages/fetch.py", INT64_MAX): "Fetch v18's high_watermark field default (Kafka's schema)",
    ("protocol/messages/fetch_snapshot.py", INT32_MAX): "FetchSnapshot's max_bytes field default",
    ("raft/messages.py", INT32_MAX): "FetchSnapshot's max_bytes default (Kafka's schema: Integer.MAX_VALUE)",
    ("raft/wire.py", INT32_MAX): "a metadata Fetch's max_bytes: no limit but the leader's (KafkaRaftClient)",
    ("storage/cleaner.py", INT32_MAX): "offsets in a cleaned segment stay within int32 of its base",
    ("storage/index.py", INT32_MAX): "an index's relative offsets are int32",
    ("storage/producer_state.py", INT32_MAX): "sequence numbers wrap at the int32 bound",
    ("storage/transaction_index.py", INT64_MAX): "an aborted transaction's offsets are int64",
    ("server/replication/alter_log_dirs.py", INT64_MAX):
        "no throttle: a rate of Long.MAX_VALUE bytes/s is Kafka's unlimited quota",
    ("controller/controller.py", INT64_MAX): "MAX_PRODUCER_ID, Kafka's Long.MAX_VALUE",
    ("controller/quotas.py", INT32_MAX): "the largest quota value of an INT key (ClientQuotaControlManager)",
    ("controller/quotas.py", INT64_MAX): "the largest quota value of a LONG key (ClientQuotaControlManager)",
    ("server/client_quotas.py", INT32_MAX): "a Fetch's max_bytes without a consumer_byte_rate (int32)",
    ("server/replication/settings.py", INT64_MAX):
        "UNLIMITED_RATE, Kafka's QuotaConfig.QUOTA_BYTES_PER_SECOND_DEFAULT (the rows' default)",
    ("server/coordinator/producer_id_manager.py", INT64_MAX): "a producer id block ends by Long.MAX_VALUE",
    ("controller/group_configs.py", 60000): "ms in a minute (ISO-8601 durations)",
    ("server/share_coordinator/state.py", 65536): "ShareSnapshotValue's uint16 snapshot epoch wraps",
    # 64 KiB (replica.socket.receive.buffer.bytes' default): read and buffer sizes.
    ("clients/security.py", 65536): "bytes asked of one recv (the blocking clients' exchange)",
    ("network/processor.py", 65536): "READ_SIZE: bytes asked of one recv",
    ("network/tls.py", 65536): "bytes asked of the TLS object per read",
    ("local/proxy.py", 65536): "bytes the fault proxy moves per recv",
    ("protocol/frames.py", 65536): "DIRECT_MIN: the frame size read in place",
    ("protocol/records/compression.py", 65536): "a decompression buffer's first size",
    # 1 MiB (replica.fetch.max.bytes' default): chunk sizes.
    ("metrics/http.py", 1 << 20): "MAX_POST_BYTES of the metrics endpoint",
    ("server/coordinator/log_store.py", 1 << 20): "LOAD_BUFFER_BYTES: read per round loading groups",
    ("storage/segment.py", 1 << 20): "_RECOVERY_WINDOW: bytes read per round in recovery",
    ("storage/volume.py", 1 << 20): "bytes read per pread",
    ("raft/config.py", 1 << 20): "bytes a follower asks for in one FetchSnapshot",
    # A minute (log.segment.delete.delay.ms, log.flush.*.checkpoint.interval.ms: 60000).
    ("storage/config.py", 60_000): "MINUTE_MS, the unit of the *.minutes settings",
    ("protocol/messages/create_topics.py", 60_000): "CreateTopics' timeout_ms field default (Kafka's schema)",
    ("protocol/messages/elect_leaders.py", 60_000): "ElectLeaders' timeout_ms field default (Kafka's schema)",
    ("protocol/messages/alter_partition_reassignments.py", 60_000):
        "AlterPartitionReassignments' timeout_ms field default (Kafka's schema)",
    ("protocol/messages/list_partition_reassignments.py", 60_000):
        "ListPartitionReassignments' timeout_ms field default (Kafka's schema)",
    # 10,000 (transaction.abort.timed.out.transaction.cleanup.interval.ms): counts and ranges.
    ("jobs/report.py", 10_000): "ACCURACY of percentile_approx",
    ("local/settings.py", 10_000): "the lowest port a local cluster draws",
    ("metrics/request_log.py", 10_000): "TEMPLATES_MAX: cached line templates",
    ("controller/records.py", 10_000): "BEGIN_TOPIC_DELETION: kafkalite's own metadata record api key",
    # Kafka's constants that are not settings.
    ("server/broker.py", 30_000): "INITIAL_TASK_DELAY_MS: LogManager.InitialTaskDelayMs",
    ("server/coordinator/group_coordinator.py", 300_000): "NEW_MEMBER_JOIN_TIMEOUT_MS: GroupCoordinator's",
}

_OPERATORS: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Pow: operator.pow,
    ast.LShift: operator.lshift, ast.FloorDiv: operator.floordiv,
}


def _value(node: ast.AST) -> int | None:
    """The int a literal or a constant expression of int literals is, else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _value(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _value(node.left), _value(node.right)
        if left is not None and right is not None and (not isinstance(node.op, ast.Pow) or right < 100):
            return _OPERATORS[type(node.op)](left, right)
    return None


def _is_setting_row(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)) == "Setting"


def _numbers(tree: ast.AST) -> Iterator[tuple[int, int]]:
    """(value, line) of each outermost constant int expression, outside Setting(...) calls."""
    if _is_setting_row(tree):
        return
    value = _value(tree)
    if value is not None:
        yield value, getattr(tree, "lineno", 0)
        return
    for child in ast.iter_child_nodes(tree):
        yield from _numbers(child)


def _defaults() -> dict[int, list[str]]:
    by_value: dict[int, list[str]] = {}
    for s in SETTINGS:
        if type(s.default) is int and abs(s.default) >= MIN_DEFAULT:
            by_value.setdefault(s.default, []).append(s.name)
    return by_value


def test_numbers_are_found() -> None:
    tree = ast.parse("x = 100 * 1024 * 1024\nSetting('a', 'int', 104857600, '')\ny = f(86_400_000)\n")
    assert list(_numbers(tree)) == [(104857600, 1), (86_400_000, 3)]


def test_no_setting_default_is_written_outside_its_row() -> None:
    defaults = _defaults()
    assert 104857600 in defaults and 30000 in defaults  # the table is read
    found, allowed_seen = [], set()
    for path in sorted(ROOT.rglob("*.py")):
        module = path.relative_to(ROOT).as_posix()
        for value, line in _numbers(ast.parse(path.read_text())):
            if value not in defaults:
                continue
            if (module, value) in ALLOWED:
                allowed_seen.add((module, value))
                continue
            found.append(f"kafkalite/{module}:{line}: {value} is the default of {', '.join(defaults[value])}")
    assert not found, ("a setting's default written again; take it from the row (fields_from, view) "
                       "or from the caller, or add the number to ALLOWED saying what it is:\n"
                       + "\n".join(found))
    assert not set(ALLOWED) - allowed_seen, f"ALLOWED entries no longer needed: {set(ALLOWED) - allowed_seen}"
