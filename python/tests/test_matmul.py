"""Matmul as a fusion op from Python: f.matmul / @ with fused epilogues,
scheduled automatically, against NumPy."""
import numpy as np
import pytest

import tilec


def _gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


@pytest.mark.parametrize("m,n,k", [(37, 29, 13), (1, 7, 1), (67, 3, 97)])
def test_relu_bias_matmul(rng, m, n, k):
    f = tilec.Fusion()
    a = f.input(tilec.f32, (m, k))
    b = f.input(tilec.f32, (k, n))
    bias = f.input(tilec.f32, (n,))
    f.add_output(f.relu(f.matmul(a, b) + f.broadcast(bias, (True, False))))
    f.schedule_auto()
    assert f.schedule_note.startswith("matmul:")
    k_ = f.compile(name="mm_bias_relu")
    x = rng.standard_normal((m, k), dtype=np.float32)
    w = rng.standard_normal((k, n), dtype=np.float32)
    bv = rng.standard_normal((n,), dtype=np.float32)
    want = np.maximum(x.astype(np.float64) @ w + bv, 0)
    np.testing.assert_allclose(k_.run(x, w, bv), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(f.reference(x, w, bv), want, rtol=1e-5, atol=1e-5)


def test_at_operator_f16_transposed_gelu_cast(rng):
    m, n, k = 19, 33, 24
    f = tilec.Fusion()
    a = f.input(tilec.f16, (m, k))
    bt = f.input(tilec.f16, (n, k))  # B given transposed
    y = f.add_output(f.cast(f.gelu(a @ f.permute(bt, (1, 0)) * 0.5), tilec.f16))
    f.schedule_auto()
    kern = f.compile(name="mm_gelu")
    x = rng.standard_normal((m, k)).astype(np.float16)
    w = rng.standard_normal((n, k)).astype(np.float16)
    want = _gelu((x.astype(np.float64) @ w.astype(np.float64).T) * 0.5)
    got = kern.run(x, w)
    assert got.dtype == np.float16 and got.shape == (m, n)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3, atol=2e-3)
    assert y.shape == (m, n)


def test_batched_silu(rng):
    f = tilec.Fusion()
    a = f.input(tilec.f32, (3, 9, 5))
    b = f.input(tilec.f32, (3, 5, 11))
    f.add_output(f.silu(a @ b))
    f.schedule_auto()
    kern = f.compile(name="bmm")
    x = rng.standard_normal((3, 9, 5), dtype=np.float32)
    w = rng.standard_normal((3, 5, 11), dtype=np.float32)
    z = x.astype(np.float64) @ w
    np.testing.assert_allclose(kern.run(x, w), z / (1 + np.exp(-z)), rtol=1e-4, atol=1e-5)


def test_shapes_that_do_not_agree():
    f = tilec.Fusion()
    a = f.input(tilec.f32, (4, 5))
    b = f.input(tilec.f32, (6, 3))
    with pytest.raises(tilec.TilecError, match=r"inner extents \(K\) differ \(5 vs 6\)"):
        f.matmul(a, b)


def test_row_sums_beside_the_result(rng):
    """relu(A @ B + bias) and its row sums, two outputs of one kernel."""
    m, n, k = 37, 90, 13
    f = tilec.Fusion()
    a = f.input(tilec.f32, (m, k))
    b = f.input(tilec.f32, (k, n))
    bias = f.input(tilec.f32, (n,))
    y = f.relu(a @ b + f.broadcast(bias, (True, False)))
    f.add_output(f.cast(y, tilec.f16))
    f.add_output(f.sum(y, 1))
    f.schedule_auto()
    assert "the sum of each row, reduced in its block" in f.schedule_note
    x = rng.standard_normal((m, k), dtype=np.float32)
    w = rng.standard_normal((k, n), dtype=np.float32)
    bv = rng.standard_normal((n,), dtype=np.float32)
    c, r = f.compile(name="mm_rowsum").run(x, w, bv)
    want = np.maximum(x.astype(np.float64) @ w + bv, 0)
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(r.reshape(m), want.sum(axis=1), rtol=1e-4, atol=1e-4)


def test_cast_before_the_matmul(rng):
    """f32 inputs cast to bf16 (B given transposed and scaled first) are
    the operands: the casts are computed as the tiles are staged."""
    m, n, k = 21, 35, 50
    f = tilec.Fusion()
    a = f.input(tilec.f32, (m, k))
    bt = f.input(tilec.f32, (n, k))
    b16 = f.cast(f.permute(bt * 0.5, (1, 0)), tilec.bf16)
    f.add_output(f.cast(a, tilec.bf16) @ b16)
    f.schedule_auto()
    assert f.schedule_note.startswith("matmul:")
    x = rng.standard_normal((m, k), dtype=np.float32)
    w = rng.standard_normal((n, k), dtype=np.float32)

    def bf16(v):  # round to nearest even on the upper 16 bits
        u = np.asarray(v, dtype=np.float32).view(np.uint32).astype(np.uint64)
        u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
        return u.astype(np.uint32).view(np.float32).astype(np.float64)

    want = bf16(x) @ bf16(w * 0.5).T
    np.testing.assert_allclose(f.compile(name="mm_cast").run(x, w), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("macro,tiles,stages", [(None, (32, 32, 8, 4, 4), 2), ("mma", (64, 32, 32, 32, 16), 3),
                                                ("wgmma", (64, 64, 32, 64, 64), 1)])
def test_schedule_matmul_tiles(rng, macro, tiles, stages):
    # tiles, op type and ring given by hand (tc_schedule_matmul); the
    # instructions are emulated on OpenCL
    m, n, k = 67, 97, 40
    dt = tilec.f32 if macro is None else tilec.f16
    f = tilec.Fusion()
    a = f.input(dt, (m, k))
    b = f.input(dt, (k, n))
    f.add_output(f.relu(a @ b))
    f.schedule_matmul(tiles=tiles, macro=macro, stages=stages)
    name = {None: "FMA outer products", "mma": "mma.sync m16n8k16", "wgmma": "wgmma m64n64k16"}[macro]
    assert "%dx%d tiles" % tiles[:2] in f.schedule_note and name in f.schedule_note
    npdt = np.float32 if macro is None else np.float16
    x = rng.standard_normal((m, k)).astype(npdt)
    w = rng.standard_normal((k, n)).astype(npdt)
    want = np.maximum(x.astype(np.float64) @ w.astype(np.float64), 0)
    np.testing.assert_allclose(f.compile(name="mm_tiles").run(x, w), want, rtol=2e-3, atol=2e-3)


def test_schedule_matmul_errors():
    f = tilec.Fusion()
    a = f.input(tilec.f32, (8, 8))
    f.add_output(a @ a)
    with pytest.raises(ValueError, match="five ints"):
        f.schedule_matmul(tiles=(8, 8, 8))
    with pytest.raises(ValueError, match="macro must be one of"):
        f.schedule_matmul(tiles=(8, 8, 8, 2, 2), macro="tensor")
    with pytest.raises(ValueError, match="need tiles"):
        f.schedule_matmul(macro="mma")
    with pytest.raises(tilec.TilecError, match="do not nest"):
        f.schedule_matmul(tiles=(8, 8, 8, 3, 2))
