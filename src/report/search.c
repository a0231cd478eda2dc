/*
 * search.c - search's summary (report.h): the study, the survivors, the
 * trials by status and reason, the best, and why the search stopped; and
 * its progress line.
 */
#include <stdio.h>

#include "report/outcomes.h"
#include "report/report.h"
#include "util/misc.h"

void fattn_report_search(const fattn_search_report *rep, const char *strategy, const fattn_target *t, long trials,
                         const char *budget, double ran_ms, double budget_ms, FILE *f)
{
    const fattn_tune_progress *p = &rep->p;
    const int stop = rep->stop;
    const fattn_targets *ts = &rep->ts;
    char shape[96], label[512];
    int counts[FATTN_R_COUNT] = {0};
    size_t considered = 0, survivors = 0, sim = 0;
    for (int k = 0; k < ts->n; ++k) {
        for (int c = 0; c < FATTN_R_COUNT; ++c)
            counts[c] += rep->sv[k].counts[c];
        considered += rep->sv[k].considered;
        survivors += rep->sv[k].nsurvivors;
        sim += (size_t)rep->sv[k].counts[FATTN_R_SIMULATOR];
    }
    if (ts->n == 1)
        snprintf(label, sizeof label, "%s", ts->t[0].space.label);
    else
        snprintf(label, sizeof label, "%d families", ts->n);
    fattn_shape_format(&t->shape, shape, sizeof shape);
    fprintf(f, "study %lld: search (%s) of %s for %s on %s, %s\n", rep->study, strategy, label, shape, t->arch->name,
            rep->device);
    for (int k = 0; k < ts->n && ts->n > 1; ++k) {
        const fattn_space_verdicts *sk = &rep->sv[k];
        fprintf(f, "  %-6s %s: %zu configurations, %zu survive\n", ts->t[k].space.fam->name, ts->t[k].space.label,
                sk->considered, sk->nsurvivors);
    }
    fprintf(f, "timing: %s\n", rep->method);
    /* Each family's kernel source, proven on hardware or not (a family that
     * never passed a device check is searched all the same: every trial is
     * verified on the GPU). */
    for (int k = 0; k < ts->n; ++k) {
        char hw[FATTN_HW_LINE_MAX];
        fattn_hw_describe(&rep->hw[k], hw, sizeof hw);
        fprintf(f, "hardware: %s: %s\n", ts->t[k].space.fam->name, hw);
    }
    fprintf(f, "%zu configurations: %zu rejected by the static gates, ", considered, considered - survivors - sim);
    if (sim)
        fprintf(f, "%zu skipped as the simulator found them defective, ", sim);
    fprintf(f, "%zu survive; %zu tried, %zu run, %zu measured in %.1f s\n%s", survivors, p->tried, p->evaluated, p->ok,
            p->elapsed_ms / 1000.0, p->resumed ? "" : "\n");
    if (p->resumed)
        fprintf(f, "resumed: %zu of those trials come from the study's earlier runs\n\n", p->resumed);
    fattn_report_outcomes(counts, FATTN_R_COUNT - 1, p->by_reason, "ok", p->ok, p->errors, f);
    if (p->best_us > 0)
        fprintf(f, "\nbest: %s, %.3f us per launch (p10 %.3f, p90 %.3f), %.1f TFLOP/s, %.1f GB/s (trial %lld)\n",
                p->best_key, p->best.median_us, p->best.p10_us, p->best.p90_us, p->best.tflops, p->best.gbps,
                p->best_trial);
    else
        fprintf(f, "\nbest: none measured\n");
    const double earlier_ms = ran_ms - rep->run_ms; /* the study's runs before this one */
    switch (stop) {
    case FATTN_TUNE_TRIALS: fprintf(f, "stopped: --trials %ld reached\n", trials); break;
    case FATTN_TUNE_BUDGET:
        if (p->tried == p->resumed && earlier_ms > 0)
            fprintf(f,
                    "stopped: --budget %s spent before this run's first trial (the study's earlier runs %.1f s, "
                    "this run's start %.1f s); resume with a larger --budget to go on\n",
                    budget, earlier_ms / 1000.0, rep->startup_ms / 1000.0);
        else if (ran_ms > budget_ms + 50)
            fprintf(f, "stopped: --budget %s spent; ran %.1f s, %.1f s over (the evaluation in flight)\n", budget,
                    ran_ms / 1000.0, (ran_ms - budget_ms) / 1000.0);
        else if (p->abandoned)
            fprintf(f,
                    "stopped: --budget %s spent; ran %.1f s, to the end of it (the compiles running then given "
                    "up)\n",
                    budget, ran_ms / 1000.0);
        else
            fprintf(f,
                    "stopped: --budget %s spent; ran %.1f s, within it (another trial would not have ended "
                    "in time)\n",
                    budget, ran_ms / 1000.0);
        break;
    case FATTN_TUNE_INTERRUPTED: fprintf(f, "stopped: interrupted\n"); break;
    default: fprintf(f, "stopped: every survivor tried\n");
    }
    /* Where this run's time went. */
    fprintf(f,
            "time: %.1f s this run: %.1f s before the first trial (gates, study), %.1f s waiting for compiles, "
            "%.1f s evaluating, %.1f s in the strategy, %.1f s storing",
            rep->run_ms / 1000.0, rep->startup_ms / 1000.0, p->wait_ms / 1000.0, p->eval_ms / 1000.0,
            p->strategy_ms / 1000.0, p->store_ms / 1000.0);
    if (p->abandoned)
        fprintf(f, "; %d compile%s given up at the end", p->abandoned, p->abandoned == 1 ? "" : "s");
    fputc('\n', f);
    /* Several GPUs: which, and how far apart the reference found them. */
    if (rep->ndev > 1) {
        fprintf(f, "GPUs: %d (%s), each trial on one; evaluating %.1f s of GPU time in %.1f s", rep->ndev, rep->devices,
                p->eval_ms / 1000.0, rep->run_ms / 1000.0);
        if (p->ref_rounds)
            fprintf(f, "; the reference configuration on each in %d round%s: spread %.1f%%%s", p->ref_rounds,
                    p->ref_rounds == 1 ? "" : "s", p->spread_pct,
                    p->spread_pct > FATTN_TUNE_SPREAD_PCT ? " (over 2%: the GPUs differ; fattn-tune query gpus)" : "");
        else
            fprintf(f, "; the reference configuration not timed (nothing measured)");
        fputc('\n', f);
    }
}

void fattn_report_search_progress(const fattn_tune_progress *p, int tty, double now, double deadline_ms, FILE *f)
{
    int rejected = 0;
    for (int r = 1; r < FATTN_R_COUNT; ++r)
        rejected += p->by_reason[r];
    double per = p->tried ? p->elapsed_ms / (double)p->tried : 0;
    double eta = per * (double)(p->candidates - p->tried) / 1000.0;
    if (deadline_ms > 0 && eta > (deadline_ms - now) / 1000.0) /* the budget ends it first */
        eta = deadline_ms > now ? (deadline_ms - now) / 1000.0 : 0;
    char left[24];
    fattn_format_eta(eta, left, sizeof left);
    fprintf(f, "%s%zu/%zu tried  %zu measured  %d rejected  %zu errors  best %s %.3f us  ETA %s%s",
            tty ? "\r  " : "fattn-tune: ", p->tried, p->candidates, p->ok, rejected, p->errors,
            p->best_us > 0 ? p->best_key : "-", p->best_us, left, tty ? "   " : "\n");
    fflush(f);
}
