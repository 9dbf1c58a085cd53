/* cute.h - CuTe's shape:stride layouts, their algebra, and a small
 * expression language over them (the text form CuTe prints).
 *
 * A layout is a hierarchical tuple of modes; each leaf mode is a pair
 * shape:stride (shape >= 1, stride >= 0).  It maps an index i in
 * [0, size) to an offset: the index is split into a coordinate in
 * colexicographic order (the first mode varies fastest, as in CuTe), and
 * the offset is the sum of coordinate * stride over the leaves.  An index
 * at or past the size keeps counting in the last mode (CuTe's crd2idx).
 *
 * Text form (tc_cute_print): a leaf prints as "24:1", a tuple as its shape
 * tuple and its stride tuple, "(4,(2,3)):(2,(1,8))".  A one-mode tuple is
 * the same as its mode; "(4)" parses as "4".
 *
 * The algebra follows CuTe's definitions (pycute, cute/layout.hpp):
 * coalesce, filter, composition, complement, logical_divide,
 * logical_product and their zipped / tiled / flat regroupings, the blocked
 * and raked products, left_inverse and right_inverse, make_layout, append
 * and prepend, and L(coord).  Functions that can fail return 0, or -1
 * with a message in err ("composition is not defined: ..."); they never
 * overflow silently (results whose size or offsets do not fit in 62 bits
 * are errors).
 *
 * A "tiler" is a tuple of layouts applied mode by mode (CuTe's Tile):
 * composition(A, <B0, B1>) composes A's mode 0 with B0, mode 1 with B1 and
 * keeps A's other modes.  It is a tc_cute with n > 0 and tiler set.
 *
 * Swizzle<B,M,S>: yyy_mask = ((1 << B) - 1) << (M + max(S, 0));
 * f(x) = x ^ ((x & yyy_mask) >> S) (a left shift by -S when S < 0). */
#ifndef TC_CUTE_H
#define TC_CUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tilec/tilec.h"
#include "../base/base.h"

typedef struct tc_cute tc_cute;
struct tc_cute {
  int n;                 /* 0: a leaf shape:stride; > 0: a tuple of n modes */
  int64_t shape, stride; /* leaf only */
  tc_cute *m;            /* the n modes of a tuple (owned) */
  bool tiler;            /* tuple only: a tuple of layouts applied by mode */
};

/* Largest integer the parser takes and largest size/offset the algebra
 * produces. */
#define TC_CUTE_MAX_INT ((int64_t)1 << 40)
#define TC_CUTE_MAX_SIZE ((int64_t)1 << 62)

/* ---- construction ----------------------------------------------------- */

tc_cute tc_cute_leaf(int64_t shape, int64_t stride);
/* A tuple of n modes, taking over the modes' contents (the array itself is
 * copied; do not free its elements afterwards).  n == 1 returns the mode. */
tc_cute tc_cute_tuple(int n, tc_cute *modes);
/* make_layout(a, b): the two-mode tuple (copies). */
tc_cute tc_cute_pair(const tc_cute *a, const tc_cute *b);
/* CuTe's append(L, X): (L0, ..., X), X added after L's modes (a leaf L is
 * its own mode 0); prepend(L, X): (X, L0, ...).  Copies. */
tc_cute tc_cute_append(const tc_cute *l, const tc_cute *x);
tc_cute tc_cute_prepend(const tc_cute *l, const tc_cute *x);
tc_cute tc_cute_copy(const tc_cute *l);
/* 0, or -1 with "WHAT overflows: ..." in err when l's size or cosize does
 * not fit in 62 bits (a concatenation of large layouts). */
int tc_cute_check_range(const tc_cute *l, const char *what, tc_str *err);
void tc_cute_free(tc_cute *l);
bool tc_cute_equal(const tc_cute *a, const tc_cute *b);

/* ---- queries ------------------------------------------------------------ */

int64_t tc_cute_size(const tc_cute *l);   /* product of the shapes */
int64_t tc_cute_cosize(const tc_cute *l); /* L(size - 1) + 1 */
int tc_cute_rank(const tc_cute *l);       /* 1 for a leaf, else n */
int tc_cute_depth(const tc_cute *l);      /* 0 for a leaf */
/* The mode i of l (l itself when l is a leaf and i == 0). */
const tc_cute *tc_cute_mode(const tc_cute *l, int i);
/* L(i) for i >= 0 (colex; past the size, the last mode keeps counting). */
int64_t tc_cute_eval(const tc_cute *l, int64_t i);
/* The leaves in order: writes up to cap shapes/strides, returns the count. */
int tc_cute_flatten(const tc_cute *l, int64_t *shape, int64_t *stride, int cap);
int tc_cute_leaves(const tc_cute *l);

/* ---- algebra -------------------------------------------------------------
 * Each writes a new layout to *out (the caller frees it) and returns 0, or
 * returns -1 with a message in err and leaves *out empty. */

/* Flattens and merges modes while keeping the function on [0, size):
 * drops shape-1 modes, merges s0:d0 ++ s1:s0*d0 into s0*s1:d0.  Depth <= 1;
 * all shape-1 gives 1:0. */
tc_cute tc_cute_coalesce(const tc_cute *l);
/* coalesce(L with the shape of every stride-0 leaf set to 1): the modes
 * that move, merged (CuTe's filter).  All stride 0 gives 1:0. */
tc_cute tc_cute_filter(const tc_cute *l);
/* R = A o B with R(i) == A(B(i)) for i < size(B); R has B's shape
 * structure.  Needs, for B's leaf s:d and A's coalesced modes, CuTe's
 * stride divisibility (each A shape divides d or d divides it) and shape
 * divisibility conditions.  b may be a tiler. */
int tc_cute_composition(const tc_cute *a, const tc_cute *b, tc_cute *out, tc_str *err);
/* The layout C, sorted by stride, such that (L, C) is injective and its
 * size covers cotarget (>= 1).  Fails when L's modes overlap. */
int tc_cute_complement(const tc_cute *l, int64_t cotarget, tc_cute *out, tc_str *err);
/* A o (B, complement(B, size(A)));  b may be a tiler. */
int tc_cute_logical_divide(const tc_cute *a, const tc_cute *b, tc_cute *out, tc_str *err);
/* (A, complement(A, size(A) * cosize(B)) o B);  b may be a tiler. */
int tc_cute_logical_product(const tc_cute *a, const tc_cute *b, tc_cute *out, tc_str *err);
/* logical_divide(A, B) with its modes regrouped by g (tc_cute_grouping in
 * tilec.h): for A = (M, N, L) and B = <B0, B1>, logical gives ((B0,R0),
 * (B1,R1), L), zipped ((B0,B1), (R0,R1,L)), tiled ((B0,B1), R0, R1, L) and
 * flat (B0, B1, R0, R1, L); a nested tiler regroups within its mode.  For a
 * layout B (not a tuple) logical and zipped are (B', R); tiled unpacks R's
 * modes, flat B''s and R's. */
int tc_cute_divide(tc_cute_grouping g, const tc_cute *a, const tc_cute *b, tc_cute *out, tc_str *err);
/* logical_product(A, B) regrouped the same way: the tile is A's modes and
 * the rest B's, ((M,N), (B0',B1',L)) for zipped. */
int tc_cute_product(tc_cute_grouping g, const tc_cute *a, const tc_cute *b, tc_cute *out, tc_str *err);
/* The rank-sensitive products of layouts A and B (not tilers): with R =
 * max(rank A, rank B) and both padded to rank R with 1:0 modes, P =
 * logical_product(A, B); mode i of the result is coalesce((A_i, P1_i))
 * (blocked: A's block is contiguous in the mode) or coalesce((P1_i, A_i))
 * (raked: B's elements are interleaved in it). */
int tc_cute_blocked_product(const tc_cute *a, const tc_cute *b, tc_cute *out, tc_str *err);
int tc_cute_raked_product(const tc_cute *a, const tc_cute *b, tc_cute *out, tc_str *err);
/* R with L(R(i)) == i for i < size(R), as large as the stride-1 chain of
 * L's modes allows (stride-0 modes are skipped). */
int tc_cute_right_inverse(const tc_cute *l, tc_cute *out, tc_str *err);
/* R with R(L(i)) == i for i < size(L), for injective L:
 * right_inverse((L, complement(L))). */
int tc_cute_left_inverse(const tc_cute *l, tc_cute *out, tc_str *err);

/* ---- swizzles ------------------------------------------------------------ */

/* Checks 0 <= B, 0 <= M, |S| >= B, B + M + |S| <= 40; 0 or -1 + err. */
int tc_cute_swizzle_check(int b, int m, int s, tc_str *err);
int64_t tc_cute_swizzle(int b, int m, int s, int64_t x);

/* ---- text ------------------------------------------------------------------ */

void tc_cute_print(tc_str *out, const tc_cute *l);
char *tc_cute_str(const tc_cute *l); /* malloc'd; the caller frees */

/* ---- expressions ----------------------------------------------------------
 * tc_cute_eval_expr evaluates an expression of the forms
 *
 *   INT                      42, or _42 as CuTe prints static integers
 *   SHAPE:STRIDE             24:1  (4,2):(1,16)  (4,(2,3)):(2,(1,8))
 *   (E0, E1, ...)            a tuple; as a layout argument, a tiler whose
 *                            integer entries n mean n:1
 *   Swizzle<B,M,S>           the swizzle functor
 *   F o G                    composition(F, G); Swizzle<B,M,S> o L is a
 *                            swizzled layout
 *   F(INT)                   a layout, swizzle or swizzled layout applied
 *                            to an integer
 *   L(C0, C1, ...)           a layout applied to a coordinate: L(1,5),
 *                            L(1,(1,2)), L((1,(1,2))) (tc_cute_eval_coord)
 *   name(ARGS)               coalesce(L) filter(L) composition(A, B)
 *                            complement(L[, M]) logical_divide(A, B)
 *                            zipped_divide tiled_divide flat_divide
 *                            logical_product(A, B) zipped_product
 *                            tiled_product flat_product blocked_product
 *                            raked_product left_inverse(L) right_inverse(L)
 *                            make_layout(L, ...) append(L, X) prepend(L, X)
 *                            size(L) cosize(L) rank(L) depth(L)
 *
 * with whitespace anywhere between tokens. */

typedef enum tc_cute_kind {
  TC_CV_INT,
  TC_CV_TUPLE,    /* a tuple of values (not followed by a stride) */
  TC_CV_LAYOUT,   /* a layout (or a tiler, l.tiler) */
  TC_CV_SWIZZLE,  /* Swizzle<b,m,s> */
  TC_CV_SWLAYOUT  /* Swizzle<b,m,s> o l */
} tc_cute_kind;

typedef struct tc_cute_value tc_cute_value;
struct tc_cute_value {
  tc_cute_kind kind;
  int col;              /* 1-based column where the value's text starts */
  int64_t i;            /* INT */
  tc_cute l;            /* LAYOUT, SWLAYOUT */
  int b, m, s;          /* SWIZZLE, SWLAYOUT */
  int n;                /* TUPLE */
  tc_cute_value *elems; /* TUPLE */
};

enum {
  TC_CUTE_OK = 0,
  TC_CUTE_ESYNTAX = 1, /* malformed expression, unknown name, wrong arguments */
  TC_CUTE_EUNDEF = 2   /* well formed, but not defined (divisibility, overlap, overflow) */
};

typedef struct tc_cute_error {
  int code;       /* TC_CUTE_ESYNTAX or TC_CUTE_EUNDEF */
  int column;     /* 1-based column in the text */
  char msg[512];  /* without the column */
} tc_cute_error;

/* Returns TC_CUTE_OK with *out set (free with tc_cute_value_free), or an
 * error code with *e filled in and *out empty. */
int tc_cute_eval_expr(const char *text, tc_cute_value *out, tc_cute_error *e);
void tc_cute_value_free(tc_cute_value *v);
/* L(c) for a coordinate c (an integer or a tuple value, CuTe's crd2idx):
 * an integer is a 1-D index into the mode it stands for (colex), a tuple
 * needs the mode's rank and recurses, so L(16), L(1,5) and L(1,(1,2)) are
 * the same element of (3,(2,3)):(3,(12,1)).  Returns TC_CUTE_OK with
 * *offset, TC_CUTE_ESYNTAX when c's structure does not fit L's or
 * TC_CUTE_EUNDEF when an entry is outside its mode, with a message naming
 * the mode ("mode 1.0" is mode 0 of mode 1) in err and the entry at fault
 * in *bad. */
int tc_cute_eval_coord(const tc_cute *l, const tc_cute_value *c, int64_t *offset, const tc_cute_value **bad,
                       tc_str *err);
void tc_cute_value_print(tc_str *out, const tc_cute_value *v);
const char *tc_cute_kind_name(tc_cute_kind k);
/* "column 7: expected ')'" and, on the next two lines, the text indented
 * by two spaces and a caret under the column. */
void tc_cute_error_format(tc_str *out, const char *text, const tc_cute_error *e);

#endif
