"""tilec: build, schedule, compile and run tile-level GPU kernels from Python.

A ctypes binding over libtilec.so (no compiler needed to install it)::

    import numpy as np, tilec
    f = tilec.Fusion()
    a = f.input(tilec.f32, (100, 75)); b = f.input(tilec.f32, (100, 75))
    c = f.input(tilec.f32, (100, 75))
    o = f.add_output(a * b + c)
    o.split(0, 8).split(2, 32).reorder({1: 2, 2: 1}).merge(0, 1)
    o.parallelize(0, tilec.BIDx).parallelize(2, tilec.TIDx)
    f.propagate(o); f.parallelize_all_like(o); f.inline_most()
    k = f.compile()                     # OpenCL (PoCL on the CPU by default)
    out = k.run(x, y, z)                # NumPy in, NumPy out

and tilec's own convolution kernels on NumPy arrays::

    y = tilec.conv2d(x, w, stride=1, padding=1)   # NCHW; float32 or float16

See docs/python.md in the tilec source tree.
"""

from ._errors import LibraryNotFound, Status, TilecError
from ._core import (Allocation, DType, Fusion, Kernel, Launch, LdstType, MemType, ParallelType,
                    SwizzleType, Target, Tensor, bf16_bits_to_f32, f32_to_bf16_bits)
from ._conv import conv2d, conv2d_backward_data, conv2d_backward_weight
from . import _lib

__version__ = "0.1.0"

# dtypes
f32, f16, bf16, i32, i8 = DType.f32, DType.f16, DType.bf16, DType.i32, DType.i8

# parallel types
Serial = ParallelType.Serial
BIDx, BIDy, BIDz = ParallelType.BIDx, ParallelType.BIDy, ParallelType.BIDz
TIDx, TIDy, TIDz = ParallelType.TIDx, ParallelType.TIDy, ParallelType.TIDz
DIDx, DIDy, DIDz = ParallelType.DIDx, ParallelType.DIDy, ParallelType.DIDz
Vectorize, Unroll = ParallelType.Vectorize, ParallelType.Unroll

# memory types ("global" is a Python keyword, hence global_mem)
global_mem, shared, local, tensor_mem = MemType.GLOBAL, MemType.SHARED, MemType.LOCAL, MemType.TENSOR

SWIZZLE_XOR = SwizzleType.XOR


def library():
    """The loaded libtilec (a ctypes.CDLL); loads it on first use."""
    return _lib.load()


def library_path():
    """Where libtilec.so was loaded from."""
    return _lib.path()


__all__ = [
    "Fusion", "Tensor", "Kernel", "Launch", "Allocation", "TilecError", "LibraryNotFound", "Status",
    "DType", "MemType", "ParallelType", "LdstType", "SwizzleType", "Target",
    "f32", "f16", "bf16", "i32", "i8",
    "Serial", "BIDx", "BIDy", "BIDz", "TIDx", "TIDy", "TIDz", "DIDx", "DIDy", "DIDz",
    "Vectorize", "Unroll", "global_mem", "shared", "local", "tensor_mem", "SWIZZLE_XOR",
    "f32_to_bf16_bits", "bf16_bits_to_f32", "library", "library_path",
    "conv2d", "conv2d_backward_data", "conv2d_backward_weight",
]
