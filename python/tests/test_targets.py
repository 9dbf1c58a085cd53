"""CUDA: source and NVRTC compile (no GPU needed); running on PyTorch tensors
(CPU tensors through OpenCL; CUDA tensors where torch sees a GPU)."""
import numpy as np
import pytest

import tilec
from helpers import gsg_copy, tile_2d, transpose


def _fma(shape=(100, 75)):
    f = tilec.Fusion()
    a, b, c = (f.input(tilec.f32, shape) for _ in range(3))
    tile_2d(f, f.add_output(a * b + c), 8, 32)
    return f


def test_cuda_source():
    k = _fma().compile(target="cuda", arch="sm_90a", name="pw_fma")
    assert k.target == tilec.Target.cuda
    assert "__global__" in k.source and "pw_fma" in k.source


def test_cuda_nvrtc_build():
    k = transpose().compile(target="cuda", arch="sm_90a")
    try:
        k.build()
    except tilec.TilecError as e:
        if e.status == tilec.Status.ERR_UNSUPPORTED:
            pytest.skip("NVRTC not found: " + e.message)
        raise


def _torch():
    return pytest.importorskip("torch", reason="PyTorch is not installed")


def test_torch_cpu_tensors_opencl():
    torch = _torch()
    x, y, z = (torch.randn(100, 75) for _ in range(3))
    out = _fma().compile().run(x, y, z)
    assert isinstance(out, torch.Tensor) and out.device.type == "cpu"
    torch.testing.assert_close(out, x * y + z, rtol=1e-5, atol=1e-6)


def _cuda_torch():
    torch = _torch()
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    return torch


def _run_cuda(k, *args):
    try:
        return k.run(*args)
    except tilec.TilecError as e:
        if e.status in (tilec.Status.ERR_NO_DEVICE, tilec.Status.ERR_UNSUPPORTED):
            pytest.skip("tilec cannot run CUDA here: " + e.message)
        raise


def test_torch_cuda_fma():
    torch = _cuda_torch()
    x, y, z = (torch.randn(100, 75, device="cuda") for _ in range(3))
    out = _run_cuda(_fma().compile(target="cuda"), x, y, z)
    assert out.is_cuda and out.shape == (100, 75)
    torch.testing.assert_close(out, x * y + z, rtol=1e-5, atol=1e-6)


def test_torch_cuda_gsg_copy_and_transpose():
    torch = _cuda_torch()
    x = torch.arange(8, dtype=torch.float32, device="cuda").reshape(2, 4)
    for how, smem in (((False, False, False), 32), ((True, True, True), 8)):
        k = gsg_copy(*how).compile(target="cuda")
        assert k.smem_bytes == smem
        torch.testing.assert_close(_run_cuda(k, x), x, rtol=0, atol=0)
    t = torch.randn(67, 45, device="cuda")
    out = _run_cuda(transpose((67, 45), True).compile(target="cuda"), t)
    torch.testing.assert_close(out, t.T.contiguous(), rtol=0, atol=0)


def test_torch_cuda_bf16():
    torch = _cuda_torch()
    f = tilec.Fusion()
    a = f.input(tilec.bf16, (50, 33))
    tile_2d(f, f.add_output(f.cast(a * a, tilec.bf16)), 3, 16)
    x = torch.randn(50, 33, device="cuda").to(torch.bfloat16)
    out = _run_cuda(f.compile(target="cuda", arch="sm_90a"), x)
    assert out.dtype == torch.bfloat16 and out.is_cuda
    torch.testing.assert_close(out, x * x, rtol=8e-3, atol=0)
