/*
 * run.c - the confirm procedure (run.h).
 */
#include "confirm/run.h"

#include <stdlib.h>
#include <string.h>

#include "baseline/cudnn.h"
#include "compile/nvrtc.h"
#include "tune/tune.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/paths.h"

/* The seed salt of confirm's inputs: not the ones the search timed on. */
#define CONFIRM_SALT 0x636f6e6669726dull

int fattn_confirm_baseline_parse(const char *arg, fattn_confirm_baseline *b)
{
    memset(b, 0, sizeof *b);
    if (!arg)
        return FATTN_OK;
    if (!strcmp(arg, "cudnn")) {
        b->is_cudnn = 1;
    } else if (!strncmp(arg, "config:", 7)) {
        int rc = fattn_config_parse(arg + 7, "--baseline config:KEY", &b->cand.cfg);
        if (rc)
            return rc;
        fattn_config_key(&b->cand.cfg, b->cand.key);
    } else if (!strncmp(arg, "trial:", 6)) {
        long trial;
        if (fattn_parse_long(arg + 6, 1, 2147483647L, &trial))
            return fattn_error(FATTN_EUSAGE, "--baseline '%s': expected trial:ID with a trial id", arg);
        b->trial = trial;
    } else {
        return fattn_error(FATTN_EUSAGE, "--baseline '%s': expected cudnn, config:KEY or trial:ID", arg);
    }
    snprintf(b->why, sizeof b->why, "as given");
    return FATTN_OK;
}

/* Gates and compiles a configuration for the study's shape and arch. */
static int compile_cfg(const fattn_compile_ctx *cc, const fattn_target *t, const char *key, const char *role,
                       fattn_compile_item *item)
{
    char who[FATTN_KEY_MAX + 16];
    snprintf(who, sizeof who, "%s %s", role, key);
    int rc = fattn_gates_pass(&item->cfg, t, who);
    return rc ? rc : fattn_compile_pass(cc, who, item);
}

/* The default baseline: cuDNN for non-causal shapes where it loads (the
 * fake engine of the tests has one), else the first of the study family's
 * reference configurations that passes the static gates (the last when
 * none does: its gates then say why). */
static int baseline_default(fattn_confirm_baseline *b, const fattn_study_info *st, const fattn_compile_ctx *cc)
{
    char why[320] = "";
    fattn_cudnn *c = NULL;
    if (!st->shape.causal && (getenv("FATTN_WORKER_HOOK") || !fattn_cudnn_load(&c, why, sizeof why))) {
        fattn_cudnn_free(&c, NULL);
        b->is_cudnn = 1;
        snprintf(b->given, sizeof b->given, "cudnn");
        snprintf(b->why, sizeof b->why, "the default for non-causal shapes");
        return FATTN_OK;
    }
    const char *const *keys =
        st->fam->reference_keys ? st->fam->reference_keys(st->shape.head_dim, st->shape.causal) : NULL;
    if (!keys)
        return fattn_error(FATTN_EUSAGE,
                           "confirm: study %lld (family %s) has no default baseline %s; give --baseline config:KEY "
                           "with a %s configuration",
                           st->id, st->fam->name,
                           st->shape.causal ? "on a causal shape (cuDNN's fused attention takes no mask)"
                                            : "without cuDNN",
                           st->fam->name);
    for (int i = 0; keys[i]; ++i) {
        fattn_verdict v;
        fattn_config cfg;
        if (fattn_config_parse(keys[i], st->fam->reference_name, &cfg))
            continue;
        fattn_gate_input in = {&cfg, cc->shape, cc->arch, cc->lim};
        if (!fattn_gates_static(&in, &v, NULL) || !keys[i + 1]) {
            b->cand.cfg = cfg;
            fattn_config_key(&cfg, b->cand.key);
            break;
        }
    }
    snprintf(b->given, sizeof b->given, "config:%s", b->cand.key);
    snprintf(b->why, sizeof b->why, "the %s configuration of our kernel (%s)", st->fam->reference_name,
             st->shape.causal ? "causal shape: cuDNN's fused operation takes no mask" : "libcudnn did not load");
    return FATTN_OK;
}

/* "the mma family" or "the mma and wgmma families": the study's. */
static void study_family_names(const fattn_study_info *st, char *out, size_t n)
{
    size_t used = (size_t)snprintf(out, n, "the ");
    for (int k = 0; k < st->nfam && used < n; ++k)
        used += (size_t)snprintf(out + used, n - used, "%s%s",
                                 k == 0             ? ""
                                 : k + 1 < st->nfam ? ", "
                                                    : " and ",
                                 st->fams[k].fam->name);
    if (used < n)
        snprintf(out + used, n - used, " famil%s", st->nfam > 1 ? "ies" : "y");
}

/* The study, its candidates and the baseline, read from the store. */
static int load(const fattn_confirm_opts *o, fattn_store *s, fattn_confirm_report *rep)
{
    fattn_confirm_baseline *b = &rep->baseline;
    int rc;
    if ((rc = fattn_store_study_info(s, o->study, &rep->study))
        || (rc = fattn_store_top_trials(s, rep->study.id, o->top, rep->cands, &rep->k)))
        return rc;
    if (b->is_cudnn && rep->study.shape.causal)
        return fattn_error(FATTN_EUSAGE,
                           "--baseline cudnn: study %lld is causal, and cuDNN's fused attention takes no "
                           "mask; use --baseline config:KEY or leave --baseline out",
                           rep->study.id);
    if (b->trial && (rc = fattn_confirm_trial(s, b->trial, &rep->study, &b->cand)))
        return rc;
    /* The study's kernels measure the candidates and the baseline. */
    fattn_study_info as;
    if (!b->is_cudnn && b->cand.cfg.fam && !fattn_study_info_as(&rep->study, b->cand.cfg.fam, &as)) {
        char names[128];
        study_family_names(&rep->study, names, sizeof names);
        const char *given = o->baseline_arg ? o->baseline_arg : b->cand.key;
        if (rep->study.nfam > 1)
            return fattn_error(FATTN_EUSAGE,
                               "--baseline %s: a configuration of the %s family, and study %lld searched %s; "
                               "expected a configuration of one of them or cudnn",
                               given, b->cand.cfg.fam->name, rep->study.id, names);
        return fattn_error(FATTN_EUSAGE,
                           "--baseline %s: a configuration of the %s family, and study %lld searched %s; expected a "
                           "%s configuration or cudnn",
                           given, b->cand.cfg.fam->name, rep->study.id, names, rep->study.fam->name);
    }
    if (o->baseline_arg)
        snprintf(b->given, sizeof b->given, "%s", o->baseline_arg);
    return FATTN_OK;
}

/* The statistics of each candidate against the baseline, and against its
 * previous confirmation. */
static int compare_all(const fattn_confirm_opts *o, fattn_store *s, const fattn_eval_result *res,
                       fattn_confirm_report *rep)
{
    const fattn_eval_result *base = &res[rep->k];
    fattn_compare_opts copts = {(size_t)o->resamples, (uint64_t)o->measure.seed, 0.95, o->target};
    rep->failed = base->status != FATTN_EVAL_OK;
    for (int i = 0; i < rep->k; ++i) {
        fattn_confirm_outcome *x = &rep->oc[i];
        if (res[i].status != FATTN_EVAL_OK || base->status != FATTN_EVAL_OK) {
            const fattn_eval_result *bad = res[i].status != FATTN_EVAL_OK ? &res[i] : base;
            x->verdict = fattn_eval_status_name(bad->status);
            snprintf(x->detail, sizeof x->detail, "%s: %s", bad == base ? "baseline" : "candidate", bad->detail);
            rep->failed = 1;
            continue;
        }
        fattn_compare(res[i].samples, res[i].nsamples, base->samples, base->nsamples, &copts, &x->cmp);
        x->compared = 1;
        x->verdict = x->cmp.verdict;
        snprintf(x->detail, sizeof x->detail, "%s", res[i].detail);
        if (!o->against)
            continue;
        int r = fattn_store_confirmation_previous(s, rep->cands[i].key, rep->device, &rep->study.shape, &x->prev);
        if (r < 0)
            return r;
        x->has_prev = r;
        if (r) {
            x->change_pct = (x->cmp.cand_median / x->prev.median_us - 1) * 100;
            x->regression = x->change_pct > o->threshold && x->cmp.cand_lo > x->prev.ci_hi_us;
            rep->regressions += x->regression;
        }
    }
    return FATTN_OK;
}

/* Every candidate's confirmation, with its samples, in one transaction: each
 * with the hash of its family's kernel source, and whether that and the arch
 * are the ones it was searched with. */
static int record(const fattn_confirm_opts *o, fattn_store *s, const char *const *kernel_hash, const int *as_searched,
                  const fattn_eval_result *res, fattn_confirm_report *rep)
{
    const fattn_confirm_baseline *b = &rep->baseline;
    int rc = fattn_store_begin(s);
    for (int i = 0; !rc && i < rep->k; ++i) {
        fattn_confirm_outcome *x = &rep->oc[i];
        fattn_confirm_rec r = {
            .study_id = rep->study.id,
            .trial_id = rep->cands[i].trial,
            .config_key = rep->cands[i].key,
            .arch = rep->arch,
            .device = rep->device,
            .kernel_hash = kernel_hash[i],
            .as_searched = as_searched[i],
            .baseline = b->given,
            .base_kind = b->is_cudnn ? "cudnn" : "config",
            .base_desc = rep->base_desc,
            .n = o->n,
            .seed = o->measure.seed,
            .resamples = (size_t)o->resamples,
            .level = 0.95,
            .target = o->target,
            .timing_method = rep->method,
            .cand = &res[i],
            .base = &res[rep->k],
            .cmp = x->compared ? &x->cmp : NULL,
            .verdict = x->verdict,
            .detail = x->detail,
            .previous_id = x->has_prev ? x->prev.id : 0,
            .change_pct = x->change_pct,
            .regression = x->regression,
        };
        if ((rc = fattn_store_confirmation_add(s, &r, &x->id)))
            fattn_store_rollback(s);
    }
    return rc ? rc : fattn_store_commit(s);
}

/* One family of the study as confirm measures it: its kernel source and
 * its target (the study's shape and arch under the limits the family was
 * searched with, those given overriding), compiled through its context. */
typedef struct fam_ctx {
    int used;
    fattn_study_info st;
    fattn_kernel_src src;
    fattn_target t;
    fattn_compile_ctx cc;
} fam_ctx;

/* The index of family f among the study's (the study's own: 0). */
static int fam_index(const fattn_study_info *st, const fattn_family *f)
{
    for (int k = 0; k < st->nfam; ++k)
        if (st->fams[k].fam == f)
            return k;
    return 0;
}

/* Adds the notes of `more` that `notes` does not hold already. */
static void notes_merge(fattn_notes *notes, const fattn_notes *more)
{
    for (int i = 0; i < more->n && notes->n < FATTN_NOTES_MAX; ++i) {
        int dup = 0;
        for (int j = 0; j < notes->n && !dup; ++j)
            dup = !strcmp(notes->line[j], more->line[i]);
        if (!dup)
            memcpy(notes->line[notes->n++], more->line[i], sizeof more->line[i]);
    }
}

/* Each family the candidates and the baseline need (the study's own
 * always: the first, in *t itself), its kernel and target. */
static int open_families(const fattn_confirm_opts *o, fattn_target *t, fattn_confirm_report *rep, fam_ctx *fc,
                         fattn_notes *notes)
{
    const fattn_study_info *st = &rep->study;
    const fattn_target given = *t;
    int rc;
    fc[0].used = 1;
    for (int i = 0; i < rep->k; ++i)
        fc[fam_index(st, rep->cands[i].cfg.fam)].used = 1;
    if (!rep->baseline.is_cudnn && rep->baseline.cand.cfg.fam)
        fc[fam_index(st, rep->baseline.cand.cfg.fam)].used = 1;
    for (int k = 0; k < st->nfam; ++k) {
        if (!fc[k].used)
            continue;
        fattn_target *tk = k ? &fc[k].t : t;
        fattn_notes more = {0};
        if (k)
            *tk = given;
        fattn_study_info_as(st, st->fams[k].fam, &fc[k].st);
        if ((rc = fattn_kernel_src_load(o->kernel_dir, fc[k].st.fam->kernel_file, &fc[k].src))
            || (rc = fattn_study_kernel(&fc[k].src, &fc[k].st, o->allow_kernel, "confirm", &more))
            || (rc = fattn_study_target(tk, &fc[k].st, tk->arch_name, o->allow_arch, "confirm", &more)))
            return rc;
        notes_merge(notes, &more);
    }
    return FATTN_OK;
}

int fattn_confirm_run(const fattn_confirm_opts *o, fattn_target *t, const fattn_gpu *gpu, fattn_store *s, FILE *log,
                      fattn_confirm_report *rep)
{
    fattn_compile_item items[FATTN_CONFIRM_MAX_TOP + 1];
    fattn_eval_request reqs[FATTN_CONFIRM_MAX_TOP + 1];
    fattn_eval_result res[FATTN_CONFIRM_MAX_TOP + 1];
    fam_ctx fc[FATTN_MAX_FAMILIES];
    fattn_evaluator *ev = NULL;
    fattn_measure m = o->measure;
    fattn_notes notes = {0};
    char *include = NULL;
    const char *hashes[FATTN_CONFIRM_MAX_TOP];
    int as_searched[FATTN_CONFIRM_MAX_TOP];
    int rc, k;

    memset(rep, 0, sizeof *rep);
    memset(items, 0, sizeof items);
    memset(res, 0, sizeof res);
    memset(fc, 0, sizeof fc);
    rep->baseline = o->baseline;
    if (o->top < 1 || o->top > FATTN_CONFIRM_MAX_TOP)
        return fattn_error(FATTN_EUSAGE, "confirm: %d candidates; expected 1 to %d", o->top, FATTN_CONFIRM_MAX_TOP);
    if ((rc = load(o, s, rep)))
        goto out;
    k = rep->k;

    /* The kernels the study measured, on the study's shape and arch under
     * the gate limits each family was searched with (those given override). */
    const fattn_study_info *st = &rep->study;
    if ((rc = open_families(o, t, rep, fc, &notes)))
        goto out;
    snprintf(rep->arch, sizeof rep->arch, "%s", t->arch->name);
    m.samples = o->n;
    m.timing_salt = CONFIRM_SALT;
    if ((rc = fattn_cuda_include(&include)))
        goto out;
    for (int f = 0; f < st->nfam; ++f) {
        fattn_target *tf = f ? &fc[f].t : t;
        if (fc[f].used) /* the first plans the timing sets, every family takes them */
            fattn_measure_plan(&m, tf, gpu);
        fc[f].cc = (fattn_compile_ctx){.src = &fc[f].src,
                                       .cuda_include = include,
                                       .arch = tf->arch,
                                       .shape = &tf->shape,
                                       .lim = &tf->lim,
                                       .jobs = 1};
    }
    fattn_confirm_baseline *b = &rep->baseline;
    if (!o->baseline_arg && (rc = baseline_default(b, st, &fc[0].cc)))
        goto out;
    for (int i = 0; i < k; ++i) {
        const int f = fam_index(st, rep->cands[i].cfg.fam);
        items[i].cfg = rep->cands[i].cfg;
        if ((rc = compile_cfg(&fc[f].cc, f ? &fc[f].t : t, rep->cands[i].key, "candidate", &items[i])))
            goto out;
        hashes[i] = fc[f].src.hash;
        as_searched[i] = !strcmp(fc[f].src.hash, fc[f].st.kernel_hash) && !strcmp(rep->arch, st->arch);
    }
    if (!b->is_cudnn) {
        const int f = fam_index(st, b->cand.cfg.fam);
        items[k].cfg = b->cand.cfg;
        if ((rc = compile_cfg(&fc[f].cc, f ? &fc[f].t : t, b->cand.key, "baseline", &items[k])))
            goto out;
    }
    if (log)
        fattn_notes_print(&notes, log);

    /* Measure: the candidates, then the baseline, in turn. */
    if ((rc = fattn_open_gpu_evaluator(t, &m, o->kernel_dir, include, &ev)))
        goto out;
    snprintf(rep->device, sizeof rep->device, "%s", ev->device);
    snprintf(rep->method, sizeof rep->method, "%s", ev->method);
    uint64_t seed = fattn_numerics_seed((uint64_t)m.seed ^ CONFIRM_SALT, 0);
    for (int i = 0; i <= k; ++i) {
        int is_base = i == k;
        const fattn_compile_item *it = &items[i];
        if (is_base && b->is_cudnn)
            reqs[i] = (fattn_eval_request){&b->cand.cfg, "baseline-cudnn", NULL, 0, 0, 0, seed, "cudnn"};
        else
            reqs[i] = (fattn_eval_request){&it->cfg,
                                           is_base ? b->cand.key : rep->cands[i].key,
                                           it->entry.cubin,
                                           it->entry.cubin_size,
                                           it->entry.res.smem_dynamic,
                                           it->entry.res.threads,
                                           seed,
                                           NULL};
    }
    if (log)
        fprintf(log, "confirm: %d candidate%s and the baseline, %d rounds interleaved on %s...\n", k, k == 1 ? "" : "s",
                o->n, ev->device);
    if ((rc = fattn_evaluate_interleaved(ev, reqs, (size_t)k + 1, o->n, res)))
        goto out;

    /* The statistics, the regression check, and the record. */
    const fattn_eval_result *base = &res[k];
    rep->base_ok = base->status == FATTN_EVAL_OK;
    snprintf(rep->base_detail, sizeof rep->base_detail, "%s", base->detail);
    snprintf(rep->base_desc, sizeof rep->base_desc, "%s",
             b->is_cudnn ? (base->baseline[0] ? base->baseline : "cuDNN") : b->cand.key);
    if (!(rc = compare_all(o, s, res, rep)))
        rc = record(o, s, hashes, as_searched, res, rep);
out:
    for (int i = 0; i <= FATTN_CONFIRM_MAX_TOP; ++i) {
        fattn_eval_result_release(&res[i]);
        fattn_compile_item_release(&items[i]);
    }
    fattn_evaluator_close(&ev);
    free(include);
    for (int f = 0; f < FATTN_MAX_FAMILIES; ++f)
        fattn_kernel_src_release(&fc[f].src);
    return rc;
}
