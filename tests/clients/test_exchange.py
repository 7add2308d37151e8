"""clients/security.py's exchange, the blocking request and response of every broker-to-broker
client, reading a large response (a replica fetcher's records): the rest of its frame goes straight
into the frame's own buffer, whatever pieces the socket delivers it in."""

from __future__ import annotations

import os
import socket
import threading

import pytest

from kafkalite.clients import BlockingClient
from kafkalite.protocol import UNLIMITED_FRAME_SIZE, FrameDecoder
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.codec import decode_request, encode_response
from kafkalite.protocol.messages import fetch

R = fetch.RESPONSE
PartitionData = R["responses"]["partitions"]


def _response(records: bytes) -> object:
    data = PartitionData(partition_index=0, error_code=0, high_watermark=7, last_stable_offset=7,
                         log_start_offset=0, aborted_transactions=None, preferred_read_replica=-1,
                         records=records)
    return R(throttle_time_ms=0, error_code=0, session_id=0,
             responses=[R["responses"](topic="t", partitions=[data])])


def _serve(server: socket.socket, answers: list[bytes], pieces: list[int]) -> None:
    """Answer each request with the next of ``answers``, written in pieces of those sizes."""
    conn, _ = server.accept()
    decoder = FrameDecoder(UNLIMITED_FRAME_SIZE)
    with conn:
        for records in answers:
            payload = None
            while payload is None:
                for frame in decoder.frames():
                    payload = frame
                    break
                else:
                    decoder.feed(conn.recv(65536))
            header, _ = decode_request(payload)
            frame = bytes(encode_response(ApiKey.FETCH, 12, header.correlation_id, _response(records)))
            at = 0
            for size in pieces:
                conn.sendall(frame[at:at + size])
                at += size
            conn.sendall(frame[at:])


@pytest.mark.parametrize("pieces", [[], [3], [5, 70_000], [300_000, 1, 65536]])
def test_a_large_response_is_read_whole_in_any_pieces(pieces):
    big, small = os.urandom(2_000_000), b"tiny"
    server = socket.create_server(("127.0.0.1", 0))
    thread = threading.Thread(target=_serve, args=(server, [big, small, big], pieces), daemon=True)
    thread.start()
    client = BlockingClient("127.0.0.1", server.getsockname()[1], "t", 10)
    request = fetch.REQUEST(replica_id=2, max_wait_ms=0, min_bytes=1, max_bytes=1 << 30, isolation_level=0,
                            session_id=0, session_epoch=-1, topics=[], forgotten_topics_data=[], rack_id="")
    try:
        for expected in (big, small, big):  # a large frame, then the decoder is ready for the next
            answer = client.send_and_receive(ApiKey.FETCH, 12, request)
            data = answer.responses[0].partitions[0]
            assert (data.high_watermark, bytes(data.records)) == (7, expected)
    finally:
        client.close()
        server.close()
        thread.join(10)
