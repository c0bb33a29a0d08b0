"""Checksums: CRC-32C for v2 batches and producer snapshots, CRC32 for legacy messages."""

from __future__ import annotations

import zlib

try:  # hardware-accelerated (SSE4.2 / ARMv8 CRC): tens of GB/s
    from crc32c import crc32c
except ImportError:  # pragma: no cover - the package ships wheels for the usual platforms
    import crcmod.predefined

    _crc32c = crcmod.predefined.mkCrcFun("crc-32c")

    def crc32c(data: bytes | memoryview) -> int:  # type: ignore[misc]
        return _crc32c(bytes(data))


def crc32(data: bytes | memoryview) -> int:
    """Plain CRC32 (legacy v0/v1 messages), as zlib computes it."""
    return zlib.crc32(data) & 0xFFFFFFFF


__all__ = ["crc32", "crc32c"]
