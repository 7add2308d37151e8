"""The codec's one error family.

Everything the codec rejects raises a subclass of :class:`ProtocolError`; malformed or truncated
input always surfaces as :class:`DecodeError`, never as IndexError or struct.error.
"""

from __future__ import annotations


class ProtocolError(Exception):
    """Base of every error the protocol package raises."""


class DecodeError(ProtocolError):
    """Input bytes that are not a valid encoding of what was asked for.

    ``api_key`` and ``api_version`` name the message being decoded (None for bare primitives,
    headers and frames); ``offset`` is the byte offset in the input where decoding failed.
    """

    def __init__(
        self,
        reason: str,
        *,
        offset: int,
        api_key: int | None = None,
        api_version: int | None = None,
        what: str | None = None,
    ) -> None:
        self.reason = reason
        self.offset = offset
        self.api_key = api_key
        self.api_version = api_version
        self.what = what
        super().__init__(reason)

    def __str__(self) -> str:
        where = []
        if self.what:
            where.append(self.what)
        if self.api_key is not None:
            where.append(f"api_key={self.api_key}")
        if self.api_version is not None:
            where.append(f"version={self.api_version}")
        where.append(f"offset={self.offset}")
        return f"{self.reason} ({', '.join(where)})"


class FrameTooLarge(DecodeError):
    """A frame's declared size is above the decoder's limit (Kafka's InvalidReceiveException)."""


class EncodeError(ProtocolError):
    """A value that cannot be written in the requested version (out of range, wrong type, null)."""


class UnsupportedVersion(ProtocolError):
    """The api or version is not one this codec declares."""

    def __init__(self, api_key: int, api_version: int) -> None:
        self.api_key = api_key
        self.api_version = api_version
        super().__init__(f"unsupported api_key={api_key} version={api_version}")
