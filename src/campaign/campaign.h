/*
 * campaign.h - the campaign procedure: a study per row of a campaign file
 * (file.h), spread over GPUs, resumable as a whole.
 *
 * The campaign is recorded once (campaigns, campaign_rows: the file, the
 * search arguments every row's study takes, each row's study UUID), then
 * every row not done runs as its own `fattn-tune search` process: a new
 * study (--uuid of the row) or, when the row's study was interrupted or
 * killed, `search --resume` of it. One study per GPU at a time: with
 * --devices, each GPU of the list runs a row, the next row starting as one
 * ends. Run again (the same file and arguments, or --uuid), a campaign
 * skips the rows done and goes on with the others. A row whose study
 * another live process holds is left to it.
 */
#ifndef FATTN_CAMPAIGN_CAMPAIGN_H
#define FATTN_CAMPAIGN_CAMPAIGN_H

#include <signal.h>
#include <stdio.h>

#define FATTN_CAMPAIGN_MAX_DEVICES 64

typedef struct fattn_campaign_opts {
    const char *file;
    const char *db_path;
    const char *kernel_dir; /* NULL: the default */
    const char *uuid;       /* the campaign's identity (Slurm tasks share one); NULL: found or random */
    int fresh;              /* --new: a campaign of its own though one of the same file exists */
    int devices[FATTN_CAMPAIGN_MAX_DEVICES];
    int ndevices;       /* 0: the default GPU */
    const char *rows;   /* "1,3-5": the rows to run (NULL: every one) */
    char **search_args; /* given to every row's search (after --) */
    int nsearch_args;
    const char *argv_text; /* the command line */
    const char *exe;       /* fattn-tune, for the studies' processes */
    volatile sig_atomic_t *interrupted;
    void (*guard)(int on);
    FILE *log; /* a line as each row starts and ends (NULL: none) */
} fattn_campaign_opts;

/* One row's outcome. */
typedef struct fattn_campaign_result {
    int row;
    char label[96];
    long long study; /* 0: none */
    char status[32]; /* the study's: done, interrupted, failed, running; "not run" */
    int skipped;     /* done before this run */
    double best_us;  /* 0: none timed */
    char best_key[160];
} fattn_campaign_result;

typedef struct fattn_campaign_report {
    long long campaign;
    char uuid[37];
    int created; /* a new campaign */
    fattn_campaign_result *rows;
    int n;
    int done, failed;
} fattn_campaign_report;

/* Runs the campaign. FATTN_OK when every row asked for is done; FATTN_EFAIL
 * (one line) when one failed or was interrupted; FATTN_EUSAGE for a mistake
 * in the file or the options, before anything is written. */
int fattn_campaign_run(const fattn_campaign_opts *o, fattn_campaign_report *r);
void fattn_campaign_report_release(fattn_campaign_report *r);

/* Writes the campaign for Slurm into `dir` (new or empty; slurm.c): the
 * sbatch array array.sbatch, a task per `per_task` rows (in the file's
 * order, --rows among them), each on `gpus` GPUs (--gres=gpu:N; 0: none
 * asked), running its rows on node-local disk and copying its database to
 * dir/task-K.db when done (dir/task-K.partial.db otherwise, from which a
 * requeued task goes on); merge.sbatch, which merges the tasks' databases
 * into dir/merged.db and exports dir/dispatch.h, listing the tasks not
 * finished; submit.sh, which submits both (the merge --dependency=afterany).
 * Every task shares the campaign's UUID (o->uuid, or a new random one).
 * Nothing is run; a line on `log` says what was written. */
int fattn_campaign_emit_slurm(const fattn_campaign_opts *o, const char *dir, int gpus, int per_task, FILE *log);

/* The search options every row takes (after --), refused when they name one
 * a row or the campaign sets (--shape, --budget, --device, ...); *json (when
 * json is not NULL) their JSON array, for the campaign's identity. */
int fattn_campaign_check_search_args(const fattn_campaign_opts *o, char **json);

/* Parses "1,3-5" against n rows into sel[0..n) (1: run). */
int fattn_campaign_parse_rows(const char *text, int n, unsigned char *sel);

#endif
