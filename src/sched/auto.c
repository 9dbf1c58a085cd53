/* auto.c - tc_schedule_auto: a schedule for an unscheduled fusion, picked
 * from its ops and shapes, as nvFuser's pointwise / reduction /
 * normalization schedulers do.
 *
 * The fusion is classified by its reductions (all of them must reduce
 * the same logical axes):
 *   pointwise   no reduction: the axes of an output merged into one, split
 *               by 128 threads, the outer part on blocks;
 *   inner       the reduced axes are not a prefix of the axes (the last
 *               axis is reduced: softmax, RMSNorm): the reduced axes moved
 *               last and merged into a row of n elements, the others
 *               merged into rows on blocks; the row split by T threads
 *               (TIDx, T a power of two with n / T <= 16 up to 1024) and
 *               held in registers between the reductions and the
 *               normalization; rows of fewer than 128 / T threads share a
 *               block on TIDy;
 *   outer       the reduced axes are a prefix (column sums): the kept axes
 *               merged and split by 128 threads over blocks, each thread
 *               reducing its column serially;
 *   matmul      a fusion with a matmul: tc_schedule_matmul's tiles
 *               (matmul_sched.c).
 * Every tensor is then scheduled like the reference (the first reduction,
 * whose loop iterates the reduced extents, or the first output when there
 * is none) and bound alike; a
 * reduction that is an output reduces into registers first
 * (tc_cache_before) and is copied out.  The choice is recorded as the
 * fusion's schedule note (tc_fusion_schedule_note), which compiled
 * kernels print at their top. */
#include <stdio.h>
#include <string.h>

#include "sched.h"

static bool scheduled(const tc_tensor *t) {
  if (t->is_input) return false;
  if (t->nloop != t->nlogical || t->ca_pos || t->alloc_set) return true;
  for (int i = 0; i < t->nloop; i++)
    if (t->loop[i] != t->logical[i] || t->f->g.axes[t->loop[i]].ptype != TC_SERIAL) return true;
  return false;
}

/* Merges t's loop axes [from, to) into one at position from; returns the
 * loop rank after. */
static tc_status merge_range(tc_tensor *t, int from, int to) {
  for (int i = from + 1; i < to; i++) {
    tc_status st = tc_merge(t, from, from + 1);
    if (st) return st;
  }
  return TC_OK;
}

/* Whether some tensor of f broadcasts along logical axis a of ref (has
 * extent 1 there where ref has more): merging that axis with another
 * would mix an axis the tensor lacks into one it has. */
static bool broadcasts_along(const tc_fusion *f, const tc_tensor *ref, int a) {
  if (tc_logical_extent(ref, a) == 1 && !f->g.axes[ref->logical[a]].reduction) return false;
  for (int i = 0; i < f->ntensors; i++) {
    const tc_tensor *t = f->tensors[i];
    if (t->nlogical == ref->nlogical && tc_logical_extent(t, a) == 1 &&
        !f->g.axes[t->logical[a]].reduction)
      return true;
  }
  return false;
}

static int64_t pow2_at_least(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

/* The inner schedule of ref (rank r, reduced logical axes red[]): the
 * reduced axes last, rows [BIDx(rows / R), TIDy(R)], the row [S, TIDx(T)]. */
static tc_status schedule_inner(tc_tensor *ref, const bool *red, int r, char *note, size_t cap) {
  int order[16], n = 0, nk = 0;
  for (int i = 0; i < r; i++)
    if (!red[i]) order[n++] = i, nk++;
  for (int i = 0; i < r; i++)
    if (red[i]) order[n++] = i;
  int newpos[16];
  for (int i = 0; i < r; i++) newpos[i] = i;
  tc_status st = tc_reorder(ref, r, order, newpos);
  /* order[i] goes to i: tc_reorder moves old_pos[i] to new_pos[i]; the
   * kept axes merge into rows unless a tensor broadcasts along one of
   * them: then the last is the rows and the others serial loops */
  bool bc = false;
  for (int i = 0; i < nk; i++) bc |= broadcasts_along(ref->f, ref, order[i]);
  int lead = bc && nk > 1 ? nk - 1 : 0; /* serial leading axes */
  if (!st && nk > 1 && !bc) st = merge_range(ref, 0, nk);
  int kept = nk > 0 ? 1 : 0, row = lead, col = lead + kept; /* loop positions */
  if (!st) st = merge_range(ref, col, col + (r - nk));
  if (st) return st;
  int64_t rows = kept ? tc_tensor_loop_extent(ref, row) : 1, cols = tc_tensor_loop_extent(ref, col);
  int64_t t = pow2_at_least((cols + 15) / 16);
  if (t < 32) t = 32;
  if (t > 1024) t = 1024;
  int64_t per_block = kept && t < 128 ? 128 / t : 1;
  if (per_block > rows) per_block = pow2_at_least(rows);
  st = tc_split(ref, col, t, 1);
  if (!st && kept && per_block > 1) st = tc_split(ref, row, per_block, 1), col++;
  if (st) return st;
  if (kept) {
    st = tc_parallelize(ref, row, TC_BIDX);
    if (!st && per_block > 1) st = tc_parallelize(ref, row + 1, TC_TIDY);
  }
  if (!st) st = tc_parallelize(ref, col + 1, TC_TIDX);
  int64_t steps = (cols + t - 1) / t;
  snprintf(note, cap,
           "tc_schedule_auto: inner reduction (normalization): %lld rows of %lld, %lld row%s per "
           "block on %s, %lld threads per row on TIDx, %lld serial step%s each, the row held in "
           "registers (%lld per thread)%s",
           (long long)rows, (long long)cols, (long long)per_block, per_block > 1 ? "s" : "",
           per_block > 1 ? "BIDx x TIDy" : "BIDx", (long long)t, (long long)steps,
           steps > 1 ? "s" : "", (long long)steps,
           lead ? "; broadcasting along the leading axes: they are serial loops" : "");
  return st;
}

/* The outer schedule: [S(reduced), BIDx, TIDx(128)] over the kept axes. */
static tc_status schedule_outer(tc_tensor *ref, int nred, int r, char *note, size_t cap) {
  tc_status st = merge_range(ref, 0, nred);
  if (!st) st = merge_range(ref, 1, 1 + (r - nred));
  if (st) return st;
  int64_t n = tc_tensor_loop_extent(ref, 0), cols = tc_tensor_loop_extent(ref, 1);
  st = tc_split(ref, 1, 128, 1);
  if (!st) st = tc_parallelize(ref, 1, TC_BIDX);
  if (!st) st = tc_parallelize(ref, 2, TC_TIDX);
  snprintf(note, cap,
           "tc_schedule_auto: outer reduction: %lld columns on BIDx x TIDx(128), each thread "
           "reducing %lld elements serially", (long long)cols, (long long)n);
  return st;
}

/* [BIDx, TIDx(128)] over the merged axes; where a tensor broadcasts
 * along some axis, only the last axis over BIDx x TIDx and the leading
 * ones serial loops (so that no merge mixes a broadcast axis in). */
static tc_status schedule_pointwise(tc_tensor *ref, int r, char *note, size_t cap) {
  bool bc = false;
  for (int a = 0; a < r; a++) bc |= broadcasts_along(ref->f, ref, a);
  int first = bc ? r - 1 : 0;
  tc_status st = merge_range(ref, first, r);
  if (st) return st;
  int64_t n = tc_tensor_loop_extent(ref, first);
  st = tc_split(ref, first, 128, 1);
  if (!st) st = tc_parallelize(ref, first, TC_BIDX);
  if (!st) st = tc_parallelize(ref, first + 1, TC_TIDX);
  if (bc)
    snprintf(note, cap, "tc_schedule_auto: pointwise with broadcasting: the last axis (%lld) over "
             "BIDx x TIDx(128), the %d leading axes serial loops", (long long)n, r - 1);
  else
    snprintf(note, cap, "tc_schedule_auto: pointwise: %lld elements, 128 threads per block on TIDx",
             (long long)n);
  return st;
}

tc_status tc_schedule_auto(tc_fusion *f, tc_target target, const char *arch) {
  tc_clear_error(f);
  (void)target, (void)arch; /* the same shapes of schedule suit the three targets */
  if (f->noutputs == 0) return tc_fail(f, TC_ERR_ARGUMENT, "tc_schedule_auto: the fusion has no outputs");
  for (int i = 0; i < f->ntensors; i++)
    if (scheduled(f->tensors[i])) {
      snprintf(f->sched_note, sizeof f->sched_note,
               "tc_schedule_auto: kept the user's schedule (%s is scheduled)", f->tensors[i]->name);
      return TC_OK;
    }
  for (int i = 0; i < f->nops; i++)
    if (f->ops[i]->kind == TC_OP_MATMUL) return tc_schedule_matmul(f, target, arch, NULL);
  int r = f->outputs[0]->nlogical;
  bool red[16] = {false}, any = false;
  const tc_tensor *first_red = NULL;
  for (int i = 0; i < f->nops; i++) {
    const tc_tensor *t = f->ops[i]->out;
    if (t->nlogical != r)
      return tc_fail(f, TC_ERR_UNSUPPORTED,
                     "tc_schedule_auto: %s has rank %d but %s has rank %d; the automatic "
                     "schedules need one rank throughout", t->name, t->nlogical,
                     f->outputs[0]->name, r);
    if (f->ops[i]->kind != TC_OP_REDUCE) continue;
    bool these[16];
    for (int a = 0; a < r; a++) these[a] = f->g.axes[t->logical[a]].reduction;
    if (any && memcmp(these, red, sizeof these) != 0)
      return tc_fail(f, TC_ERR_UNSUPPORTED,
                     "tc_schedule_auto: %s and %s reduce different axes; the automatic schedules "
                     "take reductions over one set of axes: schedule this fusion by hand",
                     first_red->name, t->name);
    memcpy(red, these, sizeof red);
    any = true;
    if (!first_red) first_red = t;
  }
  /* the reference: an output that is not a reduction, else the first
   * reduction's registers; every reduction output reduces in registers */
  tc_tensor *ref = NULL;
  bool copied[64] = {false};
  for (int i = 0; i < f->noutputs && i < 64; i++) {
    tc_tensor *o = f->outputs[i];
    if (o->def->kind != TC_OP_REDUCE) continue;
    tc_tensor *acc = tc_cache_before(o);
    if (!acc) return TC_ERR_SCHEDULE;
    copied[i] = true;
    if (!ref) ref = acc;
  }
  /* the reference iterates the full extents: the first reduction (its
   * reduction axes at the reduced extent), else the first output */
  for (int i = 0; i < f->nops && any; i++)
    if (f->ops[i]->kind == TC_OP_REDUCE) {
      ref = f->ops[i]->out;
      break;
    }
  for (int i = 0; i < f->noutputs && i < 64 && !ref; i++)
    if (!copied[i]) ref = f->outputs[i];
  int nred = 0;
  bool prefix = true;
  for (int a = 0; a < r; a++) {
    nred += red[a];
    if (red[a] && a > 0 && !red[a - 1]) prefix = false;
  }
  prefix = prefix && nred > 0 && red[0] && nred < r;
  char note[sizeof f->sched_note];
  tc_status st = !any ? schedule_pointwise(ref, r, note, sizeof note)
                 : prefix ? schedule_outer(ref, nred, r, note, sizeof note)
                          : schedule_inner(ref, red, r, note, sizeof note);
  if (!st) st = tc_propagate_transforms(ref);
  if (!st) st = tc_parallelize_all_like(ref);
  if (st) return st;
  snprintf(f->sched_note, sizeof f->sched_note, "%s", note);
  return TC_OK;
}

const char *tc_fusion_schedule_note(const tc_fusion *f) { return f->sched_note; }
