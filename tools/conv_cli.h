/* conv_cli.h - what `tilec conv2d` (cmd_conv.c) and `tilec driver`
 * (cmd_driver.c) share: the problem described for the API, tuning, and
 * the perf config line. */
#ifndef TILEC_CONV_CLI_H
#define TILEC_CONV_CLI_H

#include <stdint.h>

#include "tilec/tilec.h"
#include "../src/ops/conv.h"
#include "op_cli.h"

/* The parsed problem p completed (direction dir, o's dtype, padding pad_h
 * / pad_w on both sides unless side[] (top, bottom, left, right; INT64_MIN:
 * not given) says otherwise) and described for the API in *d (its layouts
 * point into p).  CLI_OK, or CLI_USAGE after a message. */
int conv_make_desc(const op_opts *o, tc_conv_problem *p, int64_t dir, int64_t pad_h,
                   int64_t pad_w, const int64_t side[4], tc_conv2d_desc *d);
/* --tune through tc_conv2d_tune: progress on stderr, the result in r.
 * CLI_OK or CLI_FAIL after a message. */
int conv_tune(op_opts *o, tc_conv2d *c, op_report *r);
/* The perf config of c's plan into r (r->config, r->source, the detail;
 * a warning on stderr where the API has one); with print (and without
 * --json) also the lines "perf config: ..." and "plan: N kernels: ...". */
void conv_report_plan(const op_opts *o, const tc_conv2d *c, op_report *r, int print);

/* `"problem": {...}` of the --json object: the string key, the
 * direction, the sizes, Ho and Wo, the dtype and the layouts. */
void conv_json_problem(tc_str *j, const tc_conv_problem *p, const char *key, int64_t ho, int64_t wo);

#endif
