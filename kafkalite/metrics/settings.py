"""The request log's settings (request.log.*, kafkalite's own) as rows of the broker's settings table
(``REQUEST_LOG_SETTINGS``, listed with the broker's own settings) and their typed view, whose
defaults the RequestLog takes (request_log.py)."""

from __future__ import annotations

from dataclasses import dataclass

from kafkalite.common.config_def import Setting, at_least, fields_from, one_of

REQUEST_LOG_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "request.log.dir", "string", None,
        "Directory where the broker writes its request log; if unset, no request log is written.",
        group="server", kafka=False,
    ),
    Setting(
        "request.log.segment.bytes", "int", 104857600,
        "Size at which a request log file is closed and a new one started.",
        validator=at_least(1024), group="server", kafka=False,
    ),
    Setting(
        "request.log.roll.ms", "long", 3600000,
        "Age at which a request log file is closed and a new one started.",
        validator=at_least(1), group="server", kafka=False,
    ),
    Setting(
        "request.log.format", "string", "json",
        "Format of the request log: json (a JSON object per line, requests-*.jsonl) or csv (a fixed "
        "column order per line, requests-*.csv, which the report reads about twice as fast); "
        "docs/metrics.md describes both.",
        validator=one_of("json", "csv"), group="server", kafka=False,
    ),
)

_field = fields_from(REQUEST_LOG_SETTINGS)


@dataclass(frozen=True)
class RequestLogSettings:
    """request.log.*: where the request log is written (None: no request log) and when its files roll."""

    directory: str | None = _field("request.log.dir")
    segment_bytes: int = _field("request.log.segment.bytes")
    roll_ms: int = _field("request.log.roll.ms")
    format: str = _field("request.log.format")
