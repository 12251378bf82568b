"""Giving the C heap's free memory back to the system between the phases of a process.

A collection round parses hundreds of feeds at once; when it ends, Python frees those
objects but glibc keeps most of the freed arenas mapped, so the indexing that follows
(and the rest of a long-lived process) stands on top of the round's high-water mark.
``malloc_trim`` returns what is free at the top of every arena. Elsewhere than glibc
this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from functools import cache


@cache
def _trim() -> ctypes._FuncPointer | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim: ctypes._FuncPointer = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def release_freed() -> None:
    """Collect cycles, then hand the heap's free pages back (between two phases)."""
    gc.collect()
    trim = _trim()
    if trim is not None:
        trim(0)
