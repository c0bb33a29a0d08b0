"""CRC-32C: the crc32c package's hardware function, registered with llvmlite under a private name after a
self-test (as :mod:`.lz4_block` registers LZ4): :func:`crc32c_ranges` checksums every batch of a chunk in one
call; without it, the crc32c package's Python function does the work."""

from __future__ import annotations

import ctypes
import os
import platform

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .switch import ENABLED, native_on

_CRC_SYMBOL = "kafkalog_spark_crc32c_hw"


def _register_crc32c() -> bool:
    """The crc32c package's hardware CRC (Mark Adler's three-way SSE4.2 loop) as a symbol for compiled code,
    after checking it against the package's own function on a few lengths."""
    if not ENABLED:
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


def use_crc() -> bool:
    return CRC_NATIVE and native_on()


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
