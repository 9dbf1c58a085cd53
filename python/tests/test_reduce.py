"""Reductions and broadcasting from Python: softmax and RMSNorm against NumPy."""
import numpy as np
import pytest

import tilec


def _rows_on_blocks(f, y, threads):
    """One block per row, the row split by `threads` with the inner part on
    TIDx; every tensor scheduled like y."""
    y.split(1, threads)
    y.parallelize(0, tilec.BIDx)
    y.parallelize(2, tilec.TIDx)
    f.propagate(y)
    f.parallelize_all_like(y)


@pytest.mark.parametrize("shape", [(7, 1000), (3, 1), (33, 4099)])
def test_softmax(rng, shape):
    f = tilec.Fusion()
    x = f.input(tilec.f32, shape)
    e = f.exp(x - f.max(x, 1))
    y = f.add_output(e / f.sum(e, 1))
    _rows_on_blocks(f, y, 128)
    k = f.compile(name="softmax")
    a = rng.standard_normal(shape, dtype=np.float32) * 4
    want = np.exp(a - a.max(axis=1, keepdims=True))
    want /= want.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(k.run(a), want, rtol=2e-5, atol=1e-7)
    np.testing.assert_allclose(f.reference(a), want, rtol=1e-6, atol=1e-8)


def test_rmsnorm_scalars(rng):
    shape = (5, 777)
    f = tilec.Fusion()
    x = f.input(tilec.f32, shape)
    y = f.add_output(x * f.reciprocal(f.sqrt(f.sum(x * x, -1) * (1.0 / shape[1]) + 1e-5)))
    _rows_on_blocks(f, y, 128)
    a = rng.standard_normal(shape, dtype=np.float32)
    want = a / np.sqrt((a.astype(np.float64) ** 2).mean(axis=1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(f.compile().run(a), want, rtol=2e-5, atol=1e-6)


def test_reduce_shape_and_errors():
    f = tilec.Fusion()
    x = f.input(tilec.bf16, (4, 6, 8))
    s = f.sum(x, (0, 2))
    assert list(s.shape) == [1, 6, 1] and s.dtype == tilec.f32
    with pytest.raises(ValueError):
        f.reduce("mean", x, 0)
    with pytest.raises(tilec.TilecError, match="out of range"):
        f.max(x, 3)


@pytest.mark.parametrize("shape", [(3, 1), (7, 1000), (2, 65537)])
def test_softmax_schedule_auto(rng, shape):
    """Five lines of fusion, no schedule by hand."""
    f = tilec.Fusion()
    x = f.input(tilec.f32, shape)
    e = f.exp(x - f.max(x, 1))
    f.add_output(e / f.sum(e, 1))
    f.schedule_auto()
    assert "inner reduction" in f.schedule_note
    a = rng.standard_normal(shape, dtype=np.float32)
    want = np.exp(a - a.max(axis=1, keepdims=True))
    want /= want.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(f.compile().run(a), want, rtol=5e-5, atol=1e-8)


def test_cross_entropy_gather(rng):
    rows, cols = 9, 301
    f = tilec.Fusion()
    x = f.input(tilec.f32, (rows, cols))
    label = f.input(tilec.i32, (rows, 1))
    mx = f.max(x, 1)
    loss = f.add_output(f.log(f.sum(f.exp(x - mx), 1)) + mx - f.gather(x, 1, label))
    f.schedule_auto()
    a = rng.standard_normal((rows, cols), dtype=np.float32) * 3
    lab = rng.integers(0, cols, (rows, 1)).astype(np.int32)
    m = a.max(axis=1, keepdims=True).astype(np.float64)
    want = np.log(np.exp(a - m).sum(axis=1, keepdims=True)) + m - np.take_along_axis(a, lab, 1)
    np.testing.assert_allclose(f.compile().run(a, lab), want, rtol=1e-5, atol=1e-5)


def test_affine_layernorm_broadcast(rng):
    rows, cols = 4, 257
    f = tilec.Fusion()
    x = f.input(tilec.f32, (rows, cols))
    w = f.input(tilec.f32, (cols,))
    b = f.input(tilec.f32, (cols,))
    xc = x - f.sum(x, 1) * (1.0 / cols)
    r = f.reciprocal(f.sqrt(f.sum(xc * xc, 1) * (1.0 / cols) + 1e-5))
    f.add_output(xc * r * f.broadcast(w, (True, False)) + f.broadcast(b, (True, False)))
    f.schedule_auto()
    a = rng.standard_normal((rows, cols), dtype=np.float32)
    wv = rng.standard_normal(cols, dtype=np.float32)
    bv = rng.standard_normal(cols, dtype=np.float32)
    a64 = a.astype(np.float64)
    want = (a64 - a64.mean(1, keepdims=True)) / np.sqrt(a64.var(1, keepdims=True) + 1e-5) * wv + bv
    np.testing.assert_allclose(f.compile().run(a, wv, bv), want, rtol=1e-4, atol=2e-5)
    e = tilec.Fusion()
    c = e.input(tilec.f32, (3, 1))
    e.add_output(e.expand(c, (3, 4)))
    e.schedule_auto()
    cv = np.array([[1.5], [-2.0], [7.0]], dtype=np.float32)
    np.testing.assert_array_equal(e.compile().run(cv), np.broadcast_to(cv, (3, 4)))


def test_where_compare(rng):
    f = tilec.Fusion()
    x = f.input(tilec.f32, (5, 33))
    t = f.input(tilec.f32, (1, 33))
    f.add_output(f.where(x > t, x, t))
    f.add_output(f.cast(f.compare("ne", x, t), tilec.f32))
    f.schedule_auto()
    a = rng.standard_normal((5, 33), dtype=np.float32)
    b = rng.standard_normal((1, 33), dtype=np.float32)
    a[0, 0] = np.nan
    y, m = f.compile().run(a, b)
    np.testing.assert_array_equal(y, np.where(a > b, a, np.broadcast_to(b, a.shape)))
    np.testing.assert_array_equal(m, (a != b).astype(np.float32))


@pytest.mark.parametrize("shape", [(3, 1), (7, 1000)])
def test_welford_layernorm(rng, shape):
    """LayerNorm on the one-pass mean and variance, scheduled automatically,
    against NumPy in double; a large mean does not cost the variance."""
    f = tilec.Fusion()
    x = f.input(tilec.f32, shape)
    mean, var = f.welford(x, 1)
    f.add_output(mean)
    f.add_output(var)
    y = f.add_output((x - mean) * f.reciprocal(f.sqrt(var + 1e-5)))
    f.schedule_auto()
    a = (rng.standard_normal(shape) * 0.5 + 1000.0).astype(np.float32)
    m, v, out = f.compile(name="layernorm_welford").run(a)
    a64 = a.astype(np.float64)
    wm, wv = a64.mean(axis=1, keepdims=True), a64.var(axis=1, keepdims=True)
    np.testing.assert_allclose(m, wm, rtol=1e-6)
    np.testing.assert_allclose(v, wv, rtol=2e-3, atol=1e-6)
    np.testing.assert_allclose(out, (a64 - wm) / np.sqrt(wv + 1e-5), rtol=2e-3, atol=2e-3)
    rm, rv, _ = f.reference(a)
    np.testing.assert_allclose(rv, wv, rtol=1e-5, atol=1e-9)


def test_welford_state_and_errors():
    f = tilec.Fusion()
    x = f.input(tilec.f16, (4, 8))
    mean, var, w = f.welford(x, -1, state=True)
    assert mean.shape == (4, 1) and var.dtype == tilec.f32 and w.shape == (4, 1)
    with pytest.raises(tilec.TilecError, match="Welford state"):
        f.add_output(w)
    with pytest.raises(tilec.TilecError, match="floating-point"):
        f.welford(f.input(tilec.i32, (4, 8)), 1)


def test_scalar_inputs_one_kernel(rng):
    """eps and a scale passed at run: one kernel, two eps values, each
    result against NumPy; by name or in place; a missing scalar is named."""
    shape = (7, 1000)
    f = tilec.Fusion()
    x = f.input(tilec.f32, shape)
    eps = f.scalar("eps")
    scale = f.scalar("scale")
    mean, var = f.welford(x, 1)
    f.add_output(scale * ((x - mean) * f.reciprocal(f.sqrt(var + eps))))
    f.schedule_auto()
    k = f.compile(name="layernorm_eps")
    a = (rng.standard_normal(shape) * 0.005).astype(np.float32)
    a64 = a.astype(np.float64)
    wm, wv = a64.mean(axis=1, keepdims=True), a64.var(axis=1, keepdims=True)
    for e, s in ((1e-5, 1.0), (0.5, -2.0)):
        want = s * (a64 - wm) / np.sqrt(wv + np.float32(e))
        np.testing.assert_allclose(k.run(a, eps=e, scale=s), want, rtol=2e-3, atol=1e-5)
        np.testing.assert_allclose(k.run(a, e, s), want, rtol=2e-3, atol=1e-5)
        np.testing.assert_allclose(f.reference(a, scale=s, eps=e), want, rtol=2e-3, atol=1e-5)
    assert "5.0" not in k.source and "const float" in k.source
    with pytest.raises(TypeError, match="scalar input scale is missing"):
        k.run(a, eps=1e-5)
    with pytest.raises(TypeError, match="no scalar input named 'epsilon'"):
        k.run(a, 1.0, epsilon=1e-5)
    with pytest.raises(tilec.TilecError, match="only tc_binary takes a scalar"):
        f.exp(eps)
