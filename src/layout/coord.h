/* coord.h - coordinate-transform views (rocMLIR / MIOpen style) on the one
 * axis algebra of domain.h.
 *
 * A view starts as a tensor in memory: its "lower" dimensions with extents
 * and element strides.  Transforms are stacked on top, each replacing some
 * of the current "upper" dimensions by new ones: the view then reads as an
 * upper-dimensional tensor, e.g. a convolution input [N, C, H, W] seen as
 * the GEMM operand [gemmK, gemmN].  Every transform is an axis-graph
 * transform (domain.h), so indexing a view is tc_dg_walk from the upper
 * axes down to the lower ones:
 *
 *   PassThrough  nothing (the dimension stays, possibly renamed)
 *   Pad          lower = upper - left; upper extent = lower + left + right
 *   Slice        lower = upper + begin; upper extent = end - begin
 *   Embed        lower = sum_i coeff[i] * upper[i]  (coefficients may be
 *                negative; the lower value may leave its range)
 *   Merge        one upper -> several lower by div/mod (row-major)
 *   Unmerge      several upper -> one lower, row-major recombination
 *   Broadcast    lower = upper % lower_extent (lower extent 1: lower = 0)
 *   AddDim       a new upper dimension that maps to nothing
 *   ConstDim     a lower dimension fixed to a constant (no upper dim)
 *
 * Validity: a lower coordinate outside [0, extent) produced by Pad or Embed
 * makes the element invalid; tc_view_index returns the predicate, and a
 * load whose predicate is false reads zero.  An upper coordinate outside
 * its own extent is invalid as well (this part vanishes when the
 * expressions' ranges prove them inside, e.g. variables with exact ranges).
 *
 * Axis-graph kinds (domain.h): Pad and Slice are RESIZE, Merge a chain of
 * binary MERGEs (left-associated), Unmerge a chain of SPLITs, and Embed,
 * Broadcast, AddDim, ConstDim are TC_XF_EMBED / _BROADCAST / _ADDDIM /
 * _CONSTDIM (backward only). */
#ifndef TC_COORD_H
#define TC_COORD_H

#include "domain.h"

#define TC_VIEW_MAX_DIMS 16

typedef struct tc_view {
  tc_dgraph g;                         /* owns every axis of the view */
  int nlower;
  int lower[TC_VIEW_MAX_DIMS];         /* root axes: the memory dims */
  int64_t lower_stride[TC_VIEW_MAX_DIMS]; /* element strides in memory */
  int64_t lower_const[TC_VIEW_MAX_DIMS];  /* ConstDim value, -1 if none */
  int nupper;
  int upper[TC_VIEW_MAX_DIMS];         /* current upper axes, in order */
  char names[TC_VIEW_MAX_DIMS][16];    /* names of the upper dims */
  char err[256];
} tc_view;

/* A view of a tensor with the given dims (outermost first) and names.
 * strides NULL = contiguous row-major; names NULL (or a NULL entry) =
 * "d0", "d1", ...; names longer than 15 characters are cut.  Returns NULL
 * for ndims outside 0..TC_VIEW_MAX_DIMS or an extent outside 1..2^40. */
tc_view *tc_view_new(int ndims, const int64_t *extents, const int64_t *strides,
                     const char *const *names);
tc_view *tc_view_copy(const tc_view *v);
void tc_view_free(tc_view *v);

/* All return 0, or -1 with v->err set (and the view unchanged). `dim` is
 * an upper dimension position; new upper dims take its place in order.
 * Pad amounts must be >= 0 (crop with slice); slice needs 0 <= begin < end
 * <= extent; unmerge extents must multiply to the dim's extent; names NULL
 * = "<old name>.<i>".  Embed coefficients and extents lie within 2^40. */
int tc_view_pad(tc_view *v, int dim, int64_t left, int64_t right);
int tc_view_slice(tc_view *v, int dim, int64_t begin, int64_t end);
int tc_view_embed(tc_view *v, int dim, int n, const int64_t *upper_extents,
                  const int64_t *coeffs, const char *const *names);
/* Merges the upper dims dims[0..n) (dims[0] outermost) into one upper dim
 * placed at the position of the first of them (dims[0]'s place among the
 * dims that remain).  n == 1 only renames (name NULL keeps dims[0]'s). */
int tc_view_merge(tc_view *v, int n, const int *dims, const char *name);
int tc_view_unmerge(tc_view *v, int dim, int n, const int64_t *extents,
                    const char *const *names);
int tc_view_broadcast(tc_view *v, int dim, int64_t extent);
int tc_view_add_dim(tc_view *v, int pos, int64_t extent, const char *name);
int tc_view_const_dim(tc_view *v, int dim, int64_t value);
/* Reorders the upper dims: new dim i is old dim perm[i]. */
int tc_view_reorder(tc_view *v, const int *perm);
int tc_view_rename(tc_view *v, int dim, const char *name);
int tc_view_find(const tc_view *v, const char *name); /* -1 if none */
int64_t tc_view_extent(const tc_view *v, int dim);

/* The element offset in memory of the upper coordinates `upper` (one
 * expression per upper dim, in pool p), and the validity predicate (the
 * constant 1 when always valid).  Both are simplified; with merge collapse
 * (below) a merged dimension recombined in order emits no div/mod.  The
 * offset is only meaningful where the predicate holds.  A merge whose
 * pieces are not contiguous costs one division per boundary between
 * contiguous runs of its dims and no modulo (e.g. conv input gemmK =
 * {c, y, x}: k / 3 and k / 9). */
void tc_view_index(const tc_view *v, tc_epool *p, const tc_expr *const *upper,
                   const tc_expr **offset, const tc_expr **valid);

/* The widest vector (in elements) that can be read along upper dim `dim`
 * from an upper coordinate whose value in that dim is a multiple of the
 * width: consecutive upper values must map to consecutive memory
 * addresses, stay valid or invalid together, and never straddle a
 * padded/merged boundary; capped at max_bytes (16) / elem_bytes.
 * Also: the width is a power of two dividing the dim's extent, and the
 * first element's offset is a multiple of the width (an aligned vector
 * access, given a base pointer aligned to width * elem_bytes).  Sound
 * (never too wide); 1 when nothing wider is proven.  max_bytes <= 0 means
 * 16. */
int tc_view_vector_width(const tc_view *v, int dim, int elem_bytes, int max_bytes);

/* Text of the stack, one line per transform, for --emit comments and
 * debugging. */
void tc_view_describe(const tc_view *v, tc_str *out);

#endif
