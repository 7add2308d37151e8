"""Kafka's wire protocol as a codec that does no I/O.

Never imports socket or threading: the server, the controller's client and the benchmark all use
it over their own transports. See docs/protocol.md.
"""

from .api_keys import ApiKey, api_name
from .codec import (
    SplicedFrame,
    body_codec,
    decode_body,
    decode_request,
    decode_request_header,
    decode_response,
    encode_body,
    encode_request,
    encode_response,
    get_api,
    peek_api,
)
from .errors import DecodeError, EncodeError, FrameTooLarge, ProtocolError, UnsupportedVersion
from .frames import UNLIMITED_FRAME_SIZE, FrameDecoder, frame
from .messages import ALL as ALL_APIS
from .messages import BY_KEY as APIS_BY_KEY
from .messages import BY_NAME as APIS_BY_NAME

__all__ = [
    "ALL_APIS",
    "APIS_BY_KEY",
    "APIS_BY_NAME",
    "UNLIMITED_FRAME_SIZE",
    "ApiKey",
    "DecodeError",
    "EncodeError",
    "FrameDecoder",
    "FrameTooLarge",
    "ProtocolError",
    "SplicedFrame",
    "UnsupportedVersion",
    "api_name",
    "body_codec",
    "decode_body",
    "decode_request",
    "decode_request_header",
    "decode_response",
    "encode_body",
    "encode_request",
    "encode_response",
    "frame",
    "get_api",
    "peek_api",
]
