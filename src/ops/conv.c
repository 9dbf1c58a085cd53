/* conv.c - the (2-D or 3-D) convolution problem (defaults, checks, layouts, the
 * MIOpenDriver-style problem string), plans (the GEMM kernels of
 * tc_conv_lower plus an optional zero-init kernel) and running them.
 * The views are built in conv_lower.c, the reference is conv_ref.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_internal.h"
#include "../runtime/runtime.h"
#include "../target/target.h"

/* ---- problem --------------------------------------------------------- */

void tc_conv_problem_init(tc_conv_problem *p) {
  memset(p, 0, sizeof *p);
  p->dir = TC_CONV_FWD;
  /* MIOpenDriver's defaults for the sizes */
  p->n = 100;
  p->c = 3;
  p->h = 32;
  p->w = 32;
  p->k = 32;
  p->y = 3;
  p->x = 3;
  p->stride_h = p->stride_w = 1;
  p->dil_h = p->dil_w = 1;
  p->groups = 1;
  p->dtype = TC_F32;
  strcpy(p->in_layout, "NCHW");
  strcpy(p->fil_layout, "KCYX");
  strcpy(p->out_layout, "NKHW");
  p->d = p->z = 1;
  p->stride_d = p->dil_d = 1;
}

void tc_conv_problem_make_3d(tc_conv_problem *p) {
  p->spatial = 3;
  strcpy(p->in_layout, "NCDHW");
  strcpy(p->fil_layout, "KCZYX");
  strcpy(p->out_layout, "NKDHW");
}

const char *tc_conv_dir_name(tc_conv_dir dir) {
  switch (dir) {
    case TC_CONV_FWD: return "fwd";
    case TC_CONV_BWD_DATA: return "bwd-data";
    case TC_CONV_BWD_WEIGHT: return "bwd-weight";
  }
  return "?";
}

tc_conv_buf tc_conv_written_buf(tc_conv_dir dir) {
  switch (dir) {
    case TC_CONV_BWD_DATA: return TC_BUF_INPUT;
    case TC_CONV_BWD_WEIGHT: return TC_BUF_FILTER;
    default: return TC_BUF_OUTPUT;
  }
}

/* Layout strings.  kind 0: input (N C [D] H W), 1: filter (K C [Z] Y X;
 * MIOpen's N [D] H W spellings of K [Z] Y X accepted), 2: output (N K [D]
 * H W; C accepted for K, as MIOpenDriver writes "NCHW" for every tensor).
 * letters[kind][nsp - 2][d]: the letters that name logical dim d. */
static const char *const kind_name[3] = {"input", "filter", "output"};
static const char *const canon[3][2] = {{"NCHW", "NCDHW"}, {"KCYX", "KCZYX"}, {"NKHW", "NKDHW"}};
static const char *const other[3][2] = {{"NHWC", "NDHWC"}, {"KYXC", "KZYXC"}, {"NHWK", "NDHWK"}};
static const char *const letters[3][2][TC_CONV_MAX_ND] = {
    {{"N", "C", "H", "W"}, {"N", "C", "D", "H", "W"}},
    {{"KN", "C", "YH", "XW"}, {"KN", "C", "ZD", "YH", "XW"}},
    {{"N", "KC", "H", "W"}, {"N", "KC", "D", "H", "W"}},
};

static int problem_nsp(const tc_conv_problem *p) { return p->spatial == 3 ? 3 : 2; }

static int layout_letter(int kind, int nsp, char ch) {
  if (ch >= 'a' && ch <= 'z') ch = (char)(ch - 'a' + 'A');
  for (int d = 0; d < nsp + 2; d++)
    if (ch && strchr(letters[kind][nsp - 2][d], ch)) return d;
  return -1;
}

static int parse_layout(const char *s, int kind, int nsp, int order[TC_CONV_MAX_ND], tc_str *err) {
  int nd = nsp + 2;
  size_t len = strnlen(s, 8);
  int seen[TC_CONV_MAX_ND] = {0};
  int ok = len == (size_t)nd;
  for (int i = 0; ok && i < nd; i++) {
    int d = layout_letter(kind, nsp, s[i]);
    if (d < 0 || seen[d]) ok = 0;
    else {
      seen[d] = 1;
      order[i] = d;
    }
  }
  if (!ok) {
    const char *c = canon[kind][nsp - 2];
    char list[32] = "";
    for (int d = 0; d < nd; d++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%c", d ? ", " : "", c[d]);
    tc_err_set(err, "bad %s layout '%.8s': expected a permutation of the letters %s "
             "(e.g. %s or %s)", kind_name[kind], s, list, c, other[kind][nsp - 2]);
    return -1;
  }
  return 0;
}

static void strides_from_order(int nd, const int64_t *ext, const int *order, int64_t *stride) {
  int64_t s = 1;
  for (int i = nd - 1; i >= 0; i--) {
    stride[order[i]] = s;
    s *= ext[order[i]];
  }
}

#define TC_CONV_MAX_DIM ((int64_t)0x7fffffff)

/* The product of nd extents (each <= 2^31 - 1), or -1 past INT64_MAX / 8. */
static int64_t prod_checked(const int64_t *e, int nd) {
  int64_t r = 1;
  for (int i = 0; i < nd; i++) {
    if (e[i] != 0 && r > INT64_MAX / 8 / e[i]) return -1;
    r *= e[i];
  }
  return r;
}

int64_t tc_conv_elems_of(const int64_t *e, int nd) {
  int64_t r = 1;
  for (int i = 0; i < nd; i++) r *= e[i];
  return r;
}

typedef struct conv_field {
  const char *flag, *what;
  int64_t v;
} conv_field;

/* Each value of f in [min, TC_CONV_MAX_DIM] ("must be positive" when min
 * is 1); 0 or -1 + err. */
static int check_fields(const conv_field *f, size_t n, int64_t min, tc_str *err) {
  for (size_t i = 0; i < n; i++) {
    if (min == 1 && f[i].v <= 0) {
      tc_err_set(err, "%s (%s) must be positive, got %lld", f[i].what, f[i].flag,
               (long long)f[i].v);
      return -1;
    }
    if (min == 1 && f[i].v > TC_CONV_MAX_DIM) {
      tc_err_set(err, "%s (%s) %lld is too large (at most %lld)", f[i].what, f[i].flag,
               (long long)f[i].v, (long long)TC_CONV_MAX_DIM);
      return -1;
    }
    if (min == 0 && (f[i].v < 0 || f[i].v > TC_CONV_MAX_DIM)) {
      tc_err_set(err, "%s (%s) must be in [0, %lld], got %lld", f[i].what, f[i].flag,
               (long long)TC_CONV_MAX_DIM, (long long)f[i].v);
      return -1;
    }
  }
  return 0;
}

int tc_conv_geom_make(const tc_conv_problem *p, tc_conv_geom *d, tc_str *err) {
  return tc_conv_geom_make_dt(p, 0, d, err);
}

int tc_conv_geom_make_dt(const tc_conv_problem *p, int any_float, tc_conv_geom *d, tc_str *err) {
  memset(d, 0, sizeof *d);
  if (!p) {
    tc_err_set(err, "no convolution problem (NULL)");
    return -1;
  }
  if (p->dir != TC_CONV_FWD && p->dir != TC_CONV_BWD_DATA && p->dir != TC_CONV_BWD_WEIGHT) {
    tc_err_set(err, "bad convolution direction %d: expected 1 (forward), 2 (backward data) "
             "or 4 (backward weight)", (int)p->dir);
    return -1;
  }
  if (p->spatial != 0 && p->spatial != 2 && p->spatial != 3) {
    tc_err_set(err, "bad spatial dimension count %d: expected 2 or 3", p->spatial);
    return -1;
  }
  int nsp = problem_nsp(p), nd = nsp + 2;
  conv_field pos[] = {
    {"-n", "batch size", p->n}, {"-c", "input channels", p->c},
    {"-H", "input height", p->h}, {"-W", "input width", p->w},
    {"-k", "output channels", p->k}, {"-y", "filter height", p->y},
    {"-x", "filter width", p->x}, {"-u", "vertical stride", p->stride_h},
    {"-v", "horizontal stride", p->stride_w}, {"-l", "vertical dilation", p->dil_h},
    {"-j", "horizontal dilation", p->dil_w}, {"-g", "group count", p->groups},
  };
  conv_field pos3[] = {
    {"--in_d", "input depth", p->d}, {"--fil_d", "filter depth", p->z},
    {"--conv_stride_d", "depth stride", p->stride_d},
    {"--dilation_d", "depth dilation", p->dil_d},
  };
  conv_field pads[] = {
    {"--pad_h_l", "top padding", p->pad_h_l}, {"--pad_h_r", "bottom padding", p->pad_h_r},
    {"--pad_w_l", "left padding", p->pad_w_l}, {"--pad_w_r", "right padding", p->pad_w_r},
  };
  conv_field pads3[] = {
    {"--pad_d_l", "front padding", p->pad_d_l}, {"--pad_d_r", "back padding", p->pad_d_r},
  };
  if (check_fields(pos, sizeof pos / sizeof *pos, 1, err) ||
      (nsp == 3 && check_fields(pos3, sizeof pos3 / sizeof *pos3, 1, err)) ||
      check_fields(pads, sizeof pads / sizeof *pads, 0, err) ||
      (nsp == 3 && check_fields(pads3, sizeof pads3 / sizeof *pads3, 0, err)))
    return -1;
  if (p->c % p->groups) {
    tc_err_set(err, "input channels (-c %lld) are not divisible by the group count (-g %lld)",
             (long long)p->c, (long long)p->groups);
    return -1;
  }
  if (p->k % p->groups) {
    tc_err_set(err, "output channels (-k %lld) are not divisible by the group count (-g %lld)",
             (long long)p->k, (long long)p->groups);
    return -1;
  }
  if (p->dtype != TC_F32 && p->dtype != TC_F16 && !(any_float && p->dtype == TC_BF16)) {
    tc_err_set(err, "unsupported data type %s for a convolution: expected f32 or f16",
             tc_dtype_name(p->dtype));
    return -1;
  }
  if (parse_layout(p->in_layout, 0, nsp, d->in_order, err) ||
      parse_layout(p->fil_layout, 1, nsp, d->fil_order, err) ||
      parse_layout(p->out_layout, 2, nsp, d->out_order, err))
    return -1;
  d->nsp = nsp;
  d->nd = nd;
  /* the spatial dims, outermost first: (depth,) height, width */
  int o = nsp - 2;
  if (nsp == 3) {
    d->sp_in[0] = p->d, d->sp_fil[0] = p->z, d->sp_pad_l[0] = p->pad_d_l;
    d->sp_pad_r[0] = p->pad_d_r, d->sp_stride[0] = p->stride_d, d->sp_dil[0] = p->dil_d;
  }
  d->sp_in[o] = p->h, d->sp_fil[o] = p->y, d->sp_pad_l[o] = p->pad_h_l;
  d->sp_pad_r[o] = p->pad_h_r, d->sp_stride[o] = p->stride_h, d->sp_dil[o] = p->dil_h;
  d->sp_in[o + 1] = p->w, d->sp_fil[o + 1] = p->x, d->sp_pad_l[o + 1] = p->pad_w_l;
  d->sp_pad_r[o + 1] = p->pad_w_r, d->sp_stride[o + 1] = p->stride_w;
  d->sp_dil[o + 1] = p->dil_w;
  /* output size: (in + pads - dilated filter) / stride + 1 */
  static const char *const axis[3] = {"depth", "height", "width"};
  for (int i = 0; i < nsp; i++) {
    const char *ax = axis[i + 3 - nsp];
    int64_t span = d->sp_dil[i] * (d->sp_fil[i] - 1) + 1; /* both < 2^31: fits */
    int64_t padded = d->sp_in[i] + d->sp_pad_l[i] + d->sp_pad_r[i];
    if (padded < span) {
      tc_err_set(err, "output %s would be %lld: the padded input %s %lld (%lld + %lld + %lld) "
               "is smaller than the dilated filter %s %lld", ax,
               (long long)(tc_conv_floor_div(padded - span, d->sp_stride[i]) + 1), ax,
               (long long)padded, (long long)d->sp_in[i], (long long)d->sp_pad_l[i],
               (long long)d->sp_pad_r[i], ax, (long long)span);
      return -1;
    }
    d->sp_out[i] = (padded - span) / d->sp_stride[i] + 1;
  }
  d->dout = nsp == 3 ? d->sp_out[0] : 1;
  d->ho = d->sp_out[o];
  d->wo = d->sp_out[o + 1];
  d->g = p->groups;
  d->cg = p->c / p->groups;
  d->kg = p->k / p->groups;
  d->in_ext[0] = p->n, d->in_ext[1] = p->c;
  d->fil_ext[0] = p->k, d->fil_ext[1] = d->cg;
  d->out_ext[0] = p->n, d->out_ext[1] = p->k;
  for (int i = 0; i < nsp; i++) {
    d->in_ext[2 + i] = d->sp_in[i];
    d->fil_ext[2 + i] = d->sp_fil[i];
    d->out_ext[2 + i] = d->sp_out[i];
  }
  const char *tname[3] = {"input", "filter", "output"};
  const int64_t *exts[3] = {d->in_ext, d->fil_ext, d->out_ext};
  for (int i = 0; i < 3; i++) {
    if (prod_checked(exts[i], nd) < 0) {
      char dims[128] = "";
      for (int j = 0; j < nd; j++)
        snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%s%lld", j ? " x " : "",
                 (long long)exts[i][j]);
      tc_err_set(err, "the %s tensor is too large (%s elements)", tname[i], dims);
      return -1;
    }
  }
  strides_from_order(nd, d->in_ext, d->in_order, d->in_stride);
  strides_from_order(nd, d->fil_ext, d->fil_order, d->fil_stride);
  strides_from_order(nd, d->out_ext, d->out_order, d->out_stride);
  return 0;
}

int tc_conv_check3(const tc_conv_problem *p, int64_t *dout, int64_t *ho, int64_t *wo, tc_str *err) {
  tc_conv_geom d;
  if (tc_conv_geom_make(p, &d, err)) return -1;
  if (dout) *dout = d.dout;
  if (ho) *ho = d.ho;
  if (wo) *wo = d.wo;
  return 0;
}

int tc_conv_check(const tc_conv_problem *p, int64_t *ho, int64_t *wo, tc_str *err) {
  return tc_conv_check3(p, NULL, ho, wo, err);
}

static int64_t elems_or_zero(const tc_conv_problem *p, int which) {
  tc_conv_geom d;
  if (tc_conv_geom_make_dt(p, 1, &d, NULL)) return 0;
  const int64_t *e = which == 0 ? d.in_ext : which == 1 ? d.fil_ext : d.out_ext;
  return tc_conv_elems_of(e, d.nd);
}

int64_t tc_conv_input_elems(const tc_conv_problem *p) { return elems_or_zero(p, 0); }
int64_t tc_conv_filter_elems(const tc_conv_problem *p) { return elems_or_zero(p, 1); }
int64_t tc_conv_output_elems(const tc_conv_problem *p) { return elems_or_zero(p, 2); }

static void layout_text(const char *s, int kind, int nsp, char out[9]) {
  int order[TC_CONV_MAX_ND];
  if (parse_layout(s, kind, nsp, order, NULL) == 0) {
    for (int i = 0; i < nsp + 2; i++) out[i] = canon[kind][nsp - 2][order[i]];
    out[nsp + 2] = 0;
  } else {
    snprintf(out, 9, "%.8s", s);
  }
}

void tc_conv_problem_string(const tc_conv_problem *p, tc_str *out) {
  if (!p || !out) return;
  int nsp = problem_nsp(p);
  char il[9], fl[9], ol[9];
  layout_text(p->in_layout, 0, nsp, il);
  layout_text(p->fil_layout, 1, nsp, fl);
  layout_text(p->out_layout, 2, nsp, ol);
  int sym = p->pad_h_l == p->pad_h_r && p->pad_w_l == p->pad_w_r;
  if (nsp == 3) {
    sym = sym && p->pad_d_l == p->pad_d_r;
    tc_str_printf(out, "conv3d -F %d -n %lld -c %lld --in_d %lld -H %lld -W %lld -k %lld "
                  "--fil_d %lld -y %lld -x %lld", (int)p->dir, (long long)p->n, (long long)p->c,
                  (long long)p->d, (long long)p->h, (long long)p->w, (long long)p->k,
                  (long long)p->z, (long long)p->y, (long long)p->x);
    if (sym) tc_str_printf(out, " --pad_d %lld", (long long)p->pad_d_l);
    else
      tc_str_printf(out, " --pad_d_l %lld --pad_d_r %lld", (long long)p->pad_d_l,
                    (long long)p->pad_d_r);
  } else {
    tc_str_printf(out, "conv2d -F %d -n %lld -c %lld -H %lld -W %lld -k %lld -y %lld -x %lld",
                  (int)p->dir, (long long)p->n, (long long)p->c, (long long)p->h,
                  (long long)p->w, (long long)p->k, (long long)p->y, (long long)p->x);
  }
  if (sym)
    tc_str_printf(out, " -p %lld -q %lld", (long long)p->pad_h_l, (long long)p->pad_w_l);
  else
    tc_str_printf(out, " --pad_h_l %lld --pad_h_r %lld --pad_w_l %lld --pad_w_r %lld",
                  (long long)p->pad_h_l, (long long)p->pad_h_r, (long long)p->pad_w_l,
                  (long long)p->pad_w_r);
  if (nsp == 3) tc_str_printf(out, " --conv_stride_d %lld", (long long)p->stride_d);
  tc_str_printf(out, " -u %lld -v %lld", (long long)p->stride_h, (long long)p->stride_w);
  if (nsp == 3) tc_str_printf(out, " --dilation_d %lld", (long long)p->dil_d);
  tc_str_printf(out, " -l %lld -j %lld -g %lld -t %s --in_layout %s --fil_layout %s "
                "--out_layout %s", (long long)p->dil_h, (long long)p->dil_w,
                (long long)p->groups, tc_dtype_name(p->dtype), il, fl, ol);
}

/* ---- plans ----------------------------------------------------------- */

/* A trivial kernel that zeroes `elems` elements of a buffer of 32- or
 * 16-bit elements (grid-stride loop, 256 threads a block). */
static void zero_kernel(tc_target target, tc_dtype t, int64_t elems, tc_gemm_kernel *k) {
  tc_str s;
  tc_str_init(&s);
  int half = tc_dtype_size(t) == 2;
  snprintf(k->name, sizeof k->name, "tilec_conv_zero");
  if (tc_target_info_of(target).lang == TC_LANG_OPENCL_C) {
    tc_str_printf(&s,
        "/* tilec: zero-init of the %lld-element input gradient (elements no\n"
        " * backward-data GEMM writes must read 0). */\n"
        "__kernel void tilec_conv_zero(__global %s *p) {\n"
        "  for (ulong i = get_global_id(0); i < %lldUL; i += get_global_size(0))\n"
        "    p[i] = 0;\n"
        "}\n", (long long)elems, half ? "ushort" : "uint", (long long)elems);
  } else {
    tc_str_printf(&s,
        "/* tilec: zero-init of the %lld-element input gradient (elements no\n"
        " * backward-data GEMM writes must read 0). */\n"
        "extern \"C\" __global__ void tilec_conv_zero(%s *p) {\n"
        "  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
        "       i < %lldULL; i += (unsigned long long)gridDim.x * blockDim.x)\n"
        "    p[i] = 0;\n"
        "}\n", (long long)elems, half ? "unsigned short" : "unsigned int", (long long)elems);
  }
  k->source = tc_str_take(&s);
  int64_t blocks = (elems + 255) / 256;
  if (blocks > 65535) blocks = 65535;
  k->grid[0] = (size_t)blocks;
  k->grid[1] = k->grid[2] = 1;
  k->block[0] = 256;
  k->block[1] = k->block[2] = 1;
  k->smem_bytes = 0;
}

void tc_conv_plan_free(tc_conv_plan *plan) {
  if (!plan) return;
  for (int i = 0; i < plan->nsteps; i++) {
    if (plan->steps[i].gemm_m == 0) free(plan->steps[i].kernel.source);
    else tc_gemm_kernel_free(&plan->steps[i].kernel);
  }
  free(plan->steps);
  free(plan);
}

tc_status tc_conv_plan_make(const tc_conv_problem *p, const tc_gemm_params *params,
                            tc_target target, tc_conv_plan **out, tc_str *err) {
  return tc_conv_plan_make_for(p, params, target, NULL, out, err);
}

tc_status tc_conv_plan_make_for(const tc_conv_problem *p, const tc_gemm_params *params,
                                tc_target target, const char *arch, tc_conv_plan **out, tc_str *err) {
  if (err) tc_str_clear(err);
  if (!out) {
    tc_err_set(err, "tc_conv_plan_make: NULL output plan pointer");
    return TC_ERR_ARGUMENT;
  }
  *out = NULL;
  tc_conv_gemm *gemms = NULL;
  int ngemms = 0, zero = 0;
  /* (the lowering takes bf16 for the fusion path; the templates do not) */
  if (tc_conv_check(p, NULL, NULL, err) || tc_conv_lower(p, &gemms, &ngemms, &zero, err))
    return TC_ERR_ARGUMENT;
  tc_conv_plan *plan = tc_xcalloc(1, sizeof *plan);
  plan->problem = *p;
  plan->target = target;
  plan->steps = tc_xcalloc((size_t)(ngemms + zero) + 1, sizeof *plan->steps);
  tc_status st = TC_OK;
  if (zero) {
    tc_conv_step *s = &plan->steps[plan->nsteps++];
    zero_kernel(target, p->dtype, tc_conv_input_elems(p), &s->kernel);
    s->args[0] = tc_conv_written_buf(p->dir);
    s->nargs = 1;
  }
  for (int i = 0; i < ngemms && st == TC_OK; i++) {
    tc_conv_gemm *g = &gemms[i];
    tc_gemm_problem pb;
    memset(&pb, 0, sizeof pb);
    pb.a = g->a;
    pb.b = g->b;
    pb.c = g->c;
    pb.a_dtype = pb.b_dtype = pb.c_dtype = p->dtype;
    pb.accumulate = 0;
    pb.alpha = 1.0f;
    tc_gemm_shape shape = tc_gemm_problem_shape(&pb);
    tc_gemm_params gp;
    TC_STR_LOCAL(why);
    if (params) {
      gp = *params;
      if (tc_gemm_params_derive(&gp, &shape, &why)) {
        char pc[64];
        tc_gemm_params_format(params, pc, sizeof pc);
        tc_err_set(err, "perf config %s does not fit the %s GEMM (G %lld, M %lld, N %lld, "
                 "K %lld): %s", pc, g->name, (long long)g->g, (long long)g->m, (long long)g->n,
                 (long long)g->k, tc_str_cstr(&why));
        st = TC_ERR_ARGUMENT;
        break;
      }
    } else if (tc_gemm_default_for(&shape, target, arch, &gp, NULL, &why)) {
      tc_err_set(err, "no GEMM parameters for the %s GEMM (G %lld, M %lld, N %lld, K %lld): %s",
               g->name, (long long)g->g, (long long)g->m, (long long)g->n, (long long)g->k, tc_str_cstr(&why));
      st = TC_ERR_ARGUMENT;
      break;
    }
    tc_conv_step *s = &plan->steps[plan->nsteps];
    char kname[64];
    snprintf(kname, sizeof kname, "tilec_conv_%s", g->name);
    st = tc_gemm_generate(&pb, &gp, target, kname, &s->kernel, err);
    if (st != TC_OK) break;
    plan->nsteps++;
    s->args[0] = g->abuf;
    s->args[1] = g->bbuf;
    s->args[2] = g->cbuf;
    s->nargs = 3;
    s->gemm_g = g->g;
    s->gemm_m = g->m;
    s->gemm_n = g->n;
    s->gemm_k = g->k;
    s->params = gp;
    if (i == 0) plan->params = gp;
  }
  tc_conv_gemms_free(gemms, ngemms);
  if (st != TC_OK) {
    tc_conv_plan_free(plan);
    return st;
  }
  *out = plan;
  return TC_OK;
}

/* ---- running --------------------------------------------------------- */

tc_status tc_conv_run(const tc_conv_plan *plan, const char *device, void *in, void *fil,
                      void *out, double *ms, int repeat, double *repeat_ms, tc_str *err) {
  if (err) tc_str_clear(err);
  if (ms) *ms = 0;
  if (!plan) {
    tc_err_set(err, "tc_conv_run: no plan (NULL)");
    return TC_ERR_ARGUMENT;
  }
  const tc_conv_problem *p = &plan->problem;
  void *host[3] = {in, fil, out};
  size_t bytes[3] = {
    (size_t)tc_conv_input_elems(p) * tc_dtype_size(p->dtype),
    (size_t)tc_conv_filter_elems(p) * tc_dtype_size(p->dtype),
    (size_t)tc_conv_output_elems(p) * tc_dtype_size(p->dtype),
  };
  for (int i = 0; i < 3; i++) {
    if (!host[i]) {
      tc_err_set(err, "tc_conv_run: the %s buffer is NULL", kind_name[i]);
      return TC_ERR_ARGUMENT;
    }
  }
  tc_target_info ti = tc_target_info_of(plan->target);
  if (!ti.runs) {
    tc_err_set(err, "tc_conv_run: running %s kernels is not supported in this build", ti.api);
    return TC_ERR_UNSUPPORTED;
  }
  tc_conv_buf written = tc_conv_written_buf(p->dir);
  tc_str e;
  tc_str_init(&e);
  tc_cl *cl = NULL;
  tc_status st = TC_OK;
  if (ti.device_selector) st = tc_cl_open(device, &cl, &e);
  /* each step's timed launches (the runtime checks repeat and repeat_ms) */
  double *step_ms = repeat > 0 && repeat_ms ? tc_xcalloc((size_t)repeat, sizeof *step_ms) : NULL;
  for (int r = 0; step_ms && r < repeat; r++) repeat_ms[r] = 0;
  /* Each step copies its buffers in and the written one back (the
   * runtime's model) after its first launch; steps are run in order on
   * the same host buffers, so a later step sees what earlier ones wrote. */
  for (int i = 0; st == TC_OK && i < plan->nsteps; i++) {
    const tc_conv_step *s = &plan->steps[i];
    tc_rt_buffer bufs[3] = {{0}};
    for (int a = 0; a < s->nargs; a++) {
      bufs[a].host = host[s->args[a]];
      bufs[a].bytes = bytes[s->args[a]];
      bufs[a].copy_back = s->args[a] == written;
    }
    double t = 0;
    st = tc_gemm_kernel_run(&s->kernel, plan->target, cl, device, bufs, s->nargs, &t, repeat,
                            step_ms ? step_ms : repeat_ms, &e);
    if (ms) *ms += t;
    for (int r = 0; step_ms && r < repeat; r++) repeat_ms[r] += step_ms[r];
    if (st != TC_OK) {
      tc_str m;
      tc_str_init(&m);
      tc_str_printf(&m, "step %d of %d (%s): %s", i + 1, plan->nsteps, s->kernel.name,
                    tc_str_cstr(&e));
      tc_str_free(&e);
      e = m;
    }
  }
  if (st != TC_OK) tc_err_set(err, "%s", tc_str_cstr(&e));
  free(step_ms);
  if (cl) tc_cl_close(cl);
  tc_str_free(&e);
  return st;
}
