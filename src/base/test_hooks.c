/* test_hooks.c - the faults tests inject (see test_hooks.h). */
#include "test_hooks.h"

static tc_test_hooks hooks;

const tc_test_hooks *tc_test_hooks_get(void) { return &hooks; }

void tc_test_hooks_set(const tc_test_hooks *h) { hooks = h ? *h : (tc_test_hooks){0}; }
