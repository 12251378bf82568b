"""Streaming the body under a byte cap that counts decompressed bytes (R-HTTP-4).

httpx would decompress each network chunk in one go, and a 64 KiB chunk of a
gzip bomb can inflate to tens of megabytes before any cap is checked. So the
guard asks only for encodings it can inflate itself, reads the raw stream and
inflates with ``max_length``: memory stays near the cap whatever the ratio.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator

#: what we announce; anything else a server sends anyway is refused
ACCEPT_ENCODING = "gzip, deflate"
_STEP = 64 * 1024


class BodyError(Exception):
    """The body could not be decoded (unknown encoding, corrupt stream)."""


class CapExceededError(Exception):
    """The decoded body grew past the cap; raised as soon as it happens."""


class _Inflater:
    """gzip or deflate (zlib-wrapped or raw), with concatenated gzip members."""

    def __init__(self, encoding: str) -> None:
        self._gzip = encoding in {"gzip", "x-gzip"}
        self._raw_fallback = not self._gzip
        self._obj = self._new()

    def _new(self) -> zlib._Decompress:
        return zlib.decompressobj(zlib.MAX_WBITS | 16 if self._gzip else zlib.MAX_WBITS)

    def feed(self, data: bytes) -> Iterator[bytes]:
        while data:
            try:
                out = self._obj.decompress(data, _STEP)
            except zlib.error as exc:
                if self._raw_fallback:  # some servers send raw deflate without a header
                    self._raw_fallback = False
                    self._obj = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise BodyError(f"corrupt {'gzip' if self._gzip else 'deflate'} body") from exc
            self._raw_fallback = False
            if out:
                yield out
            data = self._obj.unconsumed_tail
            if self._obj.eof:
                data = self._obj.unused_data
                if not self._gzip or not data.strip(b"\0"):
                    return
                self._obj = self._new()

    def finish(self) -> bytes:
        return self._obj.flush()


def _decoders(content_encoding: str) -> list[_Inflater]:
    """Decoders in the order to apply them (the header lists them as applied)."""
    decoders: list[_Inflater] = []
    for token in reversed([t.strip().lower() for t in content_encoding.split(",")]):
        if token in {"", "identity"}:
            continue
        if token not in {"gzip", "x-gzip", "deflate"}:
            raise BodyError(f"unsupported Content-Encoding {token!r}")
        decoders.append(_Inflater(token))
    return decoders


def _through(decoders: list[_Inflater], chunk: bytes) -> Iterator[bytes]:
    if not decoders:
        yield chunk
        return
    first, rest = decoders[0], decoders[1:]
    for piece in first.feed(chunk):
        yield from _through(rest, piece)


async def read_capped(raw: AsyncIterator[bytes], content_encoding: str, cap: int) -> bytes:
    """The decoded body; :class:`CapExceededError` the moment it passes ``cap`` bytes."""
    decoders = _decoders(content_encoding)
    parts: list[bytes] = []
    size = 0
    async for chunk in raw:
        for piece in _through(decoders, chunk):
            size += len(piece)
            if size > cap:
                raise CapExceededError
            parts.append(piece)
    for index, decoder in enumerate(decoders):
        tail = decoder.finish()
        for piece in _through(decoders[index + 1 :], tail) if tail else ():
            size += len(piece)
            if size > cap:
                raise CapExceededError
            parts.append(piece)
    return b"".join(parts)
