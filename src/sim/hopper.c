/*
 * hopper.c - the asynchronous side of Hopper's instructions in the launch:
 * mbarrier phases, TMA loads landing on them and TMA stores reading their
 * source, wgmma in flight until wait_group, the async-proxy fence, named
 * barriers over subsets of the block, setmaxnreg's register pool.
 *
 * Happens-before is the launch's vector clocks (state.h), with a column per
 * asynchronous agent beside the threads': the TMA loads of an mbarrier, the
 * wgmmas of a warpgroup, the TMA stores of a thread. An agent's operations
 * are numbered; an access it makes is stamped with its column and number,
 * and a thread is ordered after it once its clock holds that number: for a
 * TMA load by acquiring the mbarrier phase it completed in, for a wgmma by
 * a wait_group (of any thread of the warpgroup, then released onwards)
 * retiring it, for a TMA store by its thread's wait_group.read.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/gmma.h"
#include "sim/state.h"
#include "sim/tma.h"
#include "util/err.h"

_Static_assert(sizeof(fattn_tmap) <= 128, "a tensor map description fits the kernel's 128-byte slot");

static void *grow(void *p, int *cap, size_t elem)
{
    const int c = *cap ? 2 * *cap : 8;
    *cap = c;
    return fattn_xrealloc(p, (size_t)c * elem);
}

/* A clock vector of the launch's columns, zeroed. */
static uint32_t *vec_new(void)
{
    return fattn_xcalloc(S->ncols, sizeof(uint32_t));
}

static sim_wg *wg_of(const sim_thread *t)
{
    const unsigned per = (S->l->threads + 127) / 128;
    return &S->wgs[t->rank * per + t->tid / 128];
}

static unsigned wg_col(const sim_thread *t)
{
    return S->col_wg + (unsigned)(wg_of(t) - S->wgs);
}

/* The first thread (gtid) of t's warpgroup, and how many it has. */
static unsigned wg_first(const sim_thread *t)
{
    return t->rank * S->l->threads + t->tid / 128 * 128;
}

static unsigned wg_size(const sim_thread *t)
{
    const unsigned first = t->tid / 128 * 128;
    return S->l->threads - first < 128 ? S->l->threads - first : 128;
}

static void fault(int kind, const fattn_sim_site *s, const char *insn, uint32_t addr, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void fault(int kind, const fattn_sim_site *s, const char *insn, uint32_t addr, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    finding_in in = {
        .kind = kind, .t = sim_me(), .site = s, .space = "shared", .addr = addr, .insn = insn, .other_thr = -1};
    sim_finding(&in, "%s", what);
}

static void fault_of(const fattn_sim_fault *f, const fattn_sim_site *s, const char *insn)
{
    char what[200];
    fattn_sim_fault_describe(f, insn, what, sizeof what);
    const int kind = f->kind == FATTN_SIM_MISALIGNED      ? FATTN_SIMK_MISALIGNED
                     : f->kind == FATTN_SIM_OUT_OF_BOUNDS ? FATTN_SIMK_SHARED_OOB
                                                          : FATTN_SIMK_INVALID_OPERAND;
    fault(kind, s, insn, f->addr, "%s", what);
}

/* ---- the launch's life ---- */

/* Drops what is in flight at the end of a cluster: TMA loads not landed,
 * wgmma results not retired. */
static void drop_inflight(sim *s)
{
    for (unsigned r = 0; s->blocks && r < s->l->cluster; ++r)
        for (int i = 0; i < SIM_MBARS; ++i) {
            sim_mbar *m = &s->blocks[r].mbar[i];
            for (int k = 0; k < m->ntma; ++k)
                free(m->tma[k].data);
            m->ntma = 0;
        }
    for (unsigned i = 0; s->wgs && i < s->nwg; ++i) {
        for (int k = 0; k < s->wgs[i].nfly; ++k)
            free(s->wgs[i].fly[k].result);
        s->wgs[i].nfly = 0;
    }
}

void sim_hopper_reset(void)
{
    drop_inflight(S);
    for (unsigned r = 0; r < S->l->cluster; ++r) {
        sim_block *b = &S->blocks[r];
        for (int i = 0; i < SIM_MBARS; ++i)
            b->mbar[i].live = 0;
        for (int i = 0; i < SIM_NBARS; ++i)
            b->nbar[i].arrived = 0;
        memset(b->bulk_owner, 0, sizeof b->bulk_owner);
        memset(b->bulk_seq, 0, sizeof b->bulk_seq);
        b->regs_used = S->regs * S->l->threads; /* the launch's whole allocation, until a dec frees some */
        b->turn_wg = -1;
        b->exited = 0;
        if (!b->exit_vc) {
            b->exit_vc = vec_new(), b->remote_vc = vec_new();
            b->remote_site = fattn_xcalloc(S->ncols, sizeof *b->remote_site);
        }
        memset(b->exit_vc, 0, S->ncols * sizeof *b->exit_vc);
        memset(b->remote_vc, 0, S->ncols * sizeof *b->remote_vc);
    }
    for (unsigned i = 0; i < S->nwg; ++i) {
        sim_wg *w = &S->wgs[i];
        w->op = WG_NONE;
        w->arrived = 0;
        w->seq = 0;
        w->nreg = S->regs;
        w->nreg_waiting = 0;
    }
}

void sim_hopper_free(sim *s)
{
    drop_inflight(s);
    for (unsigned r = 0; s->blocks && r < s->l->cluster; ++r) {
        sim_block *b = &s->blocks[r];
        for (int i = 0; i < SIM_MBARS; ++i) {
            free(b->mbar[i].tma);
            free(b->mbar[i].acc);
            free(b->mbar[i].done[0]);
            free(b->mbar[i].done[1]);
        }
        for (int i = 0; i < SIM_NBARS; ++i)
            free(b->nbar[i].acc);
        free(b->exit_vc);
        free(b->remote_vc);
        free(b->remote_site);
    }
    for (unsigned i = 0; s->wgs && i < s->nwg; ++i)
        free(s->wgs[i].fly);
    for (unsigned i = 0; s->threads && i < s->nthreads; ++i) {
        free(s->threads[i].fences);
        free(s->threads[i].bulk);
    }
}

/* A release by t into acc: acc joins t's clock, then t's own clock ticks so
 * that what it does next is after the release for nobody yet. */
static void release_into(uint32_t *acc, sim_thread *t)
{
    sim_vc_join(acc, sim_clock_of(t->gtid));
    ++sim_clock_of(t->gtid)[t->gtid];
}

/* ---- the async proxy fence ---- */

void sim_api_fence_proxy_async(fattn_sim_site s)
{
    (void)s;
    sim_thread *t = sim_me();
    const uint32_t c = sim_now(t);
    if (!t->nfences || t->fences[t->nfences - 1] != c) {
        if (t->nfences == t->cap_fences)
            t->fences = grow(t->fences, &t->cap_fences, sizeof *t->fences);
        t->fences[t->nfences++] = c;
    }
    ++sim_clock_of(t->gtid)[t->gtid]; /* writes after the fence are after it */
}

void sim_api_fence_mbarrier_init(fattn_sim_site s)
{
    (void)s; /* the inits are the simulator's own state: visible at once */
}

/* ---- mbarrier ---- */

/* The live mbarrier at shared offset addr of block `rank`, its init ordered
 * before this use by the calling thread; NULL with a finding. */
static sim_mbar *mbar_find_in(const fattn_sim_site *s, unsigned rank, unsigned addr, const char *insn)
{
    sim_thread *t = sim_me();
    if (sim_smem_check(s, rank, addr, 8, 8, insn))
        return NULL;
    sim_block *b = &S->blocks[rank];
    for (int i = 0; i < SIM_MBARS; ++i)
        if (b->mbar[i].live && b->mbar[i].addr == addr) {
            /* The init (a write of the barrier's word) is ordered before this use. */
            const shadow *h = &b->sh[addr];
            if (!sim_ordered(t, h->w_thr, h->w_clk))
                sim_race(FATTN_SIMK_RACE_RAW, s, addr, 8, insn, h->w_thr, h->w_line,
                         "uses the mbarrier initialized by");
            return &b->mbar[i];
        }
    if (rank == t->rank)
        fault(FATTN_SIMK_INVALID_OPERAND, s, insn, addr, "%s on shared 0x%x, which no mbarrier.init initialized", insn,
              addr);
    else
        fault(FATTN_SIMK_INVALID_OPERAND, s, insn, addr,
              "%s on shared 0x%x of block rank %u of the cluster, which no mbarrier.init there initialized", insn, addr,
              rank);
    return NULL;
}

static sim_mbar *mbar_find(const fattn_sim_site *s, unsigned addr, const char *insn)
{
    return mbar_find_in(s, sim_me()->rank, addr, insn);
}

static unsigned mbar_col(unsigned rank, const sim_mbar *m)
{
    return S->col_mbar + rank * SIM_MBARS + (unsigned)(m - S->blocks[rank].mbar);
}

/* The phase completes: the releases into it and every earlier phase become
 * what a wait on its parity acquires, and the threads waiting on that
 * parity go on. */
static void mbar_complete(unsigned rank, sim_mbar *m)
{
    const unsigned parity = m->phase & 1u;
    memcpy(m->done[parity], m->acc, S->ncols * sizeof *m->acc);
    ++m->phase;
    m->pending = m->count;
    const int slot = (int)(m - S->blocks[rank].mbar);
    for (unsigned i = rank * S->l->threads; i < (rank + 1) * S->l->threads; ++i) {
        sim_thread *w = &S->threads[i];
        if (w->state == T_MBAR && w->mbar == slot && w->mbar_parity == parity) {
            sim_vc_join(sim_clock_of(w->gtid), m->done[parity]);
            w->state = T_RUN;
        }
    }
}

/* 1 when a thread of block `rank` waits on m's current phase. */
static int mbar_observed(unsigned rank, const sim_mbar *m)
{
    const int slot = (int)(m - S->blocks[rank].mbar);
    for (unsigned i = rank * S->l->threads; i < (rank + 1) * S->l->threads; ++i) {
        const sim_thread *w = &S->threads[i];
        if (w->state == T_MBAR && w->mbar == slot && w->mbar_parity == (m->phase & 1u))
            return 1;
    }
    return 0;
}

/* Lands TMA bytes once every arrival of the phase is in, as far as the
 * phase's transaction count goes (a box counted short leaves its rest in
 * flight past the phase), and completes the phase when both are done. The
 * bytes land as late as the hardware may land them: when a wait observes
 * the phase (`observe`, or a thread already waiting on it), not when they
 * are issued, so that an arrival on a phase still waiting for its bytes is
 * one too many, and a block's exit with loads in flight is seen (a phase of
 * arrivals alone completes on its last arrival). */
static void mbar_progress(unsigned rank, sim_mbar *m, int observe)
{
    sim_block *b = &S->blocks[rank];
    const unsigned col = mbar_col(rank, m);
    while (m->pending == 0) {
        if (m->tx == 0) {
            mbar_complete(rank, m);
            break;
        }
        if (!m->ntma || !(observe || mbar_observed(rank, m)))
            break;
        sim_tma *x = &m->tma[0];
        uint32_t chunk = x->bytes - x->landed;
        if (m->tx > 0 && chunk > m->tx)
            chunk = (uint32_t)m->tx;
        memcpy(b->smem + x->dst + x->landed, x->data + x->landed, chunk);
        for (uint32_t k = x->landed; k < x->landed + chunk; ++k)
            b->sh[x->dst + k].flags = (uint8_t)((b->sh[x->dst + k].flags | SH_WRITTEN) & ~SH_PENDING);
        x->landed += chunk;
        m->tx -= chunk;
        if (m->acc[col] < x->seq)
            m->acc[col] = x->seq;
        if (x->landed == x->bytes) {
            free(x->data);
            memmove(m->tma, m->tma + 1, (size_t)--m->ntma * sizeof *m->tma);
        } else { /* the rest lands in a later phase: a later operation of the agent */
            x->seq = ++m->seq;
            for (uint32_t k = x->landed; k < x->bytes; ++k)
                b->sh[x->dst + k].w_clk = x->seq;
        }
    }
}

void sim_api_mbar_init(fattn_sim_site s, unsigned addr, unsigned count)
{
    sim_thread *t = sim_me();
    if (sim_smem_check(&s, t->rank, addr, 8, 8, "mbarrier.init"))
        return;
    if (!count || count >= 1u << 20) {
        fault(FATTN_SIMK_INVALID_OPERAND, &s, "mbarrier.init", addr,
              "mbarrier.init at shared 0x%x with count %u (1 .. 2^20 - 1)", addr, count);
        return;
    }
    sim_block *b = &S->blocks[t->rank];
    sim_mbar *m = NULL;
    for (int i = 0; i < SIM_MBARS && !m; ++i)
        if (b->mbar[i].live && b->mbar[i].addr == addr)
            m = &b->mbar[i];
    for (int i = 0; i < SIM_MBARS && !m; ++i)
        if (!b->mbar[i].live)
            m = &b->mbar[i];
    if (!m) {
        fault(FATTN_SIMK_INVALID_OPERAND, &s, "mbarrier.init", addr,
              "mbarrier.init at shared 0x%x: more than the simulator's %d mbarriers in a block", addr, SIM_MBARS);
        return;
    }
    if (!m->acc)
        m->acc = vec_new(), m->done[0] = vec_new(), m->done[1] = vec_new();
    for (int k = 0; k < m->ntma; ++k)
        free(m->tma[k].data);
    m->ntma = 0;
    m->live = 1;
    m->addr = addr;
    m->count = m->pending = count;
    m->tx = 0;
    m->phase = 0;
    m->init_site = s;
    memset(m->acc, 0, S->ncols * sizeof *m->acc);
    memset(m->done[0], 0, S->ncols * sizeof *m->acc);
    memset(m->done[1], 0, S->ncols * sizeof *m->acc);
    /* The barrier's word is written: a generic access to it races with this. */
    sim_shadow_write(&s, t->rank, addr, 8, "mbarrier.init", 0);
}

/* One arrival (with expect_tx of tx bytes) on mbarrier m of block `rank`. */
static void arrive_on(const fattn_sim_site *s, unsigned rank, sim_mbar *m, unsigned tx, const char *insn)
{
    const unsigned addr = m->addr;
    sim_thread *t = sim_me();
    if (m->pending == 0) { /* the transaction count holds the phase: one arrival too many */
        fault(FATTN_SIMK_INVALID_OPERAND, s, insn, addr,
              "%s on mbarrier 0x%x past its %u arrivals (phase %u still waits for %lld transaction bytes)", insn, addr,
              m->count, m->phase, (long long)m->tx);
        return;
    }
    m->tx += tx;
    release_into(m->acc, t);
    --m->pending;
    mbar_progress(rank, m, 0);
}

void sim_api_mbar_arrive(fattn_sim_site s, unsigned addr, unsigned tx)
{
    const char *insn = tx ? "mbarrier.arrive.expect_tx" : "mbarrier.arrive";
    sim_mbar *m = mbar_find(&s, addr, insn);
    if (m)
        arrive_on(&s, sim_me()->rank, m, tx, insn);
}

/* ---- the blocks of a cluster ---- */

static int block_gone(unsigned rank)
{
    return S->blocks[rank].exited == S->l->threads;
}

static void finding_exited(const fattn_sim_site *s, const char *insn, unsigned rank, uint32_t addr)
{
    finding_in in = {.kind = FATTN_SIMK_CLUSTER_EXITED,
                     .t = sim_me(),
                     .site = s,
                     .space = "shared",
                     .addr = addr,
                     .insn = insn,
                     .other_thr = -1};
    sim_finding(&in,
                "%s into block rank %u of the cluster, which has exited: a block must not exit while another "
                "may still reach its shared memory (a cluster barrier before the exit)",
                insn, rank);
}

/* The block and offset of a shared::cluster address (mapa's; a shared::cta
 * one is this block's), or -1 with a finding when that block has exited. */
static int cluster_target(const fattn_sim_site *s, unsigned addr, const char *insn, unsigned *rank, uint32_t *off)
{
    *rank = addr >> CLUSTER_SHIFT ? (addr >> CLUSTER_SHIFT) - 1u : sim_me()->rank;
    *off = addr & ((1u << CLUSTER_SHIFT) - 1u);
    if (*rank >= S->l->cluster) {
        fault(FATTN_SIMK_SHARED_OOB, s, insn, addr, "%s at shared::cluster 0x%x: block rank %u of a cluster of %u",
              insn, addr, *rank, S->l->cluster);
        return -1;
    }
    if (block_gone(*rank)) {
        finding_exited(s, insn, *rank, *off);
        return -1;
    }
    return 0;
}

void sim_api_mbar_arrive_cluster(fattn_sim_site s, unsigned addr)
{
    static const char insn[] = "mbarrier.arrive.release.cluster";
    sim_thread *t = sim_me();
    unsigned rank;
    uint32_t off;
    if (cluster_target(&s, addr, insn, &rank, &off))
        return;
    sim_mbar *m = mbar_find_in(&s, rank, off, insn);
    if (!m)
        return;
    if (rank != t->rank) { /* to be ordered before that block's exit */
        sim_block *b = &S->blocks[rank];
        b->remote_vc[t->gtid] = sim_now(t);
        b->remote_site[t->gtid] = s;
    }
    arrive_on(&s, rank, m, 0, insn);
}

void sim_hopper_exit(sim_thread *t)
{
    sim_block *b = &S->blocks[t->rank];
    sim_vc_join(b->exit_vc, sim_clock_of(t->gtid));
    if (++b->exited < S->l->threads)
        return;
    /* The block is gone: no TMA load may still be landing in its shared
     * memory (no wait observed the phase that lands it) ... */
    for (int i = 0; i < SIM_MBARS; ++i) {
        const sim_mbar *m = &b->mbar[i];
        if (!m->live || !m->ntma)
            continue;
        const sim_tma *x = &m->tma[0];
        const fattn_sim_site at = {m->init_site.file, x->line};
        finding_in in = {.kind = FATTN_SIMK_TMA_UNWAITED,
                         .t = t,
                         .site = &at,
                         .space = "shared",
                         .addr = x->dst + x->landed,
                         .size = x->bytes - x->landed,
                         .insn = "cp.async.bulk.tensor",
                         .other_thr = -1};
        sim_finding(&in,
                    "block rank %u of the cluster exits with %u bytes of a TMA load still to land at shared 0x%x "
                    "(mbarrier 0x%x): no wait observed the phase that lands them",
                    t->rank, x->bytes - x->landed, x->dst + x->landed, m->addr);
    }
    /* ... and every arrival another block made on its barriers must have
     * happened before one of its threads exited. */
    for (unsigned u = 0; u < S->nthreads; ++u)
        if (b->remote_vc[u] > b->exit_vc[u]) {
            finding_in in = {.kind = FATTN_SIMK_CLUSTER_EXITED,
                             .t = &S->threads[u],
                             .site = &b->remote_site[u],
                             .space = "shared",
                             .insn = "mbarrier.arrive.release.cluster",
                             .other_thr = (int)t->gtid,
                             .other_line = 0};
            sim_finding(&in,
                        "an arrival on a barrier of block rank %u of the cluster not ordered before that block's "
                        "exit (a cluster barrier before the exit)",
                        t->rank);
        }
}

int sim_api_mbar_try_wait(fattn_sim_site s, unsigned addr, unsigned parity)
{
    sim_thread *t = sim_me();
    sim_mbar *m = mbar_find(&s, addr, "mbarrier.try_wait.parity");
    if (!m)
        return 1;
    parity &= 1u;
    if ((m->phase & 1u) == parity) /* observed: what has arrived lands */
        mbar_progress(t->rank, m, 1);
    /* The phase of parity p is complete while the current one has the other. */
    if ((m->phase & 1u) != parity) {
        sim_vc_join(sim_clock_of(t->gtid), m->done[parity]);
        return 1;
    }
    /* It would return false until the phase completes: the fiber waits there
     * instead of spinning (mbar_complete acquires for it). */
    t->state = T_MBAR;
    t->mbar = (int)(m - S->blocks[t->rank].mbar);
    t->mbar_parity = parity;
    t->wait_site = s;
    fattn_fiber_yield();
    return 1;
}

/* ---- TMA ---- */

static const fattn_tmap *tmap_of(const fattn_sim_site *s, const void *map, const char *insn)
{
    const uint8_t *p = map, *slot = S->l->args_entry ? NULL : S->l->tmap_slot;
    if (slot && p >= slot && p < slot + 128 * (size_t)S->l->ntmaps && (p - slot) % 128 == 0)
        return &S->tmaps[(p - slot) / 128];
    /* A map passed as a parameter: the thread's own copy of one of the
     * launch's, byte for byte. */
    for (unsigned i = 0; S->l->args_entry && p && i < S->l->ntmaps; ++i)
        if (!memcmp(p, S->tmap_img[i].b, sizeof S->tmap_img[i].b))
            return &S->tmaps[i];
    finding_in in = {.kind = FATTN_SIMK_INVALID_OPERAND, .t = sim_me(), .site = s, .insn = insn, .other_thr = -1};
    sim_finding(&in, "%s with a tensor map at %p, which is none of the launch's %u %s", insn, map, S->l->ntmaps,
                S->l->args_entry ? "tensor-map parameters" : "fattn_tmaps");
    return NULL;
}

static int tma_coords(const fattn_sim_site *s, const fattn_tmap *m, const int *coord, int rank, const char *insn)
{
    finding_in in = {.t = sim_me(), .site = s, .space = "global", .insn = insn, .other_thr = -1};
    if ((unsigned)rank != m->rank) {
        in.kind = FATTN_SIMK_INVALID_OPERAND;
        sim_finding(&in, "%s.%dd on a tensor map of rank %u", insn, rank, m->rank);
        return -1;
    }
    if (!fattn_sim_tma_box_inside(m, coord)) {
        in.kind = FATTN_SIMK_GLOBAL_OOB;
        sim_finding(&in, "%s of the box at (%d, %d, %d) of a (%llu, %llu, %llu) tensor: wholly outside it", insn,
                    coord[0], rank > 1 ? coord[1] : 0, rank > 2 ? coord[2] : 0, (unsigned long long)m->dim[0],
                    (unsigned long long)m->dim[1], (unsigned long long)(m->rank > 2 ? m->dim[2] : 1));
        return -1;
    }
    return 0;
}

/* The box (bytes of it, staged at data) landing at shared dst of block
 * `rank` on its mbarrier m: its writes checked against earlier accesses
 * from the issuer's view, pending, stamped as the mbarrier's agent. Takes
 * data. */
static void tma_land(const fattn_sim_site *s, unsigned rank, sim_mbar *m, uint32_t dst, uint8_t *data, long bytes,
                     const char *insn)
{
    sim_block *b = &S->blocks[rank];
    sim_tma x = {.data = data, .dst = dst, .bytes = (uint32_t)bytes, .line = s->line};
    sim_shadow_write(s, rank, dst, (unsigned)bytes, insn, 1);
    x.seq = ++m->seq;
    const unsigned col = mbar_col(rank, m);
    for (uint32_t k = 0; k < x.bytes; ++k)
        b->sh[dst + k].w_thr = (uint16_t)col, b->sh[dst + k].w_clk = x.seq;
    if (m->ntma == m->cap_tma)
        m->tma = grow(m->tma, &m->cap_tma, sizeof *m->tma);
    m->tma[m->ntma++] = x;
    mbar_progress(rank, m, 0);
}

/* The cache policies the simulator takes (fattn_prim_sm90.h's FATTN_L2_*). */
static int policy_known(unsigned long long p)
{
    return p == 0x1000000000000000ull || p == 0x12F0000000000000ull || p == 0x14F0000000000000ull;
}

void sim_api_tma_load_ex(fattn_sim_site s, unsigned dst, const void *map, const int *coord, int rank, unsigned mbar,
                         int multicast, unsigned mask, unsigned long long policy)
{
    const char *insn = multicast ? "cp.async.bulk.tensor.multicast::cluster" : "cp.async.bulk.tensor";
    sim_thread *t = sim_me();
    const unsigned all = (1u << S->l->cluster) - 1u;
    if (!multicast)
        mask = 1u << t->rank;
    if (!mask || mask & ~all) {
        fault(FATTN_SIMK_INVALID_OPERAND, &s, insn, dst, "%s with ctaMask 0x%x in a cluster of %u blocks", insn, mask,
              S->l->cluster);
        return;
    }
    if (policy && !policy_known(policy)) {
        fault(FATTN_SIMK_INVALID_OPERAND, &s, insn, dst,
              "%s with cache policy 0x%llx, none of FATTN_L2_EVICT_{NORMAL,FIRST,LAST}", insn, policy);
        return;
    }
    const fattn_tmap *tm = tmap_of(&s, map, insn);
    if (!tm || tma_coords(&s, tm, coord, rank, insn))
        return;
    sim_mbar *m[32] = {0};
    for (unsigned r = 0; r < S->l->cluster; ++r) {
        if (!(mask >> r & 1u))
            continue;
        if (block_gone(r)) {
            finding_exited(&s, insn, r, dst);
            return;
        }
        if (!(m[r] = mbar_find_in(&s, r, mbar, insn)))
            return;
    }
    fattn_sim_smem sm = {S->blocks[t->rank].smem, S->l->smem_bytes}; /* every block has the launch's size */
    fattn_sim_fault f;
    const long bytes = fattn_sim_tma_check(&sm, dst, tm, &f);
    if (bytes < 0) {
        fault_of(&f, &s, insn);
        return;
    }
    /* The box as it will lie at dst (the swizzle repeats at dst's alignment),
     * the same in every block it lands in. */
    uint8_t *staged = fattn_xmalloc((size_t)bytes);
    fattn_sim_smem stage = {staged, (uint32_t)bytes};
    fattn_sim_tma_load(&stage, 0, tm, coord, &f); /* coord: the map's rank of them (tma_coords) */
    for (unsigned r = 0, left = mask; r < S->l->cluster; ++r) {
        if (!m[r])
            continue;
        left &= ~(1u << r);
        uint8_t *data = staged;
        if (left) /* more to land: each landing owns its copy */
            data = memcpy(fattn_xmalloc((size_t)bytes), staged, (size_t)bytes);
        tma_land(&s, r, m[r], dst, data, bytes, insn);
    }
}

void sim_api_tma_load(fattn_sim_site s, unsigned dst, const void *map, const int *coord, int rank, unsigned mbar)
{
    sim_api_tma_load_ex(s, dst, map, coord, rank, mbar, 0, 0, 0);
}

static int bulk_col(sim_thread *t)
{
    if (t->bulk_agent < 0) {
        sim_block *b = &S->blocks[t->rank];
        int k = 0;
        while (k < SIM_BULK_AGENTS && b->bulk_owner[k])
            ++k;
        if (k == SIM_BULK_AGENTS) /* shared: its reads stay unretired (bulk_wait_read) */
            k = (int)(t->tid % SIM_BULK_AGENTS);
        else
            b->bulk_owner[k] = t->gtid + 1;
        t->bulk_agent = (int)(S->col_bulk + t->rank * SIM_BULK_AGENTS) + k;
    }
    return t->bulk_agent;
}

void sim_api_tma_store(fattn_sim_site s, const void *map, const int *coord, int rank, unsigned src)
{
    static const char insn[] = "cp.async.bulk.tensor store";
    sim_thread *t = sim_me();
    sim_block *b = &S->blocks[t->rank];
    const fattn_tmap *tm = tmap_of(&s, map, insn);
    if (!tm || tma_coords(&s, tm, coord, rank, insn))
        return;
    if (tm->base < (const void *)S->bufs[3].base || tm->base >= (const void *)(S->bufs[3].base + S->bufs[3].size)) {
        finding_in in = {
            .kind = FATTN_SIMK_INPUT_WRITE, .t = t, .site = &s, .space = "global", .insn = insn, .other_thr = -1};
        sim_finding(&in, "%s through a tensor map of an input (Q, K or V)", insn);
        return;
    }
    fattn_sim_smem sm = {b->smem, S->l->smem_bytes};
    fattn_sim_fault f;
    const long bytes = fattn_sim_tma_check(&sm, src, tm, &f);
    if (bytes < 0) {
        fault_of(&f, &s, insn);
        return;
    }
    /* Every element of O stored once over the launch (a persistent
     * schedule visits each tile once). */
    const int64_t at = (const uint8_t *)tm->base - S->bufs[3].base; /* the map's first byte in O */
    const int64_t again =
        fattn_sim_tma_count_stores(tm, coord, S->o_stores + at / 2); /* coord: as tma_coords took it */
    if (again >= 0) {
        const int64_t e = (at + again) / 2, d = S->l->head_dim, sq = S->l->seqlen;
        finding_in in = {
            .kind = FATTN_SIMK_OUTPUT_REWRITTEN, .t = t, .site = &s, .space = "global", .insn = insn, .other_thr = -1};
        sim_finding(&in,
                    "%s writes O[b*h %lld][row %lld][col %lld] a second time: every output element is stored "
                    "once",
                    insn, (long long)(e / d / sq), (long long)(e / d % sq), (long long)(e % d));
    }
    const int col = bulk_col(t);
    const unsigned k = (unsigned)col - S->col_bulk - t->rank * SIM_BULK_AGENTS;
    const uint32_t seq = ++b->bulk_seq[k];
    sim_shadow_read_as(&s, t->rank, src, (unsigned)bytes, insn, sim_clock_of(t->gtid), (unsigned)col, seq, 1);
    fattn_sim_tma_store(&sm, src, tm, coord, &f);
    if (t->nbulk == t->cap_bulk)
        t->bulk = grow(t->bulk, &t->cap_bulk, sizeof *t->bulk);
    t->bulk[t->nbulk++] = (sim_bulk){-1, seq};
}

void sim_api_bulk_commit(fattn_sim_site s)
{
    (void)s;
    sim_thread *t = sim_me();
    for (int i = 0; i < t->nbulk; ++i)
        if (t->bulk[i].group < 0)
            t->bulk[i].group = t->bulk_groups;
    ++t->bulk_groups;
}

void sim_api_bulk_wait_read(fattn_sim_site s, int n)
{
    (void)s;
    sim_thread *t = sim_me();
    int keep = 0;
    /* A column shared by several threads (more stores than SIM_BULK_AGENTS)
     * is never advanced: one thread's retiring would cover another's stores
     * in flight. Writes after such stores then show as races (a false
     * finding, never a missed one). */
    const unsigned k = t->nbulk ? (unsigned)t->bulk_agent - S->col_bulk - t->rank * SIM_BULK_AGENTS : 0;
    const int own = t->nbulk && S->blocks[t->rank].bulk_owner[k] == t->gtid + 1;
    for (int i = 0; i < t->nbulk; ++i) {
        sim_bulk *x = &t->bulk[i];
        if (x->group >= 0 && x->group < t->bulk_groups - n) {
            uint32_t *c = &sim_clock_of(t->gtid)[t->bulk_agent];
            if (own)
                *c = *c > x->seq ? *c : x->seq;
        } else {
            t->bulk[keep++] = *x;
        }
    }
    t->nbulk = keep;
}

/* ---- named barriers ---- */

void sim_api_bar_named(fattn_sim_site s, unsigned id, unsigned count, int wait)
{
    const char *insn = wait ? "bar.sync" : "bar.arrive";
    sim_thread *t = sim_me();
    if (id < 1 || id >= SIM_NBARS || !count || count % 32 || count > S->l->threads) {
        fault(FATTN_SIMK_INVALID_OPERAND, &s, insn, 0,
              "%s %u, %u: the id is 1-15 and the count a multiple of 32 up to the block's %u threads", insn, id, count,
              S->l->threads);
        return;
    }
    sim_nbar *nb = &S->blocks[t->rank].nbar[id];
    if (!nb->acc)
        nb->acc = vec_new();
    if (nb->arrived && nb->count != count) {
        finding_in in = {.kind = FATTN_SIMK_DIVERGENT,
                         .t = t,
                         .site = &s,
                         .insn = insn,
                         .other_thr = -1,
                         .other_line = nb->site.line};
        sim_finding(&in, "%s %u, %u while the threads already there (line %d) count %u", insn, id, count, nb->site.line,
                    nb->count);
    }
    if (!nb->arrived) {
        nb->count = count;
        nb->site = s;
        memset(nb->acc, 0, S->ncols * sizeof *nb->acc);
    }
    release_into(nb->acc, t);
    if (++nb->arrived < count) {
        if (wait) {
            t->state = T_NBAR;
            t->nbar = id;
            t->wait_site = s;
            fattn_fiber_yield();
        }
        return;
    }
    nb->arrived = 0;
    for (unsigned i = t->rank * S->l->threads; i < (t->rank + 1) * S->l->threads; ++i) {
        sim_thread *w = &S->threads[i];
        if (w->state == T_NBAR && w->nbar == id) {
            sim_vc_join(sim_clock_of(w->gtid), nb->acc);
            w->state = T_RUN;
        }
    }
    if (wait)
        sim_vc_join(sim_clock_of(t->gtid), nb->acc);
}

/* ---- warpgroup collectives: wgmma and setmaxnreg ---- */

/* Thread t arrives at warpgroup op `op`; returns 1 in the last thread to
 * arrive (the others wait, state T_WG, and return 0 once it is done). */
static int wg_arrive(sim_thread *t, const fattn_sim_site *s, int op, const char *insn)
{
    sim_wg *w = wg_of(t);
    if (wg_size(t) < 128) {
        fault(FATTN_SIMK_DIVERGENT, s, insn, 0, "%s by warps %u-%u: a warpgroup is four warps from a multiple of 4",
              insn, t->tid / 32 / 4 * 4, (S->l->threads - 1) / 32);
        return 0;
    }
    if (w->arrived && (w->op != op || w->site.line != s->line)) {
        finding_in in = {
            .kind = FATTN_SIMK_DIVERGENT, .t = t, .site = s, .insn = insn, .other_thr = -1, .other_line = w->site.line};
        sim_finding(&in, "%s reached while other threads of warpgroup %u wait at line %d", insn, t->tid / 128,
                    w->site.line);
    }
    w->op = op;
    w->site = *s;
    t->wait_site = *s;
    if (++w->arrived < 128) {
        t->state = T_WG;
        fattn_fiber_yield();
        return 0;
    }
    return 1;
}

static void wg_release(sim_thread *t)
{
    sim_wg *w = wg_of(t);
    w->arrived = 0;
    w->op = WG_NONE;
    for (unsigned i = wg_first(t); i < wg_first(t) + 128; ++i)
        if (S->threads[i].state == T_WG)
            S->threads[i].state = T_RUN;
}

static int is_poison(const float *x)
{
    uint32_t u;
    memcpy(&u, x, 4);
    return u == SIM_POISON_BITS;
}

/* The operand bytes of a wgmma: every element's two bytes, read by the
 * warpgroup's agent as number seq, ordered by the issuing threads' view. */
static void wgmma_reads(const fattn_sim_site *s, sim_thread *t, uint64_t desc, int mn_major, unsigned mn,
                        uint32_t *const view[4], unsigned col, uint32_t seq, const char *insn)
{
    fattn_sim_gmma_desc d;
    fattn_sim_gmma_decode(desc, &d);
    for (unsigned i = 0; i < mn; ++i)
        for (unsigned k = 0; k < 16; ++k)
            sim_shadow_read_as(s, t->rank, fattn_sim_gmma_addr(&d, mn_major, i, k), 2, insn, view[i * 4 / mn], col, seq,
                               1);
}

void sim_api_wgmma(fattn_sim_site s, float *d, unsigned n, const unsigned *a, unsigned long long a_desc,
                   unsigned long long b_desc, int trans_a, int trans_b, int scale_d)
{
    char insn[48];
    snprintf(insn, sizeof insn, "wgmma.m64n%uk16.%s", n, a ? "RS" : "SS");
    sim_thread *t = sim_me();
    sim_wg *w = wg_of(t);
    const unsigned lt = t->tid % 128;
    if (!w->arrived)
        w->mismatch = 0;
    else if (w->n != n || w->a_regs != (a != NULL) || w->a_desc != a_desc || w->b_desc != b_desc
             || w->trans_a != trans_a || w->trans_b != trans_b || w->scale_d != (scale_d != 0))
        w->mismatch = 1;
    w->n = n, w->a_regs = a != NULL, w->a_desc = a_desc, w->b_desc = b_desc;
    w->trans_a = trans_a, w->trans_b = trans_b, w->scale_d = scale_d != 0;
    w->d[lt] = d;
    if (a)
        memcpy(w->a[lt], a, sizeof w->a[lt]);
    w->a_ptr[lt] = a;
    if (!t->wg_fenced) {
        finding_in in = {.kind = FATTN_SIMK_WGMMA_UNFENCED, .t = t, .site = &s, .insn = insn, .other_thr = -1};
        sim_finding(&in,
                    "%s issued with no wgmma.fence since the thread last touched its registers (its last "
                    "commit_group or wait_group, or the start)",
                    insn);
    }
    if (!wg_arrive(t, &s, WG_WGMMA, insn))
        return;
    if (w->mismatch) {
        wg_release(t);
        fault(FATTN_SIMK_DIVERGENT, &s, insn, 0, "%s with operands that differ between the warpgroup's threads", insn);
        return;
    }
    const unsigned first = wg_first(t), col = wg_col(t), half = n / 2;
    /* What the operand reads are ordered after: A's rows 16w .. 16w + 15
     * (warp w's accumulator rows) what warp w's threads saw, B what every
     * warp saw (the meet of the four). */
    uint32_t *wv[4], *bv = vec_new();
    for (unsigned q = 0; q < 4; ++q) {
        wv[q] = vec_new();
        for (unsigned i = first + 32 * q; i < first + 32 * q + 32; ++i)
            sim_vc_join(wv[q], sim_clock_of(i));
    }
    for (unsigned j = 0; j < S->ncols; ++j) {
        uint32_t lo = wv[0][j];
        for (unsigned q = 1; q < 4; ++q)
            lo = wv[q][j] < lo ? wv[q][j] : lo;
        bv[j] = lo;
    }
    uint32_t *const bviews[4] = {bv, bv, bv, bv};
    /* In turn (fattn_wgmma_turns): a warpgroup's issue after another's is
     * ordered after that one, in every thread of the warpgroup. */
    if (S->l->wgmma_turns) {
        sim_block *blk = &S->blocks[t->rank];
        const int me = (int)(t->tid / 128);
        if (blk->turn_wg >= 0 && blk->turn_wg != me && bv[blk->turn_gtid] < blk->turn_clock) {
            finding_in in = {.kind = FATTN_SIMK_WGMMA_UNORDERED,
                             .t = t,
                             .site = &s,
                             .insn = insn,
                             .other_thr = (int)blk->turn_gtid,
                             .other_line = blk->turn_line};
            sim_finding(&in,
                        "%s of warpgroup %d is not ordered after warpgroup %d's wgmma at line %d: the warpgroups do "
                        "not take turns",
                        insn, me, blk->turn_wg, blk->turn_line);
        }
        blk->turn_wg = me, blk->turn_gtid = t->gtid, blk->turn_line = s.line;
        blk->turn_clock = sim_clock_of(t->gtid)[t->gtid];
    }
    sim_wgmma x = {
        .group = -1, .seq = w->seq + 1, .line = s.line, .n = n, .result = fattn_xmalloc(128 * (size_t)half * 4)};
    /* D in: the newest in-flight result on the same registers, else them. */
    float *dp[128];
    if (w->a_regs) {
        memcpy(x.a_ptr, w->a_ptr, sizeof x.a_ptr);
        memcpy(x.a, w->a, sizeof x.a);
    }
    for (unsigned i = 0; i < 128; ++i) {
        x.d[i] = w->d[i];
        dp[i] = x.result + i * half;
        const float *src = w->d[i];
        for (int k = w->nfly - 1; k >= 0; --k)
            if (w->fly[k].d[i] == w->d[i] && w->fly[k].n == n && !(w->fly[k].retired[i / 32] >> (i % 32) & 1u)) {
                src = w->fly[k].result + i * half;
                break;
            }
        memcpy(dp[i], src, half * 4);
    }
    fattn_sim_smem sm = {S->blocks[t->rank].smem, S->l->smem_bytes};
    fattn_sim_wgmma op = {.n = n,
                          .a_regs = w->a_regs,
                          .a_desc = w->a_desc,
                          .a = (const uint32_t(*)[4])w->a,
                          .b_desc = w->b_desc,
                          .trans_a = w->trans_a,
                          .trans_b = w->trans_b,
                          .scale_d = w->scale_d};
    fattn_sim_fault f;
    if (fattn_sim_wgmma_exec(&sm, &op, dp, &f)) {
        for (unsigned q = 0; q < 4; ++q)
            free(wv[q]);
        free(bv);
        free(x.result);
        wg_release(t);
        fault_of(&f, &s, insn);
        return;
    }
    ++w->seq;
    if (!w->a_regs)
        wgmma_reads(&s, t, w->a_desc, w->trans_a, 64, wv, col, x.seq, insn);
    wgmma_reads(&s, t, w->b_desc, w->trans_b, n, bviews, col, x.seq, insn);
    for (unsigned q = 0; q < 4; ++q)
        free(wv[q]);
    free(bv);
    for (unsigned i = 0; i < 128; ++i)
        for (unsigned k = 0; k < half; ++k) {
            const uint32_t p = SIM_POISON_BITS;
            memcpy(&w->d[i][k], &p, 4);
        }
    if (w->nfly == w->cap_fly)
        w->fly = grow(w->fly, &w->cap_fly, sizeof *w->fly);
    w->fly[w->nfly++] = x;
    wg_release(t);
}

void sim_api_wgmma_fence(fattn_sim_site s)
{
    (void)s;
    sim_me()->wg_fenced = 1;
}

void sim_api_wgmma_commit(fattn_sim_site s)
{
    (void)s;
    sim_thread *t = sim_me();
    sim_wg *w = wg_of(t);
    for (int k = 0; k < w->nfly; ++k)
        if (w->fly[k].group < 0)
            w->fly[k].group = t->wg_groups;
    ++t->wg_groups;
    t->wg_fenced = 0; /* registers touched before the next wgmma need a fence again */
}

static void early_access(sim_thread *t, const fattn_sim_site *s, int line, const char *what)
{
    finding_in in = {.kind = FATTN_SIMK_WGMMA_EARLY,
                     .t = t,
                     .site = s,
                     .insn = "wgmma.wait_group",
                     .other_thr = -1,
                     .other_line = line};
    sim_finding(&in, "the wgmma at line %d: %s", line, what);
}

void sim_api_wgmma_wait(fattn_sim_site s, int n, float *const *acc, const unsigned *size, int nacc)
{
    sim_thread *t = sim_me();
    sim_wg *w = wg_of(t);
    const unsigned lt = t->tid % 128;
    const uint32_t bit = 1u << (lt % 32);
    int keep = 0;
    for (int k = 0; k < w->nfly; ++k) {
        sim_wgmma *x = &w->fly[k];
        if (x->group < 0 || x->group >= t->wg_groups - n || (x->retired[lt / 32] & bit)) {
            w->fly[keep++] = *x;
            continue;
        }
        const unsigned half = x->n / 2;
        float *d = x->d[lt];
        int touched = 0;
        for (unsigned i = 0; i < half && !touched; ++i)
            touched = !is_poison(&d[i]);
        if (touched)
            early_access(t, &s, x->line,
                         "its accumulators were written before the wait_group that retires it (on "
                         "the GPU ptxas serializes the wgmma pipeline)");
        if (x->a_ptr[lt] && memcmp(x->a_ptr[lt], x->a[lt], sizeof x->a[lt]))
            early_access(t, &s, x->line, "its A fragment (registers) changed before the wait_group that retires it");
        int named = 0;
        for (int i = 0; i < nacc && !named; ++i)
            named = d >= acc[i] && d < acc[i] + size[i];
        if (!named)
            early_access(t, &s, x->line, "the wait_group that retires it does not name (fence) its accumulators");
        /* A later wgmma in flight on the same registers keeps them poisoned. */
        int later = 0;
        for (int j = k + 1; j < w->nfly && !later; ++j)
            later = w->fly[j].d[lt] == d && !(w->fly[j].retired[lt / 32] & bit);
        if (!later)
            memcpy(d, x->result + lt * half, half * 4);
        uint32_t *c = &sim_clock_of(t->gtid)[wg_col(t)];
        *c = *c > x->seq ? *c : x->seq;
        x->retired[lt / 32] |= bit;
        int all = 1;
        for (int q = 0; q < 4; ++q)
            all &= x->retired[q] == 0xffffffffu;
        if (all)
            free(x->result);
        else
            w->fly[keep++] = *x;
    }
    w->nfly = keep;
    t->wg_fenced = 0;
}

/* ---- setmaxnreg ---- */

/* Grants waiting increases of block `rank` that the pool now holds. */
static void nreg_grant(unsigned rank)
{
    sim_block *b = &S->blocks[rank];
    const unsigned per = (S->l->threads + 127) / 128, pool = S->regs * S->l->threads;
    for (unsigned i = rank * per; i < (rank + 1) * per; ++i) {
        sim_wg *w = &S->wgs[i];
        if (!w->nreg_waiting || b->regs_used - 128 * w->nreg + 128 * w->nreg_want > pool)
            continue;
        b->regs_used = b->regs_used - 128 * w->nreg + 128 * w->nreg_want;
        w->nreg = w->nreg_want;
        w->nreg_waiting = 0;
        for (unsigned k = rank * S->l->threads + (i % per) * 128; k < rank * S->l->threads + (i % per) * 128 + 128; ++k)
            if (S->threads[k].state == T_NREG)
                S->threads[k].state = T_RUN;
    }
}

void sim_api_setmaxnreg(fattn_sim_site s, unsigned count, int inc)
{
    const char *insn = inc ? "setmaxnreg.inc" : "setmaxnreg.dec";
    sim_thread *t = sim_me();
    sim_wg *w = wg_of(t);
    if (!w->arrived)
        w->mismatch = 0;
    else if (w->nreg_want != count || w->nreg_inc != inc)
        w->mismatch = 1;
    w->nreg_want = count, w->nreg_inc = inc;
    if (!wg_arrive(t, &s, WG_NREG, insn))
        return;
    if (w->mismatch) {
        wg_release(t);
        fault(FATTN_SIMK_DIVERGENT, &s, insn, 0, "%s %u not the same in every thread of warpgroup %u", insn, count,
              t->tid / 128);
        return;
    }
    if (inc ? count < w->nreg : count > w->nreg) {
        wg_release(t);
        fault(FATTN_SIMK_INVALID_OPERAND, &s, insn, 0, "%s %u in a warpgroup holding %u registers a thread", insn,
              count, w->nreg);
        return;
    }
    sim_block *b = &S->blocks[t->rank];
    const unsigned first = wg_first(t);
    w->arrived = 0;
    w->op = WG_NONE;
    if (!inc) {
        b->regs_used -= 128 * (w->nreg - count);
        w->nreg = count;
        for (unsigned i = first; i < first + 128; ++i)
            if (S->threads[i].state == T_WG)
                S->threads[i].state = T_RUN;
        nreg_grant(t->rank);
        return;
    }
    /* An increase waits until the block's pool holds it. */
    w->nreg_waiting = 1;
    for (unsigned i = first; i < first + 128; ++i)
        S->threads[i].state = T_NREG;
    nreg_grant(t->rank);
    if (t->state == T_NREG)
        fattn_fiber_yield();
}

/* ---- deadlock: what a waiting thread waits for ---- */

int sim_hopper_deadlock(sim_thread *waiter)
{
    finding_in in = {.kind = FATTN_SIMK_DEADLOCK, .t = waiter, .site = &waiter->wait_site, .other_thr = -1};
    sim_block *b = &S->blocks[waiter->rank];
    switch (waiter->state) {
    case T_MBAR: {
        const sim_mbar *m = &b->mbar[waiter->mbar];
        in.insn = "mbarrier.try_wait.parity";
        in.space = "shared";
        in.addr = m->addr;
        sim_finding(&in,
                    "thread %u waits on mbarrier 0x%x for its phase of parity %u, which never completes: %u of %u "
                    "arrivals, %lld transaction bytes outstanding",
                    waiter->tid, m->addr, waiter->mbar_parity, m->count - m->pending, m->count, (long long)m->tx);
        return 1;
    }
    case T_NBAR: {
        const sim_nbar *nb = &b->nbar[waiter->nbar];
        in.insn = "bar.sync";
        sim_finding(&in, "thread %u waits at bar.sync %u, %u: %u of the %u threads ever arrive", waiter->tid,
                    waiter->nbar, nb->count, nb->arrived, nb->count);
        return 1;
    }
    case T_NREG: {
        const sim_wg *w = wg_of(waiter);
        in.insn = "setmaxnreg.inc";
        sim_finding(&in,
                    "warpgroup %u waits in setmaxnreg.inc %u forever: the block's pool of %u registers "
                    "(%u a thread) holds %u already",
                    waiter->tid / 128, w->nreg_want, S->regs * S->l->threads, S->regs, b->regs_used);
        return 1;
    }
    case T_WG: {
        const unsigned first = wg_first(waiter);
        const sim_thread *m = NULL;
        for (unsigned i = first; i < first + 128 && !m; ++i)
            if (S->threads[i].state != T_WG)
                m = &S->threads[i];
        in.kind = FATTN_SIMK_DIVERGENT;
        in.insn = wg_of(waiter)->op == WG_NREG ? "setmaxnreg" : "wgmma";
        in.other_thr = m ? (int)m->gtid : -1;
        in.other_line = m && m->state != T_DONE ? m->wait_site.line : 0;
        sim_finding(&in, "%s waits for thread %u of warpgroup %u, which %s", in.insn, m ? m->tid : 0, waiter->tid / 128,
                    m && m->state == T_DONE ? "has exited" : "waits elsewhere");
        return 1;
    }
    default: return 0;
    }
}
