/* test_hooks.h - internal: faults the tests inject into the generators and
 * the lowering to show that the checks they rely on (runs on the OpenCL
 * emulation) catch a wrong layout.  All zero (no fault) unless a test sets
 * them through tc_test_hooks_set; the library only reads them. */
#ifndef TC_TEST_HOOKS_H
#define TC_TEST_HOOKS_H

typedef struct tc_test_hooks {
  /* lower/ldst.c: 1 derives ldmatrix row addresses by the other
   * transposition's rule, 2 with the rows of each matrix reversed; both
   * skip the check, so the kernel moves the wrong elements */
  int ldsm_fault;
  /* ops/gemm_mfma.c: 1, 2, 3 print a wrong A fragment layout (K groups
   * swapped), C layout (rows within a group of 4 reversed) or B fragment
   * layout (columns shifted) */
  int mfma_fault;
  /* ops/gemm_mma.c: 1, 2, 3 print a wrong A fragment layout (registers a1
   * and a2 swapped), C layout (the two columns of a lane swapped) or B
   * fragment layout (the halves of each register swapped) */
  int mma_fault;
  /* ops/gemm_wgmma.c: 1 writes the shared tiles with each core matrix
   * transposed, 2 swaps LBO and SBO in the descriptors, 3 swaps rows g and
   * g + 8 of the C store */
  int wgmma_fault;
  /* ops/gemm_tma.c: 1 prints the wgmma descriptors without the 128-byte
   * swizzle mode, 2 swaps the second and third stmatrix matrices, 3 makes
   * every block of a cluster load the first share of B */
  int gemm_tma_fault;
  /* lower/mma.c (the matmul's mma op type): 1, 2, 3 swap A registers 1
   * and 2, the halves of each B register, or a lane's two accumulator
   * columns */
  int mma_lower_fault;
  /* lower/mma.c: 1 keeps the scalar 16-bit fragment loads where ldmatrix
   * would serve (so both forms are tested) */
  int mma_scalar_fragments;
  /* lower/circular.c: 1 waits for one commit group fewer than the ring
   * needs (wait_group(stages - 1)), 2 drops the barrier at the top of the
   * ring loop, 3 drops the prologue's commit, 4 leaves a wgmma's
   * descriptors at slot 0 (no k % stages shift of their start), 5 leaves
   * a wgmma ring's groups running (wait depth 1) but copies stages - 1
   * tiles ahead, into the slot the running group reads, 6 makes a ring
   * of bulk tensor copies wait on its slot's mbarrier with the other
   * parity (phase (k / stages + 1) % 2) */
  int circular_fault;
  /* lower/wgmma.c (the matmul's wgmma op type), after the layout check:
   * 1 adds 16 bytes to the LBO of A's descriptor (its SBO where the tile
   * is swizzled: LBO is unused then), 2 to the SBO of B's, 3 flips A's
   * swizzle mode (none <-> 128B), 4 flips B's imm-trans-b (K- <-> N-major) */
  int wgmma_lower_fault;
  /* sched/matmul_wgmma.c: 1 lays A's tile out with each core matrix
   * transposed (the row within the 8 innermost): the M-major layout
   * without swizzle, which the lowering must find (imm-trans-a 1); 2 puts
   * K / 8 innermost, which no descriptor expresses: the lowering must
   * refuse it */
  int wgmma_layout_fault;
  /* sched/matmul_wgmma.c: 1 takes the bulk-copy form of the tiles on any
   * target (on OpenCL every thread then copies the whole tile), so that
   * its layout is checked on PoCL */
  int wgmma_tma_anywhere;
} tc_test_hooks;

/* The hooks in force (never NULL). */
const tc_test_hooks *tc_test_hooks_get(void);
/* Tests only: puts *h in force (NULL: no fault). */
void tc_test_hooks_set(const tc_test_hooks *h);

#endif
