/*
 * slurm.c - a campaign for Slurm (campaign.h, fattn_campaign_emit_slurm):
 * an sbatch array of tasks, each running its rows on node-local disk and
 * copying its database back, and a merge-and-export job after the array.
 */
#include "campaign/campaign.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "campaign/file.h"
#include "config.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/misc.h"
#include "util/sha256.h"
#include "util/strbuf.h"

/* A shell word: 'text' with each ' written '\''. */
static void sh_word(fattn_strbuf *b, const char *s)
{
    fattn_sb_adds(b, "'");
    for (; *s; ++s)
        if (*s == '\'')
            fattn_sb_adds(b, "'\\''");
        else
            fattn_sb_add(b, s, 1);
    fattn_sb_adds(b, "'");
}

/* The first byte of `p` that an #SBATCH line or a comment cannot hold
 * unquoted (space, quote, %, a control character), 0 when none. */
static int plain_path(const char *p)
{
    for (; *p; ++p)
        if (isspace((unsigned char)*p) || iscntrl((unsigned char)*p) || strchr("\"'%\\", *p))
            return (unsigned char)*p;
    return 0;
}

/* 1 when the folder holds nothing, 0 when it holds something, -1 when it
 * cannot be read. */
static int folder_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int empty = 1;
    for (struct dirent *e; empty && (e = readdir(d));)
        empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    closedir(d);
    return empty;
}

/* Writes `path` (a new file) with `text`; mode 0755 for a script. */
static int write_file(const char *path, const char *text, int exec)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, exec ? 0755 : 0644);
    if (fd < 0)
        return fattn_error(FATTN_EFAIL, "campaign --emit: cannot create %s: %s", path, strerror(errno));
    size_t len = strlen(text), done = 0;
    while (done < len) {
        ssize_t w = write(fd, text + done, len - done);
        if (w <= 0) {
            close(fd);
            return fattn_error(FATTN_EFAIL, "campaign --emit: cannot write %s: %s", path, strerror(errno));
        }
        done += (size_t)w;
    }
    if (close(fd))
        return fattn_error(FATTN_EFAIL, "campaign --emit: cannot write %s: %s", path, strerror(errno));
    return FATTN_OK;
}

/* The header every script shares: where things are. */
static void common_vars(fattn_strbuf *w, const char *tool, const char *kernel_dir, const char *file, const char *dir,
                        const char *uuid, const char *sha, int tasks, const char *rows_of)
{
    fattn_sb_adds(w, "tool="), sh_word(w, tool);
    fattn_sb_adds(w, "\nfile="), sh_word(w, file);
    fattn_sb_adds(w, "\ndir="), sh_word(w, dir);
    fattn_sb_adds(w, "\nkernel_dir="), sh_word(w, kernel_dir ? kernel_dir : "");
    fattn_sb_addf(w, "\nuuid=%s\nsha=%s\ntasks=%d\nrows_of=('' %s)\n", uuid, sha, tasks, rows_of);
}

int fattn_campaign_emit_slurm(const fattn_campaign_opts *o, const char *dir, int gpus, int per_task, FILE *log)
{
    fattn_campaign_file f;
    int rc = fattn_campaign_file_read(o->file, &f);
    if (rc)
        return rc;
    unsigned char *sel = fattn_xmalloc((size_t)f.n);
    char uuid[37], *abs_file = NULL, *abs_dir = NULL, *rows_of = NULL;
    char *paths[4] = {NULL, NULL, NULL, NULL};
    char *kdir = o->kernel_dir ? realpath(o->kernel_dir, NULL) : NULL;
    int ntask = 0;
    if (o->rows)
        rc = fattn_campaign_parse_rows(o->rows, f.n, sel);
    else
        memset(sel, 1, (size_t)f.n);
    if (!rc)
        rc = fattn_campaign_check_search_args(o, NULL);
    if (rc)
        goto out;
    if (o->uuid)
        snprintf(uuid, sizeof uuid, "%s", o->uuid);
    else if (fattn_uuid_random(uuid)) {
        rc = fattn_error(FATTN_EFAIL, "campaign: cannot read /dev/urandom for the campaign's UUID");
        goto out;
    }

    /* The tasks: per_task rows each, in the file's order ('1,2' '3,4' ...). */
    fattn_strbuf rows;
    fattn_sb_init(&rows);
    for (int k = 0, in_task = 0; k < f.n; ++k) {
        if (!sel[k])
            continue;
        fattn_sb_addf(&rows, "%s%d", in_task ? "," : ntask ? "' '" : "'", k + 1);
        ntask += !in_task;
        in_task = (in_task + 1) % per_task;
    }
    fattn_sb_adds(&rows, "'");
    rows_of = fattn_sb_detach(&rows);

    /* The paths the scripts name: plain (an #SBATCH line takes no quoting). */
    abs_file = realpath(o->file, NULL);
    if (!abs_file || (o->kernel_dir && !kdir)) {
        rc = fattn_error(FATTN_EFAIL, "--emit slurm: cannot resolve %s: %s", abs_file ? o->kernel_dir : o->file,
                         strerror(errno));
        goto out;
    }
    char cwd[4096] = "";
    if (dir[0] != '/' && !getcwd(cwd, sizeof cwd)) {
        rc = fattn_error(FATTN_EFAIL, "--emit slurm: cannot read the working folder: %s", strerror(errno));
        goto out;
    }
    /* The folder is named on #SBATCH lines; the file in comments (the
     * rest goes through sh_word). */
    const char *paths_named[] = {dir, cwd, abs_file};
    for (size_t k = 0; k < sizeof paths_named / sizeof paths_named[0]; ++k) {
        int c = k < 2 ? plain_path(paths_named[k]) : 0;
        for (const char *q = paths_named[k]; !c && *q; ++q)
            c = iscntrl((unsigned char)*q) ? (unsigned char)*q : 0;
        if (c)
            rc = fattn_error(FATTN_EUSAGE,
                             "--emit slurm: the path %s holds '%c' (byte %d); expected a path without spaces, quotes, "
                             "%% or control characters (the scripts' #SBATCH lines name it unquoted)",
                             paths_named[k], isprint(c) ? c : '?', c);
    }
    if (rc)
        goto out;
    /* The folder: new, or empty. */
    struct stat st;
    if (stat(dir, &st) == 0) {
        int empty = S_ISDIR(st.st_mode) ? folder_empty(dir) : -2;
        if (empty != 1) {
            rc = empty == -2 ? fattn_error(FATTN_EUSAGE,
                                           "--emit slurm %s: not a folder; expected a new or empty "
                                           "folder",
                                           dir)
                 : empty < 0
                     ? fattn_error(FATTN_EFAIL, "--emit slurm %s: cannot read the folder: %s", dir, strerror(errno))
                     : fattn_error(FATTN_EUSAGE,
                                   "--emit slurm %s: the folder is not empty; expected a new or empty folder "
                                   "(a campaign emitted there keeps its tasks' databases)",
                                   dir);
            goto out;
        }
    } else if (mkdir(dir, 0777) != 0) {
        rc = fattn_error(FATTN_EFAIL, "--emit slurm %s: cannot create the folder: %s", dir, strerror(errno));
        goto out;
    }
    abs_dir = realpath(dir, NULL);
    if (!abs_dir) {
        rc = fattn_error(FATTN_EFAIL, "--emit slurm: cannot resolve %s: %s", dir, strerror(errno));
        goto out;
    }
    static const char *const names[4] = {"logs", "array.sbatch", "merge.sbatch", "submit.sh"};
    for (int k = 0; k < 4; ++k)
        paths[k] = fattn_path_join(abs_dir, names[k]);
    if (mkdir(paths[0], 0777) != 0) {
        rc = fattn_error(FATTN_EFAIL, "--emit slurm: cannot create %s: %s", paths[0], strerror(errno));
        goto out;
    }

    /* The array: a task per group of rows. */
    fattn_strbuf sb;
    fattn_sb_init(&sb);
    fattn_strbuf *w = &sb;
    fattn_sb_addf(w, "#!/bin/bash\n# Emitted by fattn-tune %s: campaign %s of %s, %d task%s", FATTN_VERSION, uuid,
                  abs_file, ntask, ntask == 1 ? "" : "s");
    fattn_sb_addf(w, " of at most %d row%s, each on %d GPU%s.\n", per_task, per_task == 1 ? "" : "s", gpus,
                  gpus == 1 ? "" : "s");
    fattn_sb_adds(
        w, "# Each task runs its rows on node-local disk ($SLURM_TMPDIR, else $TMPDIR, else /tmp) and copies its\n"
           "# database to the folder when it ends: task-K.db when every row is done, else task-K.partial.db, from\n"
           "# which a requeued task goes on. submit.sh submits it and merge.sbatch after it.\n");
    fattn_sb_addf(w, "#SBATCH --job-name=fattn-campaign\n#SBATCH --array=1-%d\n", ntask);
    if (gpus > 0)
        fattn_sb_addf(w, "#SBATCH --gres=gpu:%d\n", gpus);
    fattn_sb_addf(w, "#SBATCH --requeue\n#SBATCH --open-mode=append\n#SBATCH --output=%s/task-%%a.out\n", paths[0]);
    fattn_sb_adds(w, "set -u\n");
    common_vars(w, o->exe, kdir, abs_file, abs_dir, uuid, f.sha256, ntask, rows_of);
    fattn_sb_adds(w, "search_args=(");
    for (int i = 0; i < o->nsearch_args; ++i)
        fattn_sb_adds(w, i ? " " : ""), sh_word(w, o->search_args[i]);
    fattn_sb_adds(w, ")\n");
    if (gpus > 1) {
        fattn_sb_adds(w, "devices=(--devices 0");
        for (int g = 1; g < gpus; ++g)
            fattn_sb_addf(w, ",%d", g);
        fattn_sb_adds(w, ")\n");
    } else {
        fattn_sb_adds(w, "devices=()\n");
    }
    fattn_sb_adds(
        w, "task=${SLURM_ARRAY_TASK_ID:?run me with sbatch (submit.sh)}\n"
           "rows=${rows_of[$task]}\n"
           "[ \"$(sha256sum <\"$file\" | cut -c1-64)\" = \"$sha\" ] ||\n"
           "    { echo \"task $task: $file changed since the campaign was emitted; emit it again\" >&2; exit 2; }\n"
           "local=${SLURM_TMPDIR:-${TMPDIR:-/tmp}}/fattn-campaign-$uuid-$task\n"
           "mkdir -p \"$local\" || exit 1\n"
           "db=$local/task.db\n"
           "# Requeued: go on from the newer of what this node kept and what the last run saved.\n"
           "if [ -e \"$dir/task-$task.partial.db\" ] && { [ ! -e \"$db\" ] || [ \"$dir/task-$task.partial.db\" -nt "
           "\"$db\" ]; }; then\n"
           "    rm -f \"$db\" \"$db-wal\" \"$db-shm\" && cp \"$dir/task-$task.partial.db\" \"$db\" || exit 1\n"
           "fi\n"
           "echo \"task $task: rows $rows on $(hostname) at $(date -u +%FT%TZ)${SLURM_RESTART_COUNT:+, restart "
           "$SLURM_RESTART_COUNT}\"\n"
           "kd=(); [ -z \"$kernel_dir\" ] || kd=(--kernel-dir \"$kernel_dir\")\n"
           "# (${a[@]+\"${a[@]}\"}: an empty array under set -u, bash before 4.4 too)\n"
           "\"$tool\" --db \"$db\" ${kd[@]+\"${kd[@]}\"} campaign \"$file\" --uuid \"$uuid\" --rows \"$rows\" "
           "${devices[@]+\"${devices[@]}\"} -- ${search_args[@]+\"${search_args[@]}\"} &\n"
           "pid=$!\n"
           "# Slurm's SIGTERM (a requeue, preemption, the time limit) reaches every process of the task: the\n"
           "# campaign stops its searches between trials; then the database is saved.\n"
           "trap 'kill -TERM $pid 2>/dev/null' TERM INT\n"
           "while kill -0 $pid 2>/dev/null; do wait $pid; done\n"
           "wait $pid; rc=$?\n"
           "# The database, whole, beside the others (merge copies it consistently, in one file).\n"
           "if [ $rc = 0 ]; then out=task-$task.db; else out=task-$task.partial.db; fi\n"
           "rm -f \"$dir/.$out.tmp\"\n"
           "\"$tool\" -q merge \"$db\" -o \"$dir/.$out.tmp\" && mv -f \"$dir/.$out.tmp\" \"$dir/$out\" || exit 1\n"
           "[ $rc != 0 ] || rm -rf \"$dir/task-$task.partial.db\" \"$local\"\n"
           "echo \"task $task: campaign exited $rc; saved $dir/$out\"\n"
           "exit $rc\n");
    char *array = fattn_sb_detach(w);

    /* The merge-and-export job, after the array whatever became of its tasks. */
    fattn_sb_init(w);
    fattn_sb_addf(w,
                  "#!/bin/bash\n# Emitted by fattn-tune %s: merges the tasks' databases of campaign %s (the finished\n"
                  "# tasks', then the partial ones') into merged.db, exports its dispatch table to dispatch.h, and\n"
                  "# lists the tasks not finished.\n#SBATCH --job-name=fattn-campaign-merge\n#SBATCH "
                  "--output=%s/merge.out\nset -u\n",
                  FATTN_VERSION, uuid, paths[0]);
    common_vars(w, o->exe, kdir, abs_file, abs_dir, uuid, f.sha256, ntask, rows_of);
    fattn_sb_adds(
        w, "# The finished tasks' databases, then the partial ones (their rows done count, the others are\n"
           "# listed).\n"
           "done_dbs=() missing=()\n"
           "for k in $(seq \"$tasks\"); do\n"
           "    if [ -e \"$dir/task-$k.db\" ]; then done_dbs+=(\"$dir/task-$k.db\"); else missing+=(\"$k\"); fi\n"
           "done\n"
           "finished=${#done_dbs[@]}\n"
           "for k in ${missing[@]+\"${missing[@]}\"}; do\n"
           "    [ ! -e \"$dir/task-$k.partial.db\" ] || done_dbs+=(\"$dir/task-$k.partial.db\")\n"
           "done\n"
           "rc=0\n"
           "if [ ${#done_dbs[@]} -gt 0 ]; then\n"
           "    rm -f \"$dir/.merged.tmp\"\n"
           "    \"$tool\" merge \"${done_dbs[@]}\" -o \"$dir/.merged.tmp\" && mv -f \"$dir/.merged.tmp\" "
           "\"$dir/merged.db\" || rc=1\n"
           "    [ $rc != 0 ] || \"$tool\" --db \"$dir/merged.db\" export --campaign -o \"$dir/dispatch.h\" || rc=1\n"
           "fi\n"
           "for k in ${missing[@]+\"${missing[@]}\"}; do\n"
           "    echo \"not finished: task $k (rows ${rows_of[$k]}): $dir/logs/task-$k.out\"\n"
           "    [ ! -e \"$dir/task-$k.partial.db\" ] || echo \"  its rows so far (merged): $dir/task-$k.partial.db\"\n"
           "    rc=1\n"
           "done\n"
           "[ ${#missing[@]} = 0 ] || echo \"run them again: sbatch --array=$(IFS=,; echo \"${missing[*]}\") "
           "$dir/array.sbatch, then sbatch $dir/merge.sbatch\"\n"
           "echo \"merged $finished of $tasks tasks into $dir/merged.db\"\n"
           "exit $rc\n");
    char *merge = fattn_sb_detach(w);

    fattn_sb_init(w);
    fattn_sb_addf(
        w, "#!/bin/sh\n# Submits campaign %s: the array of %d task%s, then the merge after it (afterany).\nset -e\n",
        uuid, ntask, ntask == 1 ? "" : "s");
    fattn_sb_adds(w, "dir="), sh_word(w, abs_dir), fattn_sb_adds(w, "\n");
    fattn_sb_adds(
        w, "# Its arguments (a partition, an account) go to both jobs.\n"
           "job=$(sbatch --parsable \"$@\" \"$dir/array.sbatch\")\n"
           "merge=$(sbatch --parsable \"$@\" --dependency=afterany:\"${job%%;*}\" \"$dir/merge.sbatch\")\n"
           "echo \"array job ${job%%;*}, merge job ${merge%%;*}: $dir/merged.db and $dir/dispatch.h when done\"\n");
    char *submit = fattn_sb_detach(w);

    rc = write_file(paths[1], array, 1);
    if (!rc)
        rc = write_file(paths[2], merge, 1);
    if (!rc)
        rc = write_file(paths[3], submit, 1);
    free(array);
    free(merge);
    free(submit);
    if (!rc && log)
        fprintf(log, "campaign %s: %d task%s of at most %d row%s, each --gres=gpu:%d: %s, %s, %s\nsubmit with: sh %s\n",
                uuid, ntask, ntask == 1 ? "" : "s", per_task, per_task == 1 ? "" : "s", gpus, paths[1], paths[2],
                paths[3], paths[3]);
out:
    for (int k = 0; k < 4; ++k)
        free(paths[k]);
    free(abs_file);
    free(abs_dir);
    free(rows_of);
    free(kdir);
    free(sel);
    fattn_campaign_file_release(&f);
    return rc;
}
