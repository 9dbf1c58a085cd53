/* domain.h - iteration domains (axes) and the transforms between them.
 *
 * A tc_dgraph holds every axis of a fusion and the transforms that made
 * them.  A root axis is a tensor's logical dimension; split, merge, swizzle
 * and resize each consume one or two axes and produce one or two new ones.
 * A tensor's loop and allocation domains are lists of axes of this graph.
 *
 * Every transform maps both ways as index expressions: forward (inputs ->
 * outputs, e.g. split: outer = i / f, inner = i % f) and backward (outputs ->
 * inputs, split: i = outer * f + inner).  Indexing walks the graph from the
 * axes whose values are known (the loop domain) to the ones wanted (the
 * allocation domain), collecting validity predicates where a backward step
 * can leave the input's range (a non-divisible split, a resize).
 *
 * Axis signatures: each axis has a structural hash of how it was made from
 * its tensor's logical positions, so two axes of one tensor with equal
 * signatures iterate the same way.  Across tensors the positions differ
 * by the ops between them (a permute reorders them); tc_dg_sigs_from
 * signs the axes made from given roots with given root signatures, which
 * is how axes are compared across an op (sched/axis_map.c). */
#ifndef TC_DOMAIN_H
#define TC_DOMAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "tilec/tilec.h"
#include "../expr/expr.h"

typedef enum tc_xform_kind {
  TC_XF_SPLIT,       /* in -> (outer, inner) */
  TC_XF_MERGE,       /* (outer, inner) -> out */
  TC_XF_XOR,         /* (x, y) -> (x, x ^ y)            nvFuser Xor */
  TC_XF_CUTE,        /* x -> x ^ ((x & yyy) >> S)       CuTe Swizzle<B,M,S> */
  TC_XF_RESIZE,      /* in -> in + left, extent + left + right */
  /* The coordinate-transform kinds of coord.h, defined backward only
   * (outputs -> inputs): tc_dg_walk never applies them forward and
   * tc_xf_forward leaves their outputs NULL.
   *   EMBED      in -> (out[0..nout)), in = sum coeff[i] * out[i]; the value
   *              may leave in's range (a predicate), coefficients may be < 0
   *   BROADCAST  in -> out, in = out % extent(in) (0 when that extent is 1)
   *   ADDDIM     () -> out, a dimension that maps to nothing
   *   CONSTDIM   in -> (), in = factor (a constant) */
  TC_XF_EMBED,
  TC_XF_BROADCAST,
  TC_XF_ADDDIM,
  TC_XF_CONSTDIM,
  TC_XF_NUM_KINDS
} tc_xform_kind;


/* Most outputs of one transform (an EMBED has up to this many). */
#define TC_XF_MAX_OUT 16

typedef struct tc_axis {
  int64_t extent;
  int def;          /* transform producing this axis, -1 for a root */
  tc_ptype ptype;
  uint64_t sig;     /* structural signature (see above) */
  bool reduction;   /* an axis a reduction sums (or maxes, mins) over:
                       nvFuser's rK; splits of it are reduction axes too */
  int sym_var;      /* with sym_div: which of the fusion's size variables */
  int64_t sym_div;  /* a root whose extent is one of the fusion's size
                       variables (docs/dynamic.md): its known divisor
                       (>= 1); extent is then the variable's upper bound.
                       0: a number */
} tc_axis;

typedef struct tc_xform {
  tc_xform_kind kind;
  int in[2], nin;
  int out[TC_XF_MAX_OUT], nout; /* 0..2 outputs, up to TC_XF_MAX_OUT for EMBED */
  int64_t factor;   /* SPLIT: the split factor; CONSTDIM: the constant */
  int inner_split;  /* SPLIT: factor is the inner extent (else the outer) */
  int64_t left, right; /* RESIZE */
  int b, m, s;      /* CUTE swizzle parameters */
  int64_t coeff[TC_XF_MAX_OUT]; /* EMBED: coefficient of each output */
} tc_xform;

typedef struct tc_dgraph {
  tc_axis *axes;
  int naxes, caxes;
  tc_xform *xf;
  int nxf, cxf;
} tc_dgraph;

void tc_dg_init(tc_dgraph *g);
void tc_dg_free(tc_dgraph *g);

/* A root axis; `position` is its logical position, part of its signature. */
int tc_dg_root(tc_dgraph *g, int64_t extent, int position);
/* A root reduction axis (tc_axis.reduction): its signature differs from
 * an iteration axis's at the same position, so the two never match. */
int tc_dg_root_reduction(tc_dgraph *g, int64_t extent, int position);
/* The signature of a root axis of that extent at that logical position. */
uint64_t tc_dg_root_sig(int64_t extent, int position);
/* The same for a reduction axis. */
uint64_t tc_dg_root_rsig(int64_t extent, int position);
/* The signatures of the axes made from roots[0..n) when root i has
 * signature root_sigs[i] (nonzero), computed as the transforms compute
 * them: sig[a] (g->naxes entries) is 0 for axes not made from the roots
 * alone.  An axis listed among the roots keeps the signature given even
 * where a transform makes it. */
void tc_dg_sigs_from(const tc_dgraph *g, const int *roots, const uint64_t *root_sigs, int n,
                     uint64_t *sig);
/* Each returns 0 on success or -1 with a reason in err. */
int tc_dg_split(tc_dgraph *g, int in, int64_t factor, int inner_split,
                int *outer, int *inner, tc_str *err);
int tc_dg_merge(tc_dgraph *g, int outer, int inner, int *out, tc_str *err);
int tc_dg_xor(tc_dgraph *g, int x, int y, int *ox, int *oy, tc_str *err);
int tc_dg_cute(tc_dgraph *g, int in, int b, int m, int s, int *out, tc_str *err);
int tc_dg_resize(tc_dgraph *g, int in, int64_t left, int64_t right, int *out,
                 tc_str *err);
/* The view transforms (see TC_XF_EMBED above).  embed: n (1..TC_XF_MAX_OUT)
 * new axes with the given extents (>= 1) and coefficients, written to outs;
 * broadcast: a new axis of the given extent (>= 1); add_dim: a new axis
 * from nothing; const_dim: fixes `in` to value, which must lie in
 * [0, extent). */
int tc_dg_embed(tc_dgraph *g, int in, int n, const int64_t *extents, const int64_t *coeffs,
                int *outs, tc_str *err);
int tc_dg_broadcast(tc_dgraph *g, int in, int64_t extent, int *out, tc_str *err);
int tc_dg_add_dim(tc_dgraph *g, int64_t extent, int *out, tc_str *err);
int tc_dg_const_dim(tc_dgraph *g, int in, int64_t value, tc_str *err);
/* Whether tc_xf_forward is defined for this kind (false for the four view
 * kinds). */
bool tc_xf_has_forward(tc_xform_kind kind);
/* Marks of the axes computed forward (through tc_xf_has_forward
 * transforms) from axes[0..n): a tc_xcalloc'd array of g->naxes + 1
 * chars, 1 for those axes and every axis derived from them.  The caller
 * frees it. */
char *tc_dg_forward_marks(const tc_dgraph *g, const int *axes, int n);

/* Expressions of a transform's outputs from its inputs, and back.  `out`
 * must hold x->nout entries (up to TC_XF_MAX_OUT), `in` x->nin. */
void tc_xf_forward(tc_epool *p, const tc_dgraph *g, const tc_xform *x,
                   const tc_expr *const *in, const tc_expr **out);
void tc_xf_backward(tc_epool *p, const tc_dgraph *g, const tc_xform *x,
                    const tc_expr *const *out, const tc_expr **in);

/* Walks the graph.  vals[a] (size g->naxes) holds the known axis values
 * (NULL = unknown); every transform whose inputs are all known and whose
 * outputs are not gets applied forward, every one whose outputs are all
 * known and inputs are not gets applied backward, until nothing changes.
 * When `preds` is not NULL, each backward step whose result may fall
 * outside [0, extent) appends that range condition to *preds (a LAND
 * chain; *preds starts as the constant 1).  Returns the number of axes
 * given a value. */
int tc_dg_walk(tc_epool *p, const tc_dgraph *g, const tc_expr **vals,
               const tc_expr **preds);
/* Whether the walk (tc_dg_walk) from the axes known[0..nknown), all but
 * known[skip] (skip < 0: none left out), gives every one of
 * targets[0..ntargets) a value. */
bool tc_dg_determines(tc_epool *p, const tc_dgraph *g, const int *known, int nknown, int skip,
                      const int *targets, int ntargets);

/* ---- symbolic extents (docs/dynamic.md) ----
 * An axis is symbolic when its extent depends on a size variable: a
 * root with sym_div > 0, or an output of a transform of one whose extent
 * is not a constant (a split's factor side stays a number).  Its extent is
 * then the chain of steps applied to the value of one size variable (its
 * start, tc_dg_sym_var), outermost step last: a step c > 0 multiplies by
 * c (a merge with a constant axis), TC_SYM_VAR_STEP + v multiplies by
 * the value of size variable v (a merge with an axis that is that
 * variable), another c < 0 divides by -c rounding up (a split).  At most
 * TC_SYM_MAX_STEPS steps. */
#define TC_SYM_MAX_STEPS 8
/* The most size variables of one fusion. */
#define TC_MAX_SIZE_VARS 4
#define TC_SYM_VAR_STEP INT64_MIN
/* The size variable a step multiplies by, or -1 for a constant step. */
int tc_sym_step_var(int64_t step);
bool tc_dg_is_symbolic(const tc_dgraph *g, int axis);
/* The steps of a symbolic axis's extent (above) into steps[0..); returns
 * their count, or -1 with the reason in err where the extent is not such
 * a chain (a merge of two symbolic axes neither of which is a size
 * variable itself, a swizzle, resize or view of one, more than
 * TC_SYM_MAX_STEPS steps). */
int tc_dg_sym_steps(const tc_dgraph *g, int axis, int64_t *steps, tc_str *err);
/* The extent the steps give when the chain starts at size variable var
 * and the variables have the values values[]. */
int64_t tc_sym_eval(const int64_t *steps, int n, int var, const int64_t *values);
/* The expression of that extent over the variables' expressions vars[]. */
const tc_expr *tc_sym_expr(tc_epool *p, const int64_t *steps, int n, int var,
                           const tc_expr *const *vars);
/* The text of a symbolic axis's extent over the variables' names[]:
 * "B x S", "M x 37", "ceil(M / 128)" (its steps, as tc_sym_expr). */
const char *tc_dg_sym_text(const tc_dgraph *g, int axis, const char *const *names, char *buf,
                           size_t cap);
/* A number every extent of a symbolic axis is a multiple of (1 when
 * none is known). */
int64_t tc_dg_sym_divisor(const tc_dgraph *g, int axis);
/* Which size variable a symbolic axis's chain starts from (a root's
 * tc_axis.sym_var). */
int tc_dg_sym_var(const tc_dgraph *g, int axis);
/* tc_dg_walk where the range condition of a symbolic axis compares with
 * its extent over vars[], the size variables' expressions, and a merge
 * or split whose inner extent is symbolic multiplies, divides and takes
 * the remainder by that extent's expression (vars NULL: as tc_dg_walk);
 * a symbolic axis whose extent is no chain gets none (the lowering
 * refuses such schedules first). */
int tc_dg_walk_sym(tc_epool *p, const tc_dgraph *g, const tc_expr **vals, const tc_expr **preds,
                   const tc_expr *const *vars);

/* Text for an axis, e.g. "iS{4}", "bidx{2}", "iV{8}". */
const char *tc_axis_describe(const tc_dgraph *g, int a, char *buf, size_t cap);

/* True when the transforms that lead to `axis` from roots involve a split
 * whose factor does not divide its input, or a resize, or an embed whose
 * value can leave its input's range. */
bool tc_dg_is_padded(const tc_dgraph *g, int axis);

/* True when `axis` is made only from broadcasts of extent-1 axes
 * (tc_dg_broadcast of an axis of extent 1, and transforms of such axes):
 * a tensor with that axis in its loop domain ignores its value, which is
 * 0 back at the extent-1 axis. */
bool tc_dg_is_broadcast_axis(const tc_dgraph *g, int axis);

/* Collects, in creation order, the transforms needed to make `targets` from
 * `sources` (ancestors of targets that descend from sources); writes their
 * indices to out (capacity g->nxf) and returns the count. */
int tc_dg_history(const tc_dgraph *g, const int *sources, int nsrc,
                  const int *targets, int ntgt, int *out);

/* Replays transforms `hist` (from tc_dg_history on a source domain) on
 * another domain: map[a] (size g->naxes at call time, grown as needed by
 * the caller) gives for each source axis its counterpart, -1 if none; the
 * counterparts of every replayed transform's outputs are added to map.
 * *mapp is reallocated to the graph's new size.  Returns 0 or -1 + err. */
int tc_dg_replay(tc_dgraph *g, const int *hist, int nhist, int **mapp,
                 tc_str *err);

#endif
