/* circular.h - circular buffering of shared tensors over a serial loop
 * (tc_circular_buffer; circular.c). */
#ifndef TC_CIRCULAR_H
#define TC_CIRCULAR_H

#include "../target/target.h"
#include "kernel.h"

/* After indexing, barriers and the mma / ldmatrix lowering: turns every
 * ring loop (tc_kalloc.ring_loop of an allocation with stages > 1) into
 * its prologue and steady state: the copies of the ring's tensors are
 * issued stages - 1 iterations ahead (stages - 2 where the compute is
 * wgmma left running into the next iteration: wait depth 1, tc_kmma.wait1)
 * into slot (iteration % stages), each
 * iteration waits for its own tile and passes one barrier before it
 * issues the next copy and computes; the readers index slot (k % stages).
 * On CUDA sm_80+ (ti) a plain copy from global memory is marked as
 * cp.async (tc_kstmt.cp_bytes); on sm_90+ a ring whose copies are bulk
 * tensor copies gets an mbarrier per slot, which its copies arm
 * (tc_ktma.bar_slot) and each iteration waits on by parity
 * (tc_knode.mbar_slot).  Fails with the message on k->f for a ring it
 * cannot build (a copy that reads shared memory or holds a barrier, a
 * reader outside the loop, two stage counts at one loop, bulk tensor
 * copies beside other copies in one ring). */
tc_status tc_circular_lower(tc_kir *k, const tc_target_info *ti);

#endif
