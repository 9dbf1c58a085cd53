/* host.h - reading and writing one element of a host buffer of any dtype,
 * as a double (every dtype's values are exact in a double). */
#ifndef TC_HOST_H
#define TC_HOST_H

#include <stddef.h>

#include "tilec/tilec.h"

double tc_host_read(tc_dtype t, const void *buf, size_t i);
void tc_host_write(tc_dtype t, void *buf, size_t i, double v);

#endif
