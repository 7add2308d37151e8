"""QuorumConfig: the Raft timing settings (Kafka's raft QuorumConfig, ``controller.quorum.*``),
in milliseconds as Kafka's, with Kafka's defaults."""

from __future__ import annotations

from dataclasses import dataclass

FETCH_MAX_WAIT_MS = 500  # a follower's Fetch long-poll (KafkaRaftClient's fetchMaxWaitMs)
RETRY_BACKOFF_BASE_MS = 100  # the unit of the candidate's binary exponential backoff


@dataclass(frozen=True)
class QuorumConfig:
    election_timeout_ms: int = 1000  # controller.quorum.election.timeout.ms
    fetch_timeout_ms: int = 2000  # controller.quorum.fetch.timeout.ms
    election_backoff_max_ms: int = 1000  # controller.quorum.election.backoff.max.ms
    request_timeout_ms: int = 2000  # controller.quorum.request.timeout.ms
    retry_backoff_ms: int = 20  # controller.quorum.retry.backoff.ms
    append_linger_ms: int = 25  # controller.quorum.append.linger.ms (the manager's batching)
    fetch_max_wait_ms: int = FETCH_MAX_WAIT_MS
    fetch_max_bytes: int = 8 * 1024 * 1024  # entries in one Fetch answer (at least one entry)
    fetch_snapshot_max_bytes: int = 1024 * 1024  # bytes a follower asks for in one FetchSnapshot

    @property
    def check_quorum_timeout_ms(self) -> float:
        """A leader not fetched from by a majority within this resigns (LeaderState)."""
        return self.fetch_timeout_ms * 1.5
