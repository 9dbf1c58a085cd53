/* picture_svg.c - SVG pictures of tiles: cells filled by bank (or thread),
 * labelled with offsets, stored elements or thread/value, with one warp
 * access outlined and its bank conflicts in red. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "picture.h"

enum { MAX_CELLS = 32768, CELL_H = 18, TV_CELL_H = 28, LABEL_W = 40, MARGIN = 12 };
#define HEAD_CHAR_W 7.2 /* px per character of the 12 px monospace header */

const char *tc_bank_color(int b, char *buf, size_t cap) {
  b = ((b % 32) + 32) % 32;
  /* 32 hues, neighbours far apart on the wheel, alternating lightness */
  double h = (double)((b * 13) % 32) / 32.0 * 360.0, s = 0.65, l = b % 2 ? 0.80 : 0.68;
  double c = (1 - fabs(2 * l - 1)) * s, hp = h / 60.0, x = c * (1 - fabs(fmod(hp, 2) - 1)), m = l - c / 2;
  double r = 0, g = 0, bl = 0;
  if (hp < 1) r = c, g = x;
  else if (hp < 2) r = x, g = c;
  else if (hp < 3) g = c, bl = x;
  else if (hp < 4) g = x, bl = c;
  else if (hp < 5) r = x, bl = c;
  else r = c, bl = x;
  snprintf(buf, cap, "#%02x%02x%02x", (int)lround((r + m) * 255), (int)lround((g + m) * 255),
           (int)lround((bl + m) * 255));
  return buf;
}

static void esc(tc_str *out, const char *s) {
  for (; *s; s++) {
    switch (*s) {
      case '&': tc_str_cat(out, "&amp;"); break;
      case '<': tc_str_cat(out, "&lt;"); break;
      case '>': tc_str_cat(out, "&gt;"); break;
      case '"': tc_str_cat(out, "&quot;"); break;
      default:
        if ((unsigned char)*s >= 0x20) tc_str_catn(out, s, 1);
    }
  }
}

static int digits(int64_t v) {
  int d = 1;
  while (v >= 10) v /= 10, d++;
  return d;
}

static int bank_of(int64_t off, int elem_bytes) { return (int)((off * elem_bytes / 4) % 32); }

static void text(tc_str *o, double x, double y, const char *anchor, const char *extra, const char *s) {
  tc_str_printf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s>", x, y, anchor, extra ? extra : "");
  esc(o, s);
  tc_str_cat(o, "</text>\n");
}

int tc_tile_svg(tc_str *out, const tc_tile *t, const tc_bank_opts *o, const tc_bank_report *r,
                int64_t warp, tc_view view, const char *title, tc_str *err) {
  bool tv = t->form == TC_TILE_TV, addr = !tv && view == TC_VIEW_ADDRESS;
  int E = o ? o->elem_bytes : 4;
  int64_t gr = t->rows, gc = t->cols; /* grid rows and columns */
  if (addr) {
    gc = 128 / E;
    gr = (t->cosize + gc - 1) / gc;
  }
  if (gr * gc > MAX_CELLS) {
    tc_err_set(err, "the picture would have %lld cells; --svg draws at most %d (use a smaller tile)",
             (long long)(gr * gc), MAX_CELLS);
    return -1;
  }

  /* the highlighted access: element -> thread, conflict */
  int32_t *thread_of = NULL;
  bool *conf_el = NULL;
  int ways = 0;
  if (!tv && r && warp >= 0 && warp < r->accesses) {
    int64_t *elem = tc_xmalloc((size_t)32 * (size_t)o->vec * sizeof *elem);
    bool conflict[32];
    ways = tc_bank_access(t, o, warp, elem, conflict);
    thread_of = tc_xmalloc((size_t)t->size * sizeof *thread_of);
    conf_el = tc_xcalloc((size_t)t->size, sizeof *conf_el);
    for (int64_t i = 0; i < t->size; i++) thread_of[i] = -1;
    for (int th = 0; th < 32; th++)
      for (int x = 0; x < o->vec; x++) {
        int64_t e = elem[th * o->vec + x];
        if (e >= 0) thread_of[e] = th, conf_el[e] = conflict[th];
      }
    free(elem);
  }
  /* address view: the (first) element at each offset */
  int64_t *at = NULL;
  int32_t *nat = NULL;
  if (addr) {
    at = tc_xmalloc((size_t)(gr * gc) * sizeof *at);
    nat = tc_xcalloc((size_t)(gr * gc), sizeof *nat);
    for (int64_t a = 0; a < gr * gc; a++) at[a] = -1;
    for (int64_t i = 0; i < t->size; i++) {
      int64_t a = t->off[i];
      if (a < 0 || a >= gr * gc) continue;
      if (at[a] < 0) at[a] = i;
      nat[a]++;
    }
  }

  /* cell size from the longest label */
  int chars = 3;
  if (tv) chars = 1 + digits(t->threads > t->values ? t->threads : t->values);
  else if (addr) chars = digits(t->rows) + digits(t->cols) + 2;
  else chars = digits(t->cosize);
  double cw = 8 + 6.2 * chars, ch = tv ? TV_CELL_H : CELL_H;
  if (cw < 22) cw = 22;
  double x0 = MARGIN + LABEL_W, y0 = MARGIN + 100;
  double width = x0 + gc * cw + MARGIN, height = y0 + gr * ch + MARGIN;
  double legend_w = MARGIN + 32 * 20 + 60;
  if (width < legend_w) width = legend_w;
  if (width < 560) width = 560;

  /* the header lines under the title, at 12 px, with their baselines */
  char head[3][512];
  int head_y[3], nhead = 0;
  if (tv) {
    snprintf(head[nhead], sizeof head[0], "%lld x %lld tile, %lld threads x %lld values; %s",
             (long long)t->rows, (long long)t->cols, (long long)t->threads, (long long)t->values,
             t->bijective ? "each element owned once" : "NOT one owner per element");
    head_y[nhead++] = MARGIN + 26;
    snprintf(head[nhead], sizeof head[0], "%s", "cell: thread T and value V owning the element; colour: thread % 32");
    head_y[nhead++] = MARGIN + 42;
  } else {
    snprintf(head[nhead], sizeof head[0], "%lld x %lld tile, size %lld, cosize %lld, %s; %d-byte elements",
             (long long)t->rows, (long long)t->cols, (long long)t->size, (long long)t->cosize,
             t->bijective ? "bijective" : t->injective ? "injective, not bijective" : "NOT injective", E);
    head_y[nhead++] = MARGIN + 26;
    if (r) {
      snprintf(head[nhead], sizeof head[0],
               "%s access, vec %d: max %lld-way bank conflict (1 = none); outlined: access %lld, %d-way%s",
               o->access == TC_ACCESS_ROW ? "row" : "column", o->vec, (long long)r->max_ways, (long long)warp,
               ways, ways > 1 ? " (red: conflicting)" : "");
      head_y[nhead++] = MARGIN + 42;
    }
    snprintf(head[nhead], sizeof head[0], "%s; colour: bank of the element's first word",
             addr ? "cells: memory in rows of 128 bytes, each showing the element (r,c) stored there"
                  : "cells: the logical tile, each showing its element's offset");
    head_y[nhead++] = MARGIN + 58;
  }
  /* wide enough for the longest header line (and the title): monospace
   * at 12 px advances 0.6 em, 7.2 px, per character */
  size_t longest = title ? strlen(title) : 0;
  for (int i = 0; i < nhead; i++)
    if (strlen(head[i]) > longest) longest = strlen(head[i]);
  if (width < 2 * MARGIN + HEAD_CHAR_W * (double)longest) width = 2 * MARGIN + HEAD_CHAR_W * (double)longest;

  tc_str_printf(out,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                "font-family=\"monospace\" font-size=\"10\">\n"
                "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n",
                width, height, width, height, width, height);
  char line[512], col[16];
  tc_str_cat(out, "<g font-size=\"12\">\n");
  text(out, MARGIN, MARGIN + 10, "start", " font-weight=\"bold\"", title ? title : "");
  for (int i = 0; i < nhead; i++) text(out, MARGIN, head_y[i], "start", NULL, head[i]);
  tc_str_cat(out, "</g>\n");
  /* legend: the 32 bank colours */
  tc_str_cat(out, "<g font-size=\"8\">\n");
  text(out, MARGIN, MARGIN + 74, "start", NULL, tv ? "thread" : "bank");
  for (int b = 0; b < 32; b++) {
    double lx = MARGIN + 36 + b * 20;
    tc_str_printf(out, "<rect x=\"%.1f\" y=\"%d\" width=\"18\" height=\"12\" fill=\"%s\"/>\n", lx, MARGIN + 65,
                  tc_bank_color(b, col, sizeof col));
    snprintf(line, sizeof line, "%d", b);
    text(out, lx + 9, MARGIN + 74, "middle", NULL, line);
  }
  tc_str_cat(out, "</g>\n");

  /* column and row labels */
  tc_str_cat(out, "<g font-size=\"8\" fill=\"#555555\">\n");
  int64_t step = gc > 64 ? 8 : 1;
  for (int64_t c = 0; c < gc; c += step) {
    snprintf(line, sizeof line, "%lld", (long long)(addr ? c * E : c));
    text(out, x0 + c * cw + cw / 2, y0 - 3, "middle", NULL, line);
  }
  for (int64_t rr = 0; rr < gr; rr++) {
    snprintf(line, sizeof line, "%lld", (long long)(addr ? rr * 128 : rr));
    text(out, x0 - 4, y0 + rr * ch + ch / 2 + 3, "end", NULL, line);
  }
  tc_str_cat(out, "</g>\n");

  /* cells */
  tc_str_cat(out, "<g>\n");
  for (int64_t rr = 0; rr < gr; rr++)
    for (int64_t c = 0; c < gc; c++) {
      double x = x0 + c * cw, y = y0 + rr * ch;
      int64_t el = addr ? at[rr * gc + c] : rr * gc + c;
      char label[64] = "", label2[32] = "", tip[160] = "";
      const char *fill = "#f4f4f4";
      if (tv) {
        if (t->owner_t[el] >= 0) {
          fill = tc_bank_color(t->owner_t[el], col, sizeof col);
          snprintf(label, sizeof label, "T%d", (int)t->owner_t[el]);
          snprintf(label2, sizeof label2, "V%d", (int)t->owner_v[el]);
        }
        snprintf(tip, sizeof tip, "(%lld,%lld) thread %d value %d", (long long)rr, (long long)c, (int)t->owner_t[el],
                 (int)t->owner_v[el]);
      } else if (addr) {
        int64_t a = rr * gc + c;
        if (el >= 0) {
          fill = tc_bank_color(bank_of(a, E), col, sizeof col);
          snprintf(label, sizeof label, "%lld,%lld%s", (long long)(el / t->cols), (long long)(el % t->cols),
                   nat[a] > 1 ? "+" : "");
          snprintf(tip, sizeof tip, "offset %lld (byte %lld, bank %d) holds (%lld,%lld)%s", (long long)a,
                   (long long)(a * E), bank_of(a, E), (long long)(el / t->cols), (long long)(el % t->cols),
                   nat[a] > 1 ? " and others" : "");
        } else {
          snprintf(tip, sizeof tip, "offset %lld: no element", (long long)a);
        }
      } else {
        int64_t off = t->off[el];
        fill = tc_bank_color(bank_of(off, E), col, sizeof col);
        snprintf(label, sizeof label, "%lld", (long long)off);
        snprintf(tip, sizeof tip, "(%lld,%lld) at offset %lld, byte %lld, bank %d", (long long)rr, (long long)c,
                 (long long)off, (long long)(off * E), bank_of(off, E));
      }
      const char *stroke = "#ffffff";
      double sw = 0.5;
      int th = el >= 0 && thread_of ? thread_of[el] : -1;
      if (th >= 0) {
        stroke = conf_el[el] ? "#e00000" : "#202020";
        sw = conf_el[el] ? 2.5 : 1.5;
        size_t n = strlen(tip);
        snprintf(tip + n, sizeof tip - n, "; access %lld thread %d%s", (long long)warp, th,
                 conf_el[el] ? " (bank conflict)" : "");
      }
      tc_str_printf(out,
                    "<g><title>%s</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                    "stroke=\"%s\" stroke-width=\"%.1f\"/>",
                    tip, x + sw / 2, y + sw / 2, cw - sw, ch - sw, fill, stroke, sw);
      if (label2[0]) {
        tc_str_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>", x + cw / 2, y + 12, label);
        tc_str_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>", x + cw / 2, y + 24, label2);
      } else if (label[0]) {
        tc_str_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>", x + cw / 2, y + ch / 2 + 3.5,
                      label);
      }
      tc_str_cat(out, "</g>\n");
    }
  tc_str_cat(out, "</g>\n</svg>\n");
  free(thread_of), free(conf_el), free(at), free(nat);
  return 0;
}
