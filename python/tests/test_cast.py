"""Casts to f16 (against NumPy's float16, round to nearest even) and bf16."""
import numpy as np

import tilec
from helpers import tile_2d


def _cast_fusion(shape, dtype, square):
    f = tilec.Fusion()
    a = f.input(tilec.f32, shape)
    o = f.add_output(f.cast(a * a if square else a, dtype))
    assert o.dtype == dtype
    tile_2d(f, o, 3, 16)
    return f


def test_square_cast_f16(rng):
    shape = (50, 33)
    f = _cast_fusion(shape, tilec.f16, square=True)
    x = rng.uniform(-300, 300, shape).astype(np.float32)
    out = f.compile().run(x)
    assert out.dtype == np.float16
    with np.errstate(over="ignore"):  # 256**2 > 65504: infinities too
        want = (x * x).astype(np.float16)
    np.testing.assert_array_equal(out, want)


def test_cast_f16_rounds_to_nearest_even():
    one = np.float32(1.0)
    ulp = np.float32(2.0 ** -10)  # f16 spacing at 1
    vals = [one + ulp / 2,          # a tie, rounds down to 1 (even)
            one + 3 * ulp / 2,      # a tie, rounds up to 1 + 2 ulp (even)
            one + ulp / 2 + np.float32(2.0 ** -20),  # above the tie: up
            65504.0, 65519.0, 65520.0, -70000.0,     # max, below and at overflow
            2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -25,  # subnormals and ties
            -0.0, 0.1, -1.0 / 3, np.inf, -np.inf]
    x = np.zeros((2, 16), dtype=np.float32)
    x.flat[:len(vals)] = vals
    f = _cast_fusion(x.shape, tilec.f16, square=False)
    out = f.compile().run(x)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))
    np.testing.assert_array_equal(f.reference(x).view(np.uint16), want.view(np.uint16))
    assert out[0, 0] == 1.0 and out[0, 1] == np.float16(1 + 2 * 2.0 ** -10)


def test_cast_bf16_upcast_to_float32(rng):
    shape = (50, 33)
    f = _cast_fusion(shape, tilec.bf16, square=True)
    x = rng.uniform(-4, 4, shape).astype(np.float32)
    out = f.compile().run(x)
    assert out.dtype == np.float32  # bf16 comes back as exact float32 values
    want = tilec.bf16_bits_to_f32(tilec.f32_to_bf16_bits(x * x))
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(f.reference(x), want)
    # every value is a bf16: the low 16 bits are zero
    assert not np.any(out.view(np.uint32) & 0xFFFF)


def test_bf16_input_from_bits_or_floats():
    f = tilec.Fusion()
    a = f.input(tilec.bf16, (4, 8))
    o = f.add_output(f.cast(a, tilec.f32))
    tile_2d(f, o, 2, 8)
    k = f.compile()
    x = np.linspace(-3, 3, 32, dtype=np.float32).reshape(4, 8)
    bits = tilec.f32_to_bf16_bits(x)
    want = tilec.bf16_bits_to_f32(bits)
    np.testing.assert_array_equal(k.run(x), want)     # floats: rounded to bf16 (RNE)
    np.testing.assert_array_equal(k.run(bits), want)  # uint16: taken as bit patterns


def test_bf16_helpers_round_to_nearest_even():
    x = np.array([1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, 1 + 2.0 ** -8 + 2.0 ** -20], np.float32)
    np.testing.assert_array_equal(tilec.bf16_bits_to_f32(tilec.f32_to_bf16_bits(x)),
                                  np.array([1.0, 1 + 2.0 ** -6, 1 + 2.0 ** -7], np.float32))
    L = tilec.library()
    for v in x:
        assert L.tc_f32_to_bf16(float(v)) == tilec.f32_to_bf16_bits(np.float32(v))
