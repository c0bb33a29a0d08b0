"""Why a decompression kernel (:func:`.lz4_block.lz4_frames`, :func:`.zstd_dctx.zstd_frames`) returned: one
vocabulary for every codec, plain ints for compiled code."""

DONE = 0  # every batch of the range is decompressed (or marked for the Python path)
NEED_SPACE = 1  # out has too little room left for the next batch or block: grow it and resume at the batch
FULL = 2  # out reached the soft limit: the caller flushes before resuming
