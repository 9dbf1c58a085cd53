/* swizzle_swap.c - the swizzle swap (TileLang's, for AMD direct-to-LDS
 * loads; docs/swizzle_swap.md): a global -> shared copy whose
 * shared layout swizzles stores through the swizzle (each lane writes
 * scattered addresses); the swap makes it iterate the shared tensor's
 * allocation instead, so that each lane writes n contiguous elements at
 * lane_id * n and reads global memory at the swizzled column.
 *
 * In tilec terms: the copy's loop domain becomes the allocation axes
 * (those that are allocated), merged into one linear axis and split into
 * [rest, TIDx, n].  The store index is then that linear position - only
 * the reshape part of the layout, no XOR - and the walk from the loop
 * domain back to the logical domain passes backward through the layout,
 * swizzle included, which gives the global read index.  The contents of
 * shared memory stay the same: before, the thread for element L wrote
 * smem[F(L)] = G[L]; after, the thread for position q writes
 * smem[q] = G[F^-1(q)], the same equation read the other way (F is a
 * bijection onto the positions it fills; positions nothing maps to, the
 * padding, are skipped by the walk's range predicates as before).  The
 * layout's reshape + swizzle split (reshape_swizzle.h) is what makes the
 * swap legal: it proves F injective and each swizzle a permutation of the
 * columns within a row, so the reads of a lane stay in one row of global
 * memory and n consecutive positions read n consecutive columns when n
 * divides the swizzle's grain.  See docs/swizzle_swap.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../layout/reshape_swizzle.h"
#include "sched.h"

typedef struct swap_plan {
  int nkeep, keep[64];   /* loop axes that stay: inside the inline position, or on blocks */
  int ntile, tile[64];   /* the allocated allocation axes, outermost first */
  int64_t elems;         /* their product */
  int64_t threads;       /* the copy's TIDx extent */
  int64_t n;             /* elements per lane */
  bool vectorize;        /* the n elements are contiguous in global memory too */
  bool needed;           /* the store goes through the swizzle now */
} swap_plan;

static int loop_pos(const tc_tensor *t, int axis) {
  for (int i = 0; i < t->nloop; i++)
    if (t->loop[i] == axis) return i;
  return -1;
}

/* Decides whether t's copy can be swapped and how.  Returns 0, or -1 with
 * the reason in err. */
static int plan_swap(const tc_tensor *t, int64_t n_req, swap_plan *pl, tc_str *err) {
  const tc_dgraph *g = &t->f->g;
  memset(pl, 0, sizeof *pl);
  if (t->mem != TC_MEM_SHARED)
    return tc_err_set(err, "%s is in %s memory; the swap rewrites copies into shared memory",
                    t->name, tc_memtype_name(t->mem)), -1;
  if (!t->def || (t->def->kind != TC_OP_SET && t->def->kind != TC_OP_CAST))
    return tc_err_set(err, "%s is not made by a copy (a set or a cast)", t->name), -1;
  const tc_tensor *src = t->def->in[0];
  if (src->mem != TC_MEM_GLOBAL)
    return tc_err_set(err, "%s copies %s, which is in %s memory, not global memory", t->name,
                    src->name, tc_memtype_name(src->mem)), -1;
  const int *alloc = t->alloc_set ? t->alloc : t->loop;
  int na = t->alloc_set ? t->nalloc : t->nloop;
  if (na > 64 || t->nloop > 64) return tc_err_set(err, "%s has more than 64 axes", t->name), -1;
  tc_rs_split s;
  if (tc_rs_split_layout(g, t->logical, t->nlogical, alloc, na, &s, err))
    return tc_err_prefix(err, "%s's shared layout: ", t->name), -1;
  if (s.nswizzles == 0)
    return tc_err_set(err, "%s's shared layout has no swizzle, so there is nothing to swap", t->name), -1;
  int tid = -1;
  for (int i = 0; i < t->nloop; i++) {
    tc_ptype p = g->axes[t->loop[i]].ptype;
    if (i < t->ca_pos) {
      if (tc_ptype_is_thread(p))
        return tc_err_set(err, "%s's loop axis %d, left of its inline position, is bound to %s",
                        t->name, i, tc_ptype_name(p)), -1;
      pl->keep[pl->nkeep++] = t->loop[i];
    } else if (tc_ptype_is_block(p) || tc_ptype_is_device(p)) {
      pl->keep[pl->nkeep++] = t->loop[i];
    } else if (tc_ptype_is_thread(p)) {
      if (p != TC_TIDX || tid >= 0)
        return tc_err_set(err,
                        "%s's copy binds loop axis %d to %s; the swap spreads the lanes over TIDx "
                        "only", t->name, i, tc_ptype_name(p)), -1;
      tid = i;
    }
  }
  if (tid < 0)
    return tc_err_set(err, "no loop axis of %s's copy is bound to TIDx (the lanes)", t->name), -1;
  pl->threads = g->axes[t->loop[tid]].extent;
  pl->elems = 1;
  for (int j = 0; j < na; j++) {
    int a = alloc[j];
    tc_ptype p = g->axes[a].ptype;
    if (tc_ptype_is_block(p) || tc_ptype_is_device(p)) continue; /* not allocated */
    int lp = loop_pos(t, a);
    if (!tc_ptype_is_thread(p) && lp >= 0 && lp < t->ca_pos) continue; /* not allocated */
    if (__builtin_mul_overflow(pl->elems, g->axes[a].extent, &pl->elems) || pl->elems > 2147483647)
      return tc_err_set(err, "%s's shared allocation is too large", t->name), -1;
    pl->tile[pl->ntile++] = a;
  }
  if (pl->ntile == 0) return tc_err_set(err, "%s allocates no axis", t->name), -1;
  /* An allocation axis that is not allocated (on blocks, or left of the
   * inline position) may be a twin of a kept loop axis - the same
   * signature, extent and parallel type, made by the same transform on
   * another branch of the graph (tc_propagate_transforms after
   * tc_set_alloc_to_loop makes such pairs).  The copy iterates the
   * allocation's own axis then, so that the walk from the loop domain
   * meets the allocation axes. */
  for (int j = 0; j < na; j++) {
    int a = alloc[j];
    bool tiled = false, kept = false;
    for (int i = 0; i < pl->ntile; i++) tiled |= pl->tile[i] == a;
    for (int i = 0; i < pl->nkeep; i++) kept |= pl->keep[i] == a;
    if (tiled || kept) continue;
    for (int i = 0; i < pl->nkeep; i++) {
      const tc_axis *k = &g->axes[pl->keep[i]], *x = &g->axes[a];
      if (k->sig == x->sig && k->extent == x->extent && k->ptype == x->ptype) {
        pl->keep[i] = a;
        break;
      }
    }
  }
  /* the kept loop axes and the allocated axes must determine each element,
   * each exactly once */
  int known[128], nk = 0;
  for (int i = 0; i < pl->nkeep; i++) known[nk++] = pl->keep[i];
  for (int i = 0; i < pl->ntile; i++) known[nk++] = pl->tile[i];
  tc_epool *ep = tc_epool_new();
  int rc = 0;
  char b[64];
  if (!tc_dg_determines(ep, g, known, nk, -1, t->logical, t->nlogical)) {
    rc = -1;
    tc_err_set(err,
             "%s's allocated axes and the loop axes outside the copy do not determine every "
             "element", t->name);
  }
  for (int i = 0; i < nk && !rc; i++)
    if (tc_dg_determines(ep, g, known, nk, i, &known[i], 1)) {
      rc = -1;
      tc_err_set(err,
               "%s's %s axis %s is determined by the others, so the copy in allocation order would "
               "store elements outside its share (or twice)", t->name,
               i < pl->nkeep ? "outer loop" : "allocation", tc_axis_describe(g, known[i], b, sizeof b));
    }
  tc_epool_free(ep);
  if (rc) return rc;
  /* elements per lane */
  int64_t bytes = (int64_t)tc_dtype_size(t->dtype);
  int last = pl->tile[pl->ntile - 1];
  int64_t elast = g->axes[last].extent;
  if (n_req > 0) {
    if (n_req > pl->elems || pl->elems % n_req != 0)
      return tc_err_set(err, "%lld elements per lane do not divide %s's %lld shared elements",
                      (long long)n_req, t->name, (long long)pl->elems), -1;
    pl->n = n_req;
  } else {
    int64_t n = 16 / bytes > 1 ? 16 / bytes : 1;
    while (n > 1 && !(pl->elems % n == 0 && elast % n == 0 && tc_rs_contiguous(g, last, n, s.col)))
      n /= 2;
    pl->n = n;
  }
  pl->vectorize = pl->n > 1 && (pl->n & (pl->n - 1)) == 0 && pl->n * bytes <= 16 &&
                  elast % pl->n == 0 && tc_rs_contiguous(g, last, pl->n, s.col) &&
                  !tc_dg_is_padded(g, last);
  /* does the store go through the swizzle now?  Not when every loop axis of
   * the copy derives from the allocation axes (it already iterates them) */
  char *from = tc_dg_forward_marks(g, alloc, na);
  for (int i = t->ca_pos; i < t->nloop; i++) {
    tc_ptype p = g->axes[t->loop[i]].ptype;
    if (!tc_ptype_is_block(p) && !tc_ptype_is_device(p) && !from[t->loop[i]]) pl->needed = true;
  }
  free(from);
  return 0;
}

/* Rewrites t's loop domain as planned (the graph only grows). */
static int apply_swap(tc_tensor *t, const swap_plan *pl, tc_str *err) {
  tc_dgraph *g = &t->f->g;
  int lin = pl->tile[0];
  for (int i = 1; i < pl->ntile; i++)
    if (tc_dg_merge(g, lin, pl->tile[i], &lin, err)) return -1;
  int l1 = lin, v = -1, s, x;
  if (pl->n > 1 && tc_dg_split(g, lin, pl->n, 1, &l1, &v, err)) return -1;
  if (tc_dg_split(g, l1, pl->threads, 1, &s, &x, err)) return -1;
  g->axes[x].ptype = TC_TIDX;
  if (v >= 0) g->axes[v].ptype = pl->vectorize ? TC_VECTORIZE : TC_UNROLL;
  if (!t->alloc_set) { /* the layout was the loop domain: keep it */
    tc_tensor_set_alloc(t, t->loop, t->nloop);
  }
  int n = pl->nkeep + 2 + (v >= 0);
  int *loop = tc_xmalloc((size_t)n * sizeof(int)), k = 0;
  for (int i = 0; i < pl->nkeep; i++) loop[k++] = pl->keep[i];
  loop[k++] = s, loop[k++] = x;
  if (v >= 0) loop[k++] = v;
  free(t->loop);
  t->loop = loop, t->nloop = n;
  return 0;
}

bool tc_swizzle_swap_legal(const tc_tensor *t, tc_str *why) {
  swap_plan pl;
  if (plan_swap(t, 0, &pl, why)) return false;
  if (!pl.needed) {
    tc_err_set(why, "%s's copy already stores in allocation order", t->name);
    return false;
  }
  if (why) tc_str_clear(why);
  return true;
}

tc_status tc_swizzle_swap(tc_tensor *t, int n) {
  tc_fusion *f = t->f;
  tc_clear_error(f);
  tc_str d;
  tc_str_init(&d);
  tc_tensor_loop_str(t, &d);
  tc_status st = TC_OK;
  swap_plan pl;
  TC_STR_LOCAL(err);
  if (t->is_input)
    st = tc_fail(f, TC_ERR_SCHEDULE, "tc_swizzle_swap: %s is a fusion input, not a copy into shared memory (%s)",
                 t->name, tc_str_cstr(&d));
  else if (n < 0)
    st = tc_fail(f, TC_ERR_ARGUMENT, "tc_swizzle_swap: %s: elements per lane must be 0 (the default) or more, got %d (%s)",
                 t->name, n, tc_str_cstr(&d));
  else if (plan_swap(t, n, &pl, &err))
    st = tc_fail(f, TC_ERR_SCHEDULE, "tc_swizzle_swap: %s (%s)", tc_str_cstr(&err), tc_str_cstr(&d));
  else if (pl.needed && apply_swap(t, &pl, &err))
    st = tc_fail(f, TC_ERR_SCHEDULE, "tc_swizzle_swap: %s: %s (%s)", t->name, tc_str_cstr(&err), tc_str_cstr(&d));
  tc_str_free(&d);
  return st;
}

/* ---- automatic application (tc_compile, tc_target_info.swizzle_swap) ---- */

typedef struct swap_saved {
  tc_tensor *t;
  int *loop, nloop;
  int *alloc, nalloc;
  bool alloc_set;
} swap_saved;

struct tc_swap_undo {
  int naxes, nxf;
  swap_saved *saved;
  int n, cap;
};

bool tc_swizzle_swap_env_enabled(void) {
  const char *v = getenv("TILEC_SWIZZLE_SWAP");
  if (!v) return true;
  return !(strcmp(v, "0") == 0 || strcasecmp(v, "off") == 0 || strcasecmp(v, "no") == 0 ||
           strcasecmp(v, "false") == 0);
}

int tc_swizzle_swap_auto(tc_fusion *f, tc_swap_undo **undo) {
  tc_swap_undo *u = tc_xcalloc(1, sizeof *u);
  u->naxes = f->g.naxes, u->nxf = f->g.nxf;
  for (int i = 0; i < f->ntensors; i++) {
    tc_tensor *t = f->tensors[i];
    swap_plan pl;
    if (t->is_input || plan_swap(t, 0, &pl, NULL) || !pl.needed) continue;
    swap_saved sv = {t, NULL, t->nloop, NULL, t->nalloc, t->alloc_set};
    sv.loop = tc_xmalloc((size_t)t->nloop * sizeof(int));
    memcpy(sv.loop, t->loop, (size_t)t->nloop * sizeof(int));
    if (t->alloc_set) {
      sv.alloc = tc_xmalloc((size_t)t->nalloc * sizeof(int));
      memcpy(sv.alloc, t->alloc, (size_t)t->nalloc * sizeof(int));
    }
    TC_PUSH(u->saved, u->n, u->cap, sv);
    if (apply_swap(t, &pl, NULL)) break; /* cannot happen after a plan; undone below */
  }
  *undo = u;
  return u->n;
}

void tc_swizzle_swap_restore(tc_fusion *f, tc_swap_undo *u) {
  if (!u) return;
  for (int i = u->n - 1; i >= 0; i--) {
    swap_saved *sv = &u->saved[i];
    tc_tensor *t = sv->t;
    free(t->loop);
    t->loop = sv->loop, t->nloop = sv->nloop;
    free(t->alloc);
    t->alloc = sv->alloc, t->nalloc = sv->alloc_set ? sv->nalloc : 0;
    t->alloc_set = sv->alloc_set;
  }
  /* the axes and transforms the swaps added are referenced by nothing now */
  f->g.naxes = u->naxes, f->g.nxf = u->nxf;
  free(u->saved);
  free(u);
}
