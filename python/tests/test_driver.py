"""`tilec driver` (MIOpenDriver's conv command line) with tensors in and out:
--in_data / --weights / --dout_data read as .npy or raw by their extension,
--out FILE and --dump_output 1 written, all round-tripped through NumPy and
the results compared with the float64 references of conv_ref.py; the
transposed convolution, the 3-D convolution (--spatial_dim 3, NCDHW and
NDHWC) and the bias (-b 1) against definitions written here.  Runs the
real binary ($TILEC, default build/tilec) on the default OpenCL device."""
import os
import subprocess

import numpy as np
import pytest

from conv_ref import geometry, ref_backward_data, ref_backward_weight, ref_forward

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TILEC = os.path.abspath(os.environ.get("TILEC", os.path.join(REPO, "build", "tilec")))


@pytest.fixture(autouse=True)
def private_env(tmp_path, monkeypatch):
    """Never read or write the user's perf DB; run in a scratch directory
    (--dump_output writes into the current one)."""
    monkeypatch.setenv("TILEC_PERFDB", str(tmp_path / "perfdb.sqlite"))
    monkeypatch.chdir(tmp_path)


def driver(*args, rc=0):
    assert os.access(TILEC, os.X_OK), f"{TILEC} is not built (make)"
    p = subprocess.run([TILEC, "driver", *map(str, args)], capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == rc, f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    return p


def rand(rng, shape, dtype=np.float32):
    return rng.uniform(-1, 1, size=shape).astype(dtype)


# one problem with everything that moves an index: groups, stride,
# dilation, padding on one side only, a non-square filter
N, C, H, W, K, Y, X = 2, 4, 9, 7, 6, 3, 2
STRIDE, PAD, DIL, G = (2, 1), ((1, 1), (0, 0)), (1, 2), 2
FLAGS = ["-n", N, "-c", C, "-H", H, "-W", W, "-k", K, "-y", Y, "-x", X, "-p", 1, "-q", 0,
         "-u", 2, "-v", 1, "-l", 1, "-j", 2, "-g", G]
XSHAPE, WSHAPE = (N, C, H, W), (K, C // G, Y, X)
_, HO, WO = geometry(XSHAPE, WSHAPE, STRIDE, PAD, DIL)
YSHAPE = (N, K, HO, WO)


def refs(x, w, dy):
    return {"fwd": ref_forward(x, w, STRIDE, PAD, DIL, G),
            "bwd": ref_backward_data(x.shape, w, dy, STRIDE, PAD, DIL, G),
            "wrw": ref_backward_weight(x, w.shape, dy, STRIDE, PAD, DIL, G)}


def test_npy_in_and_out_all_three_directions(rng):
    x, dy = rand(rng, XSHAPE), rand(rng, YSHAPE)
    w = rng.uniform(-1, 1, size=WSHAPE)  # float64: converted to float32 on reading
    np.save("x.npy", x)
    np.save("w.npy", w)
    np.save("dy.npy", dy)
    p = driver("conv", *FLAGS, "-F", 0, "-d", "x.npy", "-e", "w.npy", "-D", "dy.npy",
               "--out", "res.npy")
    assert "Read data from input file w.npy, converted to f32" in p.stdout
    for line in ("Forward Convolution Verifies OK on CPU reference",
                 "Backward Convolution Data Verifies OK on CPU reference",
                 "Backward Convolution Weights Verifies OK on CPU reference"):
        assert line in p.stdout
    want = refs(x, w.astype(np.float32), dy)
    shapes = {"fwd": YSHAPE, "bwd": XSHAPE, "wrw": WSHAPE}
    for tag in ("fwd", "bwd", "wrw"):
        got = np.load(f"res.{tag}.npy")
        assert got.dtype == np.float32 and got.shape == shapes[tag], tag
        np.testing.assert_allclose(got, want[tag], rtol=1e-5, atol=1e-5, err_msg=tag)


def test_raw_in_and_out_one_direction(rng):
    x, w = rand(rng, XSHAPE), rand(rng, WSHAPE)
    x.tofile("x.bin")
    w.tofile("w.bin")
    driver("conv", *FLAGS, "-F", 1, "--in_data", "x.bin", "--weights", "w.bin",
           "--out", "y.bin")
    assert not os.path.exists("y.fwd.bin")  # one direction: the name as given
    got = np.fromfile("y.bin", dtype=np.float32)
    assert got.size == np.prod(YSHAPE)
    np.testing.assert_allclose(got.reshape(YSHAPE), ref_forward(x, w, STRIDE, PAD, DIL, G),
                               rtol=1e-5, atol=1e-5)


def test_fp16_nhwc_npy(rng):
    """convfp16 with NHWC tensors: the files hold the dims in the layout's
    order and float16 elements."""
    x, w, dy = rand(rng, XSHAPE, np.float16), rand(rng, WSHAPE, np.float16), rand(rng, YSHAPE, np.float16)
    nhwc = (0, 2, 3, 1)
    np.save("x.npy", x.transpose(nhwc))
    np.save("w.npy", w.transpose(nhwc))
    np.save("dy.npy", dy.transpose(nhwc))
    driver("convfp16", *FLAGS, "-F", 0, "-I", "NHWC", "-f", "NHWC", "-O", "NHWC",
           "-d", "x.npy", "-e", "w.npy", "-D", "dy.npy", "--out", "r.npy")
    want = refs(x, w, dy)
    for tag in ("fwd", "bwd", "wrw"):
        got = np.load(f"r.{tag}.npy")
        assert got.dtype == np.float16, tag
        np.testing.assert_allclose(got.transpose(0, 3, 1, 2).astype(np.float64), want[tag],
                                   rtol=2e-3, atol=4e-3, err_msg=tag)


def test_dump_output_files(rng):
    """--dump_output 1: MIOpenDriver's raw files in the current directory."""
    x, w = rand(rng, XSHAPE), rand(rng, WSHAPE)
    np.save("x.npy", x)
    np.save("w.npy", w)
    driver("conv", *FLAGS, "-F", 1, "-d", "x.npy", "-e", "w.npy", "-o", 1, "--out", "y.npy")
    np.testing.assert_array_equal(np.fromfile("dump_in.bin", dtype=np.float32), x.ravel())
    np.testing.assert_array_equal(np.fromfile("dump_wei.bin", dtype=np.float32), w.ravel())
    assert not os.path.exists("dump_dout.bin")  # -F 1 reads no dy
    gpu = np.fromfile("dump_fwd_out_gpu.bin", dtype=np.float32)
    np.testing.assert_array_equal(gpu, np.load("y.npy").ravel())
    cpu = np.fromfile("dump_fwd_out_cpu.bin", dtype=np.float32).reshape(YSHAPE)
    np.testing.assert_allclose(cpu, ref_forward(x, w, STRIDE, PAD, DIL, G), rtol=1e-6, atol=1e-6)


def test_written_npy_is_numpy_format_1_0(rng):
    driver("conv", *FLAGS, "-F", 4, "-V", 0, "--out", "dw.npy")
    with open("dw.npy", "rb") as f:
        assert np.lib.format.read_magic(f) == (1, 0)
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        assert (shape, fortran, dtype) == (WSHAPE, False, np.dtype("<f4"))
        assert f.tell() % 64 == 0  # the data starts aligned, as NumPy writes it


def test_npy_versions_and_byte_orders_read(rng):
    """A version 2.0 header and big-endian elements read the same as the
    plain file."""
    x, w = rand(rng, XSHAPE), rand(rng, WSHAPE)
    with open("x.npy", "wb") as f:
        np.lib.format.write_array(f, x, version=(2, 0))
    np.save("w.npy", w.astype(">f4"))
    driver("conv", *FLAGS, "-F", 1, "-d", "x.npy", "-e", "w.npy", "--out", "y.npy")
    np.testing.assert_allclose(np.load("y.npy"), ref_forward(x, w, STRIDE, PAD, DIL, G),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("make,words", [
    (lambda rng: np.save("x.npy", rand(rng, (N, H, W, C))), ["has shape (2, 9, 7, 4)", "expected (2, 4, 9, 7)"]),
    (lambda rng: np.save("x.npy", np.zeros(XSHAPE, dtype=np.int32)), ["signed integer", "'<i4'"]),
    (lambda rng: np.save("x.npy", np.asfortranarray(rand(rng, XSHAPE))), ["Fortran order"]),
    (lambda rng: open("x.npy", "wb").write(b"not an array"), ["not a valid .npy file"]),
])
def test_npy_that_does_not_fit(rng, make, words):
    """exit 2, one line naming the flag and what is wrong"""
    make(rng)
    p = driver("conv", *FLAGS, "-F", 1, "-d", "x.npy", rc=2)
    line = p.stderr.strip()
    assert "\n" not in line and line.startswith("tilec driver: -d: x.npy"), line
    for w in words:
        assert w in line


def test_raw_of_the_wrong_size(rng):
    rand(rng, (N * C * H * W - 1,)).tofile("x.bin")
    p = driver("conv", *FLAGS, "-F", 1, "-d", "x.bin", rc=2)
    assert f"x.bin holds {4 * (N * C * H * W - 1)} bytes" in p.stderr
    assert f"takes {4 * N * C * H * W}" in p.stderr


def test_missing_file_and_unwritable_out():
    p = driver("conv", *FLAGS, "-F", 1, "--weights", "nothing.npy", rc=1)
    assert "--weights: cannot open nothing.npy" in p.stderr
    p = driver("conv", *FLAGS, "-F", 1, "--out", "no/such/dir/y.npy", rc=1)
    assert "cannot write no/such/dir/y.npy" in p.stderr


# ---- -m trans: the transposed convolution, against its own definition ----

def trans_refs(x, w, dy, stride, pad, dil, groups, out_pad):
    """The transposed convolution from its definition, in float64: each
    input element times the filter added into the output (forward, scatter
    form), and the gradients of that sum: dx (backward data) and dw
    (backward weights).  x [N, C, H, W], w [C, K/G, Y, X], y [N, K, Ho, Wo].
    Independent of the ordinary convolution and of conv_ref.py."""
    x, w, dy = (a.astype(np.float64) for a in (x, w, dy))
    n, c, h, wd = x.shape
    kg, fy, fx = w.shape[1:]
    cg = c // groups
    ho, wo = dy.shape[2:]
    # position r = i * s + t * dil lands on output row r - pad; a frame big
    # enough for every r and every output row (shifted by pad)
    hb = max((h - 1) * stride[0] + dil[0] * (fy - 1) + 1, ho + pad[0])
    wb = max((wd - 1) * stride[1] + dil[1] * (fx - 1) + 1, wo + pad[1])
    big = np.zeros((n, kg * groups, hb, wb))
    dyb = np.zeros_like(big)
    dyb[:, :, pad[0]:pad[0] + ho, pad[1]:pad[1] + wo] = dy
    dx, dw = np.zeros(x.shape), np.zeros(w.shape)
    for g in range(groups):
        cs, ks = slice(g * cg, (g + 1) * cg), slice(g * kg, (g + 1) * kg)
        for t in range(fy):
            for u in range(fx):
                rs = slice(t * dil[0], t * dil[0] + (h - 1) * stride[0] + 1, stride[0])
                qs = slice(u * dil[1], u * dil[1] + (wd - 1) * stride[1] + 1, stride[1])
                big[:, ks, rs, qs] += np.einsum("nchw,ck->nkhw", x[:, cs], w[cs, :, t, u])
                dx[:, cs] += np.einsum("nkhw,ck->nchw", dyb[:, ks, rs, qs], w[cs, :, t, u])
                dw[cs, :, t, u] += np.einsum("nchw,nkhw->ck", x[:, cs], dyb[:, ks, rs, qs])
    y = big[:, :, pad[0]:pad[0] + ho, pad[1]:pad[1] + wo]
    assert y.shape[2:] == (ho, wo)
    return {"fwd": y, "bwd": dx, "wrw": dw}


# N, C, H, W, K, Y, X, stride, pad, dilation, groups, output padding, layout
TRANS_CASES = [
    (2, 4, 5, 4, 6, 3, 3, (2, 2), (1, 1), (1, 1), 2, (1, 1), "NCHW"),
    (1, 3, 4, 5, 2, 2, 3, (1, 2), (0, 1), (2, 1), 1, (0, 1), "NHWC"),
    (2, 2, 4, 4, 3, 3, 3, (1, 1), (1, 1), (1, 1), 1, (1, 0), "NCHW"),  # output padding >= stride
    (1, 4, 3, 3, 4, 4, 2, (3, 2), (2, 0), (1, 1), 4, (2, 1), "NHWC"),  # depthwise
]


@pytest.mark.parametrize("case", TRANS_CASES, ids=lambda c: "x".join(map(str, c[:7])) + "-" + c[-1])
def test_trans_all_three_directions_against_the_definition(rng, case):
    n, c, h, wd, k, fy, fx, st, pad, dil, g, op, layout = case
    ho = (h - 1) * st[0] - 2 * pad[0] + dil[0] * (fy - 1) + 1 + op[0]
    wo = (wd - 1) * st[1] - 2 * pad[1] + dil[1] * (fx - 1) + 1 + op[1]
    x, w, dy = rand(rng, (n, c, h, wd)), rand(rng, (c, k // g, fy, fx)), rand(rng, (n, k, ho, wo))
    order = (0, 2, 3, 1) if layout == "NHWC" else (0, 1, 2, 3)
    back = np.argsort(order)
    for name, a in (("x", x), ("w", w), ("dy", dy)):
        np.save(f"{name}.npy", a.transpose(order))
    p = driver("conv", "-m", "trans", "-n", n, "-c", c, "-H", h, "-W", wd, "-k", k, "-y", fy,
               "-x", fx, "-u", st[0], "-v", st[1], "-p", pad[0], "-q", pad[1], "-l", dil[0],
               "-j", dil[1], "-g", g, "-Y", op[0], "-X", op[1], "-I", layout, "-f", layout,
               "-O", layout, "-F", 0, "-d", "x.npy", "-e", "w.npy", "-D", "dy.npy",
               "--out", "r.npy")
    assert p.stdout.count("Verifies OK on CPU reference") == 3, p.stdout
    want = trans_refs(x, w, dy, st, pad, dil, g, op)
    shapes = {"fwd": (n, k, ho, wo), "bwd": (n, c, h, wd), "wrw": w.shape}
    for tag in ("fwd", "bwd", "wrw"):
        got = np.load(f"r.{tag}.npy").transpose(back)
        assert got.shape == shapes[tag], tag
        np.testing.assert_allclose(got, want[tag], rtol=1e-5, atol=1e-5, err_msg=tag)


# ---- --spatial_dim 3: the 3-D convolution, and -b 1 -------------------------

def conv3d_refs(x, w, dy, stride, pad, dil, groups):
    """The 3-D convolution and its two gradients from the definition, in
    float64, tap by tap on a zero-padded input: x [N, C, D, H, W], w [K,
    C/G, Z, Y, X], dy [N, K, Do, Ho, Wo] (symmetric padding)."""
    x, w, dy = (a.astype(np.float64) for a in (x, w, dy))
    n, c = x.shape[:2]
    k, cg = w.shape[:2]
    kg = k // groups
    out = dy.shape[2:]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    y, dxp, dw = np.zeros(dy.shape), np.zeros(xp.shape), np.zeros(w.shape)
    for g in range(groups):
        cs, ks = slice(g * cg, (g + 1) * cg), slice(g * kg, (g + 1) * kg)
        for t in np.ndindex(*w.shape[2:]):
            sl = tuple(slice(t[i] * dil[i], t[i] * dil[i] + (out[i] - 1) * stride[i] + 1, stride[i])
                       for i in range(3))
            xs = xp[(slice(None), cs) + sl]
            wt = w[(ks, slice(None)) + t]
            y[:, ks] += np.einsum("ncdhw,kc->nkdhw", xs, wt)
            dxp[(slice(None), cs) + sl] += np.einsum("nkdhw,kc->ncdhw", dy[:, ks], wt)
            dw[(ks, slice(None)) + t] += np.einsum("ncdhw,nkdhw->kc", xs, dy[:, ks])
    dx = dxp[(slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(pad, x.shape[2:]))]
    return {"fwd": y, "bwd": dx, "wrw": dw}


# N, C, (D, H, W), K, (Z, Y, X), stride, pad, dilation, groups, layout
CONV3D_CASES = [
    (2, 4, (5, 6, 7), 6, (3, 2, 3), (2, 1, 2), (1, 0, 1), (1, 2, 1), 2, "NCDHW"),
    (1, 3, (4, 5, 3), 2, (2, 3, 1), (1, 2, 1), (0, 1, 0), (2, 1, 1), 1, "NDHWC"),
]


@pytest.mark.parametrize("case", CONV3D_CASES, ids=lambda c: c[-1] + "-g%d" % c[-2])
def test_conv3d_all_three_directions_against_the_definition(rng, case):
    n, c, sp, k, fil, st, pad, dil, g, layout = case
    out = tuple((sp[i] + 2 * pad[i] - dil[i] * (fil[i] - 1) - 1) // st[i] + 1 for i in range(3))
    x, w, dy = rand(rng, (n, c) + sp), rand(rng, (k, c // g) + fil), rand(rng, (n, k) + out)
    order = (0, 2, 3, 4, 1) if layout == "NDHWC" else (0, 1, 2, 3, 4)
    back = np.argsort(order)
    for name, a in (("x", x), ("w", w), ("dy", dy)):
        np.save(f"{name}.npy", a.transpose(order))
    p = driver("conv", "--spatial_dim", 3, "-n", n, "-c", c, "--in_d", sp[0], "-H", sp[1],
               "-W", sp[2], "-k", k, "--fil_d", fil[0], "-y", fil[1], "-x", fil[2],
               "--conv_stride_d", st[0], "-u", st[1], "-v", st[2], "--pad_d", pad[0],
               "-p", pad[1], "-q", pad[2], "--dilation_d", dil[0], "-l", dil[1], "-j", dil[2],
               "-g", g, "-I", layout, "-f", layout, "-O", layout, "-F", 0,
               "-d", "x.npy", "-e", "w.npy", "-D", "dy.npy", "--out", "r.npy")
    assert p.stdout.count("Verifies OK on CPU reference") == 3, p.stdout
    want = conv3d_refs(x, w, dy, st, pad, dil, g)
    shapes = {"fwd": dy.shape, "bwd": x.shape, "wrw": w.shape}
    for tag in ("fwd", "bwd", "wrw"):
        got = np.load(f"r.{tag}.npy")
        assert got.ndim == 5 and got.dtype == np.float32, tag
        got = got.transpose(back)
        assert got.shape == shapes[tag], tag
        np.testing.assert_allclose(got, want[tag], rtol=1e-5, atol=1e-5, err_msg=tag)


@pytest.mark.parametrize("spatial", [2, 3])
def test_bias_added_per_output_channel(rng, spatial):
    """-b 1 --in_bias b.npy: the forward result is the convolution plus
    b[k] along the output's channel dim (NHWC / NDHWC: the last one)."""
    n, c, k = 2, 3, 5
    sp, fil = ((4, 5, 6), (2, 3, 3)) if spatial == 3 else ((5, 6), (3, 3))
    pad = (1,) * spatial
    out = tuple(sp[i] + 2 * pad[i] - fil[i] + 1 for i in range(spatial))
    x, w, b = rand(rng, (n, c) + sp), rand(rng, (k, c) + fil), rand(rng, (k,))
    last = (0,) + tuple(range(2, 2 + spatial)) + (1,)
    np.save("x.npy", x.transpose(last))
    np.save("w.npy", w.transpose(last))
    np.save("b.npy", b)
    lay = "NDHWC" if spatial == 3 else "NHWC"
    flags = ["--spatial_dim", spatial, "-n", n, "-c", c, "-k", k, "-H", sp[-2], "-W", sp[-1],
             "-y", fil[-2], "-x", fil[-1], "-p", 1, "-q", 1]
    if spatial == 3:
        flags += ["--in_d", sp[0], "--fil_d", fil[0], "--pad_d", 1]
    p = driver("conv", *flags, "-I", lay, "-f", lay, "-O", lay, "-F", 1, "-b", 1, "-a", "b.npy",
               "-d", "x.npy", "-e", "w.npy", "--out", "y.npy")
    assert "Forward Convolution Verifies OK on CPU reference" in p.stdout, p.stdout
    assert "tilec_conv_bias" in p.stdout
    if spatial == 3:
        want = conv3d_refs(x, w, np.zeros((n, k) + out), (1, 1, 1), pad, (1, 1, 1), 1)["fwd"]
    else:
        want = ref_forward(x, w, (1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    want = want + b.astype(np.float64).reshape((1, k) + (1,) * spatial)
    got = np.load("y.npy").transpose(np.argsort(last))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
