/*
 * bank.h - shared-memory bank conflicts of one warp-wide request.
 *
 * Shared memory has 32 banks of 4-byte words. A request is served in phases:
 * all 32 lanes for accesses of up to 4 bytes, 16 lanes for 8 bytes, 8 lanes
 * for 16 bytes; each 8x8 matrix of an ldmatrix is one phase of 8 row
 * addresses. Within a phase, lanes touching the same word are served at once
 * (broadcast); distinct words in one bank serialize. The ways of a phase are
 * the most distinct words any bank must serve; 1 is conflict-free.
 */
#ifndef FATTN_GATES_BANK_H
#define FATTN_GATES_BANK_H

/* Ways of the worst phase. addr[i] is lane i's byte address, active[i] says
 * whether it takes part; each access is `width` bytes (2, 4, 8 or 16) and
 * `phase_lanes` consecutive lanes form a phase. */
unsigned fattn_bank_ways(const unsigned *addr, const unsigned char *active, unsigned lanes, unsigned width,
                         unsigned phase_lanes);

/* Lanes per phase for an ordinary access of `width` bytes. */
unsigned fattn_bank_phase_lanes(unsigned width);

#endif
