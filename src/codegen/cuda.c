/* cuda.c - the CUDA C++ dialect (sm_80, sm_90a, sm_100a).  Shared memory
 * is one dynamic buffer carved at the byte offsets lowering assigned;
 * 16-bit floats are stored as unsigned short and converted with PTX cvt
 * instructions (round-to-nearest-even), so no CUDA header is needed and
 * NVRTC compiles the source as is. */
#include "cxx_common.h"

static const char cu_prelude[] =
    TC_CXX_PRELUDE_INT
    "TC_DEV float tc_f16_to_f32(unsigned short h) { float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f; }\n"
    "TC_DEV unsigned short tc_f32_to_f16(float f) { unsigned short h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h; }\n"
    "TC_DEV float tc_bf16_to_f32(unsigned short h) { return __uint_as_float(((unsigned)h) << 16); }\n"
    "TC_DEV unsigned short tc_f32_to_bf16(float f) { unsigned short h; asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h; }\n";

static void cu_alloc(tc_str *o, const tc_kalloc *a, int depth) {
  tc_str_indent(o, depth);
  if (a->t->mem == TC_MEM_TENSOR)
    tc_str_printf(o, "/* %s: tensor memory, %lld lanes x %lld columns (tc_tmem_%s) */\n", a->t->name,
                  (long long)a->lanes, (long long)a->columns, a->t->name);
  else
    tc_cxx_alloc_buffer(o, a, "");
}

/* ---- tensor memory: tcgen05 (sm_100a and later) ------------------------- */

static const char cu_tmem_prelude[] =
    "TC_DEV unsigned tc_smem_u32(const void *p) {\n"
    "  unsigned a;\n"
    "  asm(\"{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }\" : \"=r\"(a) : \"l\"((unsigned long long)p));\n"
    "  return a;\n"
    "}\n";

#define CU_TMEM_BARRIER                                                              \
  "asm volatile(\"tcgen05.fence::before_thread_sync;\" ::: \"memory\"); __syncthreads(); " \
  "asm volatile(\"tcgen05.fence::after_thread_sync;\" ::: \"memory\");"

static int tmem_count(const tc_kir *k) {
  int n = 0;
  for (int i = 0; i < k->nallocs; i++) n += k->allocs[i].t->mem == TC_MEM_TENSOR;
  return n;
}

/* Warp 0 allocates every tensor-memory buffer (tcgen05.alloc is
 * warp-collective and writes the address to shared memory), largest
 * first, then gives up the right to allocate more; after a barrier every
 * thread reads the addresses. */
static void cu_tmem_setup(tc_str *o, const tc_kir *k) {
  int n = tmem_count(k);
  tc_str_printf(o, "  __shared__ unsigned tc_tmem_slot[%d];\n", n);
  tc_str_printf(o, "  const int tc_tid = tidx + %lld * (tidy + %lld * tidz);\n", (long long)k->block[0],
                (long long)k->block[1]);
  tc_str_cat(o, "  if (tc_tid < 32) {  /* warp 0: tcgen05.alloc / dealloc are warp-collective */\n");
  for (int s = 0; s < n; s++)
    for (int i = 0; i < k->nallocs; i++) {
      const tc_kalloc *a = &k->allocs[i];
      if (a->t->mem != TC_MEM_TENSOR || a->tmem_slot != s) continue;
      tc_str_printf(o,
                    "    asm volatile(\"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%%0], "
                    "%lld;\" :: \"r\"(tc_smem_u32(&tc_tmem_slot[%d])) : \"memory\");\n",
                    (long long)a->columns, s);
    }
  tc_str_cat(o, "    asm volatile(\"tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\" ::: \"memory\");\n");
  tc_str_cat(o, "  }\n  " CU_TMEM_BARRIER "\n");
  for (int i = 0; i < k->nallocs; i++) {
    const tc_kalloc *a = &k->allocs[i];
    if (a->t->mem != TC_MEM_TENSOR) continue;
    tc_str_printf(o, "  const unsigned tc_tmem_%s = tc_tmem_slot[%d];  /* %lld columns */\n", a->t->name,
                  a->tmem_slot, (long long)a->columns);
  }
}

static void cu_tmem_teardown(tc_str *o, const tc_kir *k) {
  tc_str_cat(o, "  " CU_TMEM_BARRIER "\n");
  tc_str_cat(o, "  if (tc_tid < 32) {\n");
  for (int i = 0; i < k->nallocs; i++) {
    const tc_kalloc *a = &k->allocs[i];
    if (a->t->mem != TC_MEM_TENSOR) continue;
    tc_str_printf(o,
                  "    asm volatile(\"tcgen05.dealloc.cta_group::1.sync.aligned.b32 %%0, %lld;\" :: "
                  "\"r\"(tc_tmem_%s) : \"memory\");\n",
                  (long long)a->columns, a->t->name);
  }
  tc_str_cat(o, "  }\n");
}

/* One asm statement for the access and its wait, so that no use of the
 * loaded registers can be scheduled before tcgen05.wait::ld. */
static void cu_tmem_access(tc_str *o, const tc_kalloc *a, int is_load, int words, const char *addr,
                           int depth) {
  tc_str_indent(o, depth);
  tc_str_printf(o, "asm volatile(\"tcgen05.%s.sync.aligned.32x32b.x%d.b32 ", is_load ? "ld" : "st", words);
  int first = is_load ? 0 : 1; /* operand number of tc_tr[0] */
  if (!is_load) tc_str_cat(o, "[%0], ");
  tc_str_cat(o, "{");
  for (int i = 0; i < words; i++) tc_str_printf(o, "%s%%%d", i ? ", " : "", first + i);
  tc_str_cat(o, "}");
  if (is_load) tc_str_printf(o, ", [%%%d]", words);
  tc_str_printf(o, ";\\n\\ttcgen05.wait::%s.sync.aligned;\"\n", is_load ? "ld" : "st");
  tc_str_indent(o, depth + 2);
  tc_str op;
  tc_str_init(&op);
  tc_str_printf(&op, "\"r\"(tc_tmem_%s + (unsigned)(%s))", a->t->name, addr);
  const char *a_op = tc_str_cstr(&op);
  if (is_load) {
    tc_str_cat(o, ": ");
    for (int i = 0; i < words; i++) {
      if (i && i % 8 == 0) {
        tc_str_cat(o, "\n");
        tc_str_indent(o, depth + 2);
      }
      tc_str_printf(o, "%s\"=r\"(tc_tr[%d])", i ? ", " : "", i);
    }
    tc_str_printf(o, "\n");
    tc_str_indent(o, depth + 2);
    tc_str_printf(o, ": %s : \"memory\");\n", a_op);
  } else {
    tc_str_printf(o, ":: %s", a_op);
    for (int i = 0; i < words; i++) {
      if (i % 8 == 0) {
        tc_str_cat(o, "\n");
        tc_str_indent(o, depth + 2);
      }
      tc_str_printf(o, ", \"r\"(tc_tr[%d])", i);
    }
    tc_str_cat(o, "\n");
    tc_str_indent(o, depth + 2);
    tc_str_cat(o, ": \"memory\");\n");
  }
  tc_str_free(&op);
}

const tc_dialect tc_dialect_cuda = {
    .name = "CUDA C++",
    .prelude = cu_prelude,
    TC_CXX_DIALECT_COMMON,
    .index_defs =
        "  extern __shared__ __align__(1024) unsigned char tc_smem[];  /* 1024: bulk-copy swizzle patterns */\n" TC_CXX_INDEX_DEFS,
    .alloc = cu_alloc,
    .tmem_prelude = cu_tmem_prelude,
    .tmem_setup = cu_tmem_setup,
    .tmem_teardown = cu_tmem_teardown,
    .tmem_barrier = CU_TMEM_BARRIER,
    .shfl_xor = "__shfl_xor_sync(0xffffffffu, %s, %s)",
    .shfl_width = 32,
    .tmem_access = cu_tmem_access,
    .f32_bits = "__float_as_uint",
    .bits_f32 = "__uint_as_float",
    .ldsm_prelude = tc_cu_ldsm_prelude,
    .ldsm_access = tc_cu_ldsm_access,
    .tma_prelude = tc_cu_tma_prelude,
    .tma_params = tc_cu_tma_params,
    .tma_setup = tc_cu_tma_setup,
    .tma_copy = tc_cu_tma_copy,
    .tma_wait = tc_cu_tma_wait,
    /* mma.sync m16n8k16 (mma_cuda.c) */
    .mma_prelude = tc_cu_mma_prelude,
    .mma = tc_cu_mma,
    .cp_async_prelude = tc_cu_cp_async_prelude,
    .cp_async = tc_cu_cp_async,
    .cp_commit = tc_cu_cp_commit,
    .cp_wait = tc_cu_cp_wait,
    /* wgmma m64nNk16, sm_90a (wgmma_cuda.c) */
    .wgmma_prelude = tc_cu_wgmma_prelude,
    .wgmma_addr = tc_cu_wgmma_addr,
    .wgmma_begin = tc_cu_wgmma_begin,
    .wgmma_end = tc_cu_wgmma_end,
    .wgmma_end_wait1 = tc_cu_wgmma_end_wait1,
    .wgmma_drain = tc_cu_wgmma_drain,
    .wgmma_store_fence = tc_cu_wgmma_store_fence,
    .wgmma = tc_cu_wgmma,
    .wgmma_acc_fence = tc_cu_wgmma_acc_fence,
};
