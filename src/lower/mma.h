/* mma.h - lowering of a matmul's products to NVIDIA's warp-level
 * mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32 (the
 * op type TC_MACRO_MMA_M16N8K16 of tc_matmul_tiles; docs/matmul.md).
 *
 * The schedule (src/sched/matmul_mma.c) gives the accumulator the PTX
 * ISA's C/D layout as ordinary loop axes: [..., ihi:U, lane:TIDx, jlo:U,
 * k16] with the lane = 4 * (row % 8) + column / 2 of a 16 x 8 tile, so
 * that lowering it as usual gives every lane the products of its four
 * accumulators.  This pass replaces the loops [ihi, jlo, k16] around that
 * statement by one warp-wide mma (tc_kmma): the fragment loads are the
 * statement's own shared-memory indices with the loop variables (and the
 * lane) replaced by the A and B fragment layouts, the accumulators its
 * output indices at the four (ihi, jlo); where ldmatrix.x4 (A) and
 * .x2.trans (B) deliver exactly those elements (checked by evaluation),
 * the fragments come by ldmatrix instead. */
#ifndef TC_MMA_LOWER_H
#define TC_MMA_LOWER_H

#include "kernel.h"

struct tc_frag_shape;  /* (src/sched/sched.h) */
struct tc_target_info; /* (src/target/target.h) */

/* The loop around n when it holds n alone, of the extent given, else NULL. */
tc_knode *tc_mma_only_loop(tc_knode *n, int64_t extent);
/* Statement s takes the place of the nest of single-body loops from
 * outer down to it (their barriers before it), which are freed. */
void tc_mma_take_loops(tc_knode *s, tc_knode *outer);

/* After indexing and barriers: lowers the statements of accumulators
 * marked TC_MACRO_MMA_M16N8K16 or an MFMA macro (sets tc_kstmt.mma,
 * tc_kir.nmma, mma_kind and mma_warps) or fails with the message on k->f:
 * HIP has no mma.sync and CUDA no MFMA, CUDA needs sm_80+, HIP an arch
 * with MFMA, the operands f16 or bf16, a block of 32-lane warps (64-lane
 * wavefronts) on TIDx; edges of M, N and K become predicates of the
 * fragment loads. */
tc_status tc_mma_lower(tc_kir *k, tc_target target, const char *arch);

/* The roles of the variables a fragment layout replaces: a lane's value
 * loops (tc_frag_shape's m_pre, m_post, n_post), the K steps, the lane. */
enum { TC_FR_MPRE, TC_FR_MPOST, TC_FR_NPOST, TC_FR_K, TC_FR_LANE, TC_FR_N };

/* MFMA (mfma.c): into v[TC_FR_*] the values for item e of fragment which
 * (0: A, 1: B, 2: the accumulators) of lane `lane` (the AMD CDNA layouts). */
void tc_mfma_vars(tc_epool *p, const struct tc_frag_shape *sh, const tc_expr *lane, int which,
                  int e, const tc_expr **v);
/* MFMA: whether target / arch (ti) has the instruction for op's operands
 * (OpenCL emulates it), else the message on f. */
tc_status tc_mfma_check_target(tc_fusion *f, const tc_op *op, const struct tc_frag_shape *sh,
                               tc_target target, const struct tc_target_info *ti);
/* Whether target / arch (ti) has the NVIDIA matrix instruction `name`
 * (its feature bit; OpenCL emulates it) for op's accumulator; else
 * TC_ERR_UNSUPPORTED with the message on f: another target ("an NVIDIA
 * <arch_word>instruction that target hip does not have"), or a CUDA arch
 * without it ("<name><what> needs arch <needs>, but the arch is sm_75"
 * and the hint). */
tc_status tc_nv_macro_check(tc_fusion *f, const tc_op *op, tc_target target,
                            const struct tc_target_info *ti, unsigned feature, const char *name,
                            const char *arch_word, const char *what, const char *needs,
                            const char *hint);
/* After indexing and barriers: lowers the statements of accumulators
 * marked TC_MACRO_WGMMA (src/lower/wgmma.c) to warp-group wgmma m64nNk16
 * (tc_kmma kind TC_MACRO_WGMMA; tc_kir.nwgmma), deriving each operand's
 * matrix descriptor (start, LBO, SBO, swizzle) from its shared tile's
 * index expression, and marks the statements that store those tiles
 * zfill; or fails with the message on k->f: not CUDA sm_90a or OpenCL,
 * operands not f16 / bf16, a block whose x is not the 128 threads of a
 * warp group, a layout no descriptor expresses. */
tc_status tc_wgmma_lower(tc_kir *k, tc_target target, const char *arch);

#endif
