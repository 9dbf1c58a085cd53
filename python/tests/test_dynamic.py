"""Symbolic extents from Python: one compiled kernel run on arrays of many
shapes (Fusion.input with names for extents: one size variable or
several, leading or not)."""
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


PAIRS = ((1, 1), (1, 7), (2, 3), (3, 1), (5, 13), (4, 32), (7, 31), (1, 128), (16, 8),
         (3, 129), (13, 100))


def test_softmax_two_size_variables(rng):
    # [B, S, 64] with B and S open: one compile, runs at 11 (B, S) pairs;
    # the automatic schedule merges B and S into the rows
    f = tilec.Fusion()
    x = f.input(tilec.f32, ("B", "S", 64))
    e = f.exp(x - f.max(x, 2))
    f.add_output(e / f.sum(e, 2))
    f.schedule_auto()
    assert x.size_vars == ("B", "S", None) and f.outputs[0].size_vars == ("B", "S", None)
    assert x.shape[0] * x.shape[1] * 64 < 2 ** 31  # the bounds share the 32-bit index range
    k = f.compile(name="dyn2_softmax_py")
    for b, s in PAIRS:
        a = rng.standard_normal((b, s, 64), dtype=np.float32) * 4
        want = np.exp(a - a.max(axis=2, keepdims=True))
        want /= want.sum(axis=2, keepdims=True)
        got = k.run(a)
        assert got.shape == (b, s, 64)
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-7)


def test_pointwise_two_size_variables_divisor_and_misuse(rng):
    f = tilec.Fusion()
    a = f.input(tilec.f32, ("B", "S", 8), divisor={"S": 2}, bounds={"B": 64, "S": 512})
    b = f.input(tilec.f32, ("B", "S", 8), divisor={"S": 2})
    assert a.shape == (64, 512, 8) and b.shape == (64, 512, 8)
    f.add_output(a * b + a)
    f.schedule_auto()
    k = f.compile(name="dyn2_pw_py")
    for bb, ss in ((1, 2), (3, 6), (7, 34), (64, 512)):
        x, y = rng.standard_normal((2, bb, ss, 8), dtype=np.float32)
        np.testing.assert_allclose(k.run(x, y), x * y + x, rtol=1e-6)
    x = np.zeros((2, 3, 8), np.float32)
    with pytest.raises(tilec.TilecError, match="S is 3.*multiple of 2"):
        k.run(x, x)
    x = np.zeros((65, 2, 8), np.float32)
    with pytest.raises(tilec.TilecError, match="B"):
        k.run(x, x)  # past B's bound
    with pytest.raises(tilec.TilecError, match="fixed shapes.*B, S"):
        f.reference(x, x)


def test_size_variable_on_a_later_axis(rng):
    # [4, N] with N open: the variable need not lead
    f = tilec.Fusion()
    x = f.input(tilec.f32, (4, "N"))
    f.add_output(x * 2.0)
    f.schedule_auto()
    k = f.compile(name="dyn2_later_py")
    for n in (1, 5, 300):
        a = rng.standard_normal((4, n), dtype=np.float32)
        np.testing.assert_array_equal(k.run(a), a * 2.0)


def test_reductions_over_a_size_variable(rng):
    # the row's length a size variable: softmax over [M, N] with both
    # open (two passes over global memory), and column sums over M (M
    # reduced by a serial loop to M's parameter)
    f = tilec.Fusion()
    x = f.input(tilec.f32, ("M", "N"), bounds={"M": 512, "N": 4096})
    e = f.exp(x - f.max(x, 1))
    f.add_output(e / f.sum(e, 1))
    f.schedule_auto()
    assert "two-pass" in f.schedule_note
    k = f.compile(name="dyn_softmax_n_py")
    for m, n in ((1, 1), (3, 7), (2, 1025), (17, 300), (5, 4096)):
        a = rng.standard_normal((m, n), dtype=np.float32) * 4
        want = np.exp(a - a.max(axis=1, keepdims=True))
        want /= want.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(k.run(a), want, rtol=2e-5, atol=1e-7)
    f = tilec.Fusion()
    x = f.input(tilec.f32, ("M", 24))
    f.add_output(f.sum(x, 0))
    f.schedule_auto()
    k = f.compile(name="dyn_colsum_py")
    for m in (1, 2, 31, 1000):
        a = rng.standard_normal((m, 24), dtype=np.float32)
        np.testing.assert_allclose(k.run(a).reshape(-1), a.astype(np.float64).sum(axis=0), rtol=1e-4, atol=1e-4)


def test_matmul_k_open(rng):
    # A [64, K] @ B [K, 40] + relu, K a size variable: one kernel for every K
    f = tilec.Fusion()
    a = f.input(tilec.f32, (64, "K"))
    b = f.input(tilec.f32, ("K", 40))
    f.add_output(f.relu(f.matmul(a, b)))
    f.schedule_auto()
    assert "x K (at most" in f.schedule_note
    k = f.compile(name="dyn_matmul_k_py")
    for kk in (1, 7, 16, 129, 300):
        x = rng.standard_normal((64, kk), dtype=np.float32)
        y = rng.standard_normal((kk, 40), dtype=np.float32)
        want = np.maximum(x.astype(np.float64) @ y, 0)
        np.testing.assert_allclose(k.run(x, y), want, rtol=1e-4, atol=1e-4)


def test_rmsnorm_row_length_open(rng):
    # RMSNorm over rows of N elements, N a size variable: the mean divides
    # by N's value at run time (size_var)
    f = tilec.Fusion()
    x = f.input(tilec.f32, (4, "N"), bounds={"N": 8192})
    ms = f.sum(x * x, 1) / f.size_var("N")
    f.add_output(x / f.sqrt(ms + 1e-5))
    f.schedule_auto()
    k = f.compile(name="dyn_rmsnorm_n_py")
    for n in (1, 7, 129, 3000):
        a = rng.standard_normal((4, n), dtype=np.float32)
        want = a / np.sqrt((a.astype(np.float64) ** 2).mean(axis=1, keepdims=True) + 1e-5)
        np.testing.assert_allclose(k.run(a), want, rtol=2e-5, atol=1e-6)
    with pytest.raises(tilec.TilecError, match="no input names the size variable Q"):
        f.size_var("Q")
