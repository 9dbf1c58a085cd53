"""NumPy references of the three convolution directions, summed in float64
(NCHW input, KCYX filter, NKHW output, MIOpen's conventions): what the
tests of tilec.conv2d and of `tilec driver` compare against."""
import numpy as np


def _pads(padding):
    if isinstance(padding, int):
        return (padding, padding), (padding, padding)
    ph, pw = padding
    ph = (ph, ph) if isinstance(ph, int) else tuple(ph)
    pw = (pw, pw) if isinstance(pw, int) else tuple(pw)
    return ph, pw


def geometry(xshape, wshape, stride, padding, dilation):
    (pt, pb), (pl, pr) = _pads(padding)
    sh, sw = stride
    dh, dw = dilation
    _, _, h, w = xshape
    _, _, y, x = wshape
    ho = (h + pt + pb - dh * (y - 1) - 1) // sh + 1
    wo = (w + pl + pr - dw * (x - 1) - 1) // sw + 1
    return (pt, pb, pl, pr), ho, wo


def _windows(y, x, stride, dilation, ho, wo):
    """For each filter tap, the slices of the padded input it meets."""
    for yy in range(y):
        for xx in range(x):
            hs = slice(yy * dilation[0], yy * dilation[0] + stride[0] * (ho - 1) + 1, stride[0])
            ws = slice(xx * dilation[1], xx * dilation[1] + stride[1] * (wo - 1) + 1, stride[1])
            yield yy, xx, hs, ws


def ref_forward(x, w, stride, padding, dilation, groups):
    """NCHW / KCYX, float64."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    (pt, pb, pl, pr), ho, wo = geometry(x.shape, w.shape, stride, padding, dilation)
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    n, k, cg = x.shape[0], w.shape[0], w.shape[1]
    kg = k // groups
    out = np.zeros((n, k, ho, wo))
    for g in range(groups):
        xs, ks = slice(g * cg, (g + 1) * cg), slice(g * kg, (g + 1) * kg)
        for yy, xx, hs, ws in _windows(w.shape[2], w.shape[3], stride, dilation, ho, wo):
            out[:, ks] += np.einsum("nchw,kc->nkhw", xp[:, xs, hs, ws], w[ks, :, yy, xx])
    return out


def ref_backward_data(xshape, w, dy, stride, padding, dilation, groups):
    w, dy = w.astype(np.float64), dy.astype(np.float64)
    (pt, pb, pl, pr), ho, wo = geometry(xshape, w.shape, stride, padding, dilation)
    n, c, h, wd = xshape
    k, cg = w.shape[0], w.shape[1]
    kg = k // groups
    dxp = np.zeros((n, c, h + pt + pb, wd + pl + pr))
    for g in range(groups):
        xs, ks = slice(g * cg, (g + 1) * cg), slice(g * kg, (g + 1) * kg)
        for yy, xx, hs, ws in _windows(w.shape[2], w.shape[3], stride, dilation, ho, wo):
            dxp[:, xs, hs, ws] += np.einsum("nkhw,kc->nchw", dy[:, ks], w[ks, :, yy, xx])
    return dxp[:, :, pt:pt + h, pl:pl + wd]


def ref_backward_weight(x, wshape, dy, stride, padding, dilation, groups):
    x, dy = x.astype(np.float64), dy.astype(np.float64)
    (pt, pb, pl, pr), ho, wo = geometry(x.shape, wshape, stride, padding, dilation)
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    k, cg = wshape[0], wshape[1]
    kg = k // groups
    dw = np.zeros(wshape)
    for g in range(groups):
        xs, ks = slice(g * cg, (g + 1) * cg), slice(g * kg, (g + 1) * kg)
        for yy, xx, hs, ws in _windows(wshape[2], wshape[3], stride, dilation, ho, wo):
            dw[ks, :, yy, xx] += np.einsum("nchw,nkhw->kc", xp[:, xs, hs, ws], dy[:, ks])
    return dw
