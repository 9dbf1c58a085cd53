/* picture.h - a 2-D tile's memory layout: where each logical element lives,
 * whether that map is a bijection, the shared-memory bank conflicts of a
 * warp's accesses, and an SVG picture of it all (`tilec layout`).
 *
 * A tile is given in one of two notations (docs/layout.md has the full
 * grammar):
 *
 *   CuTe form         an expression of cute.h that evaluates to a layout or
 *                     a swizzled layout, e.g. (8,64):(64,1) or
 *                     Swizzle<3,3,3> o (8,64):(64,1).  Mode 0 is the rows,
 *                     the other modes together the columns (a rank-1 layout
 *                     is one row); element (r, c) lives at L(r + rows * c).
 *
 *   transform form    [E0, E1, ...] followed by transforms on the current
 *                     axis list, built on the compiler's axis graph
 *                     (domain.h), e.g. [8,64] split(1,8) xor(0,1) merge(1,2).
 *                     The roots are the logical dimensions; the final axis
 *                     list is the allocation order, outermost first, and
 *                     element (i0, i1, ...) lives at the row-major offset of
 *                     its final axis values.  Rows are E0, columns the other
 *                     dimensions in row-major order.
 *
 * A thread-value (TV) layout, as CuTe writes mma and ldmatrix fragments,
 * maps (thread, value) to an element of a rows x cols tile in column-major
 * order: t + T * v -> idx, element (idx % rows, idx / rows). */
#ifndef TC_PICTURE_H
#define TC_PICTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/base.h"
#include "cute.h"

/* Tiles larger than this are refused (the analysis enumerates elements). */
#define TC_TILE_MAX_ELEMS ((int64_t)1 << 22)

typedef enum tc_tile_form { TC_TILE_CUTE, TC_TILE_XFORM, TC_TILE_TV } tc_tile_form;

typedef struct tc_tile {
  tc_tile_form form;
  int64_t rows, cols, size; /* size == rows * cols */
  /* CUTE and XFORM: off[r * cols + c] is the offset of element (r, c) */
  int64_t *off;
  int64_t cosize;           /* largest offset + 1 */
  int64_t alloc;            /* elements allocated: XFORM the product of the final
                               extents, CUTE the cosize */
  bool injective, bijective; /* bijective: injective and size == cosize */
  char *canon;              /* CUTE: the evaluated layout in CuTe text */
  char *expr;               /* XFORM: the offset as a C expression */
  char *vars;               /* XFORM: the logical index names, e.g. "r, c" */
  /* TV: the owner of each element (row-major), -1 for none */
  int32_t *owner_t, *owner_v;
  int64_t threads, values, dup, missing, outside;
} tc_tile;

/* Either notation; returns TC_CUTE_OK, or TC_CUTE_ESYNTAX / TC_CUTE_EUNDEF
 * with *e filled in (columns refer to text). */
int tc_tile_parse(const char *text, tc_tile *t, tc_cute_error *e);
/* A TV layout (CuTe form) over a rows x cols tile. */
int tc_tile_parse_tv(const char *text, int64_t rows, int64_t cols, tc_tile *t, tc_cute_error *e);
void tc_tile_free(tc_tile *t);

/* ---- bank conflicts ----------------------------------------------------------
 * Shared memory has 32 banks of 4-byte words; word w is in bank w % 32.  A
 * warp's access: 32 threads, thread k of access a taking vector
 * j = 32 a + k of vec consecutive elements along a row (vectors numbered
 * row by row for ACCESS_ROW, column by column for ACCESS_COL).  The
 * hardware serves at most 128 bytes per wavefront, so threads are grouped
 * into phases of 32 threads (vec * elem_bytes <= 4) or 128 / (vec *
 * elem_bytes) threads.  In a phase, a bank that must deliver n distinct
 * words takes n wavefronts; the access's n-way conflict is the largest such
 * n over its banks and phases (1 = conflict-free; two threads reading the
 * same word do not conflict). */

typedef enum tc_access { TC_ACCESS_ROW, TC_ACCESS_COL } tc_access;

typedef struct tc_bank_opts {
  int elem_bytes; /* 1, 2, 4, 8 or 16 */
  tc_access access;
  int vec;        /* elements per thread, dividing cols */
} tc_bank_opts;

typedef struct tc_bank_report {
  int64_t accesses;
  int64_t max_ways;      /* the worst access's n-way conflict */
  int64_t worst;         /* the first access with max_ways */
  int64_t wavefronts;    /* summed over all accesses */
  int64_t ideal;         /* the wavefronts without conflicts (one per phase) */
  int64_t conflicts;     /* wavefronts - ideal */
  int64_t noncontig;     /* thread vectors whose elements are not contiguous */
  int32_t *ways;         /* per access */
} tc_bank_report;

/* 0, or -1 with a message (bad options for this tile). */
int tc_bank_analyze(const tc_tile *t, const tc_bank_opts *o, tc_bank_report *r, tc_str *err);
void tc_bank_report_free(tc_bank_report *r);
/* Access k in detail: elem[th * vec + x] is the element index (r * cols + c)
 * of thread th's x-th element, or -1 where the warp runs past the tile;
 * conflict[th] says whether one of its words shares a bank with another
 * word in its phase.  Returns the access's n-way conflict. */
int tc_bank_access(const tc_tile *t, const tc_bank_opts *o, int64_t k, int64_t *elem, bool *conflict);

/* ---- pictures ----------------------------------------------------------------- */

typedef enum tc_view { TC_VIEW_LOGICAL, TC_VIEW_ADDRESS } tc_view;

/* The fill colour of bank (or thread) b % 32, "#rrggbb". */
const char *tc_bank_color(int b, char *buf, size_t cap);

/* Writes an SVG document.  CUTE/XFORM: a grid of the tile (LOGICAL, each
 * cell shows the element's offset) or of the allocation in rows of 128
 * bytes (ADDRESS, each cell shows the element stored there), filled by
 * bank, with access `warp`'s cells outlined (red where they conflict).
 * TV: the tile with each element's thread and value.  Returns 0, or -1
 * with a message when the picture would be too large. */
int tc_tile_svg(tc_str *out, const tc_tile *t, const tc_bank_opts *o, const tc_bank_report *r,
                int64_t warp, tc_view view, const char *title, tc_str *err);

#endif
