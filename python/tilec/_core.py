"""Fusion, Tensor and Kernel: a Pythonic layer over the tilec C API."""

import ctypes
import enum
from collections import namedtuple

import numpy as np

from . import _lib
from ._errors import Status, TilecError

# ---- enums ---------------------------------------------------------------


class DType(enum.IntEnum):
    """tc_dtype."""
    f32 = 0
    f16 = 1
    bf16 = 2
    i32 = 3
    i8 = 4

    @property
    def itemsize(self):
        return (4, 2, 2, 4, 1)[self]

    @property
    def storage(self):
        """The NumPy dtype of the C buffer (bf16 is held as uint16 bits)."""
        return np.dtype((np.float32, np.float16, np.uint16, np.int32, np.int8)[self])

    @property
    def numpy(self):
        """The NumPy dtype arrays of this type are returned as (bf16: float32)."""
        return np.dtype((np.float32, np.float16, np.float32, np.int32, np.int8)[self])

    def __repr__(self):
        return "tilec." + self.name


class MemType(enum.IntEnum):
    """tc_memtype."""
    GLOBAL = 0
    SHARED = 1
    LOCAL = 2
    TENSOR = 3


class ParallelType(enum.IntEnum):
    """tc_ptype: what a loop axis is bound to."""
    Serial = 0
    BIDx = 1
    BIDy = 2
    BIDz = 3
    TIDx = 4
    TIDy = 5
    TIDz = 6
    DIDx = 7
    DIDy = 8
    DIDz = 9
    Vectorize = 10
    Unroll = 11


class LdstType(enum.IntEnum):
    """tc_ldst_type: the instruction a set (load/store) op is lowered to."""
    DEFAULT = 0
    CP_ASYNC = 1
    BULK_TENSOR = 2
    LDMATRIX = 3
    LDMATRIX_TRANS = 4
    STMATRIX = 5
    TMEM_LOAD = 6
    TMEM_STORE = 7
    STMATRIX_TRANS = 8


class SwizzleType(enum.IntEnum):
    XOR = 0


class Target(enum.IntEnum):
    opencl = 0
    cuda = 1
    hip = 2


_UNARY = {"neg": 0, "abs": 1, "relu": 2, "exp": 3, "log": 4, "sqrt": 5, "tanh": 6,
          "sigmoid": 7, "reciprocal": 8, "gelu": 9, "silu": 10}
_BINARY = {"add": 0, "sub": 1, "mul": 2, "div": 3, "max": 4, "min": 5}
_REDUCE = {"sum": 0, "max": 1, "min": 2}
_COMPARE = {"lt": 0, "le": 1, "gt": 2, "ge": 3, "eq": 4, "ne": 5}


def _enum_arg(cls, value, what):
    """Accepts an enum member, its integer value, or its name (any case)."""
    if isinstance(value, cls):
        return value
    if isinstance(value, str):
        for m in cls:
            if m.name.lower() == value.lower():
                return m
        raise ValueError("unknown %s %r; expected one of %s"
                         % (what, value, ", ".join(m.name for m in cls)))
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        try:
            return cls(int(value))
        except ValueError:
            raise ValueError("unknown %s %d" % (what, value)) from None
    raise TypeError("%s must be a tilec.%s, an int or a name, not %s"
                    % (what, cls.__name__, type(value).__name__))


def _dtype_arg(value):
    if isinstance(value, (np.dtype, type)) and not isinstance(value, enum.EnumMeta):
        try:
            dt = np.dtype(value)
        except TypeError:
            dt = None
        for d in DType:
            if d != DType.bf16 and dt == d.storage:
                return d
        raise ValueError("no tilec dtype for NumPy dtype %r (use tilec.bf16 for bfloat16)" % (value,))
    return _enum_arg(DType, value, "dtype")


# ---- 16-bit float conversions (round to nearest even, as the kernels) -----


def f32_to_bf16_bits(x):
    """float array -> bfloat16 bit patterns (uint16), rounding to nearest even."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    r = ((u + np.uint32(0x7FFF) + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), r)


def bf16_bits_to_f32(bits):
    """bfloat16 bit patterns (uint16) -> float32 (exact)."""
    b = np.ascontiguousarray(bits, dtype=np.uint16)
    return (b.astype(np.uint32) << 16).view(np.float32)


def _to_buffer(x, dt, shape, what):
    """A C-contiguous array holding x in dt's storage type, checked against shape."""
    a = np.asarray(x)
    if a.shape != tuple(shape):
        raise ValueError("%s: expected shape %s, got %s" % (what, tuple(shape), a.shape))
    if dt == DType.bf16:
        if a.dtype == np.uint16:  # already bit patterns
            return np.ascontiguousarray(a)
        return f32_to_bf16_bits(a.astype(np.float32))
    return np.ascontiguousarray(a, dtype=dt.storage)


def _from_buffer(buf, dt):
    return bf16_bits_to_f32(buf) if dt == DType.bf16 else buf


# ---- torch (optional) ------------------------------------------------------


def _is_torch(x):
    t = type(x)
    return t.__module__.split(".")[0] == "torch" and hasattr(x, "detach")


def _torch_to_numpy(x, dt):
    import torch
    x = x.detach()
    if x.dtype == torch.bfloat16:
        return x.view(torch.int16).cpu().numpy().view(np.uint16)
    return x.cpu().numpy()


def _numpy_to_torch(a, dt, device):
    import torch
    if dt == DType.bf16:
        bits = f32_to_bf16_bits(a)
        t = torch.from_numpy(bits.view(np.int16).copy()).view(torch.bfloat16)
    else:
        t = torch.from_numpy(np.ascontiguousarray(a))
    return t.to(device)


# ---- Fusion ------------------------------------------------------------------


def _check_tensor(x, what="operand"):
    if not isinstance(x, Tensor):
        raise TypeError("%s must be a tilec.Tensor, not %s" % (what, type(x).__name__))
    return x


class Fusion:
    """A fusion: input tensors, operations on them and output tensors.

    Build it with :meth:`input`, operators on tensors (``a * b + c``) and the
    op methods, mark results with :meth:`add_output`, schedule its tensors,
    then :meth:`compile` it."""

    def __init__(self):
        self._L = _lib.load()
        self._p = self._L.tc_fusion_new()
        if not self._p:
            raise MemoryError("tc_fusion_new failed")
        self.inputs = []
        self.outputs = []
        self._scalar_names = {}  # tensor pointer -> name of a scalar input
        self._size_vars = {}  # each size variable's name -> its bound, in the order named

    def __del__(self):
        p, self._p = getattr(self, "_p", None), None
        if p and getattr(self, "_L", None) is not None:
            try:
                self._L.tc_fusion_free(p)
            except Exception:  # interpreter shutdown
                pass

    # -- errors
    @property
    def error(self):
        """The last error message of a call on this fusion ("" when none)."""
        return self._L.tc_fusion_error(self._p).decode()

    def _check(self, status):
        if status != Status.OK:
            raise TilecError(self.error, status)

    def _wrap(self, p, status=Status.ERR_ARGUMENT):
        if not p:
            raise TilecError(self.error, status)
        return Tensor(self, p)

    def _own(self, t, what="operand"):
        _check_tensor(t, what)
        if t._f is not self:
            raise TilecError("%s %s belongs to another fusion" % (what, t.name), Status.ERR_ARGUMENT)
        return t._p

    # -- building
    def input(self, dtype, shape, divisor=1, bounds=None):
        """A contiguous row-major input of the given dtype and shape.  An
        extent may be a name (``f.input("f32", ("B", "S", 64))``): a size
        variable (tc_input_syms) that each run takes from its arrays'
        extents, so one compiled kernel serves every B and S.  divisor is a
        number every value is a multiple of (1: none known), for every
        named axis, or a dict {name: divisor}; bounds a dict {name: bound}
        (the largest value).  Without one, a variable's bound is the
        largest that keeps this input under 2^31 elements (several new
        variables of one input share that evenly); an input naming a
        variable again takes its divisor and bound.  Up to 4 variables per
        fusion; each is a kernel parameter that run() fills."""
        dt = _dtype_arg(dtype)
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        if any(isinstance(e, str) for e in shape):
            return self._input_syms(dt, shape, divisor, bounds or {})
        arr = (ctypes.c_int64 * max(1, len(shape)))(*[int(e) for e in shape])
        t = self._wrap(self._L.tc_input(self._p, int(dt), len(shape), arr))
        self.inputs.append(t)
        return t

    def _input_syms(self, dt, shape, divisor, bounds):
        named = [e for e in shape if isinstance(e, str)]
        divs = [(int(divisor.get(e, 1)) if isinstance(divisor, dict) else int(divisor))
                if isinstance(e, str) else 1 for e in shape]
        new = [e for e in dict.fromkeys(named) if e not in self._size_vars and e not in bounds]
        room = (1 << 31) - 1  # what the new variables without a bound may share
        for e, d in zip(shape, divs):
            if not isinstance(e, str):
                room //= max(1, int(e))
            elif e not in new:
                room //= max(1, int(bounds.get(e, self._size_vars.get(e, 1))))
        share = int(room ** (1.0 / len(new))) if new and room > 0 else 0
        while new and share > 0 and share ** len(new) > room:
            share -= 1
        ext = []
        for e, d in zip(shape, divs):
            if not isinstance(e, str):
                ext.append(int(e))
            elif e in bounds:
                ext.append(int(bounds[e]))
            elif e in self._size_vars or len(new) == 1:
                ext.append(-1)  # the variable's bound; one new one: the C side's largest
            else:
                ext.append(share // max(1, d) * max(1, d))
        arr = (ctypes.c_int64 * len(shape))(*ext)
        names = (ctypes.c_char_p * len(shape))(*[e.encode() if isinstance(e, str) else None
                                                 for e in shape])
        dv = (ctypes.c_int64 * len(shape))(*divs)
        t = self._wrap(self._L.tc_input_syms(self._p, int(dt), len(shape), arr, names, dv))
        for i, e in enumerate(shape):  # the C side added each new one's parameter first
            if isinstance(e, str) and e not in self._size_vars:
                self._size_vars[e] = self._L.tc_tensor_extent(t._p, i)
                self.inputs.append(_SizeSlot(e))
        self.inputs.append(t)
        return t

    def scalar(self, name, dtype=DType.f32):
        """A scalar input (tc_scalar_input): a value given at each run, not
        compiled into the kernel, so one kernel serves every value (eps, a
        scale).  dtype is f32 (with float tensors) or i32 (with integer
        tensors); use it as an operand of binary ops (``x + eps``).  Pass
        it to run() and reference() in its place among the inputs or by
        name: ``k.run(x, eps=1e-5)``."""
        t = self._wrap(self._L.tc_scalar_input(self._p, str(name).encode(), int(_dtype_arg(dtype))))
        self.inputs.append(t)
        self._scalar_names[t._p] = str(name)
        return t

    def size_var(self, name):
        """The value of size variable ``name`` at run time as a scalar
        operand (tc_size_var_value): a mean over a row of N elements is
        ``f.sum(x, 1) / f.size_var("N")``.  run() fills it from the
        arrays' shapes."""
        return self._wrap(self._L.tc_size_var_value(self._p, str(name).encode()))

    def _in_specs(self):
        """(dtype, shape, name) of each input; a scalar's shape is () and
        its name the one given to scalar()."""
        return [(DType.i32, None, t.name) if isinstance(t, _SizeSlot)
                else (t.dtype, _spec_shape(t), self._scalar_names.get(t._p, t.name))
                for t in self.inputs]

    def add_output(self, t):
        """Marks t as an output of the fusion (kernel parameters: the inputs,
        then the outputs in the order added).  Returns t."""
        p = self._own(t, "output")
        self._check(self._L.tc_add_output(self._p, p))
        self.outputs.append(t)
        return t

    def set(self, x):
        """A copy of x (a load/store op)."""
        return self._wrap(self._L.tc_set(self._p, self._own(x)))

    def unary(self, op, x):
        """op is one of neg, abs, relu, exp, log, sqrt, tanh, sigmoid, reciprocal,
        gelu (the tanh form), silu."""
        if op not in _UNARY:
            raise ValueError("unknown unary op %r; expected one of %s" % (op, ", ".join(_UNARY)))
        return self._wrap(self._L.tc_unary(self._p, _UNARY[op], self._own(x)))

    def binary(self, op, a, b):
        """op is one of add, sub, mul, div, max, min; a and b have one rank,
        and where their extents differ one of them is 1 (it broadcasts).  b
        may be a Python number: a compile-time scalar (tc_binary_scalar)."""
        if op not in _BINARY:
            raise ValueError("unknown binary op %r; expected one of %s" % (op, ", ".join(_BINARY)))
        if isinstance(b, (int, float, np.integer, np.floating)):
            return self._wrap(self._L.tc_binary_scalar(self._p, _BINARY[op], self._own(a), float(b)))
        return self._wrap(self._L.tc_binary(self._p, _BINARY[op], self._own(a), self._own(b)))

    def reduce(self, op, x, axes):
        """op is sum, max or min over x's axes (an int or a sequence; negative
        counts from the end).  The result keeps x's rank with extent 1 on the
        reduced axes (keepdims), so it broadcasts against x; 16-bit floats
        give f32 (tc_reduce)."""
        if op not in _REDUCE:
            raise ValueError("unknown reduction %r; expected one of %s" % (op, ", ".join(_REDUCE)))
        axes = [int(axes)] if isinstance(axes, (int, np.integer)) else [int(a) for a in axes]
        arr = (ctypes.c_int * max(1, len(axes)))(*axes)
        return self._wrap(self._L.tc_reduce(self._p, _REDUCE[op], self._own(x), len(axes), arr))

    def welford(self, x, axes, state=False):
        """The mean and the variance of x over axes in one pass (Welford's
        algorithm, partial results merged with Chan et al.'s formula;
        tc_welford): returns (mean, var), f32 tensors of x's rank with
        extent 1 on the reduced axes, var the population variance (M2
        divided by the count).  With state=True, (mean, var, state): the
        reduction both read, to schedule by hand (it stays in registers
        and cannot be an output)."""
        axes = [int(axes)] if isinstance(axes, (int, np.integer)) else [int(a) for a in axes]
        arr = (ctypes.c_int * max(1, len(axes)))(*axes)
        mean, var = _lib.c_tensor_p(), _lib.c_tensor_p()
        w = self._wrap(self._L.tc_welford(self._p, self._own(x), len(axes), arr, ctypes.byref(mean),
                                          ctypes.byref(var)))
        out = (Tensor(self, mean.value), Tensor(self, var.value))
        return out + (w,) if state else out

    def compare(self, op, a, b):
        """An i8 mask, 1 where a op b holds (op: lt, le, gt, ge, eq, ne; IEEE:
        NaN compares false except ne), broadcasting as binary does
        (tc_compare).  Tensors also take <, <=, > and >=."""
        if op not in _COMPARE:
            raise ValueError("unknown comparison %r; expected one of %s" % (op, ", ".join(_COMPARE)))
        return self._wrap(self._L.tc_compare(self._p, _COMPARE[op], self._own(a), self._own(b)))

    def where(self, cond, a, b):
        """cond != 0 ? a : b element by element, broadcasting (tc_where)."""
        return self._wrap(self._L.tc_where(self._p, self._own(cond), self._own(a), self._own(b)))

    def gather(self, x, axis, index):
        """x read along axis at the positions the i32 tensor index holds
        (torch.gather; an index outside the extent reads 0); tc_gather."""
        return self._wrap(self._L.tc_gather(self._p, self._own(x), int(axis), self._own(index)))

    def broadcast(self, x, is_new):
        """x with new axes of extent 1 where is_new is true (a sequence of
        the result's rank); tc_broadcast."""
        flags = [bool(b) for b in is_new]
        arr = (ctypes.c_bool * max(1, len(flags)))(*flags)
        return self._wrap(self._L.tc_broadcast(self._p, self._own(x), len(flags), arr))

    def expand(self, x, shape):
        """A copy of x with its extent-1 axes expanded to shape; tc_expand."""
        shape = [int(e) for e in shape]
        arr = (ctypes.c_int64 * max(1, len(shape)))(*shape)
        return self._wrap(self._L.tc_expand(self._p, self._own(x), len(shape), arr))

    def sum(self, x, axes): return self.reduce("sum", x, axes)
    def max(self, x, axes): return self.reduce("max", x, axes)
    def min(self, x, axes): return self.reduce("min", x, axes)

    def neg(self, x): return self.unary("neg", x)
    def abs(self, x): return self.unary("abs", x)
    def relu(self, x): return self.unary("relu", x)
    def exp(self, x): return self.unary("exp", x)
    def log(self, x): return self.unary("log", x)
    def sqrt(self, x): return self.unary("sqrt", x)
    def tanh(self, x): return self.unary("tanh", x)
    def sigmoid(self, x): return self.unary("sigmoid", x)
    def reciprocal(self, x): return self.unary("reciprocal", x)
    def gelu(self, x): return self.unary("gelu", x)
    def silu(self, x): return self.unary("silu", x)

    def matmul(self, a, b):
        """a [M, K] @ b [K, N] -> [M, N] f32 (or a batch: [B, M, K] @ [B, K, N]);
        f32, f16 or bf16 operands of one dtype, products summed in f32.  A
        permute of an operand (its transpose) is read in place (tc_matmul).
        Tensors also take a @ b."""
        return self._wrap(self._L.tc_matmul(self._p, self._own(a), self._own(b)))
    def maximum(self, a, b): return self.binary("max", a, b)
    def minimum(self, a, b): return self.binary("min", a, b)

    def cast(self, x, dtype):
        """x converted to dtype (16-bit floats round to nearest even)."""
        return self._wrap(self._L.tc_cast(self._p, self._own(x), int(_dtype_arg(dtype))))

    def permute(self, x, perm):
        """Output logical axis k is input axis perm[k]; (1, 0) transposes."""
        p = self._own(x)
        perm = [int(v) for v in perm]
        if len(perm) != x.ndim:
            raise TilecError("permute: %s has %d axes but the permutation has %d entries"
                             % (x.name, x.ndim, len(perm)), Status.ERR_ARGUMENT)
        arr = (ctypes.c_int * len(perm))(*perm)
        return self._wrap(self._L.tc_permute(self._p, p, arr))

    # -- whole-fusion scheduling
    def propagate(self, ref):
        """Replays ref's loop transforms on every other tensor
        (tc_propagate_transforms)."""
        self._check(self._L.tc_propagate_transforms(self._own(ref, "reference")))
        return self

    def parallelize_all_like(self, ref):
        """Copies ref's parallel types to the mapped loop axes of all tensors."""
        self._check(self._L.tc_parallelize_all_like(self._own(ref, "reference")))
        return self

    def inline_most(self):
        """Inlines every intermediate tensor as deep as its consumer allows."""
        self._check(self._L.tc_inline_most(self._p))
        return self

    def schedule_auto(self, target="opencl", arch=None):
        """Schedules the whole unscheduled fusion (tc_schedule_auto:
        pointwise, inner- and outer-reduction schedules); a schedule already
        given is kept.  schedule_note says what it chose."""
        tgt = _enum_arg(Target, target, "target")
        self._check(self._L.tc_schedule_auto(self._p, int(tgt), arch.encode() if arch else None))
        return self

    def schedule_matmul(self, target="opencl", arch=None, tiles=None, macro=None, stages=None):
        """Schedules a fusion with a matmul and the ops after it as one
        tiled kernel (tc_schedule_matmul): tiles (bm, bn, bk, tm, tn), the
        op type macro ("fma", "mma", "mfma", "mfma16", "wgmma", as
        ``tilec gemm --macro``) and stages (a ring of K tiles), or tiles
        None for the scheduler's own choice.  schedule_note says what it
        made."""
        tgt = _enum_arg(Target, target, "target")
        tl = _lib.matmul_tiles(tiles, macro, stages)
        self._check(self._L.tc_schedule_matmul(self._p, int(tgt), arch.encode() if arch else None,
                                                ctypes.byref(tl) if tl is not None else None))
        return self

    @property
    def schedule_note(self):
        """What schedule_auto chose, in words ("" if it was not called)."""
        return self._L.tc_fusion_schedule_note(self._p).decode()

    def inline_all_at(self, pos):
        """Inlines every intermediate tensor at loop position pos."""
        self._check(self._L.tc_inline_all_at(self._p, int(pos)))
        return self

    # -- compiling and running
    def compile(self, target="opencl", arch=None, name=None):
        """Lowers the scheduled fusion to one kernel for target ("opencl" or
        "cuda"; arch such as "sm_90a"; name the kernel's C name)."""
        tgt = _enum_arg(Target, target, "target")
        opt = _lib.CompileOptions(int(tgt), arch.encode() if arch else None,
                                  name.encode() if name else None)
        st = ctypes.c_int(0)
        k = self._L.tc_compile(self._p, ctypes.byref(opt), ctypes.byref(st))
        if not k:
            raise TilecError(self.error, st.value or Status.ERR_LOWER)
        return Kernel(self._L, k, tgt, self._in_specs(),
                      [(t.dtype, _spec_shape(t), t.name) for t in self.outputs])

    def reference(self, *inputs, **scalars):
        """Evaluates the fusion on the host in plain C (tc_reference_run),
        ignoring the schedule.  Takes and returns what Kernel.run does
        (NumPy arrays; no torch conversion)."""
        if self._size_vars:
            raise TilecError("reference() takes fixed shapes; the fusion has the size variable%s "
                             "%s: build the same fusion with numbers there"
                             % ("s" if len(self._size_vars) > 1 else "", ", ".join(self._size_vars)),
                             Status.ERR_UNSUPPORTED)
        ins = self._in_specs()
        outs = [(t.dtype, t.shape, t.name) for t in self.outputs]
        args, bufs = _make_args(ins, outs, _merge_scalars(ins, inputs, scalars))
        self._check(self._L.tc_reference_run(self._p, args))
        return _results(outs, bufs[len(ins):])

    def __repr__(self):
        return "<tilec.Fusion: %d inputs, %d outputs>" % (len(self.inputs), len(self.outputs))


# ---- Tensor ------------------------------------------------------------------


class Tensor:
    """A tensor of a fusion.  Scheduling methods change its loop domain in
    place and return the tensor, so they chain:
    ``o.split(0, 8).split(2, 32).reorder({1: 2, 2: 1}).merge(0, 1)``."""

    __slots__ = ("_f", "_p", "__weakref__")

    def __init__(self, fusion, p):
        self._f = fusion
        self._p = p

    @property
    def fusion(self):
        return self._f

    @property
    def _L(self):
        return self._f._L

    def _check(self, status):
        self._f._check(status)
        return self

    # -- facts
    @property
    def name(self):
        """The name in kernels and messages ("T3")."""
        return self._L.tc_tensor_name(self._p).decode()

    @property
    def dtype(self):
        return DType(self._L.tc_tensor_dtype(self._p))

    @property
    def ndim(self):
        return self._L.tc_tensor_ndims(self._p)

    @property
    def shape(self):
        """The logical extents."""
        return tuple(self._L.tc_tensor_extent(self._p, i) for i in range(self.ndim))

    @property
    def size_var(self):
        """The name of the size variable that the leading extent is (an
        input made with a name there, or a tensor computed from one), or
        None; shape[0] is then the variable's bound."""
        v = self._L.tc_tensor_size_var(self._p)
        return v.decode() if v else None

    @property
    def size_vars(self):
        """The size variable of each logical axis (its name, or None where
        the extent is a number; shape holds the variables' bounds)."""
        vs = [self._L.tc_tensor_axis_size_var(self._p, i) for i in range(self.ndim)]
        return tuple(v.decode() if v else None for v in vs)

    @property
    def nbytes(self):
        return self._L.tc_tensor_bytes(self._p)

    @property
    def loop(self):
        """The loop domain as [(extent, ParallelType), ...]."""
        return [(self._L.tc_tensor_loop_extent(self._p, i),
                 ParallelType(self._L.tc_tensor_loop_ptype(self._p, i)))
                for i in range(self._L.tc_tensor_nloop(self._p))]

    def describe(self):
        """The schedule as text (tc_tensor_describe), e.g.
        "T2[iBIDx{2}, (CA), iS{4}]": the loop domain with the compute-at
        mark, the tensor-memory dim-sep "(DS)", and " alloc[...]" for an
        allocation domain of its own."""
        buf = ctypes.create_string_buffer(8192)
        return self._L.tc_tensor_describe(self._p, buf, len(buf)).decode()

    def __repr__(self):
        return "<tilec.Tensor %s %s %s loop %s>" % (self.name, self.dtype.name,
                                                    list(self.shape), self.describe())

    # Tensors are compared by identity (== is not elementwise here).
    def __eq__(self, other):
        return self is other or (isinstance(other, Tensor) and other._p == self._p)

    def __hash__(self):
        return hash(self._p)

    # -- arithmetic (builds ops in the tensor's fusion)
    # (a Python number as the right operand is a compile-time scalar)
    def _bin(self, op, o):
        if isinstance(o, (Tensor, int, float, np.integer, np.floating)) and not isinstance(o, bool):
            return self._f.binary(op, self, o)
        return NotImplemented

    def __add__(self, o): return self._bin("add", o)
    def __sub__(self, o): return self._bin("sub", o)
    def __mul__(self, o): return self._bin("mul", o)
    def __truediv__(self, o): return self._bin("div", o)
    def __matmul__(self, o): return self._f.matmul(self, o) if isinstance(o, Tensor) else NotImplemented
    # comparisons give i8 masks (== and != stay identity tests: f.compare("eq", a, b))
    def __lt__(self, o): return self._f.compare("lt", self, o) if isinstance(o, Tensor) else NotImplemented
    def __le__(self, o): return self._f.compare("le", self, o) if isinstance(o, Tensor) else NotImplemented
    def __gt__(self, o): return self._f.compare("gt", self, o) if isinstance(o, Tensor) else NotImplemented
    def __ge__(self, o): return self._f.compare("ge", self, o) if isinstance(o, Tensor) else NotImplemented
    def __neg__(self): return self._f.unary("neg", self)
    def __abs__(self): return self._f.unary("abs", self)

    # -- loop-domain transforms
    def split(self, axis, factor, inner=True):
        """Splits loop axis `axis` into (outer, inner=factor), or into
        (factor, rest) with inner=False.  A factor that does not divide the
        extent adds a predicate."""
        return self._check(self._L.tc_split(self._p, int(axis), int(factor), 1 if inner else 0))

    def merge(self, a, b=None):
        """Merges the adjacent loop axes a and b == a + 1 (default) into one."""
        return self._check(self._L.tc_merge(self._p, int(a), int(a) + 1 if b is None else int(b)))

    def reorder(self, moves):
        """Moves loop axes: {old: new, ...} (or [(old, new), ...]); the
        others keep their relative order."""
        items = list(moves.items()) if isinstance(moves, dict) else [tuple(m) for m in moves]
        n = len(items)
        old = (ctypes.c_int * max(1, n))(*[int(o) for o, _ in items])
        new = (ctypes.c_int * max(1, n))(*[int(v) for _, v in items])
        return self._check(self._L.tc_reorder(self._p, n, old, new))

    def swizzle(self, x, y, kind=SwizzleType.XOR):
        """XOR swizzle of loop axes x and y: {x, x ^ y}."""
        k = _enum_arg(SwizzleType, kind, "swizzle type")
        return self._check(self._L.tc_swizzle(self._p, int(k), int(x), int(y)))

    def swizzle_cute(self, axis, b, m, s):
        """CuTe's Swizzle<B,M,S> on one loop axis."""
        return self._check(self._L.tc_swizzle_cute(self._p, int(axis), int(b), int(m), int(s)))

    def resize(self, axis, left, right):
        """Pads (or, negative, crops) loop axis `axis`; padding reads zero."""
        return self._check(self._L.tc_resize(self._p, int(axis), int(left), int(right)))

    def parallelize(self, axis, ptype):
        """Binds loop axis `axis` to ptype (tilec.BIDx, tilec.TIDx, "TIDy", ...)."""
        p = _enum_arg(ParallelType, ptype, "parallel type")
        return self._check(self._L.tc_parallelize(self._p, int(axis), int(p)))

    def set_memory_type(self, mem):
        """tilec.global_mem, tilec.shared, tilec.local or tilec.tensor_mem."""
        m = _enum_arg(MemType, mem, "memory type")
        return self._check(self._L.tc_set_memory_type(self._p, int(m)))

    def set_ldst_type(self, op):
        o = _enum_arg(LdstType, op, "load/store type")
        return self._check(self._L.tc_set_ldst_type(self._p, int(o)))

    def inline_at(self, pos):
        """Computes this tensor inside its consumer's loops [0, pos)."""
        return self._check(self._L.tc_inline_at(self._p, int(pos)))

    def compute_at(self, consumer, pos):
        """Replays consumer's loop transforms here and inlines at pos."""
        return self._check(self._L.tc_compute_at(self._p, self._f._own(consumer, "consumer"), int(pos)))

    def set_tmem_dimsep(self, pos):
        return self._check(self._L.tc_set_tmem_dimsep(self._p, int(pos)))

    def set_alloc_to_loop(self):
        return self._check(self._L.tc_set_alloc_to_loop(self._p))

    def propagate(self):
        """Replays this tensor's loop transforms on every other tensor."""
        self._f.propagate(self)
        return self

    def parallelize_all_like(self):
        self._f.parallelize_all_like(self)
        return self

    # -- caching (these return the new tensor, not self)
    def cache_after(self):
        """t' = set(t); t's consumers now read t'.  Returns t'."""
        return self._f._wrap(self._L.tc_cache_after(self._p), Status.ERR_SCHEDULE)

    def cache_before(self):
        """t' = t's definition writing a new tensor; t = set(t').  Returns t'."""
        return self._f._wrap(self._L.tc_cache_before(self._p), Status.ERR_SCHEDULE)


# ---- Kernel ------------------------------------------------------------------

Launch = namedtuple("Launch", "grid block")

Allocation = namedtuple(
    "Allocation", "memory positions extents elements bytes offset lanes columns columns_allocated")
Allocation.__doc__ = """What a kernel allocates for one tensor (tc_kernel_tensor_allocation):
memory (MemType), the allocated axes' positions in the allocation domain and
their extents (tuples, the first 16), elements and bytes (per block for
shared and tensor memory, per thread for local memory), the byte offset in
shared memory, and for tensor memory the lanes, the 32-bit columns a lane's
elements fill and the columns reserved.  A kernel parameter (an input or
output) is its global buffer: its logical axes."""


class _SizeSlot:
    """The size variable's place among a fusion's inputs (its kernel
    parameter, filled by Kernel.run)."""

    def __init__(self, name):
        self.name = name


def _spec_shape(t):
    """t's shape with each symbolic extent as its variable's name."""
    return tuple(v or e for v, e in zip(t.size_vars, t.shape))


def _bind_sizes(ins, outs, inputs):
    """ins and outs with each size variable's value (the extent of the
    first input array that has it) in place of its name, the inputs with
    a placeholder in the variables' slots, and the values in the
    variables' order (the slots'; [] without a variable)."""
    values = {}
    for x, (_, shape, _) in zip(inputs, ins):
        if not shape or x is _SIZE:
            continue
        for i, e in enumerate(shape):
            if isinstance(e, str) and e not in values and np.ndim(x) > i:
                values[e] = int(np.shape(x)[i])
    slots = [name for _, shape, name in ins if shape is None]
    if not slots:
        return ins, outs, inputs, []
    fix = lambda sp: (sp[0], () if sp[1] is None else
                      tuple(values.get(e, 0) if isinstance(e, str) else e for e in sp[1]), sp[2])
    inputs = [np.int32(0) if x is _SIZE else x for x in inputs]
    return [fix(sp) for sp in ins], [fix(sp) for sp in outs], inputs, [values.get(n, 0) for n in slots]


_SIZE = object()  # the size variable's slot among run()'s inputs


def _merge_scalars(ins, inputs, scalars):
    """The inputs in order: the positional ones, with the scalar inputs
    given by name (scalars) put in their places."""
    names = [name for _, shape, name in ins if shape == ()]
    for k in scalars:
        if k not in names:
            raise TypeError("no scalar input named %r; the fusion's scalars: %s"
                            % (k, ", ".join(names) or "none"))
    pos, full = list(inputs), []
    for dt, shape, name in ins:
        if shape is None:  # the size variable: run() fills it
            full.append(_SIZE)
        elif shape == () and name in scalars:
            full.append(scalars[name])
        elif pos:
            full.append(pos.pop(0))
        elif shape == ():
            raise TypeError("the scalar input %s is missing: pass it in its place or as %s=..."
                            % (name, name))
        else:
            full.append(None)  # _make_args counts the arguments
    if pos or any(x is None for x in full):
        n = len(inputs) + len(scalars)
        raise TypeError("the fusion has %d input%s, got %d argument%s"
                        % (len(ins), "" if len(ins) == 1 else "s", n, "" if n == 1 else "s"))
    return full


def _make_args(ins, outs, inputs):
    if len(inputs) != len(ins):
        raise TypeError("the fusion has %d input%s, got %d argument%s"
                        % (len(ins), "" if len(ins) == 1 else "s",
                           len(inputs), "" if len(inputs) == 1 else "s"))
    bufs = [_to_buffer(x, dt, shape, "input %d (%s)" % (i, name))
            for i, (x, (dt, shape, name)) in enumerate(zip(inputs, ins))]
    bufs += [np.zeros(shape, dtype=dt.storage) for dt, shape, _ in outs]
    args = (ctypes.c_void_p * max(1, len(bufs)))(*[b.ctypes.data for b in bufs])
    return args, bufs


def _results(outs, bufs):
    res = [_from_buffer(b, dt) for b, (dt, _, _) in zip(bufs, outs)]
    return res[0] if len(res) == 1 else tuple(res)


class Kernel:
    """A compiled kernel: its source, launch facts, and run()."""

    def __init__(self, L, p, target, ins, outs):
        self._L, self._p = L, p
        self.target = target
        self._ins, self._outs = ins, outs
        self.last_ms = None

    def __del__(self):
        p, self._p = getattr(self, "_p", None), None
        if p and getattr(self, "_L", None) is not None:
            try:
                self._L.tc_kernel_free(p)
            except Exception:
                pass

    @property
    def source(self):
        """The OpenCL C or CUDA C source."""
        return self._L.tc_kernel_source(self._p).decode()

    @property
    def name(self):
        return self._L.tc_kernel_name(self._p).decode()

    @property
    def smem_bytes(self):
        """Bytes of shared memory allocated per block."""
        return self._L.tc_kernel_smem_bytes(self._p)

    @property
    def tmem_columns(self):
        return self._L.tc_kernel_tmem_columns(self._p)

    def allocation(self, t):
        """The Allocation of tensor t (a Tensor of the fusion this kernel was
        compiled from) in this kernel; TilecError when the kernel has no
        such tensor."""
        _check_tensor(t, "tensor")
        a = _lib.Allocation()
        st = self._L.tc_kernel_tensor_allocation(self._p, t._p, ctypes.byref(a))
        if st != Status.OK:
            raise TilecError(t.fusion.error, st)
        n = min(a.naxes, 16)
        return Allocation(MemType(a.memory), tuple(a.positions[:n]), tuple(a.extents[:n]),
                          a.elements, a.bytes, a.offset, a.lanes, a.columns, a.columns_allocated)

    @property
    def launch(self):
        """Launch(grid=(x, y, z), block=(x, y, z))."""
        g, b = (ctypes.c_int64 * 3)(), (ctypes.c_int64 * 3)()
        self._L.tc_kernel_launch_dims(self._p, g, b)
        return Launch(tuple(g), tuple(b))

    @property
    def param_bytes(self):
        """Bytes of each parameter: the inputs, then the outputs."""
        return [self._L.tc_kernel_param_bytes(self._p, i)
                for i in range(self._L.tc_kernel_nparams(self._p))]

    @property
    def error(self):
        return self._L.tc_kernel_error(self._p).decode()

    def _check(self, status):
        if status != Status.OK:
            raise TilecError(self.error, status)

    def build(self, device=None):
        """Compiles the source with the device compiler without running it
        (NVRTC for CUDA, needing no GPU; the OpenCL device's compiler)."""
        self._check(self._L.tc_kernel_build(self._p, device.encode() if device else None))
        return self

    def run(self, *inputs, device=None, **scalars):
        """Runs the kernel on the inputs (NumPy arrays or anything
        np.asarray takes; torch tensors too) and returns the output (one
        array) or a tuple of outputs.  device selects the OpenCL device
        ("pocl", a name substring, "P:D"; None: $TILEC_OPENCL_DEVICE, then
        PoCL).  When any input is a torch tensor, the outputs are torch
        tensors on that tensor's device (data goes through host memory).
        The kernel time in milliseconds is left in self.last_ms.  Scalar
        inputs (Fusion.scalar) are numbers, in their place among the inputs
        or by name (``k.run(x, eps=1e-5)``)."""
        inputs = _merge_scalars(self._ins, inputs, scalars)
        torch_dev = None
        conv = []
        for x, (dt, _, _) in zip(inputs, self._ins):
            if _is_torch(x):
                if torch_dev is None:
                    torch_dev = x.device
                x = _torch_to_numpy(x, dt)
            conv.append(x)
        conv += list(inputs[len(conv):])
        ins, outs_, conv, sizes = _bind_sizes(self._ins, self._outs, conv)
        args, bufs = _make_args(ins, outs_, conv)
        ms = ctypes.c_double(0)
        sz = (ctypes.c_int64 * max(1, len(sizes)))(*(sizes or [0]))
        self._check(self._L.tc_kernel_run_sizes(self._p, args, sz, len(sizes),
                                                device.encode() if device else None,
                                                ctypes.byref(ms)))
        self.last_ms = ms.value
        outs = [_from_buffer(b, dt) for b, (dt, _, _) in zip(bufs[len(self._ins):], self._outs)]
        if torch_dev is not None:
            outs = [_numpy_to_torch(o, dt, torch_dev) for o, (dt, _, _) in zip(outs, self._outs)]
        return outs[0] if len(outs) == 1 else tuple(outs)

    __call__ = run

    def __repr__(self):
        g, b = self.launch
        return "<tilec.Kernel %s (%s) grid %s block %s smem %d>" % (
            self.name, self.target.name, g, b, self.smem_bytes)
