"""Finding and loading libtilec.so, and the ctypes prototypes of its C API.

The library is looked up, in order:

1. ``$TILEC_LIB`` -- a path to the shared library.  When it is set, it is the
   only candidate: a wrong value is an error, not a reason to look elsewhere.
2. ``build/libtilec.so`` of the source tree this package sits in
   (``<repo>/python/tilec/`` -> ``<repo>/build/libtilec.so``), when the
   package is used from a tilec source tree (in place, or ``pip install -e``).
3. ``ctypes.util.find_library("tilec")`` (the loader's cache, e.g. after
   ``make install`` and ``ldconfig``), then the bare name ``libtilec.so``
   (which honours ``LD_LIBRARY_PATH``), then ``/usr/local/lib/libtilec.so``
   (``make install``'s default prefix, before ``ldconfig`` has run).

Loading is lazy: ``import tilec`` always works, and the first call that needs
the library loads it or raises :class:`LibraryNotFound`.
"""

import ctypes
import ctypes.util
import os
import threading

from ._errors import LibraryNotFound

_lock = threading.Lock()
_lib = None
_path = None

c_tensor_p = ctypes.c_void_p
c_fusion_p = ctypes.c_void_p
c_kernel_p = ctypes.c_void_p
_i = ctypes.c_int
_i64 = ctypes.c_int64
_sz = ctypes.c_size_t
_str = ctypes.c_char_p


class CompileOptions(ctypes.Structure):
    _fields_ = [("target", _i), ("arch", _str), ("kernel_name", _str)]


class Allocation(ctypes.Structure):
    """struct tc_allocation."""
    _fields_ = [("memory", _i), ("naxes", _i), ("positions", _i * 16), ("extents", _i64 * 16),
                ("elements", _i64), ("bytes", _i64), ("offset", _i64), ("lanes", _i64),
                ("columns", _i64), ("columns_allocated", _i64)]


class MatmulTiles(ctypes.Structure):
    """struct tc_matmul_tiles."""
    _fields_ = [("bm", _i64), ("bn", _i64), ("bk", _i64), ("tm", _i64), ("tn", _i64),
                ("macro", _i), ("stages", _i)]


# the op types by their command-line names (tc_matmul_macro)
MACROS = {"fma": 0, "mma": 1, "mfma": 2, "mfma16": 3, "wgmma": 4}


def matmul_tiles(tiles, macro=None, stages=None):
    """A MatmulTiles from (bm, bn, bk, tm, tn), the op type's name (as
    ``tilec gemm --macro``) and the ring's stages; None for tiles None."""
    if tiles is None:
        if macro is not None or stages is not None:
            raise ValueError("macro and stages need tiles (bm, bn, bk, tm, tn)")
        return None
    try:
        bm, bn, bk, tm, tn = (int(v) for v in tiles)
    except (TypeError, ValueError):
        raise ValueError("tiles must be five ints (bm, bn, bk, tm, tn), got %r" % (tiles,)) from None
    if macro is not None and macro not in MACROS:
        raise ValueError("macro must be one of %s, not %r" % (", ".join(MACROS), macro))
    t = MatmulTiles(bm, bn, bk, tm, tn, MACROS[macro or "fma"], int(stages or 0))
    return t


# name: (restype, argtypes)
_PROTOS = {
    "tc_status_name": (_str, [_i]),
    "tc_dtype_size": (_sz, [_i]),
    "tc_dtype_name": (_str, [_i]),
    "tc_memtype_name": (_str, [_i]),
    "tc_ptype_name": (_str, [_i]),
    "tc_target_name": (_str, [_i]),
    "tc_fusion_new": (c_fusion_p, []),
    "tc_fusion_free": (None, [c_fusion_p]),
    "tc_fusion_error": (_str, [c_fusion_p]),
    "tc_input": (c_tensor_p, [c_fusion_p, _i, _i, ctypes.POINTER(_i64)]),
    "tc_input_sym": (c_tensor_p, [c_fusion_p, _i, _i, ctypes.POINTER(_i64), _str, _i64]),
    "tc_tensor_size_var": (_str, [c_tensor_p]),
    "tc_tensor_axis_size_var": (_str, [c_tensor_p, _i]),
    "tc_input_syms": (c_tensor_p, [c_fusion_p, _i, _i, ctypes.POINTER(_i64),
                                   ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(_i64)]),
    "tc_kernel_run_sizes": (_i, [c_kernel_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(_i64),
                                 _i, _str, ctypes.POINTER(ctypes.c_double)]),
    "tc_add_output": (_i, [c_fusion_p, c_tensor_p]),
    "tc_set": (c_tensor_p, [c_fusion_p, c_tensor_p]),
    "tc_unary": (c_tensor_p, [c_fusion_p, _i, c_tensor_p]),
    "tc_binary": (c_tensor_p, [c_fusion_p, _i, c_tensor_p, c_tensor_p]),
    "tc_cast": (c_tensor_p, [c_fusion_p, c_tensor_p, _i]),
    "tc_binary_scalar": (c_tensor_p, [c_fusion_p, _i, c_tensor_p, ctypes.c_double]),
    "tc_scalar_input": (c_tensor_p, [c_fusion_p, _str, _i]),
    "tc_schedule_matmul": (_i, [c_fusion_p, _i, _str, ctypes.POINTER(MatmulTiles)]),
    "tc_size_var_value": (c_tensor_p, [c_fusion_p, _str]),
    "tc_reduce": (c_tensor_p, [c_fusion_p, _i, c_tensor_p, _i, ctypes.POINTER(_i)]),
    "tc_welford": (c_tensor_p, [c_fusion_p, c_tensor_p, _i, ctypes.POINTER(_i),
                                ctypes.POINTER(c_tensor_p), ctypes.POINTER(c_tensor_p)]),
    "tc_matmul": (c_tensor_p, [c_fusion_p, c_tensor_p, c_tensor_p]),
    "tc_gather": (c_tensor_p, [c_fusion_p, c_tensor_p, _i, c_tensor_p]),
    "tc_compare": (c_tensor_p, [c_fusion_p, _i, c_tensor_p, c_tensor_p]),
    "tc_where": (c_tensor_p, [c_fusion_p, c_tensor_p, c_tensor_p, c_tensor_p]),
    "tc_broadcast": (c_tensor_p, [c_fusion_p, c_tensor_p, _i, ctypes.POINTER(ctypes.c_bool)]),
    "tc_expand": (c_tensor_p, [c_fusion_p, c_tensor_p, _i, ctypes.POINTER(_i64)]),
    "tc_permute": (c_tensor_p, [c_fusion_p, c_tensor_p, ctypes.POINTER(_i)]),
    "tc_tensor_name": (_str, [c_tensor_p]),
    "tc_tensor_dtype": (_i, [c_tensor_p]),
    "tc_tensor_ndims": (_i, [c_tensor_p]),
    "tc_tensor_extent": (_i64, [c_tensor_p, _i]),
    "tc_tensor_nloop": (_i, [c_tensor_p]),
    "tc_tensor_loop_extent": (_i64, [c_tensor_p, _i]),
    "tc_tensor_loop_ptype": (_i, [c_tensor_p, _i]),
    "tc_tensor_describe": (_str, [c_tensor_p, ctypes.c_char_p, _sz]),
    "tc_split": (_i, [c_tensor_p, _i, _i64, _i]),
    "tc_merge": (_i, [c_tensor_p, _i, _i]),
    "tc_reorder": (_i, [c_tensor_p, _i, ctypes.POINTER(_i), ctypes.POINTER(_i)]),
    "tc_swizzle": (_i, [c_tensor_p, _i, _i, _i]),
    "tc_swizzle_cute": (_i, [c_tensor_p, _i, _i, _i, _i]),
    "tc_resize": (_i, [c_tensor_p, _i, _i64, _i64]),
    "tc_parallelize": (_i, [c_tensor_p, _i, _i]),
    "tc_set_memory_type": (_i, [c_tensor_p, _i]),
    "tc_set_ldst_type": (_i, [c_tensor_p, _i]),
    "tc_inline_at": (_i, [c_tensor_p, _i]),
    "tc_compute_at": (_i, [c_tensor_p, c_tensor_p, _i]),
    "tc_inline_most": (_i, [c_fusion_p]),
    "tc_schedule_auto": (_i, [c_fusion_p, _i, ctypes.c_char_p]),
    "tc_fusion_schedule_note": (_str, [c_fusion_p]),
    "tc_inline_all_at": (_i, [c_fusion_p, _i]),
    "tc_set_tmem_dimsep": (_i, [c_tensor_p, _i]),
    "tc_set_alloc_to_loop": (_i, [c_tensor_p]),
    "tc_cache_after": (c_tensor_p, [c_tensor_p]),
    "tc_cache_before": (c_tensor_p, [c_tensor_p]),
    "tc_propagate_transforms": (_i, [c_tensor_p]),
    "tc_parallelize_all_like": (_i, [c_tensor_p]),
    "tc_compile": (c_kernel_p, [c_fusion_p, ctypes.POINTER(CompileOptions), ctypes.POINTER(_i)]),
    "tc_kernel_free": (None, [c_kernel_p]),
    "tc_kernel_source": (_str, [c_kernel_p]),
    "tc_kernel_name": (_str, [c_kernel_p]),
    "tc_kernel_smem_bytes": (_i64, [c_kernel_p]),
    "tc_kernel_tmem_columns": (_i64, [c_kernel_p]),
    "tc_kernel_launch_dims": (None, [c_kernel_p, ctypes.POINTER(_i64), ctypes.POINTER(_i64)]),
    "tc_kernel_nparams": (_i, [c_kernel_p]),
    "tc_kernel_param_bytes": (_sz, [c_kernel_p, _i]),
    "tc_kernel_error": (_str, [c_kernel_p]),
    "tc_kernel_tensor_allocation": (_i, [c_kernel_p, c_tensor_p, ctypes.POINTER(Allocation)]),
    "tc_kernel_build": (_i, [c_kernel_p, _str]),
    "tc_kernel_run": (_i, [c_kernel_p, ctypes.POINTER(ctypes.c_void_p), _str,
                           ctypes.POINTER(ctypes.c_double)]),
    "tc_tensor_bytes": (_sz, [c_tensor_p]),
    "tc_reference_run": (_i, [c_fusion_p, ctypes.POINTER(ctypes.c_void_p)]),
    "tc_f32_to_f16": (ctypes.c_uint16, [ctypes.c_float]),
    "tc_f16_to_f32": (ctypes.c_float, [ctypes.c_uint16]),
    "tc_f32_to_bf16": (ctypes.c_uint16, [ctypes.c_float]),
    "tc_bf16_to_f32": (ctypes.c_float, [ctypes.c_uint16]),
}


def _candidates():
    """(path or name, where it came from) in lookup order."""
    env = os.environ.get("TILEC_LIB")
    if env:
        return [(env, "$TILEC_LIB")]
    out = []
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    if os.path.isfile(os.path.join(root, "include", "tilec", "tilec.h")):  # a source tree
        out.append((os.path.join(root, "build", "libtilec.so"), "the source tree's build/"))
    found = ctypes.util.find_library("tilec")
    if found:
        out.append((found, 'ctypes.util.find_library("tilec")'))
    out.append(("libtilec.so", "the dynamic loader's search path"))
    out.append(("/usr/local/lib/libtilec.so", "make install's default prefix"))
    return out


def _declare(lib):
    for name, (res, args) in _PROTOS.items():
        fn = getattr(lib, name)  # AttributeError: an older libtilec.so
        fn.restype = res
        fn.argtypes = args


def load():
    """Returns the loaded library (a ctypes.CDLL), loading it on first use."""
    global _lib, _path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        env_set = bool(os.environ.get("TILEC_LIB"))
        for cand, where in _candidates():
            if os.sep in cand and not os.path.exists(cand):
                tried.append("%s (%s): no such file" % (cand, where))
                continue
            try:
                lib = ctypes.CDLL(cand)
            except OSError as e:
                tried.append("%s (%s): %s" % (cand, where, e))
                continue
            try:
                _declare(lib)
            except AttributeError as e:
                tried.append("%s (%s): not a usable libtilec (%s)" % (cand, where, e))
                continue
            _lib, _path = lib, cand
            return _lib
        hint = ("set TILEC_LIB to the path of libtilec.so" if not env_set else
                "TILEC_LIB is set, so nothing else was tried; fix or unset it")
        raise LibraryNotFound(
            "tilec: cannot load libtilec.so; tried:\n  " + "\n  ".join(tried) +
            "\nBuild it with `make` in the tilec source tree (build/libtilec.so), install it "
            "with `make install`, or " + hint + ".")


def path():
    """The path (or name) the library was loaded from."""
    load()
    return _path
