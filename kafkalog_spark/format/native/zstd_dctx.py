"""zstd: the system libzstd when there is one (found with ctypes, registered with llvmlite as :mod:`.lz4_block`
registers LZ4): :func:`zstd_frames` decompresses every batch of a run straight into one output buffer; otherwise
python-zstandard (:mod:`kafkalog_spark.format.compression`) does it."""

from __future__ import annotations

import ctypes
import ctypes.util
import threading

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .frames_stop import DONE, FULL, NEED_SPACE
from .switch import ENABLED, native_on

ZSTD_ERROR_DST_SIZE_TOO_SMALL = 70  # ZSTD_error_dstSize_tooSmall, stable since zstd 1.3
_ZSTD_ERROR_MAX_CODE = 120  # error results are (size_t)-code with code < ZSTD_error_maxCode (120)
_ZSTD_SYMBOL = "kafkalog_spark_ZSTD_decompressDCtx"


def _zstd_library() -> ctypes.CDLL | None:
    """The libzstd that python-zstandard (the Python path) links, when its cffi module exports it: both paths then
    read a corrupt frame alike (libzstd versions differ on corrupt input that no check catches), whatever the
    system has. Otherwise the system's libzstd."""
    import importlib.util

    spec = importlib.util.find_spec("zstandard._cffi")  # found, not imported: importing it needs cffi
    if spec is not None and spec.origin:
        try:
            return ctypes.CDLL(spec.origin)
        except OSError:
            pass
    name = ctypes.util.find_library("zstd")
    return ctypes.CDLL(name) if name else None


def _load_zstd():
    if not ENABLED:
        return None
    try:
        import llvmlite.binding as llvm

        lib = _zstd_library()
        if lib is None:
            return None
        lib.ZSTD_versionNumber.restype = ctypes.c_uint
        if lib.ZSTD_versionNumber() < 10400:  # 1.4.0: the error codes and one-shot API used here
            return None
        lib.ZSTD_createDCtx.restype = ctypes.c_void_p
        lib.ZSTD_createDCtx.argtypes = []
        lib.ZSTD_freeDCtx.argtypes = [ctypes.c_void_p]
        lib.ZSTD_getErrorString.restype = ctypes.c_char_p
        lib.ZSTD_getErrorString.argtypes = [ctypes.c_int]
        llvm.add_symbol(_ZSTD_SYMBOL, ctypes.cast(lib.ZSTD_decompressDCtx, ctypes.c_void_p).value)
        return lib
    except (ImportError, OSError, AttributeError):  # pragma: no cover - no usable libzstd: python-zstandard
        return None


_zstd = _load_zstd()
ZSTD_NATIVE = _zstd is not None


def use_zstd() -> bool:
    return ZSTD_NATIVE and native_on()


class _DCtx(threading.local):
    """One decompression context per thread (a context is not thread-safe; creating one costs ~100 KiB)."""

    ptr: int | None = None

    def get(self) -> int:
        if self.ptr is None:
            self.ptr = _zstd.ZSTD_createDCtx()
            if not self.ptr:
                raise MemoryError("ZSTD_createDCtx failed")
        return self.ptr

    def __del__(self):
        if self.ptr and _zstd is not None:
            _zstd.ZSTD_freeDCtx(self.ptr)


_dctx = _DCtx()


def zstd_context() -> int:
    """This thread's ZSTD_DCtx, as an address for :func:`zstd_frames`."""
    return _dctx.get()


@intrinsic
def _zstd_decompress_dctx(typingctx, dctx, dst, dst_pos, capacity, src, src_pos, n):
    sig = types.uint64(types.intp, dst, types.intp, types.intp, src, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        ctx_addr, d, dpos, cap, s, spos, count = args
        darr = context.make_array(signature.args[1])(context, builder, d)
        sarr = context.make_array(signature.args[4])(context, builder, s)
        i8p, i64 = ir.IntType(8).as_pointer(), ir.IntType(64)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i8p, i8p, i64, i8p, i64]),
                                            _ZSTD_SYMBOL)
        dp = builder.bitcast(builder.gep(darr.data, [dpos]), i8p)
        sp = builder.bitcast(builder.gep(sarr.data, [spos]), i8p)
        return builder.call(fn, [builder.inttoptr(ctx_addr, i8p), dp, cap, sp, count])

    return sig, codegen


@njit(cache=True)
def zstd_frames(src, starts, ends, first, stop, out, o, cap, soft_limit, dctx, out_start, out_end, error):
    """Decompress the zstd frames src[starts[i]:ends[i]] for i in [first, stop) into ``out`` from ``o`` with
    libzstd's one-shot ZSTD_decompressDCtx (concatenated and skippable frames included; a truncated frame is
    an error). A batch's output is out[out_start[i]:out_end[i]]; a failing one gets its zstd error code in
    ``error[i]`` (dstSize_tooSmall: it inflates past ``cap``) and an empty output. Returns (next batch, o,
    reason: :mod:`.frames_stop`)."""
    for i in range(first, stop):
        if o >= soft_limit and i > first:
            return i, o, FULL
        room = min(cap, len(out) - o)
        r = _zstd_decompress_dctx(dctx, out, o, room, src, starts[i], ends[i] - starts[i])
        if r > np.uint64(0) - np.uint64(_ZSTD_ERROR_MAX_CODE):
            code = np.int64(np.uint64(0) - r)
            if code == ZSTD_ERROR_DST_SIZE_TOO_SMALL and room < cap:
                return i, o, NEED_SPACE
            error[i] = code
            out_start[i] = o
            out_end[i] = o
            continue
        if not zstd_streamable(src, starts[i], ends[i], np.int64(r)):
            error[i] = ZSTD_RECHECK  # see ZSTD_RECHECK: the Python path reads it, as Kafka would
            out_start[i] = o
            out_end[i] = o
            continue
        out_start[i] = o
        out_end[i] = o + np.int64(r)
        o += np.int64(r)
    return stop, o, DONE


# Kafka decompresses zstd streaming (zstd-jni), which is stricter than the one-shot call used here: it keeps only
# the frame's window, so a match reaching further back is corruption, refuses windows over 128 MiB
# (ZSTD_WINDOWLOG_LIMIT_DEFAULT), and refuses blocks, read or written, over Block_Maximum_Size (min(window,
# 128 KiB)), which one-shot libzstd 1.5 accepts. A payload the one-shot call read is kept only when streaming
# would read it alike (zstd_streamable); otherwise the streaming Python path reads it again. A producer's batch of
# up to 128 KiB within its window never needs that; bombs, corrupt frames and larger batches do.
ZSTD_RECHECK = -1
_ZSTD_MAGIC = 0xFD2FB528
_ZSTD_SKIPPABLE = 0x184D2A50  # the low 4 bits vary
_ZSTD_STREAM_WINDOW_MAX = 1 << 27
_ZSTD_BLOCK_MAX = 128 * 1024


@njit(cache=True)
def _le(src, pos, width):
    v = np.int64(0)
    for k in range(min(width, 7)):  # sizes past 2^56 bytes are not real
        v |= np.int64(src[pos + k]) << (8 * k)
    return v


@njit(cache=True)
def zstd_streamable(src, start, end, produced):
    """Whether the zstd payload src[start:end], which the one-shot call decompressed to ``produced`` bytes, is
    one that streaming reads alike: every frame's window within the streaming limit; every block, compressed and
    decompressed, within its maximum size (a compressed block's output is only known in sum: the output beyond the
    raw and RLE blocks must fit one block); and each frame's largest possible output within its window, or else
    the whole output, so no match can reach past it. False on anything unexpected."""
    pos = start
    frames = 0
    known = np.int64(0)  # the output of raw and RLE blocks: their sizes
    compressed_max = loose_window = np.int64(1) << 62  # the least block maximum and window where they matter
    for _ in range(end - start):  # bounded: every frame takes at least 4 bytes
        if pos >= end:
            break
        if end - pos < 8:
            return False
        magic = _le(src, pos, 4)
        if magic & 0xFFFFFFF0 == _ZSTD_SKIPPABLE:
            return False  # rare enough: the streaming path decides
        if magic != _ZSTD_MAGIC:
            return False
        fhd = np.int64(src[pos + 4])
        single = fhd & 0x20
        p = pos + 5
        window = np.int64(0)
        if not single:
            wd = np.int64(src[p])
            p += 1
            base = np.int64(1) << (10 + (wd >> 3))
            window = base + (base >> 3) * (wd & 7)
        p += (0, 1, 2, 4)[fhd & 3]
        width = (1 if single else 0, 2, 4, 8)[fhd >> 6]
        if p + width > end:
            return False
        if single:
            window = _le(src, p, width) + (256 if width == 2 else 0)
        p += width
        if window > _ZSTD_STREAM_WINDOW_MAX:
            return False
        block_max = min(window, _ZSTD_BLOCK_MAX)
        bound = np.int64(0)
        while True:
            if p + 3 > end:
                return False
            h = _le(src, p, 3)
            p += 3
            kind, size = (h >> 1) & 3, h >> 3
            if kind == 3 or size > block_max:
                return False
            p += size if kind != 1 else 1
            bound += size if kind != 2 else block_max
            if kind == 2:
                compressed_max = min(compressed_max, block_max)
            else:
                known += size
            if h & 1:
                break
        p += 4 if fhd & 4 else 0
        frames += 1
        if bound > window:  # matches could reach past the window: only the actual output can tell
            loose_window = min(loose_window, window)
        pos = p
    if frames == 0 or pos != end:
        return False
    return produced - known <= compressed_max and produced <= loose_window
