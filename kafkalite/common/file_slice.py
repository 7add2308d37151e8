"""A byte range of an open file: what the log hands out instead of records, and what the codec and
the network layer pass along untouched so that records go from a segment to a socket with
``os.sendfile`` (Kafka's FileRecords.transferTo). Here, below every layer that uses it."""

from __future__ import annotations

import os
from typing import NamedTuple, final


# Final: hot paths tell a slice from bytes with ``type(x) is FileSlice`` (cheaper than isinstance),
# which only a final class lets the type checker narrow both ways.
@final
class FileSlice(NamedTuple):
    """Bytes of a segment's ``.log`` for ``os.sendfile(socket, fd, position, size)``. The
    descriptor stays open until the segment is deleted (after file.delete.delay.ms).

    A tuple: ``len()`` of it is 3, not ``size`` — code that takes bytes or a slice must tell
    them apart explicitly."""

    fd: int
    position: int
    size: int

    def read(self) -> bytes:
        """The bytes themselves (for TLS, which cannot sendfile, and for tests); fewer than
        ``size`` if the file was truncated under us."""
        chunks = []
        pos, left = self.position, self.size
        while left > 0:
            chunk = os.pread(self.fd, left, pos)
            if not chunk:
                break  # the file was truncated under us
            chunks.append(chunk)
            pos += len(chunk)
            left -= len(chunk)
        return b"".join(chunks)
