/*
 * campaign.c - the campaign procedure (campaign.h): the campaign recorded
 * or found again, each row's state read from its study, then a search
 * process per row, as many at once as there are GPUs.
 */
#include "campaign/campaign.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "campaign/file.h"
#include "gpu/device.h"
#include "job/job.h"
#include "store/read.h"
#include "store/store.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/proc.h"
#include "util/strbuf.h"

extern char **environ;

/* The search options a row's columns or the campaign set: given after --
 * they would contradict the file. */
static const char *const row_options[] = {"--shape",  "--causal", "--budget",       "--trials", "--evaluator",
                                          "--resume", "--device", "--campaign-row", "--db",     NULL};

int fattn_campaign_parse_rows(const char *text, int n, unsigned char *sel)
{
    memset(sel, 0, (size_t)n);
    if (strspn(text, ",") == strlen(text))
        return fattn_error(FATTN_EUSAGE, "--rows '%s': expected row numbers from 1 to %d such as 1,3-5", text, n);
    char *copy = fattn_xstrdup(text), *save = NULL;
    int rc = FATTN_OK;
    for (char *tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
        long a, b;
        char *dash = strchr(tok, '-');
        if (dash)
            *dash = '\0';
        if (fattn_parse_long(tok, 1, n, &a) || (dash && fattn_parse_long(dash + 1, a, n, &b)))
            rc = fattn_error(FATTN_EUSAGE, "--rows '%s': expected row numbers from 1 to %d such as 1,3-5", text, n);
        else
            for (long k = a; k <= (dash ? b : a); ++k)
                sel[k - 1] = 1;
    }
    free(copy);
    return rc;
}

int fattn_campaign_check_search_args(const fattn_campaign_opts *o, char **json)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < o->nsearch_args; ++i) {
        const char *arg = o->search_args[i];
        size_t len = strcspn(arg, "=");
        int bad = !strcmp(arg, "-h") || (len > 2 && !strncmp(arg, "--help", len));
        /* getopt takes an option's unambiguous prefix too (--caus for --causal) */
        for (int k = 0; row_options[k] && !bad; ++k)
            bad = len > 2 && !strncmp(arg, "--", 2) && !strncmp(row_options[k], arg, len);
        if (bad) {
            cJSON_Delete(a);
            return fattn_error(FATTN_EUSAGE,
                               "campaign: '%.*s' after -- is set for each row (the campaign file's columns, "
                               "--devices, --db) or is not a search option; expected options every row's search "
                               "takes, such as --strategy, --jobs, --arch",
                               (int)len, arg);
        }
        cJSON_AddItemToArray(a, cJSON_CreateString(arg));
    }
    if (json)
        *json = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    return FATTN_OK;
}

/* Rows measured on a GPU need one, and the GPUs listed are of one model (a
 * campaign's studies compare), before anything is written. */
static int check_gpus(const fattn_campaign_opts *o, const fattn_campaign_file *f, const unsigned char *sel,
                      char first[256])
{
    int gpu_rows = 0;
    for (int k = 0; k < f->n; ++k)
        gpu_rows |= sel[k] && !f->rows[k].evaluator;
    *first = '\0';
    if (!gpu_rows)
        return FATTN_OK;
    for (int k = 0; k < (o->ndevices ? o->ndevices : 1); ++k) {
        fattn_target t;
        fattn_gpu g;
        fattn_target_init(&t);
        t.device = o->ndevices ? o->devices[k] : 0;
        int rc = fattn_gpu_arch(&t, &g, "campaign",
                                "; without one, rows with the evaluator replay:FILE replay measured landscapes");
        fattn_target_release(&t);
        if (rc)
            return rc;
        if (!g.present) /* the tests' fake engine */
            continue;
        if (!*first)
            snprintf(first, 256, "%s", g.info.name);
        else if (strcmp(first, g.info.name))
            return fattn_error(FATTN_EUSAGE,
                               "--devices: GPU %d is %s, GPU %d is %s; a campaign's studies run on one GPU model: "
                               "list GPUs of one model (a campaign per model)",
                               o->devices[0], first, o->devices[k], g.info.name);
    }
    return FATTN_OK;
}

/* A row's state. */
enum { ROW_NEW, ROW_RESUME, ROW_DONE, ROW_BUSY, ROW_SKIP };

typedef struct row_run {
    int state;
    long long study;
    pid_t pid;
} row_run;

/* The campaign being run: what every row's process and lookup needs. */
typedef struct run_ctx {
    const fattn_campaign_opts *o;
    const fattn_campaign_file *f;
    fattn_store *s;
    long long campaign;
    const char *uuid;
    const char *gpu; /* the GPUs' model, NULL when unknown (no GPU rows, the tests' fake engine) */
    row_run *rr;
} run_ctx;

/* Row k's study on this campaign's GPU model (any, for a replayed row),
 * and what to do with it: a study done is done, one a live process holds
 * is left to it (on another host: whether it runs cannot be told), one
 * interrupted, failed or killed is resumed. */
static int row_state(run_ctx *c, int k)
{
    char status[32], runner[320];
    row_run *x = &c->rr[k];
    if (fattn_store_campaign_row_study(c->s, c->uuid, k + 1, c->f->rows[k].evaluator ? NULL : c->gpu, &x->study, status,
                                       sizeof status, runner, sizeof runner))
        return FATTN_EFAIL;
    int alive = *runner ? fattn_process_tag_alive(runner) : 0;
    x->state = !x->study ? ROW_NEW : !strcmp(status, "done") ? ROW_DONE : alive ? ROW_BUSY : ROW_RESUME;
    if (x->state == ROW_BUSY && c->o->log) {
        char who[400];
        fattn_process_tag_who(runner, who, sizeof who);
        fprintf(c->o->log, "fattn-tune: campaign %lld: row %d: study %lld is %s (%s); left to it\n", c->campaign, k + 1,
                x->study, alive == 2 ? "held on another host" : "running", who);
    }
    return FATTN_OK;
}

static void add(char ***v, int *n, const char *s)
{
    *v = fattn_xrealloc(*v, (size_t)(*n + 2) * sizeof **v);
    (*v)[(*n)++] = fattn_xstrdup(s);
    (*v)[*n] = NULL;
}

/* Starts row k's search on GPU `device` (-1: the default): the options
 * every row takes, then the row's own (the later wins, so the file's). */
static int start(run_ctx *c, int k, int device)
{
    const fattn_campaign_opts *o = c->o;
    const fattn_campaign_row *row = &c->f->rows[k];
    row_run *rr = &c->rr[k];
    char **v = NULL, num[64];
    int n = 0;
    add(&v, &n, o->exe);
    add(&v, &n, "--db");
    add(&v, &n, o->db_path);
    add(&v, &n, "-q");
    if (o->kernel_dir) {
        add(&v, &n, "--kernel-dir");
        add(&v, &n, o->kernel_dir);
    }
    add(&v, &n, "search");
    if (rr->state == ROW_RESUME) {
        snprintf(num, sizeof num, "%lld", rr->study);
        add(&v, &n, "--resume");
        add(&v, &n, num);
    } else {
        for (int i = 0; i < o->nsearch_args; ++i)
            add(&v, &n, o->search_args[i]);
        snprintf(num, sizeof num, "%d,%d,%d,%d", row->shape.batch, row->shape.heads, row->shape.seqlen,
                 row->shape.head_dim);
        add(&v, &n, "--shape");
        add(&v, &n, num);
        if (row->shape.causal)
            add(&v, &n, "--causal");
        if (*row->budget) {
            add(&v, &n, "--budget");
            add(&v, &n, row->budget);
        }
        if (row->trials) {
            snprintf(num, sizeof num, "%ld", row->trials);
            add(&v, &n, "--trials");
            add(&v, &n, num);
        }
        if (row->evaluator) {
            add(&v, &n, "--evaluator");
            add(&v, &n, row->evaluator);
        }
        char link[64];
        snprintf(link, sizeof link, "%s:%d", c->uuid, k + 1);
        add(&v, &n, "--campaign-row");
        add(&v, &n, link);
    }
    if (device >= 0 && !row->evaluator) {
        snprintf(num, sizeof num, "%d", device);
        add(&v, &n, "--device");
        add(&v, &n, num);
    }
    /* Its summary is the campaign's table's row; its errors reach stderr. */
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    int rc = posix_spawn(&rr->pid, o->exe, &fa, NULL, v, environ);
    posix_spawn_file_actions_destroy(&fa);
    for (int i = 0; i < n; ++i)
        free(v[i]);
    free(v);
    if (rc) {
        rr->pid = 0;
        return fattn_error(FATTN_EFAIL, "campaign: cannot start %s: %s", o->exe, strerror(rc));
    }
    return FATTN_OK;
}

/* The row's study and its best timed trial, after the run. */
static void result_of(run_ctx *c, int k, fattn_campaign_result *out)
{
    char runner[320];
    out->row = k + 1;
    fattn_campaign_row_label(&c->f->rows[k], out->label, sizeof out->label);
    if (fattn_store_campaign_row_study(c->s, c->uuid, k + 1, c->f->rows[k].evaluator ? NULL : c->gpu, &out->study,
                                       out->status, sizeof out->status, runner, sizeof runner)
        || !out->study) {
        snprintf(out->status, sizeof out->status, "not run");
        return;
    }
    /* Its fastest timed trial (none yet: the table says "-", no error). */
    fattn_trial_cand best;
    int n = 0, was = fattn_error_set_quiet_thread(1);
    if (!fattn_store_top_trials(c->s, out->study, 1, &best, &n) && n == 1) {
        out->best_us = best.median_us;
        snprintf(out->best_key, sizeof out->best_key, "%s", best.key);
    }
    fattn_error_set_quiet_thread(was);
}

/* Runs the rows to run, as many at once as there are GPUs; each row's state
 * is read again as its turn comes (another campaign process may have taken
 * it); *interrupted stops the starting of rows and is passed on to those
 * running (Ctrl-C reached them too; a SIGTERM to the campaign alone did not). */
static int run_rows(run_ctx *c)
{
    const fattn_campaign_opts *o = c->o;
    const int slots = o->ndevices ? o->ndevices : 1;
    int slot_row[FATTN_CAMPAIGN_MAX_DEVICES], running = 0, next = 0, forwarded = 0, rc = FATTN_OK;
    for (int k = 0; k < slots; ++k)
        slot_row[k] = -1;
    static volatile sig_atomic_t never;
    volatile sig_atomic_t *stop = o->interrupted ? o->interrupted : &never;
    struct sigaction dfl = {.sa_handler = SIG_DFL}, old_chld;
    sigaction(SIGCHLD, &dfl, &old_chld); /* waitpid must see the searches end */
    if (o->guard)
        o->guard(1);
    for (;;) {
        for (int k = 0; k < slots && !*stop && !rc; ++k) {
            if (slot_row[k] >= 0)
                continue;
            for (; next < c->f->n; ++next)
                if (c->rr[next].state == ROW_NEW || c->rr[next].state == ROW_RESUME) {
                    if ((rc = row_state(c, next)))
                        break;
                    if (c->rr[next].state == ROW_NEW || c->rr[next].state == ROW_RESUME)
                        break;
                }
            if (rc || next == c->f->n)
                break;
            int device = o->ndevices ? o->devices[k] : -1;
            char label[96];
            fattn_campaign_row_label(&c->f->rows[next], label, sizeof label);
            if (start(c, next, device)) {
                ++next;
                continue;
            }
            if (o->log) {
                fprintf(o->log, "fattn-tune: campaign %lld: row %d (%s)", c->campaign, next + 1, label);
                if (device >= 0 && !c->f->rows[next].evaluator)
                    fprintf(o->log, " on GPU %d", device);
                if (c->rr[next].state == ROW_RESUME)
                    fprintf(o->log, ": resuming study %lld\n", c->rr[next].study);
                else
                    fprintf(o->log, ": a new study\n");
            }
            slot_row[k] = next++;
            ++running;
        }
        if (!running)
            break;
        if (*stop && !forwarded) {
            for (int k = 0; k < slots; ++k)
                if (slot_row[k] >= 0)
                    kill(c->rr[slot_row[k]].pid, SIGINT);
            forwarded = 1;
        }
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid == 0 || (pid < 0 && errno == EINTR)) {
            usleep(50000);
            continue;
        }
        if (pid < 0)
            break;
        for (int k = 0; k < slots; ++k)
            if (slot_row[k] >= 0 && c->rr[slot_row[k]].pid == pid) {
                int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                if (o->log && code)
                    fprintf(o->log, "fattn-tune: campaign %lld: row %d: its search exited with status %d\n",
                            c->campaign, slot_row[k] + 1, code);
                c->rr[slot_row[k]].pid = 0;
                slot_row[k] = -1;
                --running;
            }
    }
    if (o->guard)
        o->guard(0);
    sigaction(SIGCHLD, &old_chld, NULL);
    return rc;
}

int fattn_campaign_run(const fattn_campaign_opts *o, fattn_campaign_report *r)
{
    fattn_campaign_file f;
    fattn_store *s = NULL;
    char *args = NULL, gpu[256] = "";
    row_run *rr = NULL;
    unsigned char *sel = NULL;
    *r = (fattn_campaign_report){0};
    int rc = fattn_campaign_file_read(o->file, &f);
    if (rc)
        return rc;
    sel = fattn_xmalloc((size_t)f.n);
    if (o->rows)
        rc = fattn_campaign_parse_rows(o->rows, f.n, sel);
    else
        memset(sel, 1, (size_t)f.n);
    if (!rc)
        rc = fattn_campaign_check_search_args(o, &args);
    if (!rc)
        rc = check_gpus(o, &f, sel, gpu);
    if (rc || (rc = fattn_store_open(o->db_path, FATTN_DB_WRITE, &s)))
        goto out;
    if (!o->fresh && (rc = fattn_store_campaign_find(s, o->uuid, f.sha256, args, &r->campaign, r->uuid)))
        goto out;
    if (!r->campaign) {
        fattn_campaign_row_rec *recs = fattn_xcalloc((size_t)f.n, sizeof *recs);
        for (int k = 0; k < f.n; ++k)
            recs[k] = (fattn_campaign_row_rec){.row = k + 1,
                                               .line = f.rows[k].line,
                                               .name = f.rows[k].name,
                                               .shape = f.rows[k].shape,
                                               .budget = *f.rows[k].budget ? f.rows[k].budget : NULL,
                                               .trials = f.rows[k].trials,
                                               .evaluator = f.rows[k].evaluator};
        fattn_campaign_rec cr = {.uuid = o->uuid,
                                 .path = o->file,
                                 .file_sha256 = f.sha256,
                                 .file_text = f.text,
                                 .search_args = args,
                                 .argv = o->argv_text,
                                 .rows = recs,
                                 .nrows = f.n};
        rc = fattn_store_campaign_begin(s, &cr, &r->campaign, r->uuid);
        free(recs);
        if (rc)
            goto out;
        r->created = 1;
    }
    rr = fattn_xcalloc((size_t)f.n, sizeof *rr);
    run_ctx c = {.o = o, .f = &f, .s = s, .campaign = r->campaign, .uuid = r->uuid, .gpu = *gpu ? gpu : NULL, .rr = rr};
    int done_before[FATTN_CAMPAIGN_MAX_ROWS / 8 + 1] = {0};
    for (int k = 0; k < f.n && !rc; ++k) {
        rr[k].state = ROW_SKIP;
        if (sel[k] && !(rc = row_state(&c, k)) && rr[k].state == ROW_DONE)
            done_before[k / 8] |= 1 << (k % 8);
    }
    if (rc || (rc = run_rows(&c)))
        goto out;

    /* The outcome of every row asked for. */
    r->rows = fattn_xcalloc((size_t)f.n, sizeof *r->rows);
    for (int k = 0; k < f.n; ++k) {
        if (!sel[k])
            continue;
        fattn_campaign_result *x = &r->rows[r->n++];
        result_of(&c, k, x);
        x->skipped = (done_before[k / 8] >> (k % 8)) & 1;
        if (!strcmp(x->status, "done"))
            ++r->done;
        else
            ++r->failed;
    }
    if (r->failed)
        rc = fattn_error(FATTN_EFAIL,
                         "campaign %lld: %d of %d rows not done%s; run the same command again to go on with them",
                         r->campaign, r->failed, r->n, o->interrupted && *o->interrupted ? " (interrupted)" : "");
out:
    fattn_store_close(&s);
    fattn_campaign_file_release(&f);
    free(rr);
    free(sel);
    cJSON_free(args);
    return rc;
}

void fattn_campaign_report_release(fattn_campaign_report *r)
{
    free(r->rows);
    *r = (fattn_campaign_report){0};
}
