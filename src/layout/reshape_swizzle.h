/* reshape_swizzle.h - a layout as a pure reshape followed by a swizzle.
 *
 * A layout is the map F from a tensor's logical coordinates to its
 * allocation coordinates, made of the transforms of the axis graph that
 * lead from the logical domain to the allocation domain.  It splits as
 *
 *   F = R o T
 *
 * where R, the reshape part, is the same chain of transforms with every
 * swizzle (XOR, CuTe) replaced by the identity - only splits, merges and
 * the order of the allocation axes, i.e. a reshape / linearization - and
 * T = R^-1 o F, the swizzle part, is a permutation of the logical
 * coordinates that keeps every row (all logical coordinates but the last)
 * and permutes the columns (the last coordinate) within it:
 *
 *   F(row, col) = R(row, s_row(col)).
 *
 * TileLang's gfx950 layout [256, 64] -> [row / 8, (row % 8) * 64 + S(row, col)]
 * is R(row, col) = [row / 8, (row % 8) * 64 + col] with s_row = S.
 *
 * Why T exists whenever each swizzle only changes column digits: write
 * F = G_n X_n ... G_1 X_1 G_0 (X_k the swizzles, G_k the rest, in creation
 * order).  Then F = R o (P_n^-1 X_n P_n) o ... o (P_1^-1 X_1 P_1) with
 * P_k = G_(k-1) ... G_0, and each factor changes exactly the logical
 * coordinates that the digits X_k rewrites come from in the swizzle-free
 * graph.  tc_rs_split_layout traces those digits back through splits,
 * merges and (identity) swizzles to the logical roots; when they all land
 * on the last logical axis the split exists, otherwise the swizzle mixes
 * rows and there is none.  The map must also be injective: a crop
 * (negative resize) or a view transform (embed, broadcast ...) loses or
 * repeats elements, and an allocation that leaves an element out or holds
 * an axis the others already determine is refused.  Padding (a resize
 * that grows, a split that does not divide) is allowed: those allocation
 * positions hold no element. */
#ifndef TC_RESHAPE_SWIZZLE_H
#define TC_RESHAPE_SWIZZLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domain.h"

#define TC_RS_MAX_SWIZZLES 32

typedef struct tc_rs_split {
  int nswizzles;
  int swizzle[TC_RS_MAX_SWIZZLES]; /* the swizzle transforms (indices into g->xf), in creation order */
  /* the column digits (col / div) % mod that each swizzle rewrites; mod 0
   * when the trace could not keep them apart (the swizzle still only
   * touches the column) */
  int64_t div[TC_RS_MAX_SWIZZLES], mod[TC_RS_MAX_SWIZZLES];
  int col;          /* the column axis: the last logical axis */
  int64_t grain;    /* the swizzles move aligned runs of this many columns as
                       a unit (the smallest div; the column extent when there
                       is no swizzle) */
  bool padded;      /* some allocation positions hold no element */
} tc_rs_split;

/* Splits the layout logical[0..nl) -> alloc[0..na) of g.  Returns 0, or -1
 * with the reason in err: an allocation axis that does not derive from the
 * logical domain, a transform that is not injective, an allocation that
 * misses an element or repeats an axis, or a swizzle that changes a row. */
int tc_rs_split_layout(const tc_dgraph *g, const int *logical, int nl, const int *alloc, int na,
                       tc_rs_split *out, tc_str *err);

/* Expressions of the allocation coordinates for logical values lv (nl of
 * them) under the whole layout (swizzled) or its reshape part alone
 * (swizzles as the identity).  The layout must have passed
 * tc_rs_split_layout; alloc_vals gets na expressions. */
void tc_rs_forward(tc_epool *p, const tc_dgraph *g, const int *logical, int nl, const int *alloc,
                   int na, const tc_expr *const *lv, bool swizzled, const tc_expr **alloc_vals);

/* The reshape part as axes of g: replays the layout's transforms with every
 * swizzle replaced by the identity; reshape[k] is the counterpart of
 * alloc[k] (alloc[k] itself when no swizzle lies on its way).  Adds axes
 * and transforms to g (use a copy of the graph for analysis).  Returns 0
 * or -1 + err. */
int tc_rs_reshape_axes(tc_dgraph *g, const int *logical, int nl, const int *alloc, int na,
                       int *reshape, tc_str *err);

/* True when every aligned run of n consecutive values of `axis` is a run of
 * n consecutive values of the root axis `root` with all other roots fixed
 * (through the layout as it is, swizzles included). */
bool tc_rs_contiguous(const tc_dgraph *g, int axis, int64_t n, int root);

/* A deep copy of a graph (free with tc_dg_free). */
void tc_rs_graph_copy(tc_dgraph *dst, const tc_dgraph *src);

#endif
