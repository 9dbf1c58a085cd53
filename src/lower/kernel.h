/* kernel.h - the kernel IR produced by lowering a scheduled fusion: a tree
 * of loops and statements with their index expressions, predicates and
 * barriers already derived, the buffers to allocate, and the launch
 * configuration.  Codegen prints it; nothing after lowering reasons about
 * schedules. */
#ifndef TC_KERNEL_H
#define TC_KERNEL_H

#include "../ir/fusion.h"

typedef enum tc_knode_kind { TC_K_ROOT, TC_K_LOOP, TC_K_STMT } tc_knode_kind;

struct tc_knode;

/* LOOP: for (var = 0; var < extent; ++var) */
typedef struct tc_kloop {
  const tc_expr *var;      /* the loop index variable */
  int64_t extent;          /* (at the size variables' bounds where sym_extent) */
  /* a serial loop over an axis whose extent depends on a size variable
   * (docs/dynamic.md): its extent over the variables' parameters, which
   * the loop runs to; NULL: the extent is the number above */
  const tc_expr *sym_extent;
  tc_ptype ptype;          /* SERIAL, UNROLL, VECTORIZE or DID* */
  int id;                  /* loop identity (union of mapped axes) */
  struct tc_knode *tma_stmt; /* the TMA statement this loop nest is printed
                                as (or NULL) */
  int wgmma_drain;         /* 1: a ring loop whose wgmma groups are left
                              running (tc_kmma.wait1): wgmma.wait_group 0
                              after it, before anything reads the
                              accumulators */
} tc_kloop;

/* A statement reading or writing tensor memory (src/lower/tmem.c): one
 * warp-collective tcgen05.st (kind == TC_TMEM_ST, registers in[0] ->
 * tensor memory out) or tcgen05.ld (TC_TMEM_LD) of shape 32x32b for the
 * whole VECTORIZE loop vec it sits in (NULL: a single element) */
typedef struct tc_ktmem {
  int kind;                /* TC_TMEM_NONE / _ST / _LD (tmem.h) */
  int words;               /* 32-bit registers per thread: the .x<N> */
  int elems;               /* elements per thread (the vector width) */
  int alloc;               /* index of the tensor's tc_kalloc */
  struct tc_knode *vec;
  const tc_expr *addr;     /* (warp's first lane << 16) + first column,
                              relative to the allocation's address */
} tc_ktmem;

/* A statement lowered to one ldmatrix (kind == TC_LDSM_LD, shared in[0]
 * -> registers out) or stmatrix (TC_LDSM_ST) per vector (src/lower/
 * ldst.c): vec is the Vectorize(2 * num) loop it replaces, addr the
 * element index in the shared tensor of the row this lane supplies */
typedef struct tc_kldsm {
  int kind;                /* TC_LDSM_NONE / _LD / _ST (ldst.h) */
  int num;                 /* 8x8 matrices per instruction: the .x1/.x2/.x4 */
  int trans;               /* 1: .trans */
  struct tc_knode *vec;
  const tc_expr *addr;
} tc_kldsm;

/* A statement lowered to bulk tensor copies (src/lower/tma.c): kind is
 * TC_TMA_LOAD / _STORE; top is the outermost of the statement's own loops
 * (printed as the copy), nissue of them (outermost first, issue[]) issue
 * one box each, the rest are the box; the box is rows x cols elements
 * with swizzle swizzle bytes, at global (row, col) and shared element
 * smem; bar is the mbarrier (loads).  A copy of a ring of bulk tensor
 * copies (src/lower/circular.c): bar_slot is its slot (an expression),
 * the mbarrier is bar + bar_slot, one of the ring's (tc_kir.ring_bars),
 * the copy only arms it and issues the boxes (the ring loop waits, tc_knode
 * .mbar_slot), and guard (NULL: none) is the condition on the whole copy
 * (the tile inside the ring loop's extent); bar_slot NULL: a copy that
 * waits for its own mbarrier */
typedef struct tc_ktma {
  int kind;
  struct tc_knode *top;
  struct tc_knode *issue[8];
  int nissue;
  int64_t rows, cols;
  int swizzle, bar;
  const tc_expr *row, *col, *smem;
  const tc_expr *bar_slot, *guard;
} tc_ktma;

/* A matmul's statement lowered to one warp-wide matrix instruction
 * (src/lower/mma.c; kind the tc_matmul_macro).  mma.sync m16n8k16: in
 * the PTX ISA's fragment layouts, this lane's A register r holds the
 * 16-bit elements at shared indices a[2r] (low half) and a[2r + 1] (high
 * half) of the statement's in[0], B register r those at b[2r], b[2r + 1]
 * of in[1], and its four f32 accumulators are out[c[0..3]].  MFMA (one
 * wavefront): item e of the lane's A and B fragments is a[e], b[e]
 * (e < 4), its nc (16 or 4) accumulators out[c[0..nc)].  `in` is the
 * operands' dtype (f16 or bf16).  The statement replaces the loops over
 * the instruction's tile (a lane's accumulators and the K steps). */
typedef struct tc_kmma {
  int kind;                /* 0: none; else the TC_MACRO_* */
  tc_dtype in;
  int nc;                  /* accumulators per lane */
  const tc_expr *a[8], *b[4], *c[16];
  /* whether element a[e] / b[e] lies inside M, N and K (else it is 0:
   * the instruction runs on whole tiles, the edges are zeros) */
  const tc_expr *pa[8], *pb[4];
  /* ldsm 1: the fragments come by ldmatrix.x4 (A) and ldmatrix.x2.trans
   * (B) from the row addresses addr_a / addr_b (element indices this lane
   * supplies), the edges masked after the load; 0: by the scalar 16-bit
   * loads a[], b[] (a shared layout ldmatrix cannot read) */
  int ldsm;
  const tc_expr *addr_a, *addr_b;
  /* with ldsm: 1 where B's fragment comes by ldmatrix.x2.trans (a tile
   * [K, N], N innermost), 0 by ldmatrix.x2 (a tile [N, K], K innermost) */
  int ldsm_trans_b;
  /* kind TC_MACRO_WGMMA (src/lower/wgmma.c): one warp group's wgmma
   * m64nNk16; this thread's n / 2 accumulators are out[c0 + j]; the
   * operands are read from in[0] (A, 64 x 16) and in[1] (B, n x 16)
   * through matrix descriptors whose start address (in elements of the
   * shared tensor) is start_a / start_b and whose LBO, SBO (bytes) and
   * swizzle mode (0 none, 1 128B) were derived from the tiles' layouts,
   * trans_a / trans_b 1 where the tile is M- / N-major (imm-trans-a/b) */
  int n;
  const tc_expr *c0, *start_a, *start_b;
  int64_t lbo_a, sbo_a, lbo_b, sbo_b;
  int swz_a, swz_b, trans_a, trans_b;
  /* wgmma in a ring loop (src/lower/circular.c): wait1 1, its commit group
   * is left running past the statement (wgmma.wait_group 1: at most this
   * group pending), so the instruction names the accumulators out[c0 + j]
   * in place (no copy in or out) and the ring loop drains the last group
   * (tc_kloop.wgmma_drain); 0, wait_group 0 at once.  depth0_why: where a
   * ring of 3 or more stages keeps wait_group 0, why (a static string,
   * printed as a comment; NULL otherwise) */
  int wait1;
  const char *depth0_why;
} tc_kmma;

/* A statement of a reduction (op->kind == TC_OP_REDUCE; for a Welford
 * reduction each step updates the state's mean, M2 and count): kind TC_RED_ACC
 * out[out_index] = combine(out[out_index], in[0][in_index[0]]) when pred
 * holds; TC_RED_INIT out[out_index] = the op's identity, before the
 * outermost serial reduction loop (just before the statement when its
 * reduction axes are all on threads); TC_RED_ALL after that loop (after
 * the statement), when a reduction axis is bound to thread index slot
 * (3..5: tidx..tidz): the threads along it combine their partial results
 * through shared memory and every one of them gets the total (a block
 * reduction) */
typedef struct tc_kred {
  int kind;                /* TC_RED_NONE / _ACC / _INIT / _ALL */
  int slot;                /* -1: no reduction axis on a thread */
  /* TC_RED_ALL of a grid reduction (a reduction axis on BIDx, of extent
   * grid_blocks): after the block step, each block puts its partial in
   * the kernel's workspace (tc_kir.ws_words), and the last block of its
   * row of blocks to finish (an atomic count) combines the partials in
   * a fixed order; only that block runs the statements after it */
  int grid;
  int64_t grid_blocks;
} tc_kred;

/* STMT: out[out_index] = op(in[k][in_index[k]]), when pred holds; at most
 * one of tmem, ldsm, tma and mma says how it is printed (all kinds 0: a plain
 * statement), red whether it is a step of a reduction */
typedef struct tc_kstmt {
  tc_op *op;
  const tc_expr *pred;
  const tc_expr *out_index;
  const tc_expr *in_index[3];
  /* an input read through a coordinate-transform view (tc_tensor.view):
   * the view's predicate, the element reading 0 where it fails; NULL:
   * always valid */
  const tc_expr *in_valid[3];
  /* a gather (TC_OP_GATHER): the gathered axis's extent and its stride in
   * in[0] (over the size variables' parameters where they depend on one) */
  const tc_expr *gather_extent, *gather_stride;
  tc_ktmem tmem;
  tc_kldsm ldsm;
  tc_ktma tma;
  tc_kred red;
  tc_kmma mma;             /* a matmul's statement as a warp-wide mma (with red) */
  /* circular buffering (src/lower/circular.c): ring_tile, on a statement
   * of a ring's copy, is the iteration of the ring loop whose tile it
   * fetches (an expression of that loop's or the prologue's variable);
   * cp_bytes > 0: the copy is one cp.async of that many bytes (4, 8, 16)
   * per element, or per iteration of the VECTORIZE loop cp_vec, which it
   * replaces (CUDA sm_80+); 0 a plain copy */
  const tc_expr *ring_tile;
  struct tc_knode *ring_copy; /* the node of the ring loop's (or the
                                 prologue's) body that holds this copy */
  int cp_bytes;
  int cp_zero;             /* 1: the copy zero-fills where pred fails
                              (zfill), copying where inner_pred holds */
  struct tc_knode *cp_vec;
  int zfill;               /* 1: where pred fails but inner_pred holds the
                              statement stores 0 (a shared tile a wgmma
                              reads whole: 0 past the tensor's extents) */
  const tc_expr *inner_pred; /* an on-chip tensor's pred without the range
                                checks of its logical axes (its edges) */
} tc_kstmt;

/* A node of the kernel IR: the common part, then the payload of its kind
 * (loop for LOOP, stmt for STMT; ROOT has neither; the other kind's
 * payload stays zero) */
typedef struct tc_knode {
  tc_knode_kind kind;
  struct tc_knode *parent;
  struct tc_knode **body;  /* ROOT, LOOP: the nodes inside, in order */
  int nbody, cbody;
  /* barriers */
  int sync_before;         /* emit a block barrier before this node */
  int sync_end;            /* LOOP: emit a barrier at the end of the body */
  /* asynchronous copies (circular.c): cp_wait > 0 waits, before this
   * node's barrier, until at most cp_wait - 1 of this thread's commit
   * groups are pending (cp.async.wait_group); cp_commit closes a group
   * after the node (cp.async.commit_group).  Printed only where the
   * dialect has them (CUDA); the other targets copy synchronously. */
  int cp_wait, cp_commit;
  /* a ring of bulk tensor copies (circular.c): mbar_slot != NULL waits,
   * before this node's barrier, for the phase of parity mbar_parity of
   * mbarrier mbar_base + mbar_slot (mbarrier.try_wait.parity: that slot's
   * tile has landed).  Printed where the dialect has bulk copies (CUDA
   * sm_90+); elsewhere the copies are synchronous. */
  int mbar_base;
  const tc_expr *mbar_slot, *mbar_parity;
  tc_kloop loop;
  tc_kstmt stmt;
} tc_knode;

enum { TC_RED_NONE, TC_RED_ACC, TC_RED_INIT, TC_RED_ALL };

#define TC_KALLOC_LISTED 16 /* allocated axes listed per allocation */

typedef struct tc_kalloc {
  tc_tensor *t;
  int64_t elems;           /* elements allocated (per block / per thread) */
  int naxes;               /* allocation-domain axes allocated (nvFuser's allocation rules) */
  int axis_pos[TC_KALLOC_LISTED]; /* their positions in the allocation domain,
                                     outermost first (the first 16) */
  int64_t offset;          /* shared: byte offset in the block's shared memory */
  int64_t lanes, columns;  /* tensor memory: lanes and 32-bit columns */
  int64_t used_columns;    /* tensor memory: the columns a lane's elements fill
                              (columns rounds it up for tcgen05.alloc) */
  int64_t tmem_col;        /* tensor memory: first column in the OpenCL emulation */
  int tmem_slot;           /* tensor memory: order of allocation (CUDA: the
                              shared-memory slot tcgen05.alloc writes) */
  /* a circular buffer (tc_circular_buffer): stages slots of slot_elems
   * elements each (elems = stages * slot_elems, slot_elems a multiple of
   * 16 bytes); ring_loop the loop it is computed at, writer its copy's
   * statement (set by lowering; stages 0: a plain allocation) */
  int stages;
  int64_t slot_elems;
  struct tc_knode *ring_loop, *writer;
} tc_kalloc;

#define TC_MAX_BULK_RINGS 16 /* rings of bulk tensor copies per kernel */

typedef struct tc_kir {
  tc_fusion *f;
  tc_epool *pool;
  tc_knode *root;
  tc_kalloc *allocs;
  int nallocs, callocs;
  int64_t grid[3], block[3];
  const tc_expr *pvar[6];  /* bidx, bidy, bidz, tidx, tidy, tidz */
  int64_t smem_bytes;
  int64_t tmem_columns;    /* columns allocated (power of two >= 32), 0 if none */
  int nldsm;               /* statements lowered to ldmatrix / stmatrix */
  int ntma, ntma_bars;     /* statements lowered to bulk tensor copies; mbarriers */
  /* the mbarriers of rings of bulk tensor copies (circular.c): ring r's
   * slot s is mbarrier ring_bar[r] + s, of ring_stages[r] slots, each
   * phase completed by ring_arrivals[r] arrivals per TIDy / TIDz row (one
   * per copy statement of the ring: each arms it with its bytes); the
   * other mbarriers take one arrival per row */
  int nrings_bulk;
  int ring_bar[TC_MAX_BULK_RINGS], ring_stages[TC_MAX_BULK_RINGS], ring_arrivals[TC_MAX_BULK_RINGS];
  int nmma;                /* statements lowered to mma.sync or MFMA (tc_kmma) */
  int mma_kind;            /* then their kind (the TC_MACRO_*; one per kernel) */
  int mma_warps;           /* and the block's warps (wavefronts): its threads / lanes */
  int ncp_async;           /* statements printed as cp.async (circular.c) */
  int nwgmma;              /* statements lowered to wgmma (not counted in nmma) */
  int nred_f, nred_i;      /* block reductions of floats / integers (each
                              needs a shared scratch of one word per thread) */
  int nred_w;              /* block Welford reductions (a shared scratch of
                              three floats per thread: mean, M2, count) */
  int64_t ws_words;        /* grid reductions: 32-bit words of the global
                              workspace the kernel takes after its
                              parameters (zeroed before each launch): a
                              count per row of blocks, then the partials */
  /* the size variables (docs/dynamic.md): their expressions (parameters
   * of the kernel, named as the scalar inputs that carry them; nsym 0: a
   * static fusion) and, for each grid dimension whose extent depends on
   * one (grid_var[d] >= 0: which), the steps from its value to that
   * extent (tc_sym_eval; grid[d] is the bound's) */
  const tc_expr *sym[TC_MAX_SIZE_VARS];
  int nsym;
  int grid_var[3], grid_nsteps[3];
  int64_t grid_steps[3][TC_SYM_MAX_STEPS];
  tc_tensor **params;      /* inputs then outputs */
  int nparams;
} tc_kir;

/* Lowers the scheduled fusion for target.  On failure returns non-OK with
 * the message on the fusion. */
tc_status tc_lower(tc_fusion *f, tc_target target, const char *arch, tc_kir **out);
void tc_kir_free(tc_kir *k);
/* Calls fn(statement, ctx) on every statement under n in program order
 * and stops at the first non-zero result, which it returns (0 when every
 * call gave 0): the one walk over a kernel's statements. */
int tc_knode_each_stmt(tc_knode *n, int (*fn)(tc_knode *s, void *ctx), void *ctx);

/* Index of t's allocation for tensor t (NULL if t is a kernel parameter). */
const tc_kalloc *tc_kir_alloc_of(const tc_kir *k, const tc_tensor *t);
/* A loop's extent as an expression: sym_extent, else the number. */
const tc_expr *tc_kloop_extent(tc_epool *p, const tc_kloop *l);

#endif
