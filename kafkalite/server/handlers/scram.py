"""DescribeUserScramCredentials and AlterUserScramCredentials (KIP-554), and the controller's
pushes of the credentials.

- Authorization (with ``authorizer.class.name``): Describe needs DESCRIBE on the CLUSTER, Alter
  ALTER on the CLUSTER (checked by the broker the client sent it to; a forwarded request was),
  else CLUSTER_AUTHORIZATION_FAILED as Kafka's getErrorResponse puts it (top level and each user
  for Describe; each user, sorted, for Alter).
- Describe is answered by every broker from the credentials it was pushed (Kafka's brokers from
  their metadata image, ScramImage.describe): mechanism and iterations only.
- Alter goes to the controller (controller/scram.py checks, stores the salted keys and pushes):
  on its node directly, elsewhere forwarded over the ControllerLink's "alter-scram" lane and
  answered with the controller's answer; a forwarded request reaching a broker without the
  controller is NOT_CONTROLLER.
- The controller's pushes arrive as AlterUserScramCredentials from its client id on the
  privileged listener: StoredKey + ServerKey in ``salted_password``; a deletion ("", 0) clears
  everything first (the full state a registering broker gets). They fill the SocketServer's
  CredentialCache, which SCRAM logins read.
"""

from __future__ import annotations

import concurrent.futures
import logging
import re
from typing import Any

from kafkalite.common.scram import MECHANISMS_BY_TYPE, ScramCredential
from kafkalite.controller.scram import CLEAR_ALL
from kafkalite.network.request_channel import Request, Response
from kafkalite.network.sasl import CredentialCache
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafkalite.protocol.messages import alter_user_scram_credentials as ausc
from kafkalite.protocol.messages import describe_user_scram_credentials as dusc

from ..authorizer import ALLOW_ALL, Authorizer
from ..controller_node import active
from ..forwarding import PUSHED, forward, forwarded, origin
from ..responses import respond
from ..topic_configs import ControllerLink

log = logging.getLogger("kafkalite.server.scram")

LANE = "alter-scram"
FORWARDED = forwarded(LANE)
DUPLICATE_USER = "Cannot describe SCRAM credentials for the same user twice in a single request: "
MISSING_USER = "Attempt to describe a user credential that does not exist: "


def describe(credentials: CredentialCache, users: list[str] | None) -> Any:
    """ScramImage.describe: every user when ``users`` is null or empty."""
    R = dusc.RESPONSE
    if not users:
        asked = dict.fromkeys(credentials.users(), False)
    else:
        asked = {}
        for name in users:
            asked[name] = name in asked
    results = []
    for name, twice in asked.items():
        result = R["results"](user=name, error_code=E.NONE, credential_infos=[])
        if twice:
            result.error_code, result.error_message = E.DUPLICATE_RESOURCE, DUPLICATE_USER + name
        else:
            mine = credentials.user(name)
            if mine:
                info = R["results"]["credential_infos"]
                result.credential_infos = [info(mechanism=m, iterations=c.iterations)
                                           for m, c in sorted(mine.items())]
            else:
                result.error_code, result.error_message = E.RESOURCE_NOT_FOUND, MISSING_USER + name
        results.append(result)
    return R(throttle_time_ms=0, error_code=E.NONE, results=results)


def apply_push(credentials: CredentialCache, body: Any) -> None:
    """The controller's push: deletions, then the users' salted keys."""
    for d in body.deletions:
        if (d.name, d.mechanism) == CLEAR_ALL:
            credentials.clear()
        else:
            credentials.set(d.name, d.mechanism, None)
    for u in body.upsertions:
        mechanism = MECHANISMS_BY_TYPE.get(u.mechanism)
        if mechanism is None:
            continue
        size = len(mechanism.hash(b""))
        keys = u.salted_password
        credentials.set(u.name, u.mechanism, ScramCredential(u.salt, keys[:size], keys[size:], u.iterations))


class ScramApis:
    def __init__(self, credentials: CredentialCache, send_response: Any, controller: Any = None,
                 link: ControllerLink | None = None, node_listeners: frozenset[str] = frozenset(),
                 authorizer: Authorizer = ALLOW_ALL) -> None:
        self.credentials = credentials
        self.authorizer = authorizer
        self.send_response = send_response
        self.controller = controller  # on the controller's node
        self.link = link  # elsewhere
        self.node_listeners = node_listeners

    def _origin(self, request: Request, pattern: re.Pattern[str]) -> int | None:
        return origin(request, pattern, self.node_listeners)

    def _allowed(self, request: Request, operation: AclOperation) -> bool:
        return self.authorizer.authorize(request, operation, ResourceType.CLUSTER, CLUSTER_NAME)

    def describe_user_scram_credentials(self, request: Request) -> Response | None:
        users = request.body.users
        if not self._allowed(request, AclOperation.DESCRIBE):
            code, message = E.CLUSTER_AUTHORIZATION_FAILED, E.BY_CODE[E.CLUSTER_AUTHORIZATION_FAILED].message
            R = dusc.RESPONSE
            return respond(request, R(throttle_time_ms=0, error_code=code, error_message=message, results=[
                R["results"](user="", error_code=code, error_message=message, credential_infos=[])
                for _ in users or ()]))
        names = None if users is None else [u.name for u in users]
        return respond(request, describe(self.credentials, names))

    def alter_user_scram_credentials(self, request: Request) -> Response | None:
        req = request.body
        if self._origin(request, PUSHED) is not None:
            apply_push(self.credentials, req)
            return respond(request, ausc.RESPONSE(throttle_time_ms=0, results=[]))
        forwarded_by = self._origin(request, FORWARDED)
        names = list(dict.fromkeys([*(d.name for d in req.deletions), *(u.name for u in req.upsertions)]))

        def answered(outcomes: list[tuple[str, int, str | None]]) -> None:
            R = ausc.RESPONSE
            self.send_response(respond(request, R(throttle_time_ms=0, results=[
                R["results"](user=user, error_code=code, error_message=message)
                for user, code, message in outcomes])))

        def all_failed(code: int, message: str) -> list[tuple[str, int, str | None]]:
            return [(n, code, message) for n in names]

        if forwarded_by is None and not self._allowed(request, AclOperation.ALTER):
            code = E.CLUSTER_AUTHORIZATION_FAILED
            answered([(n, code, E.BY_CODE[code].message) for n in sorted(names)])
            return None

        if (controller := active(self.controller)) is not None:
            def done(future: concurrent.futures.Future) -> None:
                try:
                    outcomes = future.result()
                except Exception as e:  # logged by the controller
                    outcomes = all_failed(E.UNKNOWN_SERVER_ERROR, f"The controller failed: {e}")
                answered(outcomes)

            controller.alter_user_scram_credentials(req).add_done_callback(done)
        elif forwarded_by is not None or self.link is None:
            answered(all_failed(E.NOT_CONTROLLER, E.BY_CODE[E.NOT_CONTROLLER].message))
        else:
            def on_response(response: Any) -> None:
                answered([(r.user, r.error_code, r.error_message) for r in response.results])

            forward(self.link, LANE, request.api_key, 0, req, f"{len(names)} SCRAM credential changes",
                    on_response, lambda why: answered(all_failed(
                        E.REQUEST_TIMED_OUT, f"The controller did not answer: {why}")))
        return None
