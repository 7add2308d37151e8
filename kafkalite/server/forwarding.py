"""Requests between a broker and the controller beyond the controller's own three (the admin apis
whose state the controller stores: configs, ACLs, SCRAM credentials, client quotas).

- Forwarding (Kafka's ForwardingManager): a broker without the controller passes a client's
  request to the controller over its ``ControllerLink`` (server/topic_configs.py), on a lane of
  its own whose client id is ``broker-<id>-<lane>``, and answers the client with the controller's
  answer (or REQUEST_TIMED_OUT when it does not come).
- Pushes: after a change the controller sends what it stored to every live broker over its
  ControllerChannelManager (client id ``controller-<id>``), as the same api. A broker takes a
  request as a push only when it comes from that client id on the privileged listener or a
  controller listener (Kafka's KRaft brokers read the metadata log instead; issue 29's
  CLUSTER_ACTION check authorizes it).
"""

from __future__ import annotations

import concurrent.futures
import logging
import re
from collections.abc import Callable, Collection
from typing import Any

log = logging.getLogger("kafkalite.server.forwarding")

PUSHED = re.compile(r"controller-(\d+)")  # the ControllerChannelManager's client id


def forwarded(lane: str) -> re.Pattern[str]:
    """The client id of requests forwarded on ``lane`` of a broker's ControllerLink."""
    return re.compile(rf"broker-(\d+)-{re.escape(lane)}")


def origin(request: Any, pattern: re.Pattern[str], node_listeners: Collection[str]) -> int | None:
    """The node id in the client id of a request from another node (it must come on the
    privileged listener or a controller listener), or None."""
    if not request.privileged and request.listener not in node_listeners:
        return None
    match = pattern.fullmatch(request.header.client_id or "")
    return int(match.group(1)) if match else None


def forwards(request: Any, controller: Any, link: Any, lane: re.Pattern[str],
             node_listeners: Collection[str]) -> bool:
    """Whether a broker passes ``request`` on to the active controller: its own controller is not
    active, it has a link, and the request was not itself forwarded here on ``lane`` by another
    broker (that one gets NOT_CONTROLLER and tries the next voter, as Kafka's ForwardingManager
    does; forwarding it again would wait out the link's timeout behind a dead controller)."""
    return controller is None and link is not None and origin(request, lane, node_listeners) is None


def forward(link: Any, lane: str, api_key: int, version: int, body: Any, what: str,
            on_response: Callable[[Any], None], on_failure: Callable[[str], None]) -> None:
    """Send ``body`` to the controller on ``lane``; ``on_response`` gets its answer, or
    ``on_failure`` why there is none (logged once here). Never blocks the caller."""

    def done(future: concurrent.futures.Future) -> None:
        try:
            response = future.result()
        except BaseException as e:
            log.warning("Could not forward %s to the controller at %s:%d: %s", what, *link.address, e)
            on_failure(str(e) or type(e).__name__)
            return
        on_response(response)

    try:
        future = link.submit(lane, api_key, version, body)
    except RuntimeError:  # shutting down
        on_failure("the broker is shutting down")
        return
    future.add_done_callback(done)
