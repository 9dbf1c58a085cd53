"""Schedules shared by the tests (the same ones `tilec demo` uses)."""
import tilec


def tile_2d(f, out, ty, tx):
    """[Yo*Xo](BIDx), Yi, Xi(TIDx) on out, propagated to the whole fusion."""
    out.split(0, ty).split(2, tx).reorder({1: 2, 2: 1}).merge(0, 1)
    out.parallelize(0, tilec.BIDx).parallelize(2, tilec.TIDx)
    f.propagate(out)
    f.parallelize_all_like(out)
    f.inline_most()
    return out


def gsg_copy(inline, tidx0, bidx1):
    """The allocation rules' copy: T0 (global) -> T1 (shared) -> T2 (global) on a [2, 4] f32."""
    return gsg_copy_tensors(inline, tidx0, bidx1)[0]


def gsg_copy_tensors(inline, tidx0, bidx1):
    """gsg_copy's fusion and its tensors: (f, T0, T1, T2)."""
    f = tilec.Fusion()
    tv0 = f.input(tilec.f32, (2, 4))
    tv1 = f.set(tv0)
    tv2 = f.add_output(f.set(tv1))
    tv1.set_memory_type(tilec.shared)
    if inline:
        tv1.inline_at(1)
    if tidx0:
        tv1.parallelize(0, tilec.TIDx)
        tv2.parallelize(0, tilec.TIDx)
    if bidx1:
        tv1.parallelize(1, tilec.BIDx)
        tv2.parallelize(1, tilec.BIDx)
    return f, tv0, tv1, tv2


def transpose(shape=(67, 45), swizzle=False):
    """out = in.T through a shared-memory tile of 16 x 16."""
    f = tilec.Fusion()
    t0 = f.input(tilec.f32, shape)
    t1 = f.set(t0)
    t2 = f.add_output(f.permute(t1, (1, 0)))
    t1.set_memory_type(tilec.shared)
    t2.split(0, 16).split(2, 16).reorder({1: 2, 2: 1})  # [Mo, No, Mi, Ni]
    f.propagate(t2)
    t1.reorder({2: 3, 3: 2})  # T1: [Mo, No, Ni, Mi]
    if swizzle:
        t1.swizzle(2, 3)
    for t in (t1, t2):
        t.parallelize(0, tilec.BIDy).parallelize(1, tilec.BIDx)
        t.parallelize(2, tilec.TIDy).parallelize(3, tilec.TIDx)
    t1.inline_at(2)
    return f
