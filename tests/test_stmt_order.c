/* test_stmt_order.c - the order of a kernel's statements: ops that share
 * a loop (through compute-at positions) must sit next to each other, in an
 * order where every op runs after its inputs, whatever order the outputs
 * were added in.  Each fusion here is compiled for every order of its
 * outputs, run on the OpenCL device (PoCL by default) and checked against
 * plain C written here: an intermediate read by two outputs next to an
 * independent output (the shape random fusions refused), the same with a
 * tiled, parallel schedule and the intermediate in shared memory, a
 * diamond, two independent chains interleaved in output order, and an
 * intermediate whose consumers run at different loop depths.  A schedule
 * that no statement order can run (an op outside a shared loop between
 * two ops inside it) is refused with a hint whose remedy is then applied. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tilec/tilec.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

/* ---- the fusions ----------------------------------------------------------- */

#define NY 9
#define NX 13
#define NE (NY * NX)

/* A fusion under construction: t[0], t[1] are the inputs (a, b); a case
 * adds its tensors after them and names its outputs in out[]. */
typedef struct fus {
  tc_fusion *f;
  tc_tensor *t[12];
  int nt;
  tc_tensor *out[4];
  int nout;
} fus;

static tc_tensor *add_t(fus *u, tc_tensor *t) {
  u->t[u->nt++] = t;
  return t;
}

typedef struct scase {
  const char *name;
  void (*build)(fus *u);          /* the ops; fills out[] */
  int (*schedule)(fus *u);        /* after the outputs are added; 1 when it worked */
  double (*want)(int o, double a, double b); /* output o where the inputs are a, b */
} scase;

static int inline_most(fus *u) {
  tc_status st = tc_inline_most(u->f);
  TC_CHECK(st == TC_OK, "tc_inline_most: %s", tc_fusion_error(u->f));
  return st == TC_OK;
}

/* T2 = exp(a); outputs neg(T2), set(b), abs(T2): T2 shares its loops with
 * the first and the third output, the second has loops of its own. */
static void build_two_readers(fus *u) {
  tc_fusion *f = u->f;
  tc_tensor *e = add_t(u, tc_unary(f, TC_EXP, u->t[0]));
  u->out[0] = add_t(u, tc_unary(f, TC_NEG, e));
  u->out[1] = add_t(u, tc_set(f, u->t[1]));
  u->out[2] = add_t(u, tc_unary(f, TC_ABS, e));
  u->nout = 3;
}

static double want_two_readers(int o, double a, double b) {
  float e = (float)exp(a);
  return o == 0 ? -e : o == 1 ? b : fabsf(e);
}

/* The same fusion tiled [Y, X] -> [Yo*Xo (BIDx), Yi, Xi (TIDx)], T2 in
 * shared memory (so a barrier separates its writes from its reads). */
static int tile_shared(fus *u) {
  tc_fusion *f = u->f;
  tc_tensor *ref = u->out[0];
  int from[2] = {1, 2}, to[2] = {2, 1};
  int ok = tc_split(ref, 0, 4, 1) == TC_OK && tc_split(ref, 2, 8, 1) == TC_OK &&
           tc_reorder(ref, 2, from, to) == TC_OK && tc_merge(ref, 0, 1) == TC_OK &&
           tc_parallelize(ref, 0, TC_BIDX) == TC_OK && tc_parallelize(ref, 2, TC_TIDX) == TC_OK &&
           tc_propagate_transforms(ref) == TC_OK && tc_parallelize_all_like(ref) == TC_OK &&
           tc_set_memory_type(u->t[2], TC_MEM_SHARED) == TC_OK && tc_inline_most(f) == TC_OK;
  TC_CHECK(ok, "tiled schedule: %s", tc_fusion_error(f));
  return ok;
}

/* T2 = exp(a), T3 = -T2, T4 = T2 + b, outputs T3 * T4, abs(b), T3: T3 is
 * an output that is also inlined into another output. */
static void build_diamond(fus *u) {
  tc_fusion *f = u->f;
  tc_tensor *e = add_t(u, tc_unary(f, TC_EXP, u->t[0]));
  tc_tensor *n = add_t(u, tc_unary(f, TC_NEG, e));
  tc_tensor *s = add_t(u, tc_binary(f, TC_ADD, e, u->t[1]));
  u->out[0] = add_t(u, tc_binary(f, TC_MUL, n, s));
  u->out[1] = add_t(u, tc_unary(f, TC_ABS, u->t[1]));
  u->out[2] = n;
  u->nout = 3;
}

static double want_diamond(int o, double a, double b) {
  float e = (float)exp(a);
  return o == 0 ? (double)(-e * (e + (float)b)) : o == 1 ? fabs(b) : -e;
}

/* Two chains that share nothing, each an intermediate read by two
 * outputs: exp(a) -> neg, abs and b + b -> neg, abs; listed interleaved. */
static void build_two_chains(fus *u) {
  tc_fusion *f = u->f;
  tc_tensor *e = add_t(u, tc_unary(f, TC_EXP, u->t[0]));
  tc_tensor *d = add_t(u, tc_binary(f, TC_ADD, u->t[1], u->t[1]));
  u->out[0] = add_t(u, tc_unary(f, TC_NEG, e));
  u->out[1] = add_t(u, tc_unary(f, TC_NEG, d));
  u->out[2] = add_t(u, tc_unary(f, TC_ABS, e));
  u->out[3] = add_t(u, tc_unary(f, TC_ABS, d));
  u->nout = 4;
}

static double want_two_chains(int o, double a, double b) {
  float e = (float)exp(a), d = (float)b + (float)b;
  return o == 0 ? -e : o == 1 ? -d : o == 2 ? fabsf(e) : fabsf(d);
}

/* T2 = exp(a) shared at depth 1 (the rows) by T3 = -T2, which is computed
 * at depth 3 inside T5 = T3 + b (its columns split by 4, which does not
 * divide 13), and by the output abs(T2) with loops [rows, columns] of its
 * own; set(b) is an independent output. */
static void build_depths(fus *u) {
  tc_fusion *f = u->f;
  tc_tensor *e = add_t(u, tc_unary(f, TC_EXP, u->t[0]));
  tc_tensor *n = add_t(u, tc_unary(f, TC_NEG, e));
  u->out[0] = add_t(u, tc_binary(f, TC_ADD, n, u->t[1]));
  u->out[1] = add_t(u, tc_set(f, u->t[1]));
  u->out[2] = add_t(u, tc_unary(f, TC_ABS, e));
  u->nout = 3;
}

static int schedule_depths(fus *u) {
  tc_fusion *f = u->f;
  tc_tensor *e = u->t[2], *n = u->t[3], *sum = u->out[0];
  int ok = tc_split(sum, 1, 4, 1) == TC_OK && tc_compute_at(n, sum, -1) == TC_OK &&
           tc_inline_at(e, 1) == TC_OK;
  TC_CHECK(ok, "depths schedule: %s", tc_fusion_error(f));
  TC_CHECK(tc_tensor_nloop(n) == 3 && tc_tensor_nloop(e) == 2, "loop ranks %d, %d",
           tc_tensor_nloop(n), tc_tensor_nloop(e));
  return ok;
}

static double want_depths(int o, double a, double b) {
  float e = (float)exp(a);
  return o == 0 ? (double)(-e + (float)b) : o == 1 ? b : fabsf(e);
}

/* ---- compile, run, compare ------------------------------------------------- */

static uint32_t rng = 0x2468aceu;

static float frand(float lo, float hi) {
  rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
  return lo + (hi - lo) * (float)(rng >> 8) / 16777216.0f;
}

/* A fresh fusion with inputs a, b of [NY, NX] f32. */
static fus new_fus(void) {
  fus u;
  memset(&u, 0, sizeof u);
  u.f = tc_fusion_new();
  int64_t shape[2] = {NY, NX};
  add_t(&u, tc_input(u.f, TC_F32, 2, shape));
  add_t(&u, tc_input(u.f, TC_F32, 2, shape));
  return u;
}

/* Builds c with its outputs added in the order perm, schedules, compiles,
 * runs on the default OpenCL device and compares every output with
 * c->want; returns 1 when all of it worked. */
static int run_case(const scase *c, const int *perm) {
  char what[96];
  int len = snprintf(what, sizeof what, "%s, outputs in the order", c->name);
  fus u = new_fus();
  c->build(&u);
  for (int i = 0; i < u.nout; i++)
    len += snprintf(what + len, sizeof what - (size_t)len, " %d", perm[i]);
  int ok = 1;
  for (int i = 0; i < u.nout && ok; i++) {
    tc_status st = tc_add_output(u.f, u.out[perm[i]]);
    TC_CHECK(st == TC_OK, "%s: tc_add_output: %s", what, tc_fusion_error(u.f));
    ok = st == TC_OK;
  }
  if (ok) ok = c->schedule(&u);
  tc_kernel *k = NULL;
  if (ok) {
    tc_compile_options o = {TC_TARGET_OPENCL, NULL, "stmt_order"};
    tc_status st = TC_OK;
    k = tc_compile(u.f, &o, &st);
    TC_CHECK(k && st == TC_OK, "%s: compile: %s: %s", what, tc_status_name(st), tc_fusion_error(u.f));
    ok = k != NULL;
  }
  float a[NE], b[NE], outs[4][NE];
  void *args[6] = {a, b};
  for (int i = 0; i < NE; i++) a[i] = frand(-2, 2), b[i] = frand(-2, 2);
  for (int i = 0; i < u.nout; i++) {
    for (int e = 0; e < NE; e++) outs[i][e] = NAN; /* an element nobody writes stays NaN */
    args[2 + i] = outs[i];
  }
  if (ok) {
    tc_status st = tc_kernel_run(k, args, NULL, NULL);
    TC_CHECK(st == TC_OK, "%s: run: %s: %s", what, tc_status_name(st), tc_kernel_error(k));
    ok = st == TC_OK;
  }
  for (int i = 0; i < u.nout && ok; i++) {
    int bad = 0;
    for (int e = 0; e < NE; e++) {
      double want = c->want(perm[i], a[e], b[e]), got = outs[i][e];
      /* exp on the device may differ from the host's by a few ulp; the
       * other ops are exact on what exp gave */
      if (!(fabs(got - want) <= 1e-5 * (fabs(want) + fabs(b[e])))) {
        if (bad++ < 3)
          TC_CHECK(0, "%s: output %d element %d: got %.9g, want %.9g\n%s", what, perm[i], e, got,
                   want, tc_kernel_source(k));
      }
    }
    ok = bad == 0;
  }
  tc_kernel_free(k);
  tc_fusion_free(u.f);
  return ok;
}

/* Runs c once for every order of its outputs (permutations in
 * lexicographic order). */
static void run_all_orders(const scase *c) {
  fus probe = new_fus();
  c->build(&probe);
  int n = probe.nout;
  tc_fusion_free(probe.f);
  int perm[4] = {0, 1, 2, 3}, runs = 0, good = 0;
  for (;;) {
    good += run_case(c, perm);
    runs++;
    int i = n - 2;
    while (i >= 0 && perm[i] > perm[i + 1]) i--;
    if (i < 0) break;
    int j = n - 1;
    while (perm[j] < perm[i]) j--;
    int t = perm[i];
    perm[i] = perm[j], perm[j] = t;
    for (int l = i + 1, r = n - 1; l < r; l++, r--) t = perm[l], perm[l] = perm[r], perm[r] = t;
  }
  int want_runs = n == 3 ? 6 : 24;
  TC_CHECK(runs == want_runs && good == runs, "%s: %d of %d output orders verified (want %d)",
           c->name, good, runs, want_runs);
}

static const scase two_readers = {"two readers", build_two_readers, inline_most, want_two_readers};
static const scase two_readers_tiled = {"two readers tiled", build_two_readers, tile_shared,
                                        want_two_readers};
static const scase diamond = {"diamond", build_diamond, inline_most, want_diamond};
static const scase two_chains = {"two chains", build_two_chains, inline_most, want_two_chains};
static const scase depths = {"depths", build_depths, schedule_depths, want_depths};

static void test_two_readers_and_independent_output(void) { run_all_orders(&two_readers); }
static void test_two_readers_tiled_shared(void) { run_all_orders(&two_readers_tiled); }
static void test_diamond(void) { run_all_orders(&diamond); }
static void test_two_chains_interleaved(void) { run_all_orders(&two_chains); }
static void test_consumers_at_different_depths(void) { run_all_orders(&depths); }

/* ---- a schedule no statement order can run --------------------------------- */

/* T2 = exp(a), T3 = -T2, T4 = abs(T3), T5 = T2 + T4 (the output).  T2
 * inlined at depth 1 puts T3 and T5 (its consumers) in one row loop; T4
 * keeps loops of its own, yet it reads T3, written in that loop, and T5
 * reads it in that loop: T4 would have to run both after and inside the
 * loop.  The hint names both remedies: compute T4 inside the loop, or
 * inline T2 less deep; either makes the fusion compile, and it verifies. */
static void outside_fusion(fus *u, int chain) {
  tc_fusion *f = u->f;
  tc_tensor *e = add_t(u, tc_unary(f, TC_EXP, u->t[0]));
  tc_tensor *n = add_t(u, tc_unary(f, TC_NEG, e));
  tc_tensor *m = add_t(u, tc_unary(f, TC_ABS, n));
  if (chain) m = add_t(u, tc_unary(f, TC_RELU, m));
  u->out[0] = add_t(u, tc_binary(f, TC_ADD, e, m));
  u->nout = 1;
  OK(f, tc_add_output(f, u->out[0]));
  OK(f, tc_inline_at(e, 1));
}

static void cycle_fusion(fus *u) { outside_fusion(u, 0); }

/* What both fusions compute: exp(a) + |-exp(a)| (relu of it for the
 * chain) = 2 exp(a). */
static double twice_exp(double a) {
  float e = (float)exp(a);
  return (double)(e + e);
}

/* Compiles a fusion already scheduled, runs it and checks 2 * exp(a). */
static void check_cycle_fixed(fus *u, const char *what) {
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "stmt_order_fixed"};
  tc_status st = TC_OK;
  tc_kernel *k = tc_compile(u->f, &o, &st);
  TC_CHECK(k && st == TC_OK, "%s: compile: %s", what, tc_fusion_error(u->f));
  if (!k) return;
  float a[NE], b[NE], out[NE];
  for (int i = 0; i < NE; i++) a[i] = frand(-2, 2), b[i] = 0, out[i] = NAN;
  void *args[3] = {a, b, out}; /* b: an input the fusion does not read */
  st = tc_kernel_run(k, args, NULL, NULL);
  TC_CHECK(st == TC_OK, "%s: run: %s", what, tc_kernel_error(k));
  for (int i = 0; i < NE && st == TC_OK; i++) {
    double want = twice_exp(a[i]);
    if (!(fabs(out[i] - want) <= 1e-5 * fabs(want))) {
      TC_CHECK(0, "%s: element %d: got %.9g, want %.9g\n%s", what, i, out[i], want,
               tc_kernel_source(k));
      break;
    }
  }
  tc_kernel_free(k);
}

/* Builds a fusion with make, checks that compiling it is refused as an
 * invalid schedule and copies the message into msg. */
static void refused(void (*make)(fus *u), char *msg, size_t cap) {
  fus u = new_fus();
  make(&u);
  tc_status st = TC_OK;
  tc_kernel *k = tc_compile(u.f, NULL, &st);
  snprintf(msg, cap, "%s", tc_fusion_error(u.f));
  TC_CHECK(k == NULL && st == TC_ERR_SCHEDULE, "compiled (status %s)", tc_status_name(st));
  tc_kernel_free(k);
  tc_fusion_free(u.f);
}

static void test_unorderable_schedule_refused(void) {
  char msg[1024];
  refused(cycle_fusion, msg, sizeof msg);
  /* names the op outside the loop, the two inside it that it sits
   * between, and remedies that apply */
  TC_CHECK(strstr(msg, "T4, outside that loop, reads T3 and is read by T5"), "%s", msg);
  TC_CHECK(strstr(msg, "tc_compute_at(T4, T5, 1)") && strstr(msg, "tc_inline_at(T2, 0)"), "%s", msg);
  TC_CHECK(strstr(msg, "inline the tensors in between") == NULL, "%s", msg);

  /* the remedy the hint names: T4 computed inside the row loop */
  fus u = new_fus();
  cycle_fusion(&u);
  OK(u.f, tc_compute_at(u.t[4], u.out[0], 1));
  check_cycle_fixed(&u, "T4 computed at 1 in T5");
  tc_fusion_free(u.f);

  /* the other remedy: T2 no longer joins T3 and T5 in one loop */
  u = new_fus();
  cycle_fusion(&u);
  OK(u.f, tc_inline_at(u.t[2], 0));
  check_cycle_fixed(&u, "T2 not inlined");
  tc_fusion_free(u.f);
}

/* The ops outside the loop form a chain: T2 = exp(a) inlined at 1 puts
 * T3 = -T2 and T6 = T2 + T5 in one loop; T4 = abs(T3) reads the loop and
 * T5 = relu(T4) feeds it.  The hint names T5 to compute inside the loop,
 * then its producers; computing both there works. */
static void chain_fusion(fus *u) { outside_fusion(u, 1); }

static void test_unorderable_chain_refused(void) {
  char msg[1024];
  refused(chain_fusion, msg, sizeof msg);
  /* T4 = abs(T3) reads T3 from the loop, T6 = T2 + T5 reads T5 = relu(T4) in it */
  TC_CHECK(strstr(msg, "T4, outside that loop, reads T3") && strstr(msg, "T6 reads T5"), "%s", msg);
  TC_CHECK(strstr(msg, "tc_compute_at(T5, T6, 1)") && strstr(msg, "tc_inline_at(T2, 0)"), "%s",
           msg);

  fus u = new_fus();
  chain_fusion(&u);
  OK(u.f, tc_compute_at(u.t[5], u.out[0], 1));
  OK(u.f, tc_compute_at(u.t[4], u.t[5], 1));
  check_cycle_fixed(&u, "T5 and T4 computed at 1");
  tc_fusion_free(u.f);
}

int main(void) {
  TC_RUN(test_two_readers_and_independent_output);
  TC_RUN(test_two_readers_tiled_shared);
  TC_RUN(test_diamond);
  TC_RUN(test_two_chains_interleaved);
  TC_RUN(test_consumers_at_different_depths);
  TC_RUN(test_unorderable_schedule_refused);
  TC_RUN(test_unorderable_chain_refused);
  TC_MAIN_END();
}
