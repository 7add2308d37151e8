"""Producer ids: InitProducerId (every listener) and AllocateProducerIds (the controller's side,
KIP-730).

InitProducerId gives an idempotent producer a new id, epoch 0, from this broker's block
(ProducerIdManager; never waiting for the controller); one with a transactional id goes to the
transaction coordinator (handlers/transactions.py), answered once its epoch is written.
AllocateProducerIds is answered when the controller's event thread has stored the next block's
start (a callback answers it, as BrokerRegistration).
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import Any

from kafkalite.common.errors import ApiError
from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import allocate_producer_ids, init_producer_id
from kafkalite.protocol.records.batch import NO_PRODUCER_EPOCH, NO_PRODUCER_ID

from ..controller_node import active
from ..coordinator.producer_id_manager import COORDINATOR_LOAD_IN_PROGRESS, ProducerIdManager
from ..coordinator.transaction.coordinator import TransactionCoordinator
from ..responses import respond
from .transactions import init_transactional_producer_id


class ProducerIdApis:
    def __init__(self, producer_ids: ProducerIdManager | None, controller: Any,
                 send_response: Callable[[Response], None],
                 transactions: TransactionCoordinator | None = None) -> None:
        self.transactions = transactions  # None: transactional ids are not served
        self.producer_ids = producer_ids  # None: no ids to give (a KafkaApis without a broker)
        self.controller = controller  # None on a broker without the controller role
        self.send_response = send_response

    def init_producer_id(self, request: Request) -> Response | None:
        body = request.body

        def answer(error: int, producer_id: int = NO_PRODUCER_ID, epoch: int = NO_PRODUCER_EPOCH) -> Response:
            return respond(request, init_producer_id.RESPONSE(
                throttle_time_ms=0, error_code=error, producer_id=producer_id, producer_epoch=epoch))

        # Kafka's KafkaApis: an id without an epoch (or the reverse) is malformed.
        if (body.producer_id == NO_PRODUCER_ID) != (body.producer_epoch == NO_PRODUCER_EPOCH):
            return answer(E.INVALID_REQUEST)
        if body.transactional_id is not None:
            if body.transactional_id == "":
                return answer(E.INVALID_REQUEST)  # as Kafka's TransactionCoordinator
            if self.transactions is not None:
                return init_transactional_producer_id(self.transactions, request, self.send_response)
            # No transaction coordinator here. Kafka answers UNSUPPORTED_VERSION to transactional
            # requests when its cluster cannot do transactions (KafkaApis.ensureInterBrokerVersion):
            # not retriable, so a transactional producer fails at once with "not supported" rather
            # than retrying (COORDINATOR_*) or blaming its credentials (*_AUTHORIZATION_FAILED).
            return answer(E.UNSUPPORTED_VERSION)
        # No transactional id: a new id whatever the request carries, as Kafka's
        # TransactionCoordinator (a KIP-360 request with the old id and epoch gets a new id too).
        if self.producer_ids is None:
            return answer(COORDINATOR_LOAD_IN_PROGRESS)
        try:
            return answer(E.NONE, self.producer_ids.generate(), 0)
        except ApiError as e:  # no block yet: COORDINATOR_LOAD_IN_PROGRESS, the client retries
            return answer(e.code)

    def allocate_producer_ids(self, request: Request) -> Response | None:
        R = allocate_producer_ids.RESPONSE
        controller = active(self.controller)
        if controller is None:
            return respond(request, R(error_code=E.NOT_CONTROLLER))

        def answer(future: concurrent.futures.Future) -> None:
            try:
                error, first, size = future.result()
            except ApiError as e:  # NOT_CONTROLLER: it stopped being active meanwhile
                error, first, size = e.code, 0, 0
            except Exception:  # logged by the controller; the broker retries
                error, first, size = E.UNKNOWN_SERVER_ERROR, 0, 0
            self.send_response(respond(request, R(throttle_time_ms=0, error_code=error,
                                                  producer_id_start=first, producer_id_len=size)))

        body = request.body
        controller.allocate_producer_ids(body.broker_id, body.broker_epoch).add_done_callback(answer)
        return None
