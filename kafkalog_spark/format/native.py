"""Native helpers for the compiled kernels: memcpy, CRC-32C, LZ4 and zstd decompression.

- ``memcpy``: LLVM's memcpy intrinsic (libc's memcpy); numba's slice assignment is a byte loop.
  ``copy_bytes``: the same for a record's short fields, inlined (fixed-width copies, no call into libc).
  ``prefetch`` / ``prefetch_write``: LLVM's prefetch hint, for loops that stream through buffers larger than
  the caches.
- CRC-32C: the crc32c package's hardware function, registered like LZ4 below (after a self-test):
  :func:`crc32c_ranges` checksums every batch of a chunk in one call.
- LZ4: python-lz4 (a dependency) exports liblz4's ``LZ4_decompress_safe``. Its address is registered with
  llvmlite under a private name at import, so kernels that call it stay cacheable (``cache=True``: the
  cached code names the symbol, and every process, Spark workers included, registers it before the first
  call). :func:`lz4_frames` walks Kafka's LZ4 frames in compiled code and decompresses every block straight
  into one output buffer.
- zstd: the system libzstd when there is one (found with ctypes, registered like LZ4): :func:`zstd_frames`
  decompresses every batch of a run straight into one output buffer; otherwise python-zstandard does it.

Everything here is an accelerator: when a library or symbol is missing, ``LZ4_NATIVE`` / ``ZSTD_NATIVE`` /
``CRC_NATIVE`` is false and the Python path (:mod:`kafkalog_spark.format.compression`, the crc32c package)
does the work. ``KAFKALOG_SPARK_NATIVE=0`` in the environment turns all three off (to compare, or debug);
:func:`python_only` does it for one thread (the differential tests run both paths in one process). The
readers ask :func:`use_lz4`, :func:`use_zstd` and :func:`use_crc`.
Anything unusual in a frame (checksum flags, content size, truncation, a failing block) is also left to the
Python path, which produces the finding.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

_ENABLED = os.environ.get("KAFKALOG_SPARK_NATIVE", "1") != "0"


class _Switch(threading.local):
    on = True


_switch = _Switch()


@contextmanager
def python_only() -> Iterator[None]:
    """Within the block, this thread decodes with the Python path only (as ``KAFKALOG_SPARK_NATIVE=0``)."""
    before = _switch.on
    _switch.on = False
    try:
        yield
    finally:
        _switch.on = before


def use_crc() -> bool:
    return CRC_NATIVE and _switch.on


def use_lz4() -> bool:
    return LZ4_NATIVE and _switch.on


def use_zstd() -> bool:
    return ZSTD_NATIVE and _switch.on


# -- memcpy -------------------------------------------------------------------------------------------


@intrinsic
def memcpy(typingctx, dst, dst_pos, src, src_pos, n):
    """dst[dst_pos:dst_pos + n] = src[src_pos:src_pos + n] for 1-D uint8 arrays (no bounds checks)."""
    sig = types.void(dst, types.intp, src, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        d, dpos, s, spos, count = args
        darr = context.make_array(signature.args[0])(context, builder, d)
        sarr = context.make_array(signature.args[2])(context, builder, s)
        cgutils.raw_memcpy(builder, builder.gep(darr.data, [dpos]), builder.gep(sarr.data, [spos]), count, 1)
        return context.get_dummy_value()

    return sig, codegen


def _prefetch(write: int):
    """An intrinsic hinting that arr[pos] will soon be read (``write`` 0) or written (1): LLVM's prefetch, which
    never faults, even past the array's end."""

    @intrinsic
    def hint(typingctx, arr, pos):
        sig = types.void(arr, types.intp)

        def codegen(context, builder, signature, args):
            a, p = args
            aarr = context.make_array(signature.args[0])(context, builder, a)
            i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
            fn = cgutils.get_or_insert_function(builder.module,
                                                ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                                "llvm.prefetch.p0i8")
            ptr = builder.bitcast(builder.gep(aarr.data, [p]), i8p)
            builder.call(fn, [ptr, ir.Constant(i32, write), ir.Constant(i32, 3), ir.Constant(i32, 1)])
            return context.get_dummy_value()

        return sig, codegen

    return hint


prefetch = _prefetch(0)
prefetch_write = _prefetch(1)


def _fixed_copy(width: int):
    """An intrinsic copying exactly ``width`` bytes (a constant: LLVM inlines it as a few loads and stores)."""

    @intrinsic
    def copy(typingctx, dst, dst_pos, src, src_pos):
        sig = types.void(dst, types.intp, src, types.intp)

        def codegen(context, builder, signature, args):
            d, dpos, s, spos = args
            darr = context.make_array(signature.args[0])(context, builder, d)
            sarr = context.make_array(signature.args[2])(context, builder, s)
            cgutils.raw_memcpy(builder, builder.gep(darr.data, [dpos]), builder.gep(sarr.data, [spos]),
                               context.get_constant(types.intp, width), 1)
            return context.get_dummy_value()

        return sig, codegen

    return copy


_copy4 = _fixed_copy(4)
_copy8 = _fixed_copy(8)
_copy16 = _fixed_copy(16)
_copy32 = _fixed_copy(32)


@njit(cache=True, inline="always")
def copy_bytes(dst, dst_pos, src, src_pos, n):
    """memcpy for the short fields of a record (keys, values, header keys and values): inline fixed-width
    copies instead of a call into libc. The two copies of a size class overlap, so nothing outside
    dst[dst_pos:dst_pos + n] is written and nothing outside src[src_pos:src_pos + n] read; past 256 bytes,
    libc's memcpy."""
    if n <= 16:
        if n >= 8:
            _copy8(dst, dst_pos, src, src_pos)
            _copy8(dst, dst_pos + n - 8, src, src_pos + n - 8)
        elif n >= 4:
            _copy4(dst, dst_pos, src, src_pos)
            _copy4(dst, dst_pos + n - 4, src, src_pos + n - 4)
        else:
            for k in range(n):
                dst[dst_pos + k] = src[src_pos + k]
    elif n <= 32:
        _copy16(dst, dst_pos, src, src_pos)
        _copy16(dst, dst_pos + n - 16, src, src_pos + n - 16)
    elif n <= 256:
        k = 0
        while k < n - 32:
            _copy32(dst, dst_pos + k, src, src_pos + k)
            k += 32
        _copy32(dst, dst_pos + n - 32, src, src_pos + n - 32)
    else:
        memcpy(dst, dst_pos, src, src_pos, n)


# -- CRC-32C -------------------------------------------------------------------------------------------

_CRC_SYMBOL = "kafkalog_spark_crc32c_hw"


def _register_crc32c() -> bool:
    """The crc32c package's hardware CRC (Mark Adler's three-way SSE4.2 loop) as a symbol for compiled code,
    after checking it against the package's own function on a few lengths."""
    if not _ENABLED:
        return False
    try:
        import crc32c
        import llvmlite.binding as llvm

        # _crc32c_hw_adler is the package's x86 (SSE4.2) path; hardware_based says the CPU has it
        if platform.machine().lower() not in ("x86_64", "amd64") or not getattr(crc32c, "hardware_based", False):
            return False
        fn = ctypes.CDLL(crc32c._crc32c.__file__)._crc32c_hw_adler
        fn.restype = ctypes.c_uint32
        fn.argtypes = [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t]
        for n in (0, 1, 7, 61, 255, 4096, 16411, 100003):
            data = os.urandom(n)
            if fn(0xFFFFFFFF, data, n) ^ 0xFFFFFFFF != crc32c.crc32c(data):
                return False
        llvm.add_symbol(_CRC_SYMBOL, ctypes.cast(fn, ctypes.c_void_p).value)
        return True
    except (ImportError, OSError, AttributeError):  # pragma: no cover - another crc32c build: Python loop
        return False


CRC_NATIVE = _register_crc32c()


@intrinsic
def _crc32c_hw(typingctx, crc, buf, pos, n):
    sig = types.uint32(types.uint32, buf, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        c, b, bpos, count = args
        arr = context.make_array(signature.args[1])(context, builder, b)
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i32, [i32, i8p, ir.IntType(64)]),
                                            _CRC_SYMBOL)
        return builder.call(fn, [c, builder.bitcast(builder.gep(arr.data, [bpos]), i8p), count])

    return sig, codegen


@njit(cache=True)
def crc32c_ranges(buf, starts, ends):
    """CRC-32C of buf[starts[i]:ends[i]] for every i (the caller checks 0 <= start <= end <= len(buf))."""
    out = np.empty(len(starts), np.int64)
    ones = np.uint32(0xFFFFFFFF)
    for i in range(len(starts)):
        out[i] = np.int64(_crc32c_hw(ones, buf, starts[i], ends[i] - starts[i]) ^ ones)
    return out


# -- LZ4 ------------------------------------------------------------------------------------------------

_LZ4_SYMBOL = "kafkalog_spark_LZ4_decompress_safe"


def _register_lz4() -> bool:
    if not _ENABLED:
        return False
    try:
        import llvmlite.binding as llvm
        import lz4.block._block as block

        fn = ctypes.CDLL(block.__file__).LZ4_decompress_safe
        llvm.add_symbol(_LZ4_SYMBOL, ctypes.cast(fn, ctypes.c_void_p).value)
        return True
    except (ImportError, OSError, AttributeError):  # pragma: no cover - python-lz4 built without the symbol
        return False


LZ4_NATIVE = _register_lz4()


@intrinsic
def _lz4_decompress_safe(typingctx, src, src_pos, n, dst, dst_pos, capacity):
    sig = types.int32(src, types.intp, types.intp, dst, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        s, spos, count, d, dpos, cap = args
        sarr = context.make_array(signature.args[0])(context, builder, s)
        darr = context.make_array(signature.args[3])(context, builder, d)
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i32, [i8p, i8p, i32, i32]), _LZ4_SYMBOL)
        sp = builder.bitcast(builder.gep(sarr.data, [spos]), i8p)
        dp = builder.bitcast(builder.gep(darr.data, [dpos]), i8p)
        return builder.call(fn, [sp, dp, builder.trunc(count, i32), builder.trunc(cap, i32)])

    return sig, codegen


# lz4_frames stop reasons
LZ4_DONE = 0  # every batch of the range is decompressed (or marked for the Python path)
LZ4_NEED_SPACE = 1  # out has too little room left for the next block: grow it and resume at the batch
LZ4_FULL = 2  # out reached the soft limit: the caller flushes before resuming

LZ4_FRAME_MAGIC = 0x184D2204
KAFKA_LZ4_FLG = 0x60  # version 01, independent blocks, no checksums, no content size, no dictionary


@njit(cache=True)
def lz4_frames(src, starts, ends, first, stop, out, o, cap, soft_limit, hc_by_bd, out_start, out_end, python):
    """Decompress the LZ4 frames src[starts[i]:ends[i]] for i in [first, stop) into ``out`` from ``o``.

    Only the frame layout Kafka's Java client writes takes this path (FLG 0x60, a valid header checksum,
    64 KiB..4 MiB blocks); any other frame, a truncated one, a failing block or one inflating past ``cap``
    sets ``python[i]`` and is left to the Python decompressor, which reports the problem or handles the
    variant. A batch's output is out[out_start[i]:out_end[i]]. Returns (next batch, o, reason).
    """
    for i in range(first, stop):
        if o >= soft_limit and i > first:
            return i, o, LZ4_FULL
        p = starts[i]
        e = ends[i]
        if e - p < 7:
            python[i] = True
            continue
        magic = (np.uint32(src[p]) | (np.uint32(src[p + 1]) << 8) | (np.uint32(src[p + 2]) << 16)
                 | (np.uint32(src[p + 3]) << 24))
        bd = src[p + 5]
        if magic != LZ4_FRAME_MAGIC or src[p + 4] != KAFKA_LZ4_FLG or (bd & 0x8F) != 0 or bd < 0x40:
            python[i] = True
            continue
        if src[p + 6] != hc_by_bd[(bd >> 4) - 4]:
            python[i] = True
            continue
        block_max = np.int64(1) << (8 + 2 * (bd >> 4))  # 64 KiB, 256 KiB, 1 MiB, 4 MiB
        q = p + 7
        start = o
        w = o
        ok = False
        while True:
            if q + 4 > e:
                break  # truncated
            size = (np.int64(src[q]) | (np.int64(src[q + 1]) << 8) | (np.int64(src[q + 2]) << 16)
                    | (np.int64(src[q + 3]) << 24))
            q += 4
            if size == 0:
                ok = True  # end mark; bytes after the frame are ignored, as python-lz4 does
                break
            stored = (size & 0x80000000) != 0
            size &= 0x7FFFFFFF
            if size > block_max or q + size > e:
                break
            room = min(block_max, cap - (w - start))
            if len(out) - w < room:
                return i, start, LZ4_NEED_SPACE
            if stored:
                if size > room:
                    break
                memcpy(out, w, src, q, size)
                w += size
            else:
                got = _lz4_decompress_safe(src, q, size, out, w, room)
                if got < 0:
                    break
                w += got
            q += size
        if not ok:
            python[i] = True
            continue
        out_start[i] = start
        out_end[i] = w
        o = w
    return stop, o, LZ4_DONE


def lz4_header_checksums() -> np.ndarray:
    """The header checksum byte of a Kafka LZ4 frame (FLG 0x60) for BD 0x40, 0x50, 0x60, 0x70."""
    from .compression import _KNOWN_LZ4_HC

    return np.array([_KNOWN_LZ4_HC[bytes([KAFKA_LZ4_FLG, bd])] for bd in (0x40, 0x50, 0x60, 0x70)], np.uint8)


# -- zstd ------------------------------------------------------------------------------------------------

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
    if not _ENABLED:
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
    reason) with the reasons of :func:`lz4_frames`."""
    for i in range(first, stop):
        if o >= soft_limit and i > first:
            return i, o, LZ4_FULL
        room = min(cap, len(out) - o)
        r = _zstd_decompress_dctx(dctx, out, o, room, src, starts[i], ends[i] - starts[i])
        if r > np.uint64(0) - np.uint64(_ZSTD_ERROR_MAX_CODE):
            code = np.int64(np.uint64(0) - r)
            if code == ZSTD_ERROR_DST_SIZE_TOO_SMALL and room < cap:
                return i, o, LZ4_NEED_SPACE
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
    return stop, o, LZ4_DONE


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
