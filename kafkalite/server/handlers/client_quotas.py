"""DescribeClientQuotas (48) and AlterClientQuotas (49), as Kafka's brokers answer them.

AlterClientQuotas goes to the controller (controller/quotas.py: checked as Kafka's
ClientQuotaControlManager, stored, pushed to every broker): on the controller's node directly,
elsewhere forwarded over the ControllerLink's "client-quotas" lane. The controller's pushes arrive
as AlterClientQuotas from its client id (``controller-<id>``) on the privileged listener: each
entity's complete set, applied to this broker's quotas (client_quotas.ClientQuotas) at once.

DescribeClientQuotas answers from this broker's copy: the entities the filter matches (Kafka's
ClientQuotasImage.describe): each component EXACT (the name), DEFAULT (the default entity) or
SPECIFIED (any entity of the type, as Kafka's image matches); ``strict`` leaves out entities with
other types than the filter names. Errors as Kafka's: an unknown entity type UNSUPPORTED_VERSION;
an empty type, a type named twice, an EXACT without a name, a DEFAULT or SPECIFIED with one, ip
with user or client-id INVALID_REQUEST (for the whole response, entries null).
"""

from __future__ import annotations

import concurrent.futures
import logging
from collections.abc import Callable, Collection
from typing import Any

from kafkalite.common.errors import ApiError
from kafkalite.controller.quotas import CLIENT_ID, IP, USER
from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import alter_client_quotas as acq
from kafkalite.protocol.messages import describe_client_quotas as dcq

from ..client_quotas import ClientQuotas
from ..controller_node import active
from ..forwarding import PUSHED, forward, forwarded, origin
from ..responses import respond
from ..topic_configs import ControllerLink

log = logging.getLogger("kafkalite.server.handlers.client_quotas")

LANE = "client-quotas"
FORWARDED = forwarded(LANE)
FORWARD_VERSION = 1
ENTITY = acq.RESPONSE["entries"]["entity"]
SendResponse = Callable[[Response], None]


class ClientQuotaApis:
    def __init__(self, quotas: ClientQuotas, send_response: SendResponse, controller: Any = None,
                 link: ControllerLink | None = None, node_listeners: Collection[str] = ()) -> None:
        self.quotas = quotas
        self.send_response = send_response
        self.controller = controller
        self.link = link
        self.node_listeners = frozenset(node_listeners)

    # --- AlterClientQuotas ----------------------------------------------------------------------

    def alter_client_quotas(self, request: Request) -> Response | None:
        req = request.body
        if origin(request, PUSHED, self.node_listeners) is not None:
            return self._apply_push(request)
        forwarded_by = origin(request, FORWARDED, self.node_listeners)
        entries = [([(e.entity_type, e.entity_name) for e in entry.entity],
                    [(op.key, op.value, op.remove) for op in entry.ops]) for entry in req.entries]

        def answered(outcomes: list[tuple[int, str | None]]) -> None:
            self.send_response(respond(request, acq.RESPONSE(throttle_time_ms=0, entries=[
                acq.RESPONSE["entries"](error_code=code, error_message=message, entity=[
                    ENTITY(entity_type=e.entity_type, entity_name=e.entity_name) for e in entry.entity])
                for (code, message), entry in zip(outcomes, req.entries, strict=True)])))

        if not entries:
            answered([])
            return None
        if (controller := active(self.controller)) is not None:
            def done(future: concurrent.futures.Future) -> None:
                try:
                    outcomes = future.result()
                except Exception as e:  # logged by the controller
                    outcomes = [(E.UNKNOWN_SERVER_ERROR, f"The controller failed: {e}")] * len(entries)
                answered(outcomes)

            controller.alter_client_quotas(entries, req.validate_only).add_done_callback(done)
        elif forwarded_by is not None or self.link is None:
            answered([(E.NOT_CONTROLLER, E.BY_CODE[E.NOT_CONTROLLER].message)] * len(entries))
        else:
            def failed(why: str) -> list[tuple[int, str | None]]:
                return [(E.REQUEST_TIMED_OUT, f"The controller did not answer: {why}")] * len(entries)

            def on_response(response: Any) -> None:
                outcomes = [(r.error_code, r.error_message) for r in response.entries]
                answered(outcomes if len(outcomes) == len(entries) else failed("a short answer"))

            forward(self.link, LANE, ApiKey.ALTER_CLIENT_QUOTAS, FORWARD_VERSION, req,
                    f"{len(entries)} client quota changes", on_response, lambda why: answered(failed(why)))
        return None

    def _apply_push(self, request: Request) -> Response:
        req = request.body
        for entry in req.entries:
            e = tuple(sorted((p.entity_type, p.entity_name) for p in entry.entity))
            self.quotas.replace(e, {op.key: op.value for op in entry.ops if not op.remove})
        return respond(request, acq.RESPONSE(throttle_time_ms=0, entries=[
            acq.RESPONSE["entries"](error_code=E.NONE, error_message=None, entity=[
                ENTITY(entity_type=p.entity_type, entity_name=p.entity_name) for p in entry.entity])
            for entry in req.entries]))

    # --- DescribeClientQuotas -------------------------------------------------------------------

    def describe_client_quotas(self, request: Request) -> Response:
        req = request.body
        R = dcq.RESPONSE
        try:
            matched = describe(self.quotas.entities, [(c.entity_type, c.match_type, c.match)
                                                      for c in req.components], req.strict)
        except ApiError as e:
            return respond(request, R(throttle_time_ms=0, error_code=e.code, error_message=e.message,
                                      entries=None))
        entry, ent, val = R["entries"], R["entries"]["entity"], R["entries"]["values"]
        return respond(request, R(throttle_time_ms=0, error_code=E.NONE, error_message=None, entries=[
            entry(entity=[ent(entity_type=t, entity_name=n) for t, n in e],
                  values=[val(key=k, value=float(v)) for k, v in sorted(values.items())])
            for e, values in matched]))


def describe(entities: Any, components: list[tuple[str, int, str | None]],
             strict: bool) -> list[tuple[Any, Any]]:
    """Kafka's ClientQuotasImage.describe: the entities matching every component (ApiError: an
    invalid filter, with Kafka's code and message). EXACT needs a name and DEFAULT asks for the
    default entity; SPECIFIED asks only that the entity has the type (the default entity too, as
    Kafka's image matches it)."""
    exact: dict[str, str | None] = {}
    typed: set[str] = set()
    for kind, match_type, match in components:
        if not kind:
            raise ApiError(E.INVALID_REQUEST, "Invalid empty entity type.")
        if kind in exact or kind in typed:
            raise ApiError(E.INVALID_REQUEST,
                           f"Entity type {kind} cannot appear more than once in the filter.")
        if kind not in (USER, CLIENT_ID, IP):
            raise ApiError(E.UNSUPPORTED_VERSION, f"Unsupported entity type {kind}")
        if match_type == dcq.MATCH_EXACT:
            if match is None:
                raise ApiError(E.INVALID_REQUEST,
                               "Request specified MATCH_TYPE_EXACT, but set match string to null.")
            exact[kind] = match
        elif match_type == dcq.MATCH_DEFAULT:
            if match is not None:
                raise ApiError(E.INVALID_REQUEST,
                               "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.")
            exact[kind] = None
        elif match_type == dcq.MATCH_SPECIFIED:
            if match is not None:
                raise ApiError(E.INVALID_REQUEST,
                               "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.")
            typed.add(kind)
        else:
            raise ApiError(E.INVALID_REQUEST, f"Unknown match type {match_type}")
    if (IP in exact or IP in typed) and ({USER, CLIENT_ID} & (set(exact) | typed)):
        raise ApiError(E.INVALID_REQUEST, "Invalid entity filter component combination. IP filter component "
                                          "should not be used with user or clientId filter component.")
    out = []
    for e, values in sorted(entities.items(), key=lambda kv: repr(kv[0])):
        names = dict(e)
        if strict and len(names) != len(exact) + len(typed):
            continue
        if all(k in names and names[k] == v for k, v in exact.items()) and all(k in names for k in typed):
            out.append((e, values))
    return out
