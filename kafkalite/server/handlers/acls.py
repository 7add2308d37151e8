"""The ACL apis (Kafka's AclApis, ControllerApis): CreateAcls, DescribeAcls, DeleteAcls.

Each needs an authorizer (``authorizer.class.name``): without one Kafka answers SECURITY_DISABLED
("No Authorizer is configured."). The caller must be allowed ALTER on the CLUSTER (CreateAcls,
DeleteAcls) or DESCRIBE on it (DescribeAcls), else CLUSTER_AUTHORIZATION_FAILED.

CreateAcls and DeleteAcls change the controller's set (controller/acls.py): on the controller's
node directly, elsewhere forwarded over the ControllerLink (its "acls" lane; the controller's node
then trusts the broker that forwarded it to have checked the caller), the client answered with the
controller's answer. The controller checks each binding (INVALID_REQUEST with Kafka's message for
an UNKNOWN or ANY element, a CLUSTER resource not named kafka-cluster, an empty name, a principal
without a colon; a filter with an UNKNOWN element), stores the new set and pushes it whole to every
broker as a CreateAcls request from its client id on the privileged listener: this broker's
authorizer then replaces its ACLs with it. DescribeAcls is answered by this broker from its own
authorizer's copy, as Kafka's brokers do.
"""

from __future__ import annotations

import concurrent.futures
import logging
import re
from collections.abc import Callable
from typing import Any

from kafkalite.common.errors import ApiError
from kafkalite.controller.acls import AclBinding, AclBindingFilter
from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import create_acls as ca
from kafkalite.protocol.messages import delete_acls as da
from kafkalite.protocol.messages import describe_acls as dea

from ..authorizer.standard import StandardAuthorizer
from ..controller_node import active
from ..forwarding import PUSHED, forward, forwarded, origin
from ..responses import respond

log = logging.getLogger("kafkalite.server.handlers.acls")

LANE = "acls"  # the ControllerLink lane forwarded changes take
FORWARDED = forwarded(LANE)
FORWARD_VERSION = 3
NO_AUTHORIZER = "No Authorizer is configured."

SendResponse = Callable[[Response], None]
DeleteOutcome = tuple[int, str | None, list[AclBinding]]


def _cluster_denied() -> tuple[int, str]:
    return E.CLUSTER_AUTHORIZATION_FAILED, E.BY_CODE[E.CLUSTER_AUTHORIZATION_FAILED].message


class AclApis:
    def __init__(
        self,
        authorizer: StandardAuthorizer | None,
        send_response: SendResponse,
        controller: Any = None,
        link: Any = None,
        node_listeners: frozenset[str] = frozenset(),
    ) -> None:
        self.authorizer = authorizer  # None: no authorizer.class.name
        self.send_response = send_response
        self.controller = controller  # on the controller's node
        self.link = link  # elsewhere
        self.node_listeners = node_listeners

    def _origin(self, request: Request, pattern: re.Pattern[str]) -> int | None:
        return origin(request, pattern, self.node_listeners)

    def _allowed(self, request: Request, operation: AclOperation) -> bool:
        return self.authorizer is None or self.authorizer.authorize(
            request, operation, ResourceType.CLUSTER, CLUSTER_NAME
        )

    # --- CreateAcls -------------------------------------------------------------------------------

    def create_acls(self, request: Request) -> Response | None:
        req = request.body
        n = len(req.creations)

        def body(outcomes: list[tuple[int, str | None]]) -> Any:
            return ca.RESPONSE(
                throttle_time_ms=0,
                results=[
                    ca.RESPONSE["results"](error_code=code, error_message=message)
                    for code, message in outcomes
                ],
            )

        if self._origin(request, PUSHED) is not None:
            bindings = [AclBinding.from_creation(c) for c in req.creations]
            if self.authorizer is not None:
                self.authorizer.load(bindings)
                log.debug("ACLs from the controller: %d bindings", len(bindings))
            return respond(request, body([(E.NONE, None)] * n))
        forwarded_by = self._origin(request, FORWARDED)
        if forwarded_by is None and not self._allowed(request, AclOperation.ALTER):
            return respond(request, body([_cluster_denied()] * n))
        if self.authorizer is None:
            return respond(request, body([(E.SECURITY_DISABLED, NO_AUTHORIZER)] * n))
        bindings = [AclBinding.from_creation(c) for c in req.creations]

        def answered(outcomes: list[tuple[int, str | None]]) -> None:
            self.send_response(respond(request, body(outcomes)))

        if (controller := active(self.controller)) is not None:

            def done(future: concurrent.futures.Future) -> None:
                try:
                    outcomes = future.result()
                except Exception as e:  # logged by the controller
                    outcomes = [(E.UNKNOWN_SERVER_ERROR, f"The controller failed: {e}")] * n
                answered(outcomes)

            controller.create_acls(bindings).add_done_callback(done)
        elif forwarded_by is not None or self.link is None:
            return respond(request, body([(E.NOT_CONTROLLER, E.BY_CODE[E.NOT_CONTROLLER].message)] * n))
        else:

            def on_response(response: Any) -> None:
                outcomes = [(r.error_code, r.error_message) for r in response.results]
                answered(outcomes if len(outcomes) == n else failed("a short answer"))

            def failed(why: str) -> list[tuple[int, str | None]]:
                return [(E.REQUEST_TIMED_OUT, f"The controller did not answer: {why}")] * n

            forward(
                self.link,
                LANE,
                ApiKey.CREATE_ACLS,
                FORWARD_VERSION,
                ca.REQUEST(creations=req.creations),
                f"{n} ACL creations",
                on_response,
                lambda why: answered(failed(why)),
            )
        return None

    # --- DescribeAcls -----------------------------------------------------------------------------

    def describe_acls(self, request: Request) -> Response:
        R = dea.RESPONSE

        def error(code: int, message: str | None) -> Response:
            return respond(
                request, R(throttle_time_ms=0, error_code=code, error_message=message, resources=[])
            )

        if not self._allowed(request, AclOperation.DESCRIBE):
            return error(*_cluster_denied())
        if self.authorizer is None:
            return error(E.SECURITY_DISABLED, NO_AUTHORIZER)
        f = AclBindingFilter.from_request(request.body)
        try:
            f.validate()
        except ApiError as e:
            return error(e.code, e.message)
        groups: dict[tuple[int, str, int], list[Any]] = {}
        for b in sorted(self.authorizer.acls):
            if f.matches(b):
                groups.setdefault((b.resource_type, b.resource_name, b.pattern_type), []).append(
                    R["resources"]["acls"](
                        principal=b.principal,
                        host=b.host,
                        operation=b.operation,
                        permission_type=b.permission_type,
                    )
                )
        return respond(
            request,
            R(
                throttle_time_ms=0,
                error_code=E.NONE,
                error_message=None,
                resources=[
                    R["resources"](resource_type=t, resource_name=name, pattern_type=p, acls=acls)
                    for (t, name, p), acls in groups.items()
                ],
            ),
        )

    # --- DeleteAcls -------------------------------------------------------------------------------

    def delete_acls(self, request: Request) -> Response | None:
        req = request.body
        n = len(req.filters)
        R = da.RESPONSE
        M = R["filter_results"]["matching_acls"]

        def body(outcomes: list[DeleteOutcome]) -> Any:
            return R(
                throttle_time_ms=0,
                filter_results=[
                    R["filter_results"](
                        error_code=code,
                        error_message=message,
                        matching_acls=[
                            M(
                                error_code=E.NONE,
                                error_message=None,
                                resource_type=b.resource_type,
                                resource_name=b.resource_name,
                                pattern_type=b.pattern_type,
                                principal=b.principal,
                                host=b.host,
                                operation=b.operation,
                                permission_type=b.permission_type,
                            )
                            for b in matched
                        ],
                    )
                    for code, message, matched in outcomes
                ],
            )

        forwarded_by = self._origin(request, FORWARDED)
        if forwarded_by is None and not self._allowed(request, AclOperation.ALTER):
            return respond(request, body([(*_cluster_denied(), [])] * n))
        if self.authorizer is None:
            return respond(request, body([(E.SECURITY_DISABLED, NO_AUTHORIZER, [])] * n))
        filters = [AclBindingFilter.from_request(f) for f in req.filters]

        def answered(outcomes: list[DeleteOutcome]) -> None:
            self.send_response(respond(request, body(outcomes)))

        if (controller := active(self.controller)) is not None:

            def done(future: concurrent.futures.Future) -> None:
                try:
                    outcomes = future.result()
                except Exception as e:  # logged by the controller
                    outcomes = [(E.UNKNOWN_SERVER_ERROR, f"The controller failed: {e}", [])] * n
                answered(outcomes)

            controller.delete_acls(filters).add_done_callback(done)
        elif forwarded_by is not None or self.link is None:
            return respond(request, body([(E.NOT_CONTROLLER, E.BY_CODE[E.NOT_CONTROLLER].message, [])] * n))
        else:

            def failed(why: str) -> list[DeleteOutcome]:
                return [(E.REQUEST_TIMED_OUT, f"The controller did not answer: {why}", [])] * n

            def on_response(response: Any) -> None:
                outcomes: list[DeleteOutcome] = [
                    (
                        r.error_code,
                        r.error_message,
                        [
                            AclBinding.of(
                                m.resource_type,
                                m.resource_name,
                                m.pattern_type,
                                m.principal,
                                m.host,
                                m.operation,
                                m.permission_type,
                            )
                            for m in r.matching_acls
                        ],
                    )
                    for r in response.filter_results
                ]
                answered(outcomes if len(outcomes) == n else failed("a short answer"))

            forward(
                self.link,
                LANE,
                ApiKey.DELETE_ACLS,
                FORWARD_VERSION,
                da.REQUEST(filters=req.filters),
                f"{n} ACL delete filters",
                on_response,
                lambda why: answered(failed(why)),
            )
        return None
