"""tilec.conv2d and its backward directions (the tc_conv2d_ C API) against a
NumPy reference summed in float64: padding (asymmetric too), stride,
dilation, groups, NHWC, float16, a given perf config, and the errors."""
import numpy as np
import pytest

import tilec
from conv_ref import geometry, ref_backward_data, ref_backward_weight, ref_forward


@pytest.fixture(autouse=True)
def private_perfdb(tmp_path, monkeypatch):
    """Never read or write the user's perf DB."""
    monkeypatch.setenv("TILEC_PERFDB", str(tmp_path / "perfdb.sqlite"))


def _rand(rng, shape, dtype=np.float32):
    return rng.uniform(-1, 1, size=shape).astype(dtype)


CASES = [
    # (N, C, H, W), (K, C/G, Y, X), stride, padding, dilation, groups
    ((2, 3, 8, 8), (4, 3, 3, 3), (1, 1), 1, (1, 1), 1),
    ((1, 4, 9, 7), (6, 2, 3, 2), (2, 1), ((1, 0), (0, 2)), (1, 2), 2),
    ((2, 8, 6, 6), (8, 8, 1, 1), (1, 1), 0, (1, 1), 1),
]


@pytest.mark.parametrize("xshape,wshape,stride,padding,dilation,groups", CASES)
def test_forward(rng, xshape, wshape, stride, padding, dilation, groups):
    x, w = _rand(rng, xshape), _rand(rng, wshape)
    out = tilec.conv2d(x, w, stride=stride, padding=padding, dilation=dilation, groups=groups)
    want = ref_forward(x, w, stride, padding, dilation, groups)
    assert out.dtype == np.float32 and out.shape == want.shape
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("xshape,wshape,stride,padding,dilation,groups", CASES[1:2])
def test_backward_data(rng, xshape, wshape, stride, padding, dilation, groups):
    w = _rand(rng, wshape)
    _, ho, wo = geometry(xshape, wshape, stride, padding, dilation)
    dy = _rand(rng, (xshape[0], wshape[0], ho, wo))
    dx = tilec.conv2d_backward_data(xshape, w, dy, stride=stride, padding=padding,
                                    dilation=dilation, groups=groups)
    want = ref_backward_data(xshape, w, dy, stride, padding, dilation, groups)
    assert dx.shape == tuple(xshape)
    np.testing.assert_allclose(dx, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("xshape,wshape,stride,padding,dilation,groups", CASES[1:2])
def test_backward_weight(rng, xshape, wshape, stride, padding, dilation, groups):
    x = _rand(rng, xshape)
    _, ho, wo = geometry(xshape, wshape, stride, padding, dilation)
    dy = _rand(rng, (xshape[0], wshape[0], ho, wo))
    dw = tilec.conv2d_backward_weight(x, wshape, dy, stride=stride, padding=padding,
                                      dilation=dilation, groups=groups)
    want = ref_backward_weight(x, wshape, dy, stride, padding, dilation, groups)
    assert dw.shape == tuple(wshape)
    np.testing.assert_allclose(dw, want, rtol=1e-5, atol=1e-5)


def test_nhwc_matches_nchw(rng):
    x, w = _rand(rng, (2, 4, 7, 7)), _rand(rng, (8, 4, 3, 3))
    want = ref_forward(x, w, (2, 2), 1, (1, 1), 1)
    out = tilec.conv2d(x.transpose(0, 2, 3, 1), w.transpose(0, 2, 3, 1), stride=2, padding=1,
                       layout="NHWC")
    assert out.shape == (2, 4, 4, 8)
    np.testing.assert_allclose(out.transpose(0, 3, 1, 2), want, rtol=1e-5, atol=1e-5)


def test_float16(rng):
    x, w = _rand(rng, (1, 8, 6, 6), np.float16), _rand(rng, (4, 8, 3, 3), np.float16)
    out = tilec.conv2d(x, w, padding=1)
    assert out.dtype == np.float16
    want = ref_forward(x, w, (1, 1), 1, (1, 1), 1)
    np.testing.assert_allclose(out.astype(np.float64), want, rtol=2e-3, atol=2e-3)


def test_perf_config(rng):
    x, w = _rand(rng, (1, 4, 8, 8)), _rand(rng, (8, 4, 3, 3))
    out = tilec.conv2d(x, w, padding=1, perf_config="64,32,32,4,2,2")
    np.testing.assert_allclose(out, ref_forward(x, w, (1, 1), 1, (1, 1), 1), rtol=1e-5, atol=1e-5)
    with pytest.raises(tilec.TilecError) as e:
        tilec.conv2d(x, w, padding=1, perf_config="64,100,32,4,2,2")
    assert e.value.status == tilec.Status.ERR_ARGUMENT
    assert "does not fit" in e.value.message


def test_errors(rng):
    x = _rand(rng, (1, 4, 3, 3))
    with pytest.raises(tilec.TilecError) as e:  # the filter is larger than the padded input
        tilec.conv2d(x, _rand(rng, (2, 4, 5, 5)))
    assert e.value.status == tilec.Status.ERR_ARGUMENT
    assert "smaller than the dilated filter" in e.value.message
    with pytest.raises(ValueError, match="groups"):
        tilec.conv2d(x, _rand(rng, (2, 3, 1, 1)))
    with pytest.raises(ValueError, match="float32 or float16"):
        tilec.conv2d(x.astype(np.float64), _rand(rng, (2, 4, 1, 1)).astype(np.float64))
    with pytest.raises(ValueError, match="layout"):
        tilec.conv2d(x, _rand(rng, (2, 4, 1, 1)), layout="CHWN")
    with pytest.raises(ValueError, match="different dtypes"):
        tilec.conv2d(x, _rand(rng, (2, 4, 1, 1), np.float16))
    with pytest.raises(ValueError, match="shape"):
        tilec.conv2d_backward_data((1, 4, 3, 3), _rand(rng, (2, 4, 1, 1)), _rand(rng, (1, 2, 2, 2)))


def _act(name, v):
    if name == "relu":
        return np.maximum(v, 0)
    if name == "gelu":
        return 0.5 * v * (1 + np.tanh(0.7978845608028654 * (v + 0.044715 * v ** 3)))
    return v / (1 + np.exp(-v))


@pytest.mark.parametrize("activation", ["relu", "gelu", "silu"])
def test_fusion_forward_bias_activation(rng, activation):
    """path='fusion': the bias and the activation in the kernel, NCHW and NHWC."""
    xshape, wshape, stride, padding, dilation, groups = CASES[1]
    x, w, b = _rand(rng, xshape), _rand(rng, wshape), _rand(rng, (wshape[0],))
    want = _act(activation, ref_forward(x, w, stride, padding, dilation, groups)
                + b.astype(np.float64)[None, :, None, None])
    out = tilec.conv2d(x, w, stride=stride, padding=padding, dilation=dilation, groups=groups,
                       path="fusion", bias=b, activation=activation)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    out = tilec.conv2d(x.transpose(0, 2, 3, 1), w.transpose(0, 2, 3, 1), stride=stride,
                       padding=padding, dilation=dilation, groups=groups, layout="NHWC",
                       path="fusion", bias=b, activation=activation)
    np.testing.assert_allclose(out, want.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)


def test_fusion_backward(rng):
    """path='fusion' in both backward directions (stride 2: four GEMMs for the data)."""
    xshape, wshape, stride, padding, dilation = (2, 4, 9, 8), (6, 4, 3, 3), (2, 2), 1, (1, 1)
    x, w = _rand(rng, xshape), _rand(rng, wshape)
    _, ho, wo = geometry(xshape, wshape, stride, padding, dilation)
    dy = _rand(rng, (xshape[0], wshape[0], ho, wo))
    dx = tilec.conv2d_backward_data(xshape, w, dy, stride=stride, padding=padding, path="fusion")
    np.testing.assert_allclose(dx, ref_backward_data(xshape, w, dy, stride, padding, dilation, 1),
                               rtol=1e-5, atol=1e-5)
    dw = tilec.conv2d_backward_weight(x, wshape, dy, stride=stride, padding=padding, path="fusion")
    np.testing.assert_allclose(dw, ref_backward_weight(x, wshape, dy, stride, padding, dilation, 1),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("tiles,macro,stages", [((16, 32, 8, 4, 4), None, 2), ((64, 64, 16, 64, 64), "wgmma", 3)])
def test_fusion_tiles(rng, tiles, macro, stages):
    """path='fusion' with each GEMM's tiles, op type and ring given
    (tc_conv2d_set_fusion_tiles): forward NHWC f16 with bias + ReLU, and
    the backward data (FMA tiles only: wgmma reads K-major views)."""
    xshape, wshape, stride, padding = (2, 6, 7, 16), (8, 3, 3, 16), 1, 1  # NHWC, KYXC
    x = _rand(rng, xshape, np.float16)
    w = _rand(rng, wshape, np.float16)
    b = _rand(rng, (8,), np.float16)
    out = tilec.conv2d(x, w, stride=stride, padding=padding, layout="NHWC", path="fusion", bias=b,
                       activation="relu", tiles=tiles, macro=macro, stages=stages)
    want = np.maximum(ref_forward(x.transpose(0, 3, 1, 2).astype(np.float64),
                                  w.transpose(0, 3, 1, 2).astype(np.float64), (1, 1), padding, (1, 1), 1)
                      + b.astype(np.float64)[None, :, None, None], 0).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(out.astype(np.float64), want, rtol=1e-2, atol=1e-2)
    if macro is None:
        dy = _rand(rng, (2, 6, 7, 8), np.float16)
        dx = tilec.conv2d_backward_data(xshape, w, dy, stride=stride, padding=padding, layout="NHWC",
                                        path="fusion", tiles=tiles, stages=stages)
        want = ref_backward_data((2, 16, 6, 7), w.transpose(0, 3, 1, 2).astype(np.float64),
                                 dy.transpose(0, 3, 1, 2).astype(np.float64), (1, 1), padding, (1, 1), 1)
        np.testing.assert_allclose(dx.astype(np.float64), want.transpose(0, 2, 3, 1), rtol=1e-2, atol=1e-2)


def test_fusion_errors(rng):
    x, w = _rand(rng, (1, 2, 4, 4)), _rand(rng, (2, 2, 3, 3))
    with pytest.raises(ValueError, match="path='fusion' only"):
        tilec.conv2d(x, w, bias=np.zeros(2, np.float32))
    with pytest.raises(ValueError, match="takes no perf_config"):
        tilec.conv2d(x, w, path="fusion", perf_config="64,16,16,4,2,2")
    with pytest.raises(ValueError, match="'relu', 'gelu' or 'silu'"):
        tilec.conv2d(x, w, path="fusion", activation="tanh")
    with pytest.raises(ValueError, match=r"bias must have shape \(2,\)"):
        tilec.conv2d(x, w, path="fusion", bias=np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="path='fusion' only"):
        tilec.conv2d(x, w, tiles=(16, 16, 8, 4, 4))
    with pytest.raises(tilec.TilecError, match="do not nest"):
        tilec.conv2d(x, w, path="fusion", tiles=(16, 16, 8, 3, 4))
