"""Native helpers for the compiled kernels, one module per bridge: :mod:`.memory` (memcpy, prefetch),
:mod:`.crc32c_hw` (CRC-32C), :mod:`.lz4_block` and :mod:`.zstd_dctx` (decompression, their kernels stopping for the
reasons of :mod:`.frames_stop`).

Everything here is an accelerator: when a library or symbol is missing, ``LZ4_NATIVE`` / ``ZSTD_NATIVE`` /
``CRC_NATIVE`` is false and the Python path (:mod:`kafkalog_spark.format.compression`, the crc32c package)
does the work. ``KAFKALOG_SPARK_NATIVE=0`` in the environment turns all three off (to compare, or debug);
:func:`.switch.python_only` does it for one thread. The readers ask ``use_lz4``, ``use_zstd`` and ``use_crc``.
"""
