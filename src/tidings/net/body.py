"""Streaming the body under a byte cap that counts decompressed bytes (R-HTTP-4).

An HTTP client decompressing for us inflates each network chunk in one go, and a
64 KiB chunk of a gzip bomb can inflate to tens of megabytes before any cap is
checked. So the guard turns aiohttp's decompression off, asks only for
encodings it can inflate itself, reads the raw stream and inflates with
``max_length``: memory stays near the cap whatever the ratio.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator

from tidings.errors import BodyTooLargeError, FetchError

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


class _CappedDecoder:
    """Decodes chunk after chunk, failing the moment the output passes ``cap``."""

    def __init__(self, content_encoding: str, cap: int) -> None:
        self._decoders = _decoders(content_encoding)
        self._cap = cap
        self._parts: list[bytes] = []
        self._size = 0

    def feed(self, chunk: bytes) -> None:
        for piece in _through(self._decoders, chunk):
            self._add(piece)

    def finish(self) -> bytes:
        for index, decoder in enumerate(self._decoders):
            tail = decoder.finish()
            for piece in _through(self._decoders[index + 1 :], tail) if tail else ():
                self._add(piece)
        return b"".join(self._parts)

    def _add(self, piece: bytes) -> None:
        self._size += len(piece)
        if self._size > self._cap:
            raise CapExceededError
        self._parts.append(piece)


async def read_capped(raw: AsyncIterator[bytes], content_encoding: str, cap: int) -> bytes:
    """The decoded body; :class:`CapExceededError` the moment it passes ``cap`` bytes."""
    decoder = _CappedDecoder(content_encoding, cap)
    async for chunk in raw:
        decoder.feed(chunk)
    return decoder.finish()


def check_encoding(content_encoding: str) -> None:
    """Raise :class:`BodyError` now for an encoding a kept body could not be decoded from."""
    _decoders(content_encoding)


async def read_encoded(raw: AsyncIterator[bytes], content_encoding: str, cap: int) -> bytes:
    """The body as sent, for decoding later (:class:`Body`); at most ``cap`` bytes of it.

    An encoding we could not decode fails now, as it would when decoding at once.
    """
    check_encoding(content_encoding)
    parts: list[bytes] = []
    size = 0
    async for chunk in raw:
        size += len(chunk)
        if size > cap:
            raise CapExceededError
        parts.append(chunk)
    return b"".join(parts)


def decode_capped(data: bytes, content_encoding: str, cap: int) -> bytes:
    """``data`` decoded at once, under the same cap as :func:`read_capped`."""
    decoder = _CappedDecoder(content_encoding, cap)
    decoder.feed(data)
    return decoder.finish()


def too_large(url: str, cap: int) -> BodyTooLargeError:
    return BodyTooLargeError(
        url, f"{url}: body larger than {cap} bytes (raise max_bytes if it is expected)")


def undecodable(url: str, exc: BodyError) -> FetchError:
    return FetchError(url, f"{url}: {exc}")


class Body:
    """A response body as it came off the wire, decoded (under the cap) on first use.

    A collection round fetches ahead of parsing so that slow servers start
    waiting early; what waits for the CPU is then held as sent, a gzip'd feed at
    about a quarter of its size. Decoding errors are the fetch's own errors
    (:class:`BodyTooLargeError`, :class:`FetchError`), raised where the body is
    first read.
    """

    __slots__ = ("_cap", "_data", "_encoding", "_url")

    def __init__(self, data: bytes, content_encoding: str = "", *, cap: int = 0,
                 url: str = "") -> None:
        self._data = data
        self._encoding = content_encoding
        self._cap = cap
        self._url = url

    @property
    def decoded(self) -> bool:
        return not self._encoding

    @property
    def held_bytes(self) -> int:
        """Bytes this body takes now (encoded until it is first read)."""
        return len(self._data)

    def content(self) -> bytes:
        if self._encoding:
            try:
                data = decode_capped(self._data, self._encoding, self._cap)
            except CapExceededError:
                raise too_large(self._url, self._cap) from None
            except BodyError as exc:
                raise undecodable(self._url, exc) from exc
            self._data, self._encoding = data, ""
        return self._data
