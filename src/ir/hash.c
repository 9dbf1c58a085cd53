/* hash.c - a canonical structural hash of a scheduled fusion, the key of
 * the on-disk kernel cache (src/runtime/cache.c).
 *
 * The hash covers everything lowering and printing read: the whole axis
 * graph (every axis and transform, in creation order, so axis indices are
 * canonical), every tensor in id order with its domains, memory type,
 * inline position and flags, every op, the input and output lists (their
 * order is the kernel's parameter order), and the compile options (target,
 * arch, kernel name) together with TILEC_VERSION, TC_CODEGEN_FORMAT and
 * TILEC_BUILD_ID (a -D the build may set; "" by default).  Each field goes
 * in behind a tag and each list behind its length, so different structures
 * cannot produce the same stream of words.
 *
 * The hasher is non-cryptographic: two 64-bit lanes, each a chain of
 * murmur3's 64-bit finalizer over the input words with different mixing,
 * crossed at the end into 128 bits. */
#include <string.h>

#include "fusion.h"

#ifndef TILEC_BUILD_ID
#define TILEC_BUILD_ID ""
#endif

/* A field added to one of these structs must be hashed below (or the cache
 * may hand back a kernel made for a different schedule); these asserts fail
 * the build until the sizes here are updated along with the hash.  LP64
 * only. */
#if defined(__LP64__)
#ifdef TC_XF_MAX_OUT /* coordinate transforms (EMBED ...): outputs and coefficients */
_Static_assert(sizeof(tc_xform) == 264, "tc_xform changed: update tc_fusion_hash in src/ir/hash.c");
#else
_Static_assert(sizeof(tc_xform) == 80, "tc_xform changed: update tc_fusion_hash in src/ir/hash.c");
#endif
_Static_assert(sizeof(tc_axis) == 40, "tc_axis changed: update tc_fusion_hash in src/ir/hash.c");
_Static_assert(sizeof(struct tc_tensor) == 168,
               "tc_tensor changed: update tc_fusion_hash in src/ir/hash.c");
_Static_assert(sizeof(tc_op) == 152, "tc_op changed: update tc_fusion_hash in src/ir/hash.c");
_Static_assert(sizeof(struct tc_fusion) == 1232,
               "tc_fusion changed: update tc_fusion_hash in src/ir/hash.c");
#endif

static uint64_t fmix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

static uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

void tc_hasher_init(tc_hasher *h) {
  h->a = 0x6a09e667f3bcc908ULL;
  h->b = 0xbb67ae8584caa73bULL;
}

void tc_hasher_u64(tc_hasher *h, uint64_t v) {
  h->a = fmix64(h->a ^ v) + 0x9e3779b97f4a7c15ULL;
  h->b = fmix64(rotl64(h->b, 23) + v * 0x87c37b91114253d5ULL + 0x4cf5ad432745937fULL);
}

void tc_hasher_bytes(tc_hasher *h, const void *p, size_t n) {
  const unsigned char *s = p;
  tc_hasher_u64(h, (uint64_t)n);
  while (n >= 8) {
    uint64_t w = 0;
    for (int i = 0; i < 8; i++) w |= (uint64_t)s[i] << (8 * i);
    tc_hasher_u64(h, w);
    s += 8, n -= 8;
  }
  if (n) {
    uint64_t w = 0;
    for (size_t i = 0; i < n; i++) w |= (uint64_t)s[i] << (8 * i);
    tc_hasher_u64(h, w);
  }
}

void tc_hasher_str(tc_hasher *h, const char *s) {
  if (!s) {
    tc_hasher_u64(h, 0xffffffffffffffffULL);
    return;
  }
  tc_hasher_bytes(h, s, strlen(s));
}

void tc_hasher_hex(const tc_hasher *h, char out[33]) {
  uint64_t hi = fmix64(h->a ^ rotl64(h->b, 17) ^ 0x3c6ef372fe94f82bULL);
  uint64_t lo = fmix64(h->b + h->a * 0xa54ff53a5f1d36f1ULL);
  static const char hex[] = "0123456789abcdef";
  for (int i = 0; i < 16; i++) {
    out[i] = hex[(hi >> (60 - 4 * i)) & 15];
    out[16 + i] = hex[(lo >> (60 - 4 * i)) & 15];
  }
  out[32] = 0;
}

/* ---- the fusion ------------------------------------------------------- */

enum {
  TAG_HEADER = 0x7463680001ULL, /* "tch" */
  TAG_AXIS,
  TAG_XFORM,
  TAG_TENSOR,
  TAG_LOGICAL,
  TAG_LOOP,
  TAG_ALLOC,
  TAG_OP,
  TAG_INPUTS,
  TAG_OUTPUTS,
  TAG_OPTIONS
};

static void u64(tc_hasher *h, uint64_t v) { tc_hasher_u64(h, v); }
static void i64(tc_hasher *h, int64_t v) { tc_hasher_u64(h, (uint64_t)v); }

static void int_list(tc_hasher *h, uint64_t tag, const int *v, int n) {
  u64(h, tag);
  i64(h, n);
  for (int i = 0; i < n; i++) i64(h, v[i]);
}

static int64_t tensor_id(const tc_tensor *t) { return t ? t->id : -1; }

void tc_fusion_hash(const tc_fusion *f, tc_target target, const char *arch,
                    const char *kernel_name, char out[33]) {
  tc_hasher h;
  tc_hasher_init(&h);
  u64(&h, TAG_HEADER);
  tc_hasher_str(&h, TILEC_VERSION);
  i64(&h, TC_CODEGEN_FORMAT);
  tc_hasher_str(&h, TILEC_BUILD_ID);

  u64(&h, TAG_OPTIONS);
  i64(&h, (int64_t)target);
  tc_hasher_str(&h, arch);
  tc_hasher_str(&h, kernel_name);
  tc_hasher_str(&h, tc_fusion_schedule_note(f)); /* printed at the kernel's top */

  const tc_dgraph *g = &f->g;
  i64(&h, g->naxes);
  for (int i = 0; i < g->naxes; i++) {
    const tc_axis *a = &g->axes[i];
    u64(&h, TAG_AXIS);
    i64(&h, a->extent);
    i64(&h, (int64_t)a->ptype);
    i64(&h, a->def);
    u64(&h, a->sig);
    i64(&h, a->reduction);
  }
  i64(&h, g->nxf);
  for (int i = 0; i < g->nxf; i++) {
    const tc_xform *x = &g->xf[i];
    u64(&h, TAG_XFORM);
    i64(&h, (int64_t)x->kind);
    int_list(&h, TAG_XFORM, x->in, x->nin);
    int_list(&h, TAG_XFORM, x->out, x->nout);
    i64(&h, x->factor);
    i64(&h, x->inner_split);
    i64(&h, x->left);
    i64(&h, x->right);
    i64(&h, x->b);
    i64(&h, x->m);
    i64(&h, x->s);
#ifdef TC_XF_MAX_OUT
    for (int k = 0; k < x->nout && k < TC_XF_MAX_OUT; k++) i64(&h, x->coeff[k]);
#endif
  }

  i64(&h, f->ntensors);
  for (int i = 0; i < f->ntensors; i++) {
    const tc_tensor *t = f->tensors[i];
    u64(&h, TAG_TENSOR);
    i64(&h, t->id);
    tc_hasher_bytes(&h, t->name, strnlen(t->name, sizeof t->name));
    i64(&h, (int64_t)t->dtype);
    i64(&h, (int64_t)t->mem);
    i64(&h, t->is_input);
    i64(&h, t->is_output);
    i64(&h, t->is_scalar); /* a scalar input: its name, never its value */
    if (t->is_scalar) tc_hasher_str(&h, t->label);
    i64(&h, t->ca_pos);
    if (t->macro) i64(&h, 1000 + t->macro); /* (FMA kernels keep their hashes) */
    if (t->circular_stages > 1) i64(&h, 2000 + t->circular_stages); /* (so do single buffers) */
    i64(&h, t->tmem_dimsep);
    i64(&h, t->alloc_set);
    int_list(&h, TAG_LOGICAL, t->logical, t->nlogical);
    /* extents too: they are the axes', but spell the shape out */
    for (int j = 0; j < t->nlogical; j++) i64(&h, g->axes[t->logical[j]].extent);
    /* a symbolic size's assumption (its divisor; the bound is the extent,
     * the name the scalar's), never its value; an input's only: the
     * others follow from the ops (tc_fusion_mark_symbolic).  Static
     * fusions keep their hashes. */
    for (int j = 0; j < t->nlogical && t->is_input; j++)
      if (g->axes[t->logical[j]].sym_div)
        i64(&h, -g->axes[t->logical[j]].sym_div), i64(&h, g->axes[t->logical[j]].sym_var);
    int_list(&h, TAG_LOOP, t->loop, t->nloop);
    if (t->alloc_set)
      int_list(&h, TAG_ALLOC, t->alloc, t->nalloc);
    else
      int_list(&h, TAG_ALLOC, NULL, -1);
    i64(&h, t->def ? 1 : 0);
    if (t->view) { /* a coordinate-transform view of the buffer: its text and numbers */
      const tc_view *v = t->view;
      tc_str d;
      tc_str_init(&d);
      tc_view_describe(v, &d);
      tc_hasher_str(&h, tc_str_cstr(&d));
      tc_str_free(&d);
      i64(&h, t->view_elems);
      i64(&h, v->nlower);
      for (int j = 0; j < v->nlower; j++) {
        i64(&h, v->g.axes[v->lower[j]].extent);
        i64(&h, v->lower_stride[j]);
        i64(&h, v->lower_const[j]);
      }
      i64(&h, v->g.nxf);
      for (int j = 0; j < v->g.nxf; j++) {
        const tc_xform *x = &v->g.xf[j];
        i64(&h, x->kind), i64(&h, x->factor), i64(&h, x->left), i64(&h, x->right);
        int_list(&h, TAG_XFORM, x->in, x->nin);
        int_list(&h, TAG_XFORM, x->out, x->nout);
        for (int k = 0; k < x->nout && k < TC_XF_MAX_OUT; k++) i64(&h, x->coeff[k]);
      }
      int_list(&h, TAG_LOGICAL, v->upper, v->nupper);
    }
  }

  i64(&h, f->nops);
  for (int i = 0; i < f->nops; i++) {
    const tc_op *op = f->ops[i];
    u64(&h, TAG_OP);
    i64(&h, (int64_t)op->kind);
    i64(&h, op->sub);
    i64(&h, (int64_t)op->ldst);
    i64(&h, op->nin);
    for (int k = 0; k < op->nin && k < 3; k++) i64(&h, tensor_id(op->in[k]));
    i64(&h, tensor_id(op->out));
    i64(&h, op->has_scalar);
    if (op->has_scalar) tc_hasher_bytes(&h, &op->scalar, sizeof op->scalar);
    i64(&h, tensor_id(op->scalar_in));
    i64(&h, op->scalar_left);
    if (op->kind == TC_OP_PERMUTE || op->kind == TC_OP_BROADCAST) {
      int n = op->out ? op->out->nlogical : 0;
      if (n > 16) n = 16;
      int_list(&h, TAG_OP, op->perm, n);
    }
  }

  u64(&h, TAG_INPUTS);
  i64(&h, f->ninputs);
  for (int i = 0; i < f->ninputs; i++) i64(&h, tensor_id(f->inputs[i]));
  u64(&h, TAG_OUTPUTS);
  i64(&h, f->noutputs);
  for (int i = 0; i < f->noutputs; i++) i64(&h, tensor_id(f->outputs[i]));

  tc_hasher_hex(&h, out);
}
