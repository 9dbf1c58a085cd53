"""Misuse raises tilec.TilecError carrying the C library's message and status."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tilec
from helpers import gsg_copy, tile_2d


def _fma(shape):
    f = tilec.Fusion()
    a, b, c = (f.input(tilec.f32, shape) for _ in range(3))
    return f, f.add_output(a * b + c)


def test_merge_non_adjacent():
    f, o = _fma((4, 6, 8))
    before = o.describe()
    with pytest.raises(tilec.TilecError) as ei:
        o.merge(0, 2)
    e = ei.value
    assert e.status == tilec.Status.ERR_SCHEDULE
    assert "tc_merge" in e.message and "T4" in e.message
    assert "axes 0 and 2" in e.message and "not adjacent" in e.message
    assert e.message in str(e) and "ERR_SCHEDULE" in str(e)
    assert o.describe() == before  # a failed call changes nothing
    assert f.error == e.message


def test_bad_arguments():
    f, o = _fma((4, 6, 8))
    with pytest.raises(tilec.TilecError, match="no loop axis 3") as ei:
        o.split(3, 2)
    assert ei.value.status == tilec.Status.ERR_ARGUMENT
    with pytest.raises(tilec.TilecError, match="split factor must be at least 1, got 0"):
        o.split(1, 0)
    with pytest.raises(tilec.TilecError, match="named twice"):
        o.reorder([(0, 1), (0, 2)])
    with pytest.raises(tilec.TilecError, match="power of two"):
        o.swizzle(0, 1)
    # a successful call clears the message
    o.split(0, 2)
    assert f.error == ""


def test_schedule_errors():
    f, o = _fma((4, 8))
    a = f.inputs[0]
    with pytest.raises(tilec.TilecError, match="fusion input") as ei:
        a.set_memory_type(tilec.shared)
    assert ei.value.status == tilec.Status.ERR_SCHEDULE
    with pytest.raises(tilec.TilecError, match="no definition") as ei:
        a.cache_before()
    assert ei.value.status == tilec.Status.ERR_SCHEDULE


def test_op_errors():
    f = tilec.Fusion()
    a = f.input(tilec.f32, (4, 8))
    b = f.input(tilec.f32, (8, 4))
    with pytest.raises(tilec.TilecError) as ei:
        a + b
    assert ei.value.status == tilec.Status.ERR_ARGUMENT and ei.value.message
    with pytest.raises(tilec.TilecError, match="extent"):
        f.input(tilec.f32, (4, 0))
    with pytest.raises(tilec.TilecError, match="is an input"):
        f.add_output(a)
    with pytest.raises(TypeError):
        a * "2.0"  # a number is a scalar (tc_binary_scalar); a string is nothing
    with pytest.raises(TypeError):
        a * True
    other = tilec.Fusion().input(tilec.f32, (4, 8))
    with pytest.raises(tilec.TilecError, match="another fusion"):
        a * other
    with pytest.raises(ValueError, match="unknown parallel type"):
        f.set(a).parallelize(0, "TIDw")


def test_compile_errors():
    f, o = _fma((4, 8))
    with pytest.raises(tilec.TilecError, match="not a C identifier") as ei:
        f.compile(name="no spaces")
    assert ei.value.status == tilec.Status.ERR_ARGUMENT


def test_run_argument_errors():
    f = gsg_copy(True, True, True)
    k = f.compile()
    with pytest.raises(TypeError, match="1 input, got 2"):
        k.run(np.zeros((2, 4)), np.zeros((2, 4)))
    with pytest.raises(ValueError, match=r"expected shape \(2, 4\), got \(4, 2\)"):
        k.run(np.zeros((4, 2), np.float32))


def test_unknown_opencl_device():
    k = gsg_copy(False, False, False).compile()
    with pytest.raises(tilec.TilecError, match="no OpenCL device matches 'no-such-device'") as ei:
        k.run(np.zeros((2, 4), np.float32), device="no-such-device")
    assert ei.value.status == tilec.Status.ERR_NO_DEVICE


def test_library_not_found_message(tmp_path):
    missing = str(tmp_path / "nowhere" / "libtilec.so")
    env = dict(os.environ, TILEC_LIB=missing,
               PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(tilec.__file__))))
    code = ("import tilec\n"
            "print('imported', tilec.f32.name)\n"  # import itself needs no library
            "tilec.Fusion()\n")
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode != 0
    assert "imported f32" in p.stdout
    assert "tilec._errors.LibraryNotFound" in p.stderr
    assert "cannot load libtilec.so" in p.stderr
    assert missing in p.stderr and "$TILEC_LIB" in p.stderr
    assert "no such file" in p.stderr


def test_library_path():
    assert tilec.library_path().endswith("libtilec.so")
