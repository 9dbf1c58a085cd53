"""A symbolic leading extent from Python: one compiled kernel run on arrays
of many leading extents (Fusion.input with a name there)."""
import numpy as np
import pytest

import tilec


def _softmax_fusion():
    f = tilec.Fusion()
    x = f.input(tilec.f32, ("M", 100))
    e = f.exp(x - f.max(x, 1))
    f.add_output(e / f.sum(e, 1))
    f.schedule_auto()
    return f


def test_softmax_many_m(rng):
    f = _softmax_fusion()
    k = f.compile(name="dyn_softmax_py")
    assert f.outputs[0].size_var == "M"
    for m in (1, 2, 7, 64, 129, 1000):
        a = rng.standard_normal((m, 100), dtype=np.float32) * 4
        want = np.exp(a - a.max(axis=1, keepdims=True))
        want /= want.sum(axis=1, keepdims=True)
        got = k.run(a)
        assert got.shape == (m, 100)
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-7)


def test_pointwise_two_inputs_and_divisor(rng):
    f = tilec.Fusion()
    a = f.input(tilec.f32, ("B", 8), divisor=2)
    b = f.input(tilec.f32, ("B", 8), divisor=2)
    f.add_output(a * b + a)
    f.schedule_auto()
    k = f.compile(name="dyn_pw_py")
    for m in (2, 6, 34):
        x, y = rng.standard_normal((2, m, 8), dtype=np.float32)
        np.testing.assert_allclose(k.run(x, y), x * y + x, rtol=1e-6)
    x = np.zeros((3, 8), np.float32)
    with pytest.raises(tilec.TilecError, match="B is 3.*multiple of 2"):
        k.run(x, x)
    with pytest.raises(tilec.TilecError, match="fixed shapes"):
        f.reference(x, x)


def test_one_size_variable_from_python():
    # the C API takes several size variables (tc_input_syms); Python fills
    # one from the arrays' leading extent, so a second name is refused
    f = tilec.Fusion()
    f.input(tilec.f32, ("M", 8))
    with pytest.raises(ValueError, match="size variable is M.*not N"):
        f.input(tilec.f32, ("N", 8))
