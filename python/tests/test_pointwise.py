"""Pointwise fusions on shapes the tiles do not divide, against NumPy."""
import numpy as np
import pytest

import tilec
from helpers import tile_2d


def test_fma_matches_numpy(rng):
    shape = (100, 75)  # neither 8 nor 32 divides it
    f = tilec.Fusion()
    a, b, c = (f.input(tilec.f32, shape) for _ in range(3))
    o = f.add_output(a * b + c)
    tile_2d(f, o, 8, 32)
    assert [e for e, _ in o.loop] == [13 * 3, 8, 32]
    assert [p for _, p in o.loop] == [tilec.BIDx, tilec.Serial, tilec.TIDx]
    k = f.compile(name="pw_fma")
    assert k.launch == ((39, 1, 1), (32, 1, 1))
    assert k.smem_bytes == 0
    x, y, z = (rng.standard_normal(shape, dtype=np.float32) for _ in range(3))
    out = k.run(x, y, z)
    assert out.shape == shape and out.dtype == np.float32
    # a device may contract a*b+c to one fma: allow one rounding of slack
    np.testing.assert_allclose(out, x * y + z, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(f.reference(x, y, z), x * y + z, rtol=1e-6, atol=1e-7)


def test_sub_div_relu_neg(rng):
    shape = (37, 130)
    f = tilec.Fusion()
    a = f.input(tilec.f32, shape)
    b = f.input(tilec.f32, shape)
    o1 = f.add_output(f.relu(a - b))
    o2 = f.add_output(-(a / b))
    tile_2d(f, o1, 4, 64)
    k = f.compile()
    x = rng.standard_normal(shape, dtype=np.float32)
    y = rng.uniform(0.5, 2.0, shape).astype(np.float32)
    r1, r2 = k.run(x, y)
    np.testing.assert_allclose(r1, np.maximum(x - y, 0), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(r2, -(x / y), rtol=1e-6, atol=1e-7)


def test_inputs_are_converted(rng):
    """float64 and non-contiguous inputs are converted to the input's dtype."""
    f = tilec.Fusion()
    a = f.input(tilec.f32, (16, 8))
    o = f.add_output(f.set(a))
    tile_2d(f, o, 4, 8)
    x = rng.standard_normal((8, 16))  # float64, and .T is not C-contiguous
    np.testing.assert_array_equal(f.compile().run(x.T), x.T.astype(np.float32))
