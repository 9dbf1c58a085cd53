/* auto.c - tc_schedule_auto: a schedule for an unscheduled fusion, picked
 * from its ops and shapes, as nvFuser's pointwise / reduction /
 * normalization schedulers do.
 *
 * The fusion is classified by its reductions (all of them must reduce
 * the same logical axes):
 *   pointwise   no reduction: the axes of an output merged into one, split
 *               into 16-byte vectors where the count allows, by 128
 *               threads, the outer part on blocks;
 *   inner       the reduced axes are not a prefix of the axes (the last
 *               axis is reduced: softmax, RMSNorm): the reduced axes moved
 *               last and merged into a row of n elements, the others
 *               merged into rows on blocks; the row split as [steps,
 *               TIDx(T), V] (T a power of two with n / T <= 16 up to 1024;
 *               V adjacent elements per thread and step, 16 bytes of the
 *               widest dtype where the row is contiguous; 1 in the shared
 *               and grid forms) and
 *               held in registers between the reductions and the
 *               normalization while each intermediate's share is at most
 *               TC_PERSISTENT_BYTES per thread, else in shared memory
 *               where the target's holds it, else recomputed in each pass
 *               (two-pass: tc_recompute_intermediates, tc_inline_most);
 *               rows of fewer than 128 / T threads share a block on TIDy;
 *               one reduction to a value per row, of few long rows: a
 *               grid reduction (the row over blocks on BIDx);
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
#include "../target/target.h"

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

/* The threads of the inner schedule for a row of n elements: the power
 * of two that leaves at most 16 elements per thread, in [32, 1024]. */
static int64_t inner_threads(int64_t cols) {
  int64_t t = pow2_at_least((cols + 15) / 16);
  return t < 32 ? 32 : t > 1024 ? 1024 : t;
}

/* Bytes per thread that one intermediate of the row may hold in
 * registers in the persistent form: 64 (16 f32 registers; 32 values of a
 * 16-bit type).  Past that the inner schedule recomputes from global
 * memory instead (tc_recompute_intermediates). */
#define TC_PERSISTENT_BYTES 64

/* The widest dtype among f's intermediates that the persistent form holds
 * per thread (computed tensors that are neither reductions nor outputs);
 * 0 when there is none. */
static int64_t held_dtype_bytes(const tc_fusion *f) {
  int64_t b = 0;
  for (int i = 0; i < f->ntensors; i++) {
    const tc_tensor *t = f->tensors[i];
    if (t->is_input || t->is_output || !t->def || t->def->kind == TC_OP_REDUCE) continue;
    if ((int64_t)tc_dtype_size(t->dtype) > b) b = (int64_t)tc_dtype_size(t->dtype);
  }
  return b;
}

/* ref's reduced axes moved last and merged into one row axis, the kept
 * axes merged into one rows axis before it unless a tensor broadcasts
 * along one of them (then the last kept axis is the rows and the others
 * stay serial loops, *lead of them); *kept: whether there is a rows axis. */
static tc_status rows_then_row(tc_tensor *ref, const bool *red, int r, int *nlead, int *kept) {
  int order[16] = {0}, n = 0, nk = 0;
  for (int i = 0; i < r; i++)
    if (!red[i]) order[n++] = i, nk++;
  for (int i = 0; i < r; i++)
    if (red[i]) order[n++] = i;
  int newpos[16] = {0};
  for (int i = 0; i < r; i++) newpos[i] = i;
  tc_status st = tc_reorder(ref, r, order, newpos);
  /* order[i] goes to i: tc_reorder moves old_pos[i] to new_pos[i]; the
   * kept axes merge into rows unless a tensor broadcasts along one of
   * them: then the last is the rows and the others serial loops */
  bool bc = false;
  for (int i = 0; i < nk; i++) bc |= broadcasts_along(ref->f, ref, order[i]);
  int lead = bc && nk > 1 ? nk - 1 : 0; /* serial leading axes */
  if (!st && nk > 1 && !bc) st = merge_range(ref, 0, nk);
  *nlead = lead, *kept = nk > 0 ? 1 : 0;
  if (!st) st = merge_range(ref, lead + *kept, lead + *kept + (r - nk));
  return st;
}

/* The forms of the inner schedule: the row held in registers, in shared
 * memory, or recomputed in each pass (two-pass). */
typedef enum { FORM_REGISTERS, FORM_SHARED, FORM_TWO_PASS } inner_form;

/* Shared memory per block the shared form may fill: the target model's
 * (227 KiB on CUDA, 64 or 160 KiB of LDS on AMD), for OpenCL the 32 KiB
 * every OpenCL 1.2 device has. */
static int64_t smem_budget(tc_target target, const char *arch) {
  tc_target_info ti;
  if (tc_target_info_make(target, arch, &ti, NULL) != TC_OK || ti.smem_max <= 0) return 32768;
  return ti.smem_max;
}

/* Bytes per block of holding every intermediate of f whole (steps x T
 * elements each; its tc_inline_most then holds fewer), plus the block
 * reductions' scratch words. */
static int64_t shared_form_bytes(const tc_fusion *f, int64_t row_elems, int64_t threads) {
  int64_t b = 0;
  for (int i = 0; i < f->ntensors; i++) {
    const tc_tensor *t = f->tensors[i];
    if (t->is_input || t->is_output || !t->def || t->def->kind == TC_OP_REDUCE) continue;
    b = tc_sat_add(b, tc_sat_mul(row_elems, (int64_t)tc_dtype_size(t->dtype)));
  }
  return tc_sat_add(b, 2 * 4 * threads);
}

/* Puts every intermediate that tc_inline_most left holding more than one
 * element per thread (inlined short of its loop) in shared memory; *held:
 * how many. */
static tc_status hold_in_shared(tc_fusion *f, int *held) {
  *held = 0;
  for (int i = 0; i < f->ntensors; i++) {
    tc_tensor *t = f->tensors[i];
    if (t->is_input || t->is_output || !t->def || t->def->kind == TC_OP_REDUCE) continue;
    if (t->ca_pos >= t->nloop) continue;
    tc_status st = tc_set_memory_type(t, TC_MEM_SHARED);
    if (st) return st;
    ++*held;
  }
  return TC_OK;
}

/* The end of the inner schedule's note: where the row is between the
 * passes (held: the intermediates the form holds, -1 where not known). */
static void inner_form_text(tc_str *out, inner_form form, int held, int64_t steps, int64_t t,
                            bool sym_row) {
  if (held == 0)
    tc_str_cat(out, "nothing of the row held between passes (each reads its inputs)");
  else if (form == FORM_REGISTERS)
    tc_str_printf(out, "the row held in registers (%lld per thread)", (long long)steps);
  else if (form == FORM_SHARED)
    tc_str_printf(out, "the row held in shared memory (%lld per thread is more than %d bytes of "
                  "registers; %d buffer%s of %lld x %lld elements per block)", (long long)steps,
                  TC_PERSISTENT_BYTES, held, held > 1 ? "s" : "", (long long)steps, (long long)t);
  else if (sym_row)
    tc_str_cat(out, "two-pass: the row's length depends on a size variable and on-chip memory is "
               "sized at compile time, so each pass recomputes from global memory");
  else
    tc_str_printf(out, "two-pass: the row (%lld per thread) is more than %d bytes of registers, "
                  "so each pass recomputes from global memory", (long long)steps, TC_PERSISTENT_BYTES);
}

/* The inner schedule of ref (rank r, reduced logical axes red[]): the
 * reduced axes last, rows [BIDx(rows / R), TIDy(R)], the row [S, TIDx(T)]
 * (*steps, *threads); the caller adds the form to the note. */
static tc_status schedule_inner(tc_tensor *ref, const bool *red, int r, int64_t v, tc_str *note,
                                int64_t *steps_, int64_t *threads) {
  int lead, kept;
  tc_status st = rows_then_row(ref, red, r, &lead, &kept);
  if (st) return st;
  int row = lead, col = lead + kept; /* loop positions */
  int64_t rows = kept ? tc_tensor_loop_extent(ref, row) : 1, cols = tc_tensor_loop_extent(ref, col);
  int64_t t = inner_threads(cols);
  int64_t per_block = kept && t < 128 ? 128 / t : 1;
  if (per_block > rows) per_block = pow2_at_least(rows);
  /* the row [S, TIDx(T), V]: thread i reads V adjacent elements at
   * (s T + i) V, so the threads of a step read T V adjacent ones */
  int rows_axis = kept ? ref->loop[row] : -1; /* all the rows, before they are split */
  int row_axis = ref->loop[col];
  st = v > 1 ? tc_split(ref, col, v, 1) : TC_OK;
  if (!st) st = tc_split(ref, col, t, 1);
  if (!st && kept && per_block > 1) st = tc_split(ref, row, per_block, 1), col++;
  if (st) return st;
  if (kept) {
    st = tc_parallelize(ref, row, TC_BIDX);
    if (!st && per_block > 1) st = tc_parallelize(ref, row + 1, TC_TIDY);
  }
  if (!st) st = tc_parallelize(ref, col + 1, TC_TIDX);
  if (!st && v > 1) st = tc_parallelize(ref, col + 2, TC_VECTORIZE);
  int64_t steps = (cols / v + t - 1) / t;
  *steps_ = steps * v, *threads = t;
  /* over the size variables: their names and the bound */
  char rtext[200], ctext[200], stext[200];
  tc_sched_extent_text(ref->f, kept ? rows_axis : -1, rows, rtext, sizeof rtext);
  tc_sched_extent_text(ref->f, row_axis, cols, ctext, sizeof ctext);
  tc_sched_extent_text(ref->f, ref->loop[col], steps, stext, sizeof stext);
  tc_str_printf(note,
           "tc_schedule_auto: inner reduction (normalization): %s rows of %s, %lld row%s per "
           "block on %s, %lld threads per row on TIDx, %s serial step%s each%s",
           rtext, ctext, (long long)per_block, per_block > 1 ? "s" : "",
           per_block > 1 ? "BIDx x TIDy" : "BIDx", (long long)t, stext,
           steps > 1 ? "s" : "",
           lead ? "; broadcasting along the leading axes: they are serial loops" : "");
  return st;
}

/* A grid reduction (a reduction axis over blocks) is made for fewer rows
 * than this, each longer than this: one block of 1024 threads and 16
 * steps would take a row of more, and fewer rows than that leave most of
 * a GPU's multiprocessors idle. */
#define TC_GRID_MAX_ROWS 64
#define TC_GRID_MIN_COLS 16384
#define TC_GRID_THREADS 256

/* Whether f is one reduction (ref, reducing red[]) whose result, and all
 * computed from it, is one value per row (extent 1 along the reduced
 * axes): no op past the grid reduction needs the row again, so the last
 * block can finish it alone; and no tensor broadcasts along a kept axis
 * (which rows_then_row would leave a serial loop). */
static bool grid_reducible(const tc_fusion *f, const tc_tensor *ref, const bool *red, int r) {
  int nreds = 0;
  for (int i = 0; i < f->nops; i++) nreds += f->ops[i]->kind == TC_OP_REDUCE;
  if (nreds != 1 || tc_tensor_is_welford(ref)) return false; /* no grid merge of Welford states */
  for (int a = 0; a < r; a++)
    if (!red[a] && broadcasts_along(f, ref, a)) return false;
  for (int i = 0; i < f->ntensors; i++) {
    const tc_tensor *t = f->tensors[i];
    if (t == ref || !tc_tensor_reads(t, ref)) continue;
    for (int a = 0; a < r; a++)
      if (red[a] && tc_logical_extent(t, a) != 1) return false;
  }
  return true;
}

/* The grid schedule of ref, one reduction of few long rows: the rows
 * [BIDy(rows)], the row [rBIDx(G), rS(steps), rTIDx(256)], each block a
 * contiguous chunk of at most 256 x 16 elements (G at most 1024: longer
 * rows take more steps). */
static tc_status schedule_grid(tc_tensor *ref, const bool *red, int r, tc_str *note) {
  int lead, kept;
  tc_status st = rows_then_row(ref, red, r, &lead, &kept);
  if (st) return st;
  int col = lead + kept;
  int64_t rows = kept ? tc_tensor_loop_extent(ref, lead) : 1, cols = tc_tensor_loop_extent(ref, col);
  int64_t per_thread = (cols + TC_GRID_THREADS - 1) / TC_GRID_THREADS;
  int64_t blocks = (per_thread + 15) / 16;
  if (blocks > 1024) blocks = 1024;
  int64_t steps = (per_thread + blocks - 1) / blocks;
  st = tc_split(ref, col, TC_GRID_THREADS, 1);
  if (!st) st = tc_split(ref, col, steps, 1);
  if (!st && kept) st = tc_parallelize(ref, lead, TC_BIDY);
  if (!st) st = tc_parallelize(ref, col, TC_BIDX);
  if (!st) st = tc_parallelize(ref, col + 2, TC_TIDX);
  if (st) return st;
  blocks = tc_tensor_loop_extent(ref, col);
  tc_str_printf(note,
           "tc_schedule_auto: inner reduction as a grid reduction: %lld row%s of %lld, %lld blocks "
           "per row on BIDx%s, %d threads per block on TIDx, %lld serial step%s each; each block's "
           "partial goes to a global workspace and the last block of the row to finish combines "
           "them in a fixed order (deterministic); one element per thread and step (the grid form "
           "reads scalars)", (long long)rows, rows > 1 ? "s" : "", (long long)cols,
           (long long)blocks, kept ? " (rows on BIDy)" : "", TC_GRID_THREADS, (long long)steps,
           steps > 1 ? "s" : "");
  return TC_OK;
}

/* The outer schedule: [S(reduced), BIDx, TIDx(128)] over the kept axes. */
static tc_status schedule_outer(tc_tensor *ref, int nred, int r, tc_str *note) {
  tc_status st = merge_range(ref, 0, nred);
  if (!st) st = merge_range(ref, 1, 1 + (r - nred));
  if (st) return st;
  int64_t n = tc_tensor_loop_extent(ref, 0), cols = tc_tensor_loop_extent(ref, 1);
  st = tc_split(ref, 1, 128, 1);
  if (!st) st = tc_parallelize(ref, 1, TC_BIDX);
  if (!st) st = tc_parallelize(ref, 2, TC_TIDX);
  tc_str_printf(note,
           "tc_schedule_auto: outer reduction: %lld columns on BIDx x TIDx(128), each thread "
           "reducing %lld elements serially", (long long)cols, (long long)n);
  return st;
}

/* The vector width of the pointwise schedule over n merged elements:
 * the lanes of a 16-byte vector of the widest dtype among f's tensors
 * (4 for f32 / i32, 8 for 16-bit types, 16 for i8), halved until it
 * divides n (a vector from a split that does not divide would run past
 * the end), 1 when nothing does or when an op reads its operand
 * elsewhere than at the element it writes (permute, gather): there the
 * vector's elements are not contiguous in the operand.  Global buffers
 * are allocated aligned (OpenCL, CUDA and HIP allocations: 128 bytes or
 * more) and each thread starts at a multiple of the width, so every
 * vector of every tensor starts at a multiple of its own bytes.  *why
 * gets the reason when it is 1 (n_what when no width divides n).  With
 * global_only the widest dtype is of the tensors in global memory: a
 * register tensor's vector is an unrolled loop of up to 16 lanes of any
 * dtype (tc_check_vector_width). */
static int64_t pointwise_vector(const tc_fusion *f, int64_t n, bool global_only, const char *n_what,
                                const char **why) {
  int64_t widest = 1;
  for (int i = 0; i < f->ntensors; i++) {
    const tc_tensor *t = f->tensors[i];
    if (t->is_scalar) continue;
    if (global_only && t->mem != TC_MEM_GLOBAL) continue; /* registers: any 16 lanes */
    if (t->def && (t->def->kind == TC_OP_PERMUTE || t->def->kind == TC_OP_GATHER)) {
      *why = "a permute or gather reads its operand out of order";
      return 1;
    }
    if ((int64_t)tc_dtype_size(t->dtype) > widest) widest = (int64_t)tc_dtype_size(t->dtype);
  }
  int64_t v = 16 / widest;
  while (v > 1 && n % v != 0) v /= 2;
  if (v == 1) *why = n_what;
  return v;
}

/* The vector width of the inner schedule's row of cols elements
 * (red[]: the reduced logical axes of ref, rank r): pointwise_vector's
 * 16 bytes of the widest dtype, halved until it divides cols; 1 (and
 * *why) where a vector's lanes would not be adjacent in global memory:
 * the reduced axes are not the last ones (the row is strided), an input
 * broadcasts along the row (it reads one element for all lanes), or a
 * permute or gather reads out of order.  The persistent form's share of
 * the row per thread stays at most 16 elements: T >= cols / 16 and V
 * divides 16, so V ceil(cols / (V T)) <= 16 too.  The bytes are of the
 * tensors in global memory (8 lanes of f16 / bf16 input and output; 4 of
 * a row sum's f32 output); f32 intermediates hold V lanes in registers. */
static int64_t inner_vector(const tc_fusion *f, const tc_tensor *ref, const bool *red, int r,
                            int64_t cols, const char *cols_what, const char **why) {
  for (int a = 0; a + 1 < r; a++)
    if (red[a] && !red[a + 1]) {
      *why = "the reduced axes are not the last ones, so the row is strided in memory";
      return 1;
    }
  for (int i = 0; i < f->ntensors; i++) {
    const tc_tensor *t = f->tensors[i];
    if (t->def || t->is_scalar || t->nlogical != r) continue; /* (other ranks meet the row
                                                                  through a tc_broadcast) */
    for (int a = 0; a < r; a++)
      if (red[a] && tc_logical_extent(t, a) == 1 && tc_logical_extent(ref, a) > 1) {
        *why = "an input broadcasts along the row";
        return 1;
      }
  }
  return pointwise_vector(f, cols, true, cols_what, why);
}

/* [BIDx, TIDx(128), V] over the merged axes, V the vector width
 * (pointwise_vector; the V axis vectorized, absent when 1); where a
 * tensor broadcasts along some axis, only the last axis over BIDx x TIDx
 * (no vector: the broadcast operand's axis of extent 1 cannot split) and
 * the leading ones serial loops (so that no merge mixes a broadcast axis
 * in). */
static tc_status schedule_pointwise(tc_tensor *ref, int r, tc_str *note) {
  bool bc = false;
  for (int a = 0; a < r; a++) bc |= broadcasts_along(ref->f, ref, a);
  int first = bc ? r - 1 : 0;
  tc_status st = merge_range(ref, first, r);
  if (st) return st;
  int64_t n = tc_tensor_loop_extent(ref, first);
  const char *why = "";
  /* over a size variable: the vector must divide every count it takes */
  int ax = ref->loop[first];
  int64_t count = tc_dg_is_symbolic(&ref->f->g, ax) ? tc_dg_sym_divisor(&ref->f->g, ax) : n;
  int64_t v = bc ? 1 : pointwise_vector(ref->f, count, false, "no vector width divides the element count", &why);
  if (v > 1) st = tc_split(ref, first, v, 1);
  if (!st) st = tc_split(ref, first, 128, 1);
  if (!st) st = tc_parallelize(ref, first, TC_BIDX);
  if (!st) st = tc_parallelize(ref, first + 1, TC_TIDX);
  if (!st && v > 1) st = tc_parallelize(ref, first + 2, TC_VECTORIZE);
  if (bc)
    tc_str_printf(note, "tc_schedule_auto: pointwise with broadcasting: the last axis (%lld) over "
             "BIDx x TIDx(128), the %d leading axes serial loops, no vectors", (long long)n, r - 1);
  else if (v > 1)
    tc_str_printf(note, "tc_schedule_auto: pointwise: %lld elements, 128 threads per block on TIDx, "
             "vectors of %lld elements (16 bytes of the widest dtype) per thread", (long long)n, (long long)v);
  else
    tc_str_printf(note, "tc_schedule_auto: pointwise: %lld elements, 128 threads per block on TIDx, "
             "one element per thread (%s)", (long long)n, why);
  return st;
}

tc_status tc_schedule_auto(tc_fusion *f, tc_target target, const char *arch) {
  tc_clear_error(f);
  /* the same shapes of schedule suit the three targets; the target's
   * shared memory decides whether a long row is held there */
  if (f->noutputs == 0) return tc_fail(f, TC_ERR_ARGUMENT, "tc_schedule_auto: the fusion has no outputs");
  tc_fusion_mark_symbolic(f);
  for (int i = 0; i < f->ntensors; i++)
    if (scheduled(f->tensors[i])) {
      tc_set_schedule_note(f,
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
  tc_fusion_mark_symbolic(f); /* (the caches' axes) */
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
  /* the inner schedule holds each intermediate's share of the row in
   * registers while it fits TC_PERSISTENT_BYTES per thread; past that
   * every intermediate is copied per consumer and inlined (two-pass) */
  inner_form form = FORM_REGISTERS;
  bool grid = false;
  int64_t v = 1;
  const char *vwhy = "";
  bool sym_row = false; /* the row's length depends on a size variable */
  if (any && !prefix) {
    int64_t cols = 1, rows = 1, known = 1; /* (known: what every row length is a multiple of) */
    for (int a = 0; a < r; a++) {
      int ax = ref->logical[a];
      *(red[a] ? &cols : &rows) *= f->g.axes[ax].extent;
      if (!red[a]) continue;
      bool sym = tc_dg_is_symbolic(&f->g, ax);
      sym_row |= sym;
      known *= sym ? tc_dg_sym_divisor(&f->g, ax) : f->g.axes[ax].extent;
    }
    /* over a size variable (cols its bound): the vector divides every
     * length the divisor allows, the row is read from global memory in
     * each pass (nothing of an unknown length is held on chip), and the
     * blocks of a grid reduction would be a number fixed at compile time */
    v = inner_vector(f, ref, red, r, sym_row ? known : cols,
                     sym_row ? "no vector width divides every row length the size variable's divisor allows"
                             : "no vector width divides the row length", &vwhy);
    int64_t t = inner_threads(cols), steps = (cols + t - 1) / t;
    if (steps * held_dtype_bytes(f) > TC_PERSISTENT_BYTES || (sym_row && held_dtype_bytes(f)))
      form = !sym_row && shared_form_bytes(f, steps * t, t) <= smem_budget(target, arch) ? FORM_SHARED
                                                                                         : FORM_TWO_PASS;
    grid = !sym_row && rows < TC_GRID_MAX_ROWS && cols > TC_GRID_MIN_COLS && grid_reducible(f, ref, red, r);
    if (form == FORM_TWO_PASS && !grid) tc_recompute_intermediates(f);
    /* the shared form keeps every intermediate short of its loop in
     * shared memory, a vector's V too; the grid form's chunks are scalar */
    if (v > 1 && (grid || form == FORM_SHARED)) {
      vwhy = "the shared form reads scalars";
      v = 1;
    }
  }
  tc_str note;
  tc_str_init(&note);
  int64_t steps = 0, threads = 0;
  bool inner = any && !prefix && !grid;
  tc_status st = !any ? schedule_pointwise(ref, r, &note)
                 : prefix ? schedule_outer(ref, nred, r, &note)
                 : grid ? schedule_grid(ref, red, r, &note)
                        : schedule_inner(ref, red, r, v, &note, &steps, &threads);
  int held = inner && form == FORM_REGISTERS && held_dtype_bytes(f) == 0 ? 0 : -1;
  if (!st) st = tc_propagate_transforms(ref);
  if (!st) st = tc_parallelize_all_like(ref);
  /* (the outer schedule reads each element once: its intermediates are
   * computed inside the reduction loop, not held over all the rows) */
  if (!st && ((inner && form != FORM_REGISTERS) || (any && prefix))) st = tc_inline_most(f);
  if (!st && inner && form == FORM_SHARED) st = hold_in_shared(f, &held);
  if (!st && inner) {
    tc_str_cat(&note, ", ");
    inner_form_text(&note, form, held, steps, threads, sym_row);
    if (v > 1)
      tc_str_printf(&note, "; vectors of %lld elements (16 bytes of the widest dtype in global memory)",
                    (long long)v);
    else
      tc_str_printf(&note, "; one element per thread and step (%s)", vwhy);
  }
  if (!st) tc_set_schedule_note(f, "%s", tc_str_cstr(&note));
  tc_str_free(&note);
  return st;
}

const char *tc_fusion_schedule_note(const tc_fusion *f) { return f->sched_note ? f->sched_note : ""; }
