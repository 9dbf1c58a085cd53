/* sched.h - scheduling helpers shared with the lowering (the public calls
 * are in tilec.h). */
#ifndef TC_SCHED_H
#define TC_SCHED_H

#include <stdbool.h>

#include "../ir/fusion.h"

bool tc_ptype_is_thread(tc_ptype p);
bool tc_ptype_is_block(tc_ptype p);
bool tc_ptype_is_device(tc_ptype p);
/* Checks that a vectorized axis of `extent` elements of t's dtype fits a
 * vector access (power of two, at most 16 bytes). */
tc_status tc_check_vector_width(const tc_tensor *t, int axis, int64_t extent);
/* Checks that t can be inlined into consumer c at pos (axes map, parallel
 * types agree, no vectorized axis shared). */
tc_status tc_check_inline(const tc_tensor *t, const tc_tensor *c, int pos, const char *call);

#endif
