/* cmd_layout.c - `tilec layout`: a tile's memory layout in numbers and as a
 * picture, and CuTe's layout algebra on the command line.
 *
 *   tilec layout LAYOUT [options]       summary (size, cosize, bijective,
 *                                       bank conflicts), --svg, --json
 *   tilec layout --tv RxC TVLAYOUT      who owns each element of a fragment
 *   tilec layout --eval EXPR            evaluate a layout-algebra expression
 *                                       (cute_expr.c: the algebra, L(coord))
 *
 * Exit 0 on success, 1 when the layout is well formed but not defined (a
 * composition whose divisibility conditions fail, a transform the axis
 * graph refuses) or the SVG cannot be written, 2 on usage errors, including
 * malformed layouts (the message gives the column). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/base/base.h"
#include "../src/layout/cute.h"
#include "../src/layout/picture.h"
#include "cli.h"

static void layout_usage(FILE *out) {
  fputs("usage: tilec layout LAYOUT [--elem-bytes E] [--access row|col] [--vec V] [--warp K]\n"
        "                           [--svg FILE] [--view logical|address] [--grid] [--json]\n"
        "       tilec layout --tv RxC TVLAYOUT [--svg FILE] [--json]\n"
        "       tilec layout --eval EXPR [--json]\n"
        "\n"
        "prints a 2-D tile's layout: size, cosize, whether it is a bijection, and the\n"
        "shared-memory bank conflicts of a warp's accesses; draws it as SVG.\n"
        "\n"
        "LAYOUT (quote it; several arguments are joined with spaces):\n"
        "  (8,64):(64,1)                          CuTe shape:stride; mode 0 = rows\n"
        "  Swizzle<3,3,3> o (8,64):(64,1)         a swizzled CuTe layout\n"
        "  [8,64] split(1,8) xor(0,1) merge(1,2)  tilec transforms on the logical\n"
        "                                         dimensions; the final axes give the\n"
        "                                         allocation order (row-major)\n"
        "  transforms: split(a,f) split_outer(a,f) merge(a,b) xor(x,y)\n"
        "              swizzle(a,B,M,S) reorder(p0,p1,..) pad(a,left,right)\n"
        "\n"
        "  --elem-bytes E         element size: 1, 2, 4 (default), 8 or 16 bytes\n"
        "  --access row|col       a warp's 32 threads take consecutive vectors row by row\n"
        "                         (default) or column by column\n"
        "  --vec V                elements per thread, along a row (default 1)\n"
        "  --warp K               the access outlined in the SVG (default: the worst)\n"
        "  --svg FILE             write an SVG picture (cells coloured by bank)\n"
        "  --view logical|address SVG grid of the tile (default) or of memory in\n"
        "                         128-byte rows\n"
        "  --grid                 also print the offsets as a table\n"
        "  --json                 print a JSON object instead of text\n"
        "  --tv RxC               TVLAYOUT maps (thread, value) to an element of an RxC\n"
        "                         tile in column-major order (CuTe's mma/ldmatrix form)\n"
        "  --eval EXPR            evaluate CuTe layout algebra, e.g.\n"
        "                         'complement((2,2):(1,6), 24)' -> (3,2):(2,12); functions:\n"
        "                         coalesce filter composition complement left_inverse\n"
        "                         right_inverse, logical_divide zipped_divide tiled_divide\n"
        "                         flat_divide (A, TILER), logical_product zipped_product\n"
        "                         tiled_product flat_product (A, TILER), blocked_product\n"
        "                         raked_product (A, B), make_layout append prepend,\n"
        "                         size cosize rank depth, A o B, Swizzle<B,M,S>(x);\n"
        "                         L(i) a 1-D index, L(1,5) one index per mode, L(1,(1,2))\n"
        "                         a natural coordinate; TILER: a layout or <B0,B1,..>\n"
        "                         written (B0, B1, ..)\n"
        "\n"
        "exit status: 0 ok; 1 not defined (e.g. a composition's divisibility fails) or\n"
        "the SVG cannot be written; 2 usage error or malformed layout (with its column)\n"
        "see docs/layout.md\n",
        out);
}

static void json_str(tc_str *o, const char *s) {
  tc_str_cat(o, "\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') tc_str_printf(o, "\\%c", c);
    else if (c == '\n') tc_str_cat(o, "\\n");
    else if (c < 0x20) tc_str_printf(o, "\\u%04x", c);
    else tc_str_catn(o, s, 1);
  }
  tc_str_cat(o, "\"");
}

/* Reports a parse or evaluation error; returns the exit status. */
static int report_error(const char *text, const tc_cute_error *e, int json) {
  tc_str s;
  tc_str_init(&s);
  tc_cute_error_format(&s, text, e);
  fprintf(stderr, "tilec layout: %s\n", tc_str_cstr(&s));
  if (json) {
    tc_str j;
    tc_str_init(&j);
    tc_str_cat(&j, "{\"error\": ");
    json_str(&j, e->msg);
    tc_str_printf(&j, ", \"column\": %d, \"input\": ", e->column);
    json_str(&j, text);
    tc_str_printf(&j, ", \"kind\": \"%s\"}\n", e->code == TC_CUTE_EUNDEF ? "undefined" : "syntax");
    fputs(tc_str_cstr(&j), stdout);
    tc_str_free(&j);
  }
  tc_str_free(&s);
  return e->code == TC_CUTE_EUNDEF ? CLI_FAIL : CLI_USAGE;
}

static int do_eval(const char *expr, int json) {
  tc_cute_value v;
  tc_cute_error e;
  if (tc_cute_eval_expr(expr, &v, &e)) return report_error(expr, &e, json);
  tc_str s;
  tc_str_init(&s);
  tc_cute_value_print(&s, &v);
  if (!json) {
    printf("%s\n", tc_str_cstr(&s));
  } else {
    tc_str j;
    tc_str_init(&j);
    tc_str_cat(&j, "{\"expr\": ");
    json_str(&j, expr);
    tc_str_printf(&j, ", \"kind\": \"%s\", \"result\": ", tc_cute_kind_name(v.kind));
    json_str(&j, tc_str_cstr(&s));
    if (v.kind == TC_CV_INT) tc_str_printf(&j, ", \"value\": %lld", (long long)v.i);
    if ((v.kind == TC_CV_LAYOUT || v.kind == TC_CV_SWLAYOUT) && !v.l.tiler) {
      tc_str_printf(&j, ", \"size\": %lld, \"rank\": %d, \"depth\": %d", (long long)tc_cute_size(&v.l),
                    tc_cute_rank(&v.l), tc_cute_depth(&v.l));
      if (v.kind == TC_CV_LAYOUT) tc_str_printf(&j, ", \"cosize\": %lld", (long long)tc_cute_cosize(&v.l));
    }
    tc_str_cat(&j, "}\n");
    fputs(tc_str_cstr(&j), stdout);
    tc_str_free(&j);
  }
  tc_str_free(&s);
  tc_cute_value_free(&v);
  return CLI_OK;
}

static void print_grid(const tc_tile *t) {
  int w = 1;
  for (int64_t v = t->cosize; v >= 10; v /= 10) w++;
  for (int64_t r = 0; r < t->rows; r++) {
    for (int64_t c = 0; c < t->cols; c++)
      printf("%s%*lld", c ? " " : "", w, (long long)t->off[r * t->cols + c]);
    printf("\n");
  }
}

static void why_not_bijective(const tc_tile *t, char *buf, size_t cap) {
  if (t->bijective) snprintf(buf, cap, "yes");
  else if (!t->injective) snprintf(buf, cap, "no (not injective: elements share offsets)");
  else snprintf(buf, cap, "no (injective, but size %lld < cosize %lld: gaps)", (long long)t->size, (long long)t->cosize);
}

static int write_file(const char *path, const char *data) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "tilec layout: cannot write %s: %s\n", path, strerror(errno));
    return CLI_FAIL;
  }
  size_t n = strlen(data);
  int bad = fwrite(data, 1, n, f) != n;
  bad |= fclose(f) != 0;
  if (bad) {
    fprintf(stderr, "tilec layout: cannot write %s\n", path);
    return CLI_FAIL;
  }
  return CLI_OK;
}

static int parse_pos_int(const char *s, const char *opt, long long lo, long long hi, long long *v) {
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (errno || end == s || *end || x < lo || x > hi)
    return cli_usage_error("%s needs an integer from %lld to %lld, got '%s'", opt, lo, hi, s);
  *v = x;
  return CLI_OK;
}

/* What the command line asked for. */
typedef struct {
  const char *eval, *svg, *tvdim;
  long long elem, vec, warp;
  int json, grid, view_addr, access_col, help;
  tc_str text; /* the LAYOUT: the positional arguments joined with spaces */
} layout_opts;

/* Parses one option that takes a value (v); returns CLI_OK or CLI_USAGE. */
static int parse_valued_option(const char *name, const char *v, layout_opts *op) {
  if (!strcmp(name, "--eval")) {
    op->eval = v;
  } else if (!strcmp(name, "--svg")) {
    op->svg = v;
  } else if (!strcmp(name, "--tv")) {
    op->tvdim = v;
  } else if (!strcmp(name, "--elem-bytes")) {
    if (parse_pos_int(v, "--elem-bytes", 1, 16, &op->elem)) return CLI_USAGE;
    long long e = op->elem;
    if (e != 1 && e != 2 && e != 4 && e != 8 && e != 16)
      return cli_usage_error("--elem-bytes must be 1, 2, 4, 8 or 16, got %lld", e);
  } else if (!strcmp(name, "--vec")) {
    return parse_pos_int(v, "--vec", 1, 64, &op->vec);
  } else if (!strcmp(name, "--warp")) {
    return parse_pos_int(v, "--warp", 0, 1LL << 40, &op->warp);
  } else if (!strcmp(name, "--access")) {
    if (strcmp(v, "row") && strcmp(v, "col") && strcmp(v, "column"))
      return cli_usage_error("--access must be row or col, got '%s'", v);
    op->access_col = strcmp(v, "row") != 0;
  } else if (!strcmp(name, "--view")) {
    if (strcmp(v, "logical") && strcmp(v, "address"))
      return cli_usage_error("--view must be logical or address, got '%s'", v);
    op->view_addr = strcmp(v, "address") == 0;
  }
  return CLI_OK;
}

/* Fills *op from argv; stops at --help (op->help set). Returns CLI_OK or
 * CLI_USAGE (after printing the error); op->text is to be freed either way. */
static int parse_layout_args(int argc, char **argv, layout_opts *op) {
  static const char *const valued[] = {"--eval", "--svg",  "--tv",     "--elem-bytes",
                                       "--vec",  "--warp", "--access", "--view"};
  memset(op, 0, sizeof *op);
  op->elem = 4;
  op->vec = 1;
  op->warp = -1;
  tc_str_init(&op->text);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (cli_is_help(a)) {
      op->help = 1;
      return CLI_OK;
    }
    int matched = 0;
    for (size_t k = 0; k < sizeof valued / sizeof *valued && !matched; k++) {
      int err;
      const char *v = cli_option_value(argc, argv, &i, valued[k], &err);
      if (!v && !err) continue;
      if (err || parse_valued_option(valued[k], v, op)) return CLI_USAGE;
      matched = 1;
    }
    if (matched) continue;
    if (!strcmp(a, "--json")) {
      op->json = 1;
    } else if (!strcmp(a, "--grid")) {
      op->grid = 1;
    } else if (a[0] == '-' && a[1] == '-') {
      return cli_usage_error("unknown option '%s' for `tilec layout`", a);
    } else {
      if (op->text.len) tc_str_cat(&op->text, " ");
      tc_str_cat(&op->text, a);
    }
  }
  return CLI_OK;
}

/* Parses the LAYOUT, as a thread-value layout of an RxC tile under --tv.
 * Returns CLI_OK, or the exit status after reporting the error. */
static int parse_tile(const layout_opts *op, tc_tile *t) {
  const char *src = tc_str_cstr(&op->text);
  tc_cute_error e;
  int rc;
  if (op->tvdim) {
    long long r = 0, c = 0;
    char x = 0, extra = 0;
    if (sscanf(op->tvdim, "%lld%c%lld%c", &r, &x, &c, &extra) != 3 || (x != 'x' && x != 'X') || r < 1 || c < 1)
      return cli_usage_error("--tv needs ROWSxCOLS, e.g. 16x16, got '%s'", op->tvdim);
    rc = tc_tile_parse_tv(src, r, c, t, &e);
  } else {
    rc = tc_tile_parse(src, t, &e);
  }
  return rc ? report_error(src, &e, op->json) : CLI_OK;
}

/* A parsed tile and a warp's accesses to it: what every output shows. */
typedef struct {
  const char *src;
  tc_tile t;
  tc_bank_opts o;
  tc_bank_report br; /* zero for a thread-value layout (no banks) */
  bool banks;
  long long warp; /* the access outlined in the SVG */
} layout_view;

/* Runs the bank analysis of a memory layout; returns CLI_OK or CLI_USAGE. */
static int analyze_banks(const layout_opts *op, layout_view *lv) {
  lv->o = (tc_bank_opts){(int)op->elem, op->access_col ? TC_ACCESS_COL : TC_ACCESS_ROW, (int)op->vec};
  memset(&lv->br, 0, sizeof lv->br);
  lv->banks = lv->t.form != TC_TILE_TV;
  lv->warp = op->warp;
  TC_STR_LOCAL(msg);
  if (lv->banks && tc_bank_analyze(&lv->t, &lv->o, &lv->br, &msg)) return cli_usage_error("%s", tc_str_cstr(&msg));
  if (lv->banks && lv->warp >= lv->br.accesses)
    return cli_usage_error("--warp %lld: the tile has accesses 0..%lld", lv->warp, (long long)lv->br.accesses - 1);
  if (lv->warp < 0) lv->warp = lv->br.worst;
  return CLI_OK;
}

static void print_json(const layout_opts *op, const layout_view *lv) {
  const tc_tile *t = &lv->t;
  const tc_bank_report *br = &lv->br;
  const char *form = t->form == TC_TILE_CUTE ? "cute" : t->form == TC_TILE_XFORM ? "transforms" : "tv";
  tc_str j;
  tc_str_init(&j);
  tc_str_cat(&j, "{\"layout\": ");
  json_str(&j, lv->src);
  tc_str_printf(&j, ", \"notation\": \"%s\"", form);
  if (t->canon) tc_str_cat(&j, ", \"canonical\": "), json_str(&j, t->canon);
  if (t->expr) {
    tc_str_cat(&j, ", \"offset_expr\": "), json_str(&j, t->expr);
    tc_str_cat(&j, ", \"indices\": "), json_str(&j, t->vars);
  }
  tc_str_printf(&j, ", \"rows\": %lld, \"cols\": %lld, \"size\": %lld", (long long)t->rows, (long long)t->cols,
                (long long)t->size);
  if (t->form == TC_TILE_TV) {
    tc_str_printf(&j,
                  ", \"threads\": %lld, \"values\": %lld, \"duplicates\": %lld, \"missing\": %lld, "
                  "\"outside\": %lld, \"bijective\": %s",
                  (long long)t->threads, (long long)t->values, (long long)t->dup, (long long)t->missing,
                  (long long)t->outside, t->bijective ? "true" : "false");
  } else {
    tc_str_printf(&j,
                  ", \"cosize\": %lld, \"allocation\": %lld, \"injective\": %s, \"bijective\": %s, "
                  "\"elem_bytes\": %d, \"access\": {\"pattern\": \"%s\", \"vec\": %d, \"threads\": 32, "
                  "\"accesses\": %lld, \"max_ways\": %lld, \"worst_access\": %lld, \"wavefronts\": %lld, "
                  "\"ideal_wavefronts\": %lld, \"conflicts\": %lld, \"noncontiguous_accesses\": %lld, "
                  "\"ways\": [",
                  (long long)t->cosize, (long long)t->alloc, t->injective ? "true" : "false",
                  t->bijective ? "true" : "false", lv->o.elem_bytes, op->access_col ? "col" : "row", lv->o.vec,
                  (long long)br->accesses, (long long)br->max_ways, (long long)br->worst, (long long)br->wavefronts,
                  (long long)br->ideal, (long long)br->conflicts, (long long)br->noncontig);
    for (int64_t k = 0; k < br->accesses; k++) tc_str_printf(&j, "%s%d", k ? ", " : "", (int)br->ways[k]);
    tc_str_cat(&j, "]}");
  }
  if (op->svg) tc_str_cat(&j, ", \"svg\": "), json_str(&j, op->svg);
  tc_str_cat(&j, "}\n");
  fputs(tc_str_cstr(&j), stdout);
  tc_str_free(&j);
}

/* The text lines of a thread-value layout: who owns each element. */
static void print_text_tv(const tc_tile *t) {
  printf("threads: %lld, values per thread: %lld\n", (long long)t->threads, (long long)t->values);
  printf("each element owned once: %s", t->bijective ? "yes\n" : "no");
  if (!t->bijective)
    printf(" (%lld owned twice, %lld unowned, %lld (thread, value) pairs outside the tile)\n", (long long)t->dup,
           (long long)t->missing, (long long)t->outside);
}

/* The text lines of a memory layout: cosize, bijectivity, bank conflicts. */
static void print_text_memory(const layout_opts *op, const layout_view *lv) {
  const tc_tile *t = &lv->t;
  const tc_bank_report *br = &lv->br;
  char bij[160];
  why_not_bijective(t, bij, sizeof bij);
  printf("cosize: %lld\n", (long long)t->cosize);
  if (t->form == TC_TILE_XFORM) printf("allocation: %lld elements\n", (long long)t->alloc);
  printf("bijective: %s\n", bij);
  printf("access: %s, 32 threads x %d element%s of %d bytes, %lld accesses\n", op->access_col ? "col" : "row",
         lv->o.vec, lv->o.vec == 1 ? "" : "s", lv->o.elem_bytes, (long long)br->accesses);
  printf("bank conflicts: %lld-way max per access%s\n", (long long)br->max_ways,
         br->max_ways <= 1 ? " (conflict-free)" : "");
  printf("wavefronts: %lld (ideal %lld, %lld extra)\n", (long long)br->wavefronts, (long long)br->ideal,
         (long long)br->conflicts);
  if (br->noncontig)
    printf("note: %lld accesses have thread vectors that are not contiguous in memory\n", (long long)br->noncontig);
  if (op->grid) print_grid(t);
}

static void print_text(const layout_opts *op, const layout_view *lv) {
  const tc_tile *t = &lv->t;
  printf("layout: %s\n", lv->src);
  if (t->canon && strcmp(t->canon, lv->src) != 0) printf("evaluates to: %s\n", t->canon);
  if (t->expr) printf("offset(%s) = %s\n", t->vars, t->expr);
  printf("tile: %lld x %lld (rows x columns)\n", (long long)t->rows, (long long)t->cols);
  printf("size: %lld\n", (long long)t->size);
  if (t->form == TC_TILE_TV) print_text_tv(t);
  else print_text_memory(op, lv);
}

/* Draws the layout into op->svg; returns the exit status. */
static int write_svg(const layout_opts *op, const layout_view *lv) {
  tc_str pic;
  tc_str_init(&pic);
  char title[400];
  TC_STR_LOCAL(msg);
  snprintf(title, sizeof title, "tilec layout %s", lv->src);
  int rc;
  if (tc_tile_svg(&pic, &lv->t, &lv->o, lv->banks ? &lv->br : NULL, lv->warp,
                  op->view_addr ? TC_VIEW_ADDRESS : TC_VIEW_LOGICAL, title, &msg)) {
    rc = cli_usage_error("%s", tc_str_cstr(&msg));
  } else {
    rc = write_file(op->svg, tc_str_cstr(&pic));
    if (rc == CLI_OK && !op->json) printf("svg: %s\n", op->svg);
  }
  tc_str_free(&pic);
  return rc;
}

/* Summarises a layout (text or JSON) and draws it when asked. */
static int show_layout(const layout_opts *op) {
  layout_view lv;
  memset(&lv, 0, sizeof lv);
  lv.src = tc_str_cstr(&op->text);
  int rc = parse_tile(op, &lv.t);
  if (rc) return rc;
  rc = analyze_banks(op, &lv);
  if (rc == CLI_OK) {
    if (op->json) print_json(op, &lv);
    else print_text(op, &lv);
    if (op->svg) rc = write_svg(op, &lv);
  }
  tc_bank_report_free(&lv.br);
  tc_tile_free(&lv.t);
  return rc;
}

/* Checks the arguments against the mode (--eval or a LAYOUT) and runs it. */
static int run_layout(const layout_opts *op) {
  if (op->eval) {
    if (op->text.len)
      return cli_usage_error("--eval takes the expression as its value; unexpected argument '%s'",
                             tc_str_cstr(&op->text));
    return do_eval(op->eval, op->json);
  }
  if (!op->text.len) return cli_usage_error("`tilec layout` needs a LAYOUT, e.g. '(8,64):(64,1)'");
  return show_layout(op);
}

int cmd_layout(int argc, char **argv) {
  layout_opts op;
  int rc = parse_layout_args(argc, argv, &op);
  if (rc == CLI_OK && op.help) layout_usage(stdout);
  else if (rc == CLI_OK) rc = run_layout(&op);
  tc_str_free(&op.text);
  return rc;
}
