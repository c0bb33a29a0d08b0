"""The bound a decoder cannot beat: the codec library alone decompressing the same batches, nothing else (no
framing, no CRC, no record decoding, no Arrow). libzstd through python-zstandard, liblz4 through python-lz4's
frame API, each batch's records section (from byte 61 of a v2 batch) decompressed into a fresh buffer.

    .venv/bin/python -m tests.bench.codec_bound            # the first 32 MiB of each compressed bench file
"""

from __future__ import annotations

import struct
from collections.abc import Callable

V2_RECORDS_START = 61  # DefaultRecordBatch.RECORDS_OFFSET: the records section (compressed as a whole)
CODEC_IDS = {1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


def compressed_sections(data: bytes) -> tuple[list[bytes], int, str | None]:
    """The records sections of the v2 batches in ``data`` (whole batches only), their record count, and the
    codec they share (None if uncompressed)."""
    sections, records, codec, pos = [], 0, None, 0
    while pos + V2_RECORDS_START <= len(data):
        size = struct.unpack_from(">i", data, pos + 8)[0]
        end = pos + 12 + size
        if end > len(data):
            break
        attributes = struct.unpack_from(">h", data, pos + 21)[0]
        codec = CODEC_IDS.get(attributes & 7)
        records += struct.unpack_from(">i", data, pos + 57)[0]
        sections.append(data[pos + V2_RECORDS_START:end])
        pos = end
    return sections, records, codec


def decompressor(codec: str) -> Callable[[bytes], bytes]:
    if codec == "zstd":
        import zstandard

        dctx = zstandard.ZstdDecompressor()
        # Kafka's producers write zstd frames without the content size: give the output a bound, as consumers do
        return lambda section: dctx.decompress(section, max_output_size=16 * 1024 * 1024)
    if codec == "lz4":
        import lz4.frame

        return lz4.frame.decompress
    raise ValueError(f"no codec bound for {codec}")


def decompress_all(sections: list[bytes], codec: str) -> int:
    """Decompress every section; the uncompressed bytes (so the work cannot be skipped)."""
    fn = decompressor(codec)
    return sum(len(fn(s)) for s in sections)


def main() -> None:
    from .data import MIB, ensure_datasets, read_prefix
    from .timing import measure

    for codec, ds in ensure_datasets(codecs=("lz4", "zstd")).items():
        prefix = read_prefix(ds.segment, 32 * MIB)
        sections, records, _ = compressed_sections(prefix)
        t = measure(lambda s=sections, c=codec, n=records: (n, len(s)) if decompress_all(s, c) else (0, 0),
                    len(prefix), 5)
        print(f"{codec}: {records / t.best / 1e6:.2f} M records/s ({t.best:.3f} s CPU for {records:,} records)")


if __name__ == "__main__":
    main()
