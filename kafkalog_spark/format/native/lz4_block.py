"""LZ4: python-lz4 (a dependency) exports liblz4's ``LZ4_decompress_safe``. Its address is registered with llvmlite
under a private name at import, so kernels that call it stay cacheable (``cache=True``: the cached code names the
symbol, and every process, Spark workers included, registers it before the first call). :func:`lz4_frames` walks
Kafka's LZ4 frames in compiled code and decompresses every block straight into one output buffer. Anything
unusual in a frame (checksum flags, content size, truncation, a failing block) is left to the Python path
(:mod:`kafkalog_spark.format.compression`), which produces the finding."""

from __future__ import annotations

import ctypes

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .frames_stop import DONE, FULL, NEED_SPACE
from .memory import memcpy
from .switch import ENABLED, native_on

_LZ4_SYMBOL = "kafkalog_spark_LZ4_decompress_safe"


def _register_lz4() -> bool:
    if not ENABLED:
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


def use_lz4() -> bool:
    return LZ4_NATIVE and native_on()


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


LZ4_FRAME_MAGIC = 0x184D2204
KAFKA_LZ4_FLG = 0x60  # version 01, independent blocks, no checksums, no content size, no dictionary


@njit(cache=True)
def lz4_frames(src, starts, ends, first, stop, out, o, cap, soft_limit, hc_by_bd, out_start, out_end, python):
    """Decompress the LZ4 frames src[starts[i]:ends[i]] for i in [first, stop) into ``out`` from ``o``.

    Only the frame layout Kafka's Java client writes takes this path (FLG 0x60, a valid header checksum,
    64 KiB..4 MiB blocks); any other frame, a truncated one, a failing block or one inflating past ``cap``
    sets ``python[i]`` and is left to the Python decompressor, which reports the problem or handles the
    variant. A batch's output is out[out_start[i]:out_end[i]]. Returns (next batch, o, reason: :mod:`.frames_stop`).
    """
    for i in range(first, stop):
        if o >= soft_limit and i > first:
            return i, o, FULL
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
                return i, start, NEED_SPACE
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
    return stop, o, DONE


def lz4_header_checksums() -> np.ndarray:
    """The header checksum byte of a Kafka LZ4 frame (FLG 0x60) for BD 0x40, 0x50, 0x60, 0x70."""
    from ..compression import _KNOWN_LZ4_HC

    return np.array([_KNOWN_LZ4_HC[bytes([KAFKA_LZ4_FLG, bd])] for bd in (0x40, 0x50, 0x60, 0x70)], np.uint8)
