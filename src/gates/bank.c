/*
 * bank.c - the bank-conflict simulator.
 */
#include "gates/bank.h"

unsigned fattn_bank_phase_lanes(unsigned width)
{
    return width >= 16 ? 8u : width == 8 ? 16u : 32u;
}

unsigned fattn_bank_ways(const unsigned *addr, const unsigned char *active, unsigned lanes, unsigned width,
                         unsigned phase_lanes)
{
    unsigned worst = 0;
    for (unsigned p = 0; p < lanes; p += phase_lanes) {
        /* Distinct words per bank in this phase: at most 8 lanes x 4 words. */
        unsigned words[32][32], count[32] = {0};
        for (unsigned i = p; i < p + phase_lanes && i < lanes; ++i) {
            if (!active[i])
                continue;
            unsigned first = addr[i] / 4u, last = (addr[i] + width - 1u) / 4u;
            for (unsigned w = first; w <= last; ++w) {
                unsigned b = w % 32u, seen = 0;
                for (unsigned k = 0; k < count[b]; ++k)
                    seen |= words[b][k] == w;
                if (!seen && count[b] < 32)
                    words[b][count[b]++] = w;
            }
        }
        for (unsigned b = 0; b < 32; ++b)
            if (count[b] > worst)
                worst = count[b];
    }
    return worst;
}
