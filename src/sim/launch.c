/*
 * launch.c - fibers, barriers, warp collectives, cp.async groups and the
 * shadow state of shared memory, behind the fattn_sim_api table.
 */
#include "sim/launch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/state.h"
#include "sim/warp.h"
#include "util/err.h"

sim *fattn_sim_state;

static const char *const kind_names[FATTN_SIMK_KINDS] = {
    "misaligned",
    "shared_out_of_bounds",
    "global_out_of_bounds",
    "input_written",
    "invalid_operand",
    "divergent",
    "deadlock",
    "race_raw",
    "race_war",
    "race_waw",
    "cp_async_unwaited",
    "uninitialized_read",
    "tma_unwaited",
    "async_proxy_unfenced",
    "wgmma_unfenced",
    "wgmma_early_access",
    "wgmma_unordered",
    "output_rewritten",
    "cluster_exited",
};

const char *fattn_sim_kind_name(int kind)
{
    return kind >= 0 && kind < FATTN_SIMK_KINDS ? kind_names[kind] : "unknown";
}

int fattn_sim_kind_fatal(int kind)
{
    return kind <= FATTN_SIMK_DEADLOCK;
}

/* ---- findings ---- */

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Records a finding (merged with an earlier one of the same kind and lines).
 * A memory fault marks the launch to end after this cluster (the access is
 * not performed; the caller skips it), so that every faulting site of the
 * cluster is named; a divergent collective or a deadlock stops the launch
 * at once and does not return. */
void sim_finding(const finding_in *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sim_finding(const finding_in *in, const char *fmt, ...)
{
    fattn_sim_report *rep = S->rep;
    const int line = in->site ? in->site->line : 0;
    for (int i = 0; i < rep->nfindings; ++i) {
        fattn_sim_finding *f = &rep->findings[i];
        if (f->kind == in->kind && f->line == line && f->other_line == in->other_line) {
            ++f->count;
            goto maybe_stop;
        }
    }
    if (rep->nfindings == FATTN_SIM_MAX_FINDINGS) {
        ++rep->findings_dropped;
        goto maybe_stop;
    }
    fattn_sim_finding *f = &rep->findings[rep->nfindings++];
    memset(f, 0, sizeof *f);
    f->kind = in->kind;
    f->count = 1;
    f->thread = f->other_thread = f->other_block_x = -1;
    if (in->t) {
        f->block[0] = in->t->self.block_idx.x, f->block[1] = in->t->self.block_idx.y;
        f->block[2] = in->t->self.block_idx.z;
        f->thread = (int)in->t->tid;
    }
    if (in->other_thr >= 0) {
        const sim_thread *o = &S->threads[in->other_thr];
        f->other_thread = (int)o->tid;
        f->other_block_x = (int)o->self.block_idx.x;
    }
    snprintf(f->space, sizeof f->space, "%s", in->space ? in->space : "");
    f->addr = in->addr;
    f->size = in->size;
    snprintf(f->insn, sizeof f->insn, "%s", in->insn ? in->insn : "");
    snprintf(f->file, sizeof f->file, "%s", in->site && in->site->file ? in->site->file : "");
    f->line = line;
    f->other_line = in->other_line;
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (in->t)
        snprintf(f->detail, sizeof f->detail, "%s: %s (block (%u,%u,%u) thread %d) at %s:%d", kind_names[in->kind],
                 what, f->block[0], f->block[1], f->block[2], f->thread, base_name(f->file), line);
    else
        snprintf(f->detail, sizeof f->detail, "%s: %s", kind_names[in->kind], what);
maybe_stop:
    if (fattn_sim_kind_fatal(in->kind)) {
        S->faulted = 1;
        rep->stopped = 1;
    }
    if (in->kind == FATTN_SIMK_DIVERGENT || in->kind == FATTN_SIMK_DEADLOCK) {
        S->stop = 1;
        if (S->cur)
            for (;;)
                fattn_fiber_yield();
    }
}

sim_thread *sim_me(void)
{
    return S->cur;
}

/* ---- shared memory: bounds, alignment, shadow ---- */

const char *sim_access_insn(char *buf, size_t n, const char *op, const char *space, unsigned size)
{
    static const char *const types[] = {"", "b8", "b16", "", "b32", "", "", "",      "v2.b32",
                                        "", "",   "",    "", "",    "", "", "v4.b32"};
    snprintf(buf, n, "%s.%s.%s", op, space, size <= 16 ? types[size] : "?");
    return buf;
}

/* Checks [addr, addr + size) of block `rank`'s shared memory: 0, or -1 with
 * the fault recorded. */
int sim_smem_check(const fattn_sim_site *s, unsigned rank, uint64_t addr, unsigned size, unsigned align,
                   const char *insn)
{
    finding_in in = {
        .t = sim_me(), .site = s, .space = "shared", .addr = addr, .size = size, .insn = insn, .other_thr = -1};
    if (addr % align) {
        in.kind = FATTN_SIMK_MISALIGNED;
        sim_finding(&in, "%s at shared 0x%llx is not %u-byte aligned", insn, (unsigned long long)addr, align);
        return -1;
    }
    if (addr + size > S->l->smem_bytes) {
        in.kind = FATTN_SIMK_SHARED_OOB;
        sim_finding(&in, "%s of %u bytes at shared 0x%llx%s is past the %u bytes of dynamic shared memory", insn, size,
                    (unsigned long long)addr, rank != sim_me()->rank ? " (a peer block's)" : "", S->l->smem_bytes);
        return -1;
    }
    return 0;
}

uint32_t *sim_clock_of(unsigned gtid)
{
    return S->vc + (size_t)gtid * S->ncols;
}

void sim_vc_join(uint32_t *view, const uint32_t *c)
{
    for (unsigned j = 0; j < S->ncols; ++j)
        view[j] = c[j] > view[j] ? c[j] : view[j];
}

void sim_col_name(unsigned col, char *out, size_t n)
{
    if (col < S->nthreads) {
        const sim_thread *o = &S->threads[col];
        snprintf(out, n, "thread %u%s", o->tid, o->rank != sim_me()->rank ? " of a peer block" : "");
    } else if (col < S->col_wg) {
        const unsigned r = (col - S->col_mbar) / SIM_MBARS;
        snprintf(out, n, "the TMA load completing on mbarrier 0x%x",
                 S->blocks[r].mbar[(col - S->col_mbar) % SIM_MBARS].addr);
    } else if (col < S->col_bulk) {
        snprintf(out, n, "the wgmma of warpgroup %u", (col - S->col_wg) % ((S->l->threads + 127) / 128));
    } else {
        const unsigned r = (col - S->col_bulk) / SIM_BULK_AGENTS,
                       o = S->blocks[r].bulk_owner[(col - S->col_bulk) % SIM_BULK_AGENTS];
        snprintf(out, n, "the TMA store of thread %u", o ? S->threads[o - 1].tid : 0);
    }
}

/* The running thread's own clock: what its accesses are stamped with. */
uint32_t sim_now(const sim_thread *t)
{
    return sim_clock_of(t->gtid)[t->gtid];
}

/* An access by thread thr at its clock clk happens before the running
 * thread's next access: the same thread, or a synchronization since. */
int sim_ordered(const sim_thread *t, unsigned thr, uint32_t clk)
{
    return thr == t->gtid || clk <= sim_clock_of(t->gtid)[thr];
}

/* A barrier over n threads from `first`: each leaves with what every one of
 * them had seen (the join of their clocks), then ticks its own clock, so its
 * later accesses are after the barrier for everyone. */
void sim_vc_barrier(unsigned first, unsigned n)
{
    const unsigned N = S->ncols;
    uint32_t *join = sim_clock_of(first);
    for (unsigned i = first + 1; i < first + n; ++i)
        sim_vc_join(join, sim_clock_of(i));
    for (unsigned i = first + 1; i < first + n; ++i)
        memcpy(sim_clock_of(i), join, N * sizeof *join);
    for (unsigned i = first; i < first + n; ++i)
        ++sim_clock_of(i)[i];
}

void sim_race(int kind, const fattn_sim_site *s, unsigned addr, unsigned size, const char *insn, unsigned other,
              int other_line, const char *how)
{
    finding_in in = {.kind = kind,
                     .t = sim_me(),
                     .site = s,
                     .space = "shared",
                     .addr = addr,
                     .size = size,
                     .insn = insn,
                     .other_thr = other < S->nthreads ? (int)other : -1,
                     .other_line = other_line};
    char who[96];
    sim_col_name(other, who, sizeof who);
    sim_finding(&in, "%s at shared 0x%x %s %s (line %d) with no %s between", insn, addr, how, who, other_line,
                other < S->nthreads   ? "barrier"
                : other < S->col_wg   ? "wait on the mbarrier phase that lands it"
                : other < S->col_bulk ? "wait_group that retires it"
                                      : "wait_group.read that retires it");
}

/* Thread w fenced the async proxy after its write at clock w_clk, and the
 * reader's view covers that fence. */
static int proxy_fenced(unsigned w, uint32_t w_clk, const uint32_t *view)
{
    const sim_thread *o = &S->threads[w];
    int lo = 0, hi = o->nfences;
    while (lo < hi) { /* the first fence at or after the write */
        const int mid = (lo + hi) / 2;
        if (o->fences[mid] < w_clk)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < o->nfences && o->fences[lo] <= view[w];
}

static int is_tma_col(unsigned col)
{
    return col >= S->col_mbar && col < S->col_wg;
}

void sim_shadow_read_as(const fattn_sim_site *s, unsigned rank, uint32_t addr, unsigned size, const char *insn,
                        const uint32_t *view, unsigned col, uint32_t clk, int async)
{
    sim_thread *t = sim_me();
    sim_block *b = &S->blocks[rank];
    int reported = 0;
    for (unsigned i = 0; i < size; ++i) {
        shadow *h = &b->sh[addr + i];
        if (!reported) {
            finding_in in = {.t = t,
                             .site = s,
                             .space = "shared",
                             .addr = addr,
                             .size = size,
                             .insn = insn,
                             .other_thr = h->w_thr < S->nthreads ? h->w_thr : -1,
                             .other_line = h->w_line};
            reported = 1;
            if ((h->flags & SH_PENDING) && is_tma_col(h->w_thr)) {
                in.kind = FATTN_SIMK_TMA_UNWAITED;
                sim_finding(&in,
                            "%s at shared 0x%x reads the destination of the TMA load at line %d before the "
                            "mbarrier phase that lands it",
                            insn, addr, h->w_line);
            } else if (h->flags & SH_PENDING) {
                in.kind = FATTN_SIMK_ASYNC_UNWAITED;
                sim_finding(&in,
                            "%s at shared 0x%x reads the destination of thread %u's cp.async (line %d) before "
                            "its wait_group",
                            insn, addr, S->threads[h->w_thr].tid, h->w_line);
            } else if (!(h->flags & SH_WRITTEN)) {
                in.kind = FATTN_SIMK_UNINIT_READ;
                in.addr = addr + i;
                in.other_line = 0;
                sim_finding(&in, "%s reads shared 0x%x, which nothing wrote", insn, addr + i);
            } else if (h->w_clk > view[h->w_thr] && is_tma_col(h->w_thr)) {
                in.kind = FATTN_SIMK_TMA_UNWAITED;
                sim_finding(&in,
                            "%s at shared 0x%x reads what the TMA load at line %d wrote without a wait on the "
                            "mbarrier phase that covers it",
                            insn, addr, h->w_line);
            } else if (h->w_clk > view[h->w_thr]) {
                sim_race(FATTN_SIMK_RACE_RAW, s, addr, size, insn, h->w_thr, h->w_line, "reads what was written by");
            } else if (async && h->w_thr < S->nthreads && !proxy_fenced(h->w_thr, h->w_clk, view)) {
                in.kind = FATTN_SIMK_PROXY_UNFENCED;
                sim_finding(&in,
                            "%s (async proxy) at shared 0x%x reads what thread %u wrote at line %d with no "
                            "fence.proxy.async of its between",
                            insn, addr, S->threads[h->w_thr].tid, h->w_line);
            } else {
                reported = 0;
            }
        }
        if ((h->flags & SH_READ) && h->r_thr != col && h->r_clk > view[h->r_thr]) {
            h->flags |= SH_RMULTI;
            continue;
        }
        h->flags = (uint8_t)((h->flags | SH_READ) & ~SH_RMULTI);
        h->r_thr = (uint16_t)col, h->r_line = (uint16_t)s->line;
        h->r_clk = clk;
    }
}

/* A read of `size` bytes of block `rank`'s shared memory by the running thread. */
void sim_shadow_read(const fattn_sim_site *s, unsigned rank, uint32_t addr, unsigned size, const char *insn)
{
    sim_thread *t = sim_me();
    sim_shadow_read_as(s, rank, addr, size, insn, sim_clock_of(t->gtid), t->gtid, sim_now(t), 0);
}

/* A write (or the start of a cp.async, pending) by the running thread. */
void sim_shadow_write(const fattn_sim_site *s, unsigned rank, uint32_t addr, unsigned size, const char *insn,
                      int pending)
{
    sim_thread *t = sim_me();
    sim_block *b = &S->blocks[rank];
    int reported = 0;
    for (unsigned i = 0; i < size; ++i) {
        shadow *h = &b->sh[addr + i];
        if (!reported) {
            if ((h->flags & SH_PENDING) && h->w_thr != t->gtid) {
                sim_race(FATTN_SIMK_RACE_WAW, s, addr, size, insn, h->w_thr, h->w_line,
                         is_tma_col(h->w_thr) ? "overwrites the destination of"
                                              : "overwrites the in-flight cp.async of");
                reported = 1;
            } else if ((h->flags & SH_WRITTEN) && !sim_ordered(t, h->w_thr, h->w_clk)) {
                sim_race(FATTN_SIMK_RACE_WAW, s, addr, size, insn, h->w_thr, h->w_line,
                         "overwrites what was written by");
                reported = 1;
            } else if ((h->flags & SH_READ) && (h->r_thr != t->gtid || (h->flags & SH_RMULTI))
                       && !sim_ordered(t, h->r_thr, h->r_clk)) {
                sim_race(FATTN_SIMK_RACE_WAR, s, addr, size, insn, h->r_thr, h->r_line, "overwrites what was read by");
                reported = 1;
            }
        }
        h->flags = (uint8_t)(pending ? h->flags | SH_PENDING : (h->flags | SH_WRITTEN) & ~SH_PENDING);
        h->w_thr = (uint16_t)t->gtid, h->w_line = (uint16_t)s->line;
        h->w_clk = sim_now(t);
    }
}

/* ---- wavefronts ---- */

static int site_index(int line, const char *insn, unsigned width)
{
    fattn_sim_report *rep = S->rep;
    for (int i = 0; i < rep->nsites; ++i)
        if (rep->sites[i].line == line && !strcmp(rep->sites[i].insn, insn))
            return i;
    if (rep->nsites == FATTN_SIM_MAX_SITES)
        return -1;
    fattn_sim_site_stats *st = &rep->sites[rep->nsites];
    memset(st, 0, sizeof *st);
    st->line = line;
    snprintf(st->insn, sizeof st->insn, "%s", insn);
    st->width = width;
    return rep->nsites++;
}

static void site_add(int site, unsigned phases, unsigned wavefronts, unsigned worst)
{
    if (site < 0)
        return;
    fattn_sim_site_stats *st = &S->rep->sites[site];
    st->instructions++;
    st->phases += phases;
    st->wavefronts += wavefronts;
    if (worst > st->worst_ways)
        st->worst_ways = worst;
}

static void note_access(sim_thread *t, int line, const char *insn, uint32_t addr, unsigned size)
{
    sim_warp *w = t->warp;
    int site = site_index(line, insn, size), k;
    if (site < 0)
        return;
    for (k = 0; k < w->nocc && w->occ_site[k] != site; ++k)
        ;
    if (k == w->nocc) {
        if (w->nocc == 16)
            return;
        w->occ_site[k] = site;
        memset(w->occ_count[k], 0, sizeof w->occ_count[k]);
        ++w->nocc;
    }
    if (w->nacc == w->cap_acc) {
        int cap = w->cap_acc ? 2 * w->cap_acc : 256;
        lane_access *a = realloc(w->acc, (size_t)cap * sizeof *a);
        if (!a)
            return;
        w->acc = a, w->cap_acc = cap;
    }
    w->acc[w->nacc++] = (lane_access){site, w->occ_count[k][t->lane]++, (int)t->lane, addr, size};
}

static int acc_cmp(const void *a, const void *b)
{
    const lane_access *x = a, *y = b;
    if (x->site != y->site)
        return x->site - y->site;
    if (x->occ != y->occ)
        return x->occ - y->occ;
    return x->lane - y->lane;
}

/* The warp synchronized: every lane's accesses since the last time are
 * grouped into instructions (site, occurrence) and their phases measured. */
void sim_warp_flush(sim_warp *w)
{
    if (w->nacc) /* acc is NULL before a warp's first access */
        qsort(w->acc, (size_t)w->nacc, sizeof *w->acc, acc_cmp);
    for (int i = 0; i < w->nacc;) {
        int j = i;
        while (j < w->nacc && w->acc[j].site == w->acc[i].site && w->acc[j].occ == w->acc[i].occ)
            ++j;
        const unsigned width = w->acc[i].size, per = width <= 4 ? 32 : width == 8 ? 16 : 8;
        unsigned phases = 0, waves = 0, worst = 0;
        for (unsigned p = 0; p < 32 / per; ++p) {
            uint32_t addr[32];
            unsigned size[32];
            int n = 0;
            for (int k = i; k < j; ++k)
                if ((unsigned)w->acc[k].lane / per == p)
                    addr[n] = w->acc[k].addr, size[n++] = w->acc[k].size;
            if (!n)
                continue;
            unsigned ways = fattn_sim_wavefronts(addr, size, n);
            ++phases;
            waves += ways;
            if (ways > worst)
                worst = ways;
        }
        site_add(w->acc[i].site, phases, waves, worst);
        i = j;
    }
    w->nacc = 0;
    w->nocc = 0;
}

/* ---- generic-pointer loads and stores ---- */

/* *off: the shared offset of a generic pointer into the running block's
 * shared memory. Returns 0, or -1 (fault recorded) when it is not one. */
int sim_smem_offset(const fattn_sim_site *s, const void *p, unsigned size, const char *insn, uint32_t *off)
{
    sim_thread *t = sim_me();
    const uint8_t *q = p;
    sim_block *b = &S->blocks[t->rank];
    if (q >= b->smem - GUARD && q < b->smem + S->l->smem_bytes + GUARD) {
        long rel = (long)(q - b->smem);
        finding_in in = {.kind = FATTN_SIMK_SHARED_OOB,
                         .t = t,
                         .site = s,
                         .space = "shared",
                         .addr = (uint64_t)rel,
                         .size = size,
                         .insn = insn,
                         .other_thr = -1};
        if (rel < 0) {
            sim_finding(&in, "%s at %ld bytes before the block's shared memory", insn, -rel);
            return -1;
        }
        *off = (uint32_t)rel;
        return 0;
    }
    finding_in in = {.kind = FATTN_SIMK_SHARED_OOB,
                     .t = t,
                     .site = s,
                     .space = "shared",
                     .size = size,
                     .insn = insn,
                     .other_thr = -1};
    for (unsigned r = 0; r < S->l->cluster; ++r)
        if (r != t->rank && q >= S->blocks[r].smem && q < S->blocks[r].smem + S->l->smem_bytes) {
            sim_finding(&in, "%s through a generic pointer into block rank %u's shared memory", insn, r);
            return -1;
        }
    sim_finding(&in, "%s at %p, which is not in the block's shared memory", insn, p);
    return -1;
}

/* The global buffer holding [p, p + size), checked: NULL when the access
 * faults (recorded). */
sim_buf *sim_global_check(const fattn_sim_site *s, const void *p, unsigned size, int write, const char *insn,
                          uint64_t *off)
{
    const uint8_t *q = p;
    finding_in in = {.t = sim_me(), .site = s, .space = "global", .size = size, .insn = insn, .other_thr = -1};
    for (int i = 0; i < SIM_BUFS; ++i) {
        sim_buf *b = &S->bufs[i];
        if (!b->alloc || q < b->base - GUARD || q >= b->base + b->size + GUARD)
            continue;
        long rel = (long)(q - b->base);
        in.addr = (uint64_t)rel;
        if (rel < 0 || (size_t)rel + size > b->size) {
            in.kind = FATTN_SIMK_GLOBAL_OOB;
            if (rel < 0)
                sim_finding(&in, "%s at %ld bytes before %s", insn, -rel, b->name);
            else
                sim_finding(&in, "%s at %s + %ld, past the end of its %zu bytes", insn, b->name, rel, b->size);
            return NULL;
        }
        if ((uintptr_t)q % size) {
            in.kind = FATTN_SIMK_MISALIGNED;
            sim_finding(&in, "%s at %s + %ld is not %u-byte aligned", insn, b->name, rel, size);
            return NULL;
        }
        if (write && !b->writable) {
            in.kind = FATTN_SIMK_INPUT_WRITE;
            sim_finding(&in, "%s writes the input %s at %s + %ld", insn, b->name, b->name, rel);
            return NULL;
        }
        *off = (uint64_t)rel;
        return b;
    }
    in.kind = FATTN_SIMK_GLOBAL_OOB;
    sim_finding(&in, "%s at %p, outside Q, K, V and O", insn, p);
    return NULL;
}

static void api_load(fattn_sim_site s, int space, const void *p, void *out, unsigned size)
{
    char insn[48];
    uint64_t off;
    if (space == FATTN_SIM_SHARED) {
        sim_access_insn(insn, sizeof insn, "ld", "shared", size);
        uint32_t a;
        if (sim_smem_offset(&s, p, size, insn, &a) || sim_smem_check(&s, sim_me()->rank, a, size, size, insn)) {
            memset(out, 0xff, size);
            return;
        }
        sim_shadow_read(&s, sim_me()->rank, a, size, insn);
        note_access(sim_me(), s.line, "ld.shared", a, size);
        memcpy(out, S->blocks[sim_me()->rank].smem + a, size);
    } else {
        sim_access_insn(insn, sizeof insn, "ld", "global", size);
        if (sim_global_check(&s, p, size, 0, insn, &off))
            memcpy(out, p, size);
        else
            memset(out, 0xff, size);
    }
}

/* A store of a wgmma accumulator still in flight (its poison): the read
 * before the wait_group that the simulator can see. */
static void poison_store(const fattn_sim_site *s, const void *in, unsigned size, const char *insn)
{
    for (unsigned i = 0; i + 4 <= size; i += 4) {
        uint32_t u;
        memcpy(&u, (const uint8_t *)in + i, 4);
        if (u == SIM_POISON_BITS) {
            finding_in f = {.kind = FATTN_SIMK_WGMMA_EARLY, .t = sim_me(), .site = s, .insn = insn, .other_thr = -1};
            sim_finding(&f, "%s stores a wgmma accumulator before the wait_group that retires its wgmma", insn);
            return;
        }
    }
}

static void api_store(fattn_sim_site s, int space, void *p, const void *in, unsigned size)
{
    char insn[48];
    uint64_t off;
    poison_store(&s, in, size, space == FATTN_SIM_SHARED ? "st.shared" : "st.global");
    if (space == FATTN_SIM_SHARED) {
        sim_access_insn(insn, sizeof insn, "st", "shared", size);
        uint32_t a;
        if (sim_smem_offset(&s, p, size, insn, &a) || sim_smem_check(&s, sim_me()->rank, a, size, size, insn))
            return;
        sim_shadow_write(&s, sim_me()->rank, a, size, insn, 0);
        note_access(sim_me(), s.line, "st.shared", a, size);
        memcpy(S->blocks[sim_me()->rank].smem + a, in, size);
    } else {
        sim_access_insn(insn, sizeof insn, "st", "global", size);
        if (sim_global_check(&s, p, size, 1, insn, &off))
            memcpy(p, in, size);
    }
}

static unsigned api_smem_addr(fattn_sim_site s, const void *p)
{
    uint32_t a = 0;
    sim_smem_offset(&s, p, 0, "cvta.to.shared", &a);
    return a;
}

/* ---- barriers ---- */

/* Thread t arrives at a barrier of n threads (`count` arrived so far, the
 * first of them at `*site`): a thread arriving at another line than those
 * waiting is divergent. Returns 0 after waiting (state `wait` until released),
 * 1 for the last to arrive, which releases the others. */
static int barrier_arrive(sim_thread *t, fattn_sim_site s, unsigned *count, fattn_sim_site *site, unsigned n, int wait,
                          const char *insn, const char *name, const char *others)
{
    if (*count && site->line != s.line) {
        finding_in in = {
            .kind = FATTN_SIMK_DIVERGENT, .t = t, .site = &s, .insn = insn, .other_thr = -1, .other_line = site->line};
        sim_finding(&in, "%s reached at line %d while %s wait at line %d", name, s.line, others, site->line);
    }
    *site = s;
    t->wait_site = s;
    if (++*count < n) {
        t->state = wait;
        fattn_fiber_yield();
        return 0;
    }
    *count = 0;
    return 1;
}

/* Releases the n threads from `first` waiting in state `wait`, and flushes
 * their warps. */
static void barrier_release(unsigned first, unsigned n, int wait)
{
    for (unsigned i = first; i < first + n; ++i)
        if (S->threads[i].state == wait)
            S->threads[i].state = T_RUN;
    for (unsigned w = first / 32; w < (first + n) / 32; ++w)
        sim_warp_flush(&S->warps[w]);
}

static void api_syncthreads(fattn_sim_site s)
{
    sim_thread *t = sim_me();
    sim_block *b = &S->blocks[t->rank];
    if (!barrier_arrive(t, s, &b->bar_count, &b->bar_site, S->l->threads, T_BAR, "bar.sync 0", "__syncthreads",
                        "other threads of the block"))
        return;
    sim_vc_barrier(t->rank * S->l->threads, S->l->threads);
    barrier_release(t->rank * S->l->threads, S->l->threads, T_BAR);
}

static void api_cluster_sync(fattn_sim_site s)
{
    sim_thread *t = sim_me();
    if (!barrier_arrive(t, s, &S->cluster_count, &S->cluster_site, S->nthreads, T_CLUSTER, "barrier.cluster",
                        "cluster barrier", "other threads"))
        return;
    sim_vc_barrier(0, S->nthreads);
    barrier_release(0, S->nthreads, T_CLUSTER);
}

static unsigned api_cluster_rank(fattn_sim_site s)
{
    (void)s;
    return sim_me()->rank;
}

/* ---- warp collectives ---- */

static const char *op_name(int op, int trans)
{
    switch (op) {
    case OP_LDMATRIX: return trans ? "ldmatrix.x4.trans" : "ldmatrix.x4";
    case OP_MMA: return "mma.m16n8k16";
    case OP_SHFL: return "shfl.sync.bfly";
    default: return "?";
    }
}

static void exec_ldmatrix(sim_warp *w, unsigned first_tid, unsigned rank)
{
    fattn_sim_smem sm = {S->blocks[rank].smem, S->l->smem_bytes};
    uint32_t addr[32], out[32][4];
    const char *insn = op_name(OP_LDMATRIX, w->trans);
    sim_thread *self = S->cur;
    int bad = 0;
    for (int l = 0; l < 32; ++l) {
        addr[l] = w->args[l].addr;
        S->cur = &S->threads[rank * S->l->threads + first_tid + (unsigned)l]; /* the lane the row belongs to */
        bad |= sim_smem_check(&w->site, rank, addr[l], 16, 16, insn);
    }
    if (bad) { /* not executed: the registers keep what they held */
        S->cur = self;
        return;
    }
    for (int l = 0; l < 32; ++l) {
        S->cur = &S->threads[rank * S->l->threads + first_tid + (unsigned)l];
        sim_shadow_read(&w->site, rank, addr[l], 16, insn);
    }
    S->cur = self;
    fattn_sim_fault f;
    unsigned waves = 0;
    fattn_sim_ldmatrix_x4(&sm, addr, w->trans, out, &f, &waves);
    for (int l = 0; l < 32; ++l)
        memcpy(w->args[l].r, out[l], sizeof out[l]);
    /* One phase per matrix: its 8 rows. */
    static const unsigned sixteen[8] = {16, 16, 16, 16, 16, 16, 16, 16};
    unsigned worst = 0;
    for (int m = 0; m < 4; ++m) {
        unsigned ways = fattn_sim_wavefronts(addr + 8 * m, sixteen, 8);
        worst = ways > worst ? ways : worst;
    }
    site_add(site_index(w->site.line, insn, 16), 4, waves, worst);
}

static void exec_mma(sim_warp *w)
{
    uint32_t a[32][4], b[32][2];
    float c[32][4], d[32][4];
    for (int l = 0; l < 32; ++l) {
        memcpy(a[l], w->args[l].a, sizeof a[l]);
        b[l][0] = w->args[l].b0, b[l][1] = w->args[l].b1;
        memcpy(c[l], w->args[l].d, sizeof c[l]);
    }
    fattn_sim_mma_m16n8k16(a, b, c, d);
    for (int l = 0; l < 32; ++l)
        memcpy(w->args[l].d, d[l], sizeof d[l]);
}

static void exec_shfl(sim_warp *w, unsigned first_tid, unsigned rank)
{
    uint32_t a[32], d[32];
    for (int l = 0; l < 32; ++l) {
        a[l] = w->args[l].v;
        if (w->args[l].mask != 0xffffffffu || w->args[l].lanemask != w->args[0].lanemask) {
            S->cur = &S->threads[rank * S->l->threads + first_tid + (unsigned)l];
            finding_in in = {
                .kind = FATTN_SIMK_DIVERGENT, .t = S->cur, .site = &w->site, .insn = "shfl.sync.bfly", .other_thr = -1};
            sim_finding(&in, "shfl.sync with membermask 0x%x and lane mask %d (lane 0: 0x%x, %d)", w->args[l].mask,
                        w->args[l].lanemask, w->args[0].mask, w->args[0].lanemask);
        }
    }
    fattn_sim_fault f;
    fattn_sim_shfl_bfly(a, (unsigned)w->args[0].lanemask, 0x1f, 0xffffffffu, d, &f);
    for (int l = 0; l < 32; ++l)
        w->args[l].result = d[l];
}

/* Lane `t` arrives at a collective; the last lane executes it for the warp.
 * Returns with the lane's results in place. */
static void collective(sim_thread *t, const fattn_sim_site *s, int op, int trans)
{
    sim_warp *w = t->warp;
    if (w->arrived && (w->op != op || w->site.line != s->line || w->trans != trans)) {
        finding_in in = {.kind = FATTN_SIMK_DIVERGENT,
                         .t = t,
                         .site = s,
                         .insn = op_name(op, trans),
                         .other_thr = -1,
                         .other_line = w->site.line};
        sim_finding(&in, "%s reached while other lanes of the warp wait at %s (line %d)", op_name(op, trans),
                    op_name(w->op, w->trans), w->site.line);
    }
    w->op = op, w->site = *s, w->trans = trans;
    w->arrived |= 1u << t->lane;
    t->wait_site = *s;
    if (w->arrived != 0xffffffffu) {
        t->state = T_WARP;
        fattn_fiber_yield();
        return;
    }
    const unsigned first = t->tid - t->lane;
    switch (op) {
    case OP_LDMATRIX: exec_ldmatrix(w, first, t->rank); break;
    case OP_MMA: exec_mma(w); break;
    case OP_SHFL: exec_shfl(w, first, t->rank); break;
    }
    S->cur = t;
    ++S->rep->collectives;
    w->arrived = 0;
    w->op = OP_NONE;
    for (unsigned l = 0; l < 32; ++l)
        S->threads[t->rank * S->l->threads + first + l].state = T_RUN;
    sim_warp_flush(w);
}

static void api_ldmatrix_x4(fattn_sim_site s, unsigned r[4], unsigned addr, int trans)
{
    sim_thread *t = sim_me();
    t->warp->args[t->lane].r = r;
    t->warp->args[t->lane].addr = addr;
    collective(t, &s, OP_LDMATRIX, trans);
}

static void api_mma_16816(fattn_sim_site s, float d[4], const unsigned a[4], unsigned b0, unsigned b1)
{
    sim_thread *t = sim_me();
    lane_args *la = &t->warp->args[t->lane];
    la->d = d, la->a = a, la->b0 = b0, la->b1 = b1;
    collective(t, &s, OP_MMA, 0);
}

static unsigned api_shfl_xor(fattn_sim_site s, unsigned mask, unsigned v, int lanemask)
{
    sim_thread *t = sim_me();
    lane_args *la = &t->warp->args[t->lane];
    la->mask = mask, la->v = v, la->lanemask = lanemask;
    collective(t, &s, OP_SHFL, 0);
    return t->warp->args[t->lane].result;
}

/* ---- cp.async ---- */

static void api_cp_async(fattn_sim_site s, unsigned dst, const void *src, unsigned size, unsigned src_size)
{
    sim_thread *t = sim_me();
    char insn[48];
    uint64_t off;
    snprintf(insn, sizeof insn, "cp.async.%s %u", size == 16 ? "cg" : "ca", size);
    if (sim_smem_check(&s, t->rank, dst, size, size, insn))
        return;
    /* The source is aligned to the copy's size, and inside its buffer when read. */
    if (src_size && !sim_global_check(&s, src, size, 0, insn, &off))
        return;
    if ((uintptr_t)src % size) {
        finding_in in = {.kind = FATTN_SIMK_MISALIGNED,
                         .t = t,
                         .site = &s,
                         .space = "global",
                         .size = size,
                         .insn = insn,
                         .other_thr = -1};
        sim_finding(&in, "%s source %p is not %u-byte aligned", insn, src, size);
        return;
    }
    sim_shadow_write(&s, t->rank, dst, size, insn, 1);
    note_access(t, s.line, "cp.async", dst, size);
    if (t->ncopies == t->cap_copies) {
        const int cap = t->cap_copies ? 2 * t->cap_copies : 64;
        t->copies = fattn_xrealloc(t->copies, (size_t)cap * sizeof *t->copies), t->cap_copies = cap;
    }
    t->copies[t->ncopies++] = (async_copy){dst, src, size, src_size, -1, s.line};
}

static void api_cp_async_commit(fattn_sim_site s)
{
    sim_thread *t = sim_me();
    (void)s;
    for (int i = 0; i < t->ncopies; ++i)
        if (t->copies[i].group < 0)
            t->copies[i].group = t->groups;
    ++t->groups;
}

/* Lands every copy of thread t in a group older than `keep_from`. */
static void retire(sim_thread *t, int keep_from, int all)
{
    sim_block *b = &S->blocks[t->rank];
    int n = 0;
    for (int i = 0; i < t->ncopies; ++i) {
        async_copy *c = &t->copies[i];
        if (all || (c->group >= 0 && c->group < keep_from)) {
            memset(b->smem + c->dst, 0, c->size);
            memcpy(b->smem + c->dst, c->src, c->src_size);
            for (unsigned k = 0; k < c->size; ++k) {
                shadow *h = &b->sh[c->dst + k];
                h->flags = (uint8_t)((h->flags | SH_WRITTEN) & ~SH_PENDING);
                h->w_thr = (uint16_t)t->gtid, h->w_line = (uint16_t)c->line;
                h->w_clk = sim_now(t);
            }
        } else {
            t->copies[n++] = *c;
        }
    }
    t->ncopies = n;
}

static void api_cp_async_wait(fattn_sim_site s, int n)
{
    (void)s;
    sim_thread *t = sim_me();
    retire(t, t->groups - n, 0);
}

/* ---- distributed shared memory ---- */

static unsigned api_cluster_map(fattn_sim_site s, unsigned addr, unsigned rank)
{
    if (rank >= S->l->cluster) {
        finding_in in = {.kind = FATTN_SIMK_SHARED_OOB,
                         .t = sim_me(),
                         .site = &s,
                         .space = "shared",
                         .addr = addr,
                         .insn = "mapa.shared::cluster",
                         .other_thr = -1};
        sim_finding(&in, "mapa to block rank %u of a cluster of %u", rank, S->l->cluster);
        rank = sim_me()->rank;
    }
    return ((rank + 1u) << CLUSTER_SHIFT) | (addr & ((1u << CLUSTER_SHIFT) - 1u));
}

static void api_ld_cluster(fattn_sim_site s, unsigned addr, void *out, unsigned size)
{
    sim_thread *t = sim_me();
    char insn[48];
    snprintf(insn, sizeof insn, "ld.shared::cluster.%s", size == 16 ? "v4.f32" : "f32");
    unsigned rank = addr >> CLUSTER_SHIFT ? (addr >> CLUSTER_SHIFT) - 1u : t->rank;
    uint32_t off = addr & ((1u << CLUSTER_SHIFT) - 1u);
    if (sim_smem_check(&s, rank, off, size, size, insn)) {
        memset(out, 0xff, size);
        return;
    }
    sim_shadow_read(&s, rank, off, size, insn);
    memcpy(out, S->blocks[rank].smem + off, size);
}

static const fattn_sim_api api = {
    .version = FATTN_SIM_API_VERSION,
    .load = api_load,
    .store = api_store,
    .smem_addr = api_smem_addr,
    .syncthreads = api_syncthreads,
    .ldmatrix_x4 = api_ldmatrix_x4,
    .mma_16816 = api_mma_16816,
    .shfl_xor = api_shfl_xor,
    .cp_async = api_cp_async,
    .cp_async_commit = api_cp_async_commit,
    .cp_async_wait = api_cp_async_wait,
    .cluster_rank = api_cluster_rank,
    .cluster_sync = api_cluster_sync,
    .cluster_map = api_cluster_map,
    .ld_cluster = api_ld_cluster,
    .wgmma_fence = sim_api_wgmma_fence,
    .wgmma_commit = sim_api_wgmma_commit,
    .wgmma_wait = sim_api_wgmma_wait,
    .wgmma = sim_api_wgmma,
    .mbar_init = sim_api_mbar_init,
    .mbar_arrive = sim_api_mbar_arrive,
    .mbar_try_wait = sim_api_mbar_try_wait,
    .fence_proxy_async = sim_api_fence_proxy_async,
    .fence_mbarrier_init = sim_api_fence_mbarrier_init,
    .tma_load = sim_api_tma_load,
    .tma_store = sim_api_tma_store,
    .bulk_commit = sim_api_bulk_commit,
    .bulk_wait_read = sim_api_bulk_wait_read,
    .bar_named = sim_api_bar_named,
    .setmaxnreg = sim_api_setmaxnreg,
    .tma_load_ex = sim_api_tma_load_ex,
    .mbar_arrive_cluster = sim_api_mbar_arrive_cluster,
};

/* ---- the launch ---- */

static void thread_main(void *arg)
{
    sim_thread *t = arg;
    const fattn_sim_launch *l = S->l;
    if (l->args_entry)
        l->args_entry(S->argv);
    else
        l->entry(S->bufs[0].base, S->bufs[1].base, S->bufs[2].base, S->bufs[3].base, l->batch, l->heads, l->seqlen,
                 l->scale);
    retire(t, 0, 1); /* copies still in flight land after the thread exits */
    if (l->sm90)
        sim_hopper_exit(t);
    t->state = T_DONE;
}

static const char *state_name(int st)
{
    switch (st) {
    case T_WARP: return "a warp collective";
    case T_BAR: return "__syncthreads";
    case T_CLUSTER: return "the cluster barrier";
    default: return "nothing";
    }
}

/* Nothing can run and not every thread has returned: name what waits on what. */
static void deadlock(void)
{
    sim_thread *waiter = NULL, *gone = NULL;
    for (unsigned i = 0; i < S->nthreads; ++i) {
        sim_thread *t = &S->threads[i];
        if (t->state == T_DONE)
            gone = gone ? gone : t;
        else if (!waiter)
            waiter = t;
    }
    finding_in in = {.t = waiter, .site = &waiter->wait_site, .other_thr = gone ? (int)gone->gtid : -1};
    if (sim_hopper_deadlock(waiter))
        return;
    if (waiter->state == T_WARP) {
        sim_warp *w = waiter->warp;
        int missing = -1;
        for (int l = 0; l < 32 && missing < 0; ++l)
            if (!(w->arrived >> l & 1u))
                missing = l;
        sim_thread *m = &S->threads[waiter->tid - waiter->lane + (unsigned)missing + waiter->rank * S->l->threads];
        in.kind = FATTN_SIMK_DIVERGENT;
        in.insn = op_name(w->op, w->trans);
        in.other_thr = (int)m->gtid;
        in.other_line = m->state == T_DONE ? 0 : m->wait_site.line;
        sim_finding(&in, "%s waits for lane %d, which %s", in.insn, missing,
                    m->state == T_DONE  ? "has exited"
                    : m->state == T_BAR ? "waits at __syncthreads"
                                        : "waits at another instruction");
        return;
    }
    in.kind = FATTN_SIMK_DEADLOCK;
    in.insn = waiter->state == T_BAR ? "bar.sync 0" : "barrier.cluster";
    if (gone)
        sim_finding(&in, "thread %u waits at %s, which thread %u will never reach: it has exited", waiter->tid,
                    state_name(waiter->state), gone->tid);
    else
        sim_finding(&in, "thread %u waits at %s forever", waiter->tid, state_name(waiter->state));
}

static int run_cluster(unsigned cx, unsigned by, unsigned bz)
{
    const fattn_sim_launch *l = S->l;
    S->cluster_count = 0;
    memset(S->vc, 0, (size_t)S->nthreads * S->ncols * sizeof *S->vc);
    for (unsigned i = 0; i < S->nthreads; ++i)
        sim_clock_of(i)[i] = 1;
    for (unsigned r = 0; r < l->cluster; ++r) {
        sim_block *b = &S->blocks[r];
        memset(b->smem, 0xff, l->smem_bytes);
        memset(b->sh, 0, (size_t)l->smem_bytes * sizeof *b->sh);
        b->bar_count = 0;
    }
    for (unsigned i = 0; i < S->nthreads / 32; ++i) {
        S->warps[i].arrived = 0;
        S->warps[i].op = OP_NONE;
        S->warps[i].nacc = S->warps[i].nocc = 0;
    }
    for (unsigned i = 0; i < S->nthreads; ++i) {
        sim_thread *t = &S->threads[i];
        t->rank = i / l->threads;
        t->tid = i % l->threads;
        t->gtid = i;
        t->lane = t->tid % 32;
        t->warp = &S->warps[i / 32];
        t->self.thread_idx = (fattn_sim_dim3){t->tid, 0, 0};
        t->self.block_idx = (fattn_sim_dim3){cx * l->cluster + t->rank, by, bz};
        t->self.block_dim = (fattn_sim_dim3){l->threads, 1, 1};
        t->self.grid_dim = (fattn_sim_dim3){l->grid[0], l->grid[1], l->grid[2]};
        t->self.smem = S->blocks[t->rank].smem;
        t->state = T_RUN;
        t->ncopies = 0;
        t->groups = 0;
        t->nfences = t->nbulk = 0;
        t->wg_fenced = t->wg_groups = t->bulk_groups = 0;
        t->bulk_agent = -1;
        t->fiber = fattn_fiber_at(S->pool, (int)i);
        fattn_fiber_start(t->fiber, thread_main, t);
    }
    sim_hopper_reset();
    S->rep->blocks += l->cluster;
    for (;;) {
        int ran = 0, live = 0;
        for (unsigned i = 0; i < S->nthreads && !S->stop; ++i) {
            sim_thread *t = &S->threads[i];
            if (t->state == T_DONE)
                continue;
            ++live;
            if (t->state != T_RUN)
                continue;
            S->cur = t;
            *l->self_slot = &t->self;
            fattn_fiber_resume(t->fiber);
            ++S->rep->switches;
            S->cur = NULL;
            ran = 1;
        }
        if (S->stop)
            return 1;
        if (!live)
            break;
        if (!ran) {
            deadlock();
            return 1;
        }
    }
    for (unsigned i = 0; i < S->nthreads / 32; ++i)
        sim_warp_flush(&S->warps[i]);
    return 0;
}

static int buf_alloc(sim_buf *b, const char *name, size_t size, int writable)
{
    b->name = name;
    b->size = size;
    b->writable = writable;
    b->alloc = malloc(size + 2 * (size_t)GUARD);
    b->base = b->alloc ? b->alloc + GUARD : NULL;
    return b->alloc ? 0 : -1;
}

static void release(sim *s)
{
    for (int i = 0; i < SIM_BUFS; ++i)
        free(s->bufs[i].alloc);
    free(s->o_stores);
    free(s->tmap_img);
    if (s->blocks)
        for (unsigned r = 0; r < s->l->cluster; ++r) {
            free(s->blocks[r].alloc);
            free(s->blocks[r].sh);
        }
    sim_hopper_free(s);
    if (s->threads)
        for (unsigned i = 0; i < s->nthreads; ++i)
            free(s->threads[i].copies);
    if (s->warps)
        for (unsigned i = 0; i < s->nthreads / 32; ++i)
            free(s->warps[i].acc);
    free(s->vc);
    free(s->tmaps);
    free(s->wgs);
    free(s->blocks);
    free(s->threads);
    free(s->warps);
    fattn_fiber_pool_free(&s->pool);
}

int fattn_sim_run(const fattn_sim_launch *l, fattn_sim_report *rep)
{
    sim s;
    memset(&s, 0, sizeof s);
    memset(rep, 0, sizeof *rep);
    s.l = l;
    s.rep = rep;
    if (!l->threads || l->threads % 32 || l->threads > 1024 || !l->cluster || l->grid[0] % l->cluster)
        return fattn_error(FATTN_EFAIL, "simulator: a launch of %u threads in clusters of %u over %u blocks in x",
                           l->threads, l->cluster, l->grid[0]);
    for (size_t i = 0; l->clusters_x && i < l->nclusters_x; ++i)
        if (l->clusters_x[i] >= l->grid[0] / l->cluster)
            return fattn_error(FATTN_EFAIL, "simulator: cluster %u along x of a grid of %u", l->clusters_x[i],
                               l->grid[0] / l->cluster);
    const size_t elems = (size_t)l->batch * l->heads * l->seqlen * l->head_dim, bytes = elems * 2;
    s.nthreads = l->threads * l->cluster;
    s.nwg = l->cluster * ((l->threads + 127) / 128);
    s.col_mbar = s.nthreads;
    s.col_wg = s.col_mbar + (l->sm90 ? l->cluster * SIM_MBARS : 0);
    s.col_bulk = s.col_wg + (l->sm90 ? s.nwg : 0);
    s.ncols = s.col_bulk + (l->sm90 ? l->cluster * SIM_BULK_AGENTS : 0);
    s.regs = l->regs ? l->regs : 65536 / l->threads / 8 * 8;
    if (s.regs > 256)
        s.regs = 256;
    s.threads = calloc(s.nthreads, sizeof *s.threads);
    s.warps = calloc(s.nthreads / 32, sizeof *s.warps);
    s.blocks = calloc(l->cluster, sizeof *s.blocks);
    s.wgs = calloc(s.nwg, sizeof *s.wgs);
    s.vc = calloc((size_t)s.nthreads * s.ncols, sizeof *s.vc);
    s.tmaps = calloc(l->ntmaps ? l->ntmaps : 1, sizeof *s.tmaps);
    s.tmap_img = aligned_alloc(64, (l->ntmaps ? l->ntmaps : 1) * sizeof *s.tmap_img);
    int bad = !s.threads || !s.warps || !s.blocks || !s.wgs || !s.vc || !s.tmaps || !s.tmap_img;
    for (unsigned r = 0; !bad && r < l->cluster; ++r) {
        sim_block *b = &s.blocks[r];
        b->alloc = aligned_alloc(128, ((size_t)l->smem_bytes + 2 * (size_t)GUARD + 127) / 128 * 128);
        b->sh = calloc(l->smem_bytes ? l->smem_bytes : 1, sizeof *b->sh);
        b->smem = b->alloc ? b->alloc + GUARD : NULL;
        bad = !b->alloc || !b->sh;
    }
    bad = bad || buf_alloc(&s.bufs[0], "Q", bytes, 0) || buf_alloc(&s.bufs[1], "K", bytes, 0)
          || buf_alloc(&s.bufs[2], "V", bytes, 0) || buf_alloc(&s.bufs[3], "O", bytes, 1)
          || (l->workspace && buf_alloc(&s.bufs[4], "W", l->workspace, 1));
    bad = bad || !(s.o_stores = calloc(elems ? elems : 1, 1));
    if (bad) {
        release(&s);
        return fattn_error(FATTN_EFAIL, "simulator: out of memory for a launch of %zu-element tensors", elems);
    }
    s.pool = fattn_fiber_pool_new((int)s.nthreads, STACK_BYTES);
    if (!s.pool) {
        release(&s);
        return FATTN_EFAIL;
    }
    memcpy(s.bufs[0].base, l->q, bytes);
    memcpy(s.bufs[1].base, l->k, bytes);
    memcpy(s.bufs[2].base, l->v, bytes);
    memcpy(s.bufs[3].base, l->o, bytes);
    if (l->workspace)
        memset(s.bufs[4].base, 0, l->workspace);
    /* The parameters: one tensor map for each FATTN_ARG_TMAP; no workspace
     * parameter without one, nor one without a parameter. */
    if (l->args_entry) {
        unsigned maps = 0;
        int ws = 0, bad_kind = -1;
        for (int i = 0; i < l->nargs; ++i) {
            maps += l->args[i].kind == FATTN_ARG_TMAP;
            ws |= l->args[i].kind == FATTN_ARG_WORKSPACE;
            if (l->args[i].kind < 0 || l->args[i].kind >= FATTN_ARG_KINDS)
                bad_kind = i;
        }
        if (l->nargs < 0 || l->nargs > FATTN_MAX_ARGS || bad_kind >= 0 || maps != l->ntmaps
            || ws != (l->workspace > 0)) {
            release(&s);
            return fattn_error(FATTN_EFAIL,
                               "simulator: %d parameters (%u tensor maps, %s workspace) for %u tensor maps and %zu "
                               "bytes of workspace",
                               l->nargs, maps, ws ? "a" : "no", l->ntmaps, l->workspace);
        }
        /* Their values, the same for every thread: the simulator's buffers
         * (Q, K, V, O, then W), the shape, the scale, the maps' images. */
        for (int i = 0; i < SIM_BUFS; ++i)
            s.arg_ptr[i] = s.bufs[i].base;
        s.arg_int[0] = l->batch, s.arg_int[1] = l->heads, s.arg_int[2] = l->seqlen;
        s.arg_scale = l->scale;
        for (int i = 0, m = 0; i < l->nargs; ++i) {
            const int k = l->args[i].kind;
            s.argv[i] = k <= FATTN_ARG_O           ? (void *)&s.arg_ptr[k]
                        : k == FATTN_ARG_WORKSPACE ? (void *)&s.arg_ptr[4]
                        : k == FATTN_ARG_SCALE     ? (void *)&s.arg_scale
                        : k == FATTN_ARG_TMAP      ? (void *)s.tmap_img[m++].b
                                                   : (void *)&s.arg_int[k - FATTN_ARG_BATCH];
        }
    }
    /* The tensor maps, moved onto the simulator's buffers, into the kernel's slots. */
    if (!l->args_entry && (l->ntmaps > l->tmap_slots || (l->ntmaps && !l->tmap_slot))) {
        release(&s);
        return fattn_error(FATTN_EFAIL, "simulator: %u tensor maps for a kernel with %u fattn_tmaps slots", l->ntmaps,
                           l->tmap_slot ? l->tmap_slots : 0);
    }
    const uint16_t *user[4] = {l->q, l->k, l->v, l->o};
    for (unsigned i = 0; i < l->ntmaps; ++i) {
        int b = 0;
        while (b < 4
               && !((const uint8_t *)l->tmaps[i].base >= (const uint8_t *)user[b]
                    && (const uint8_t *)l->tmaps[i].base < (const uint8_t *)user[b] + bytes))
            ++b;
        if (b == 4) {
            release(&s);
            return fattn_error(FATTN_EFAIL, "simulator: tensor map %u is based in none of Q, K, V and O", i);
        }
        uint64_t end = 2;
        for (unsigned d = 0; d < l->tmaps[i].rank; ++d)
            end += (l->tmaps[i].dim[d] - 1) * (d ? l->tmaps[i].stride[d - 1] : 2);
        if ((const uint8_t *)l->tmaps[i].base - (const uint8_t *)user[b] + end > bytes) {
            release(&s);
            return fattn_error(FATTN_EFAIL, "simulator: tensor map %u reaches past the end of %s", i, s.bufs[b].name);
        }
        s.tmaps[i] = l->tmaps[i];
        s.tmaps[i].base = s.bufs[b].base + ((const uint8_t *)l->tmaps[i].base - (const uint8_t *)user[b]);
        memset(s.tmap_img[i].b, 0, sizeof s.tmap_img[i].b);
        memcpy(s.tmap_img[i].b, &s.tmaps[i], sizeof s.tmaps[i]);
        if (!l->args_entry)
            memcpy((uint8_t *)l->tmap_slot + 128 * i, s.tmap_img[i].b, 128);
    }
    *l->api_slot = &api;
    S = &s;
    for (unsigned z = 0; z < l->grid[2] && !s.stop && !s.faulted; ++z)
        for (unsigned y = 0; y < l->grid[1] && !s.stop && !s.faulted; ++y)
            for (size_t i = 0; i < (l->clusters_x ? l->nclusters_x : l->grid[0] / l->cluster) && !s.stop && !s.faulted;
                 ++i)
                run_cluster(l->clusters_x ? l->clusters_x[i] : (unsigned)i, y, z);
    S = NULL;
    memcpy(l->o, s.bufs[3].base, bytes);
    release(&s);
    return FATTN_OK;
}

const fattn_sim_finding *fattn_sim_report_worst(const fattn_sim_report *rep)
{
    const fattn_sim_finding *best = NULL;
    for (int i = 0; i < rep->nfindings; ++i)
        if (!best || rep->findings[i].kind < best->kind)
            best = &rep->findings[i];
    return best;
}
