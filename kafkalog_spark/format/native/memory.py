"""``memcpy``: LLVM's memcpy intrinsic (libc's memcpy); numba's slice assignment is a byte loop. ``copy_bytes``:
the same for a record's short fields, inlined (fixed-width copies, no call into libc). ``prefetch`` /
``prefetch_write``: LLVM's prefetch hint, for loops that stream through buffers larger than the caches."""

from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic


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
