"""KRaft's quorum apis on a controller listener: Vote, BeginQuorumEpoch, EndQuorumEpoch,
FetchSnapshot, DescribeQuorum, and Fetch of ``__cluster_metadata`` (FetchApis hands those over:
``serves_fetch``). Each request goes to the node's RaftManager, which answers it from its own
thread (a Fetch may wait there for new entries), so none waits on a handler thread.

``raft`` is the node's RaftManager (anything with its ``handle_request``); None on a node that is
not a voter, or before the broker has made it: every request is answered BROKER_NOT_AVAILABLE.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import ApiKey
from kafkalite.protocol import error_codes as E
from kafkalite.raft.wire import error_response, is_metadata_fetch

from ..responses import respond

SendResponse = Callable[[Response], None]


class RaftRequestHandler(Protocol):
    def handle_request(self, api_key: int, version: int, body: Any, reply: Callable[[Any], None]) -> None: ...


class RaftApis:
    def __init__(self, raft: RaftRequestHandler | None, send_response: SendResponse,
                 controller_listeners: frozenset[str] = frozenset()) -> None:
        """``controller_listeners``: controller.listener.names; a Fetch of __cluster_metadata on
        one of them is the quorum's."""
        self.raft = raft
        self.send_response = send_response
        self.controller_listeners = controller_listeners

    def _forward(self, request: Request) -> Response | None:
        raft = self.raft
        if raft is None:
            body = error_response(request.api_key, request.api_version, E.BROKER_NOT_AVAILABLE)
            return respond(request, body)

        def reply(body: Any) -> None:
            self.send_response(respond(request, body))
        raft.handle_request(request.api_key, request.api_version, request.body, reply)
        return None

    def vote(self, request: Request) -> Response | None:
        return self._forward(request)

    def begin_quorum_epoch(self, request: Request) -> Response | None:
        return self._forward(request)

    def end_quorum_epoch(self, request: Request) -> Response | None:
        return self._forward(request)

    def describe_quorum(self, request: Request) -> Response | None:
        return self._forward(request)

    def fetch_snapshot(self, request: Request) -> Response | None:
        return self._forward(request)

    def serves_fetch(self, request: Request) -> bool:
        """Whether a Fetch is the quorum's: of __cluster_metadata, on a controller listener."""
        return (request.api_key == ApiKey.FETCH and request.listener in self.controller_listeners
                and is_metadata_fetch(request.api_version, request.body))

    def fetch(self, request: Request) -> Response | None:
        return self._forward(request)
