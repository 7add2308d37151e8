"""A RequestChannel's side without sockets: ``request`` builds a Request as a Processor hands it
over, ``add_processor`` adds a Processor (never started) to a channel to collect its responses."""

from __future__ import annotations

from kafkalite.network.processor import Processor, ProcessorSettings
from kafkalite.network.quotas import ConnectionQuotas
from kafkalite.network.request_channel import Request, RequestChannel
from kafkalite.protocol.headers import REQUEST_HEADER


def request(corr: int, processor: int = 0, api_key: int = 18) -> Request:
    header = REQUEST_HEADER(request_api_key=api_key, request_api_version=0, correlation_id=corr,
                           client_id="t")
    return Request(processor=processor, connection_id=f"c{corr}", listener="PLAINTEXT",
                   security_protocol="PLAINTEXT", header=header, body=None, size=10,
                   client_address="127.0.0.1", client_software_name="t", client_software_version="1",
                   privileged=False)


def add_processor(channel: RequestChannel, pid: int) -> Processor:
    p = Processor(pid, ProcessorSettings("PLAINTEXT", "PLAINTEXT", {}), channel,
                  ConnectionQuotas(2**31 - 1, 2**31 - 1, {}))
    channel.add_processor(p)
    return p
