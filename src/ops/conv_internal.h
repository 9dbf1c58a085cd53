/* conv_internal.h - what the convolution files (conv.c, conv_lower.c,
 * conv_ref.c) share and nobody else needs: the derived geometry of a
 * checked problem (output size, group sizes, the memory strides each
 * layout string gives) and the per-dimension geometry of the
 * backward-data decomposition. */
#ifndef TC_CONV_INTERNAL_H
#define TC_CONV_INTERNAL_H

#include "conv.h"

/* Logical dimension order used everywhere in the conv code (nsp spatial
 * dims, 2 or 3, outermost first; nd = nsp + 2 tensor dims):
 *   input  [N, C, H, W]      or [N, C, D, H, W]
 *   filter [K, C/G, Y, X]    or [K, C/G, Z, Y, X]
 *   output [N, K, Ho, Wo]    or [N, K, Do, Ho, Wo]
 * strides[d] is the memory stride (in elements) of logical dim d;
 * order[i] is the logical dim stored at memory position i (0 outermost).
 * sp_*[i] are spatial dim i's sizes and parameters (i = 0 the depth of a
 * 3-D problem, else the height). */
#define TC_CONV_MAX_ND 5
typedef struct tc_conv_geom {
  int nsp, nd;
  int64_t ho, wo, dout;           /* output height, width, depth (1 in 2-D) */
  int64_t g, cg, kg;              /* groups, C/G, K/G */
  int64_t sp_in[3], sp_fil[3], sp_out[3], sp_pad_l[3], sp_pad_r[3], sp_stride[3], sp_dil[3];
  int64_t in_ext[TC_CONV_MAX_ND], fil_ext[TC_CONV_MAX_ND], out_ext[TC_CONV_MAX_ND];
  int64_t in_stride[TC_CONV_MAX_ND], fil_stride[TC_CONV_MAX_ND], out_stride[TC_CONV_MAX_ND];
  int in_order[TC_CONV_MAX_ND], fil_order[TC_CONV_MAX_ND], out_order[TC_CONV_MAX_ND];
} tc_conv_geom;

/* The elements of a tensor of nd dims with extents e. */
int64_t tc_conv_elems_of(const int64_t *e, int nd);

/* Checks p (as tc_conv_check) and fills the geometry.  0 or -1 + err. */
int tc_conv_geom_make(const tc_conv_problem *p, tc_conv_geom *d, tc_str *err);

/* tc_conv_geom_make that also takes bf16 when any_float is 1 (the
 * lowering to views, the reference and the fusion path: the geometry
 * does not depend on the dtype; the template kernels take f32 and f16). */
int tc_conv_geom_make_dt(const tc_conv_problem *p, int any_float, tc_conv_geom *d, tc_str *err);

/* The backward-data decomposition along one spatial dimension (rocMLIR /
 * MIOpen backward_data_v4r1).  With S the stride, D the dilation, F the
 * filter size, P the left padding, L the input size and O the output
 * size:
 *   gcd   = gcd(S, D)
 *   tilda = S / gcd          (YTilda: number of filter phases)
 *   dot   = ceil(F / tilda)  (YDot)
 *   dg    = D / gcd          (the step of ho per filter-phase tap)
 *   ht    = O + ceil(D * (F - 1) / S)   (HTilda)
 * and for each phase t in [0, tilda):
 *   dot_slice(t) = t < F ? ceil((F - t) / tilda) : 0
 *   lo(t), hi(t): the htilda range whose input row
 *                 i = S * htilda + t * D - P lies in [0, L), cut to
 *                 [0, ht): lo = max(0, ceil((P - t*D) / S)),
 *                 hi = min(ht - 1, floor((P + L - 1 - t*D) / S)).
 *   A phase has a GEMM only when dot_slice > 0 and lo <= hi. */
typedef struct tc_conv_bwd_axis {
  int64_t gcd, tilda, dot, dg, ht;
} tc_conv_bwd_axis;

void tc_conv_bwd_axis_make(int64_t stride, int64_t dil, int64_t filter, int64_t out,
                           tc_conv_bwd_axis *a);
int64_t tc_conv_bwd_dot_slice(const tc_conv_bwd_axis *a, int64_t filter, int64_t t);
/* The htilda range [*lo, *hi] of phase t (empty when *lo > *hi). */
void tc_conv_bwd_range(const tc_conv_bwd_axis *a, int64_t stride, int64_t dil, int64_t pad_l,
                       int64_t in, int64_t t, int64_t *lo, int64_t *hi);

int64_t tc_conv_floor_div(int64_t a, int64_t b); /* b > 0 */
int64_t tc_conv_ceil_div(int64_t a, int64_t b);  /* b > 0 */

/* The reference in double: the value of every element of the tensor the
 * direction writes (indexed by its memory offset, as the host buffer) and,
 * when abs_sum is not NULL, the sum of the absolute values of the products
 * that make it (the scale of its rounding error).  The tensors read are
 * taken from in/fil/out.  Returns 0 or -1 + err for a bad problem. */
int tc_conv_reference_f64(const tc_conv_problem *p, const void *in, const void *fil,
                          const void *out, double *val, double *abs_sum, tc_str *err);

#endif
