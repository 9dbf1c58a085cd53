"""2-D convolutions on NumPy arrays with tilec's implicit-GEMM kernels.

A thin layer over the C API of tilec.h (``tc_conv2d_*``): each call describes
the problem, plans it (the perf config given, else the perf DB entry of the
problem on this device, else the heuristic's), runs the kernels on the
device and returns a new array.  The arguments follow PyTorch's
``torch.nn.functional.conv2d`` and ``torch.nn.grad.conv2d_input`` /
``conv2d_weight``::

    y = tilec.conv2d(x, w, stride=2, padding=1)                 # forward
    dx = tilec.conv2d_backward_data(x.shape, w, dy, stride=2, padding=1)
    dw = tilec.conv2d_backward_weight(x, w.shape, dy, stride=2, padding=1)

``layout="NCHW"`` (default): x is [N, C, H, W], w is [K, C/groups, Y, X], the
output [N, K, Ho, Wo].  ``layout="NHWC"``: x is [N, H, W, C], w is
[K, Y, X, C/groups], the output [N, Ho, Wo, K].  Arrays are float32 or
float16 (both operands the same; accumulation is in float32).

``padding`` is an int (every side), a pair (height, width: both sides), or a
pair of pairs ((top, bottom), (left, right)).  ``stride`` and ``dilation`` are
an int or a pair.

``path="fusion"`` runs each GEMM as a fusion whose matmul reads the tensors
through the coordinate-transform views (``tc_conv2d_run_fusion``; the
compiler's matmul schedule instead of the GEMM templates, no perf config);
the forward then takes ``bias`` (one value per output channel) and
``activation`` ("relu", "gelu", "silu") computed in the same kernel::

    y = tilec.conv2d(x, w, padding=1, path="fusion", bias=b, activation="relu")
"""

import ctypes

import numpy as np

from . import _lib
from ._core import Target, _enum_arg
from ._errors import Status, TilecError

_i64 = ctypes.c_int64
_str = ctypes.c_char_p

FORWARD, BACKWARD_DATA, BACKWARD_WEIGHT = 1, 2, 4
_INPUT, _FILTER, _OUTPUT = 0, 1, 2

# layout of x -> (input, filter, output) layout strings of the C API
_LAYOUTS = {"NCHW": ("NCHW", "KCYX", "NKHW"), "NHWC": ("NHWC", "KYXC", "NHWK")}


class _Desc(ctypes.Structure):
    """tc_conv2d_desc."""
    _fields_ = [("direction", ctypes.c_int),
                ("n", _i64), ("c", _i64), ("h", _i64), ("w", _i64),
                ("k", _i64), ("y", _i64), ("x", _i64),
                ("pad_top", _i64), ("pad_bottom", _i64), ("pad_left", _i64), ("pad_right", _i64),
                ("stride_h", _i64), ("stride_w", _i64),
                ("dilation_h", _i64), ("dilation_w", _i64),
                ("groups", _i64), ("dtype", ctypes.c_int),
                ("in_layout", _str), ("fil_layout", _str), ("out_layout", _str)]


class _Options(ctypes.Structure):
    """tc_op_options."""
    _fields_ = [("target", ctypes.c_int), ("device", _str), ("arch", _str), ("perfdb", _str)]


class _Epilogue(ctypes.Structure):
    """tc_conv2d_epilogue."""
    _fields_ = [("bias", ctypes.c_void_p), ("has_activation", ctypes.c_bool),
                ("activation", ctypes.c_int)]


_ACTIVATIONS = {"relu": 2, "gelu": 9, "silu": 10}  # tc_unary_op

_PROTOS = {
    "tc_conv2d_desc_init": (None, [ctypes.POINTER(_Desc)]),
    "tc_conv2d_new": (ctypes.c_void_p, [ctypes.POINTER(_Desc), ctypes.POINTER(_Options)]),
    "tc_conv2d_free": (None, [ctypes.c_void_p]),
    "tc_conv2d_error": (_str, [ctypes.c_void_p]),
    "tc_conv2d_output_size": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(_i64),
                                             ctypes.POINTER(_i64)]),
    "tc_conv2d_plan": (ctypes.c_int, [ctypes.c_void_p, _str]),
    "tc_conv2d_run": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                     ctypes.c_void_p, ctypes.POINTER(ctypes.c_double)]),
    "tc_conv2d_run_fusion": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(_Epilogue),
                                            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                            ctypes.POINTER(ctypes.c_double)]),
    "tc_conv2d_perf_config": (_str, [ctypes.c_void_p]),
    "tc_conv2d_set_fusion_tiles": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(_lib.MatmulTiles)]),
    "tc_conv2d_perf_config_source": (_str, [ctypes.c_void_p]),
}
_declared = None


def _lib_conv():
    """The library with the tc_conv2d_ prototypes declared (once)."""
    global _declared
    lib = _lib.load()
    if _declared is not lib:
        for name, (res, args) in _PROTOS.items():
            try:
                fn = getattr(lib, name)
            except AttributeError:
                raise TilecError("%s has no %s: it is older than tilec.conv2d; rebuild it"
                                 % (_lib.path(), name), Status.ERR_UNSUPPORTED) from None
            fn.restype = res
            fn.argtypes = args
        _declared = lib
    return lib


def _pair(v, what):
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v), int(v)
    try:
        a, b = v
    except (TypeError, ValueError):
        raise ValueError("%s must be an int or a pair of ints, got %r" % (what, v)) from None
    return int(a), int(b)


def _padding(p):
    """(top, bottom, left, right) from an int, (ph, pw) or ((t, b), (l, r))."""
    if isinstance(p, (int, np.integer)) and not isinstance(p, bool):
        return (int(p),) * 4
    try:
        ph, pw = p
    except (TypeError, ValueError):
        raise ValueError("padding must be an int, a pair or a pair of pairs, got %r" % (p,)) from None
    th = _pair(ph, "padding of the height")
    tw = _pair(pw, "padding of the width")
    return th[0], th[1], tw[0], tw[1]


def _dtype_code(*arrays):
    dt = arrays[0].dtype
    for a in arrays[1:]:
        if a.dtype != dt:
            raise ValueError("the operands have different dtypes (%s and %s)" % (dt, a.dtype))
    if dt == np.float32:
        return 0, dt
    if dt == np.float16:
        return 1, dt
    raise ValueError("tilec.conv2d takes float32 or float16 arrays, not %s" % dt)


def _shape4(shape, what):
    s = tuple(int(v) for v in shape)
    if len(s) != 4:
        raise ValueError("%s must have 4 dims, got %d (%s)" % (what, len(s), s))
    return s


def _nchw(shape, layout):
    """(n, c, h, w) of a tensor shape given in layout order."""
    n, a, b, c = shape
    return (n, a, b, c) if layout == "NCHW" else (n, c, a, b)


def _kcyx(shape, layout):
    k, a, b, c = shape
    return (k, a, b, c) if layout == "NCHW" else (k, c, a, b)


def _run(direction, in_shape, fil_shape, in_arr, fil_arr, out_arr_in, stride, padding,
         dilation, groups, layout, perf_config, target, device, arch, perfdb, dtype,
         path="template", bias=None, activation=None, tiles=None):
    """Plans and runs one problem; returns the written array (tiles: a
    MatmulTiles for the fusion path's GEMMs, or None)."""
    layout = str(layout).upper()
    if layout not in _LAYOUTS:
        raise ValueError("layout must be 'NCHW' or 'NHWC', not %r" % (layout,))
    if path not in ("template", "fusion"):
        raise ValueError("path must be 'template' or 'fusion', not %r" % (path,))
    if path == "fusion" and perf_config is not None:
        raise ValueError("path='fusion' takes no perf_config: the matmul scheduler chooses the tiles")
    if (bias is not None or activation is not None) and path != "fusion":
        raise ValueError("bias and activation are computed in the kernel with path='fusion' only")
    if tiles is not None and path != "fusion":
        raise ValueError("tiles, macro and stages schedule the GEMMs of path='fusion' only")
    if activation is not None and activation not in _ACTIVATIONS:
        raise ValueError("activation must be 'relu', 'gelu' or 'silu', not %r" % (activation,))
    lib = _lib_conv()
    n, c, h, w = _nchw(in_shape, layout)
    k, cg, y, x = _kcyx(fil_shape, layout)
    groups = int(groups)
    if groups < 1 or cg * groups != c:
        raise ValueError("the filter has %d input channels per group, so %d groups need %d input "
                         "channels; the input has %d" % (cg, groups, cg * groups, c))
    d = _Desc()
    lib.tc_conv2d_desc_init(ctypes.byref(d))
    d.direction = direction
    d.n, d.c, d.h, d.w, d.k, d.y, d.x = n, c, h, w, k, y, x
    d.pad_top, d.pad_bottom, d.pad_left, d.pad_right = _padding(padding)
    d.stride_h, d.stride_w = _pair(stride, "stride")
    d.dilation_h, d.dilation_w = _pair(dilation, "dilation")
    d.groups = groups
    d.dtype = dtype
    names = _LAYOUTS[layout]
    d.in_layout, d.fil_layout, d.out_layout = (s.encode() for s in names)
    o = _Options()
    o.target = int(_enum_arg(Target, target, "target"))
    o.device = device.encode() if device is not None else None
    o.arch = arch.encode() if arch is not None else None
    o.perfdb = perfdb.encode() if perfdb is not None else None
    conv = lib.tc_conv2d_new(ctypes.byref(d), ctypes.byref(o))
    try:
        ho, wo = _i64(), _i64()
        st = lib.tc_conv2d_output_size(conv, ctypes.byref(ho), ctypes.byref(wo))
        if st != 0:
            raise TilecError(lib.tc_conv2d_error(conv).decode(), st)
        out_shape = (n, k, ho.value, wo.value) if layout == "NCHW" else (n, ho.value, wo.value, k)
        if path == "template":
            st = lib.tc_conv2d_plan(conv, perf_config.encode() if perf_config is not None else None)
            if st != 0:
                raise TilecError(lib.tc_conv2d_error(conv).decode(), st)
        np_dt = np.float32 if dtype == 0 else np.float16
        bufs = [in_arr, fil_arr, out_arr_in]
        shapes = [in_shape, fil_shape, out_shape]
        written = {FORWARD: _OUTPUT, BACKWARD_DATA: _INPUT, BACKWARD_WEIGHT: _FILTER}[direction]
        for i in range(3):
            if i == written:
                bufs[i] = np.zeros(shapes[i], dtype=np_dt)
            else:
                if tuple(bufs[i].shape) != tuple(shapes[i]):
                    raise ValueError("expected an array of shape %s for the %s, got %s"
                                     % (tuple(shapes[i]), ("input", "filter", "output")[i],
                                        bufs[i].shape))
                bufs[i] = np.ascontiguousarray(bufs[i], dtype=np_dt)
        ptrs = [b.ctypes.data_as(ctypes.c_void_p) for b in bufs]
        if path == "fusion":
            if tiles is not None:
                st = lib.tc_conv2d_set_fusion_tiles(conv, ctypes.byref(tiles))
                if st != 0:
                    raise TilecError(lib.tc_conv2d_error(conv).decode(), st)
            epi = _Epilogue()
            if bias is not None:
                bias = np.ascontiguousarray(bias, dtype=np_dt)
                if bias.shape != (k,):
                    raise ValueError("bias must have shape (%d,), got %s" % (k, bias.shape))
                epi.bias = bias.ctypes.data_as(ctypes.c_void_p)
            if activation is not None:
                epi.has_activation, epi.activation = True, _ACTIVATIONS[activation]
            st = lib.tc_conv2d_run_fusion(conv, ctypes.byref(epi), ptrs[0], ptrs[1], ptrs[2], None)
        else:
            st = lib.tc_conv2d_run(conv, ptrs[0], ptrs[1], ptrs[2], None)
        if st != 0:
            raise TilecError(lib.tc_conv2d_error(conv).decode(), st)
        return bufs[written]
    finally:
        lib.tc_conv2d_free(conv)


def conv2d(x, w, stride=1, padding=0, dilation=1, groups=1, layout="NCHW", *, perf_config=None,
           target="opencl", device=None, arch=None, perfdb=None, path="template", bias=None,
           activation=None, tiles=None, macro=None, stages=None):
    """The forward convolution of x with the filter w; a new array.

    path: "template" (default) or "fusion" (module docstring); with
    "fusion", bias (shape (K,), one per output channel) and activation
    ("relu", "gelu", "silu") are applied in the same kernel, and tiles
    (bm, bn, bk, tm, tn) with macro ("fma", "mma", "mfma", "mfma16",
    "wgmma") and stages schedule each GEMM (tc_conv2d_set_fusion_tiles, as
    ``tilec conv2d --path fusion --tiles ...``) instead of the scheduler.

    perf_config: "BS,MPB,NPB,KPB,MPT,NPT", or None for the perf DB entry of
    the problem (``tilec conv2d --tune`` fills it), else the heuristic.
    target/device/arch: as :meth:`tilec.Fusion.compile` and ``Kernel.run``.
    perfdb: the perf DB file (None: $TILEC_PERFDB or the default; "": none).
    Errors of the problem (channels not divisible by groups, an output size
    below 1 ...) raise :class:`tilec.TilecError`."""
    x, w = np.asarray(x), np.asarray(w)
    code, _ = _dtype_code(x, w)
    xs, ws = _shape4(x.shape, "x"), _shape4(w.shape, "w")
    return _run(FORWARD, xs, ws, x, w, None, stride, padding, dilation, groups, layout,
                perf_config, target, device, arch, perfdb, code, path, bias, activation,
                _lib.matmul_tiles(tiles, macro, stages))


def conv2d_backward_data(input_size, w, dy, stride=1, padding=0, dilation=1, groups=1,
                         layout="NCHW", *, perf_config=None, target="opencl", device=None,
                         arch=None, perfdb=None, path="template", tiles=None, macro=None,
                         stages=None):
    """The gradient of the input (shape input_size) from the filter w and the
    output gradient dy, as ``torch.nn.grad.conv2d_input``."""
    w, dy = np.asarray(w), np.asarray(dy)
    code, _ = _dtype_code(w, dy)
    xs, ws = _shape4(input_size, "input_size"), _shape4(w.shape, "w")
    _shape4(dy.shape, "dy")
    return _run(BACKWARD_DATA, xs, ws, None, w, dy, stride, padding, dilation, groups, layout,
                perf_config, target, device, arch, perfdb, code, path,
                tiles=_lib.matmul_tiles(tiles, macro, stages))


def conv2d_backward_weight(x, weight_size, dy, stride=1, padding=0, dilation=1, groups=1,
                           layout="NCHW", *, perf_config=None, target="opencl", device=None,
                           arch=None, perfdb=None, path="template", tiles=None, macro=None,
                           stages=None):
    """The gradient of the filter (shape weight_size) from the input x and the
    output gradient dy, as ``torch.nn.grad.conv2d_weight``."""
    x, dy = np.asarray(x), np.asarray(dy)
    code, _ = _dtype_code(x, dy)
    xs, ws = _shape4(x.shape, "x"), _shape4(weight_size, "weight_size")
    _shape4(dy.shape, "dy")
    return _run(BACKWARD_WEIGHT, xs, ws, x, None, dy, stride, padding, dilation, groups, layout,
                perf_config, target, device, arch, perfdb, code, path,
                tiles=_lib.matmul_tiles(tiles, macro, stages))
