/*
 * t_family.c - the kernel-family tests' shared helpers (t_family.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/kernel_src.h"
#include "space/params.h"
#include "t_family.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/paths.h"

void t_family_config(const fattn_family *f, const char *key, fattn_config *c)
{
    if (fattn_config_parse(key, "test", c) || c->fam != f)
        exit(99); /* T_HARNESS */
}

const char *t_family_plant(const fattn_family *f, const char *root, const char *name, const char *from, const char *to)
{
    static char dir[512];
    char cmd[2048], *text = NULL;
    size_t len;
    snprintf(dir, sizeof dir, "%s/%s", root, name);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s'", dir, fattn_default_kernel_dir(), dir);
    char *path = fattn_path_join(dir, f->kernel_file);
    if (system(cmd) != 0 || fattn_read_file(path, "kernel", FATTN_EFAIL, &text, &len)) {
        free(path);
        return NULL;
    }
    char *at = strstr(text, from);
    if (!at || strstr(at + 1, from)) {
        fprintf(stderr, "planted %s: the kernel holds \"%s\" %s\n", name, from, at ? "more than once" : "nowhere");
        free(text), free(path);
        return NULL;
    }
    FILE *out = fopen(path, "w");
    int rc = !out || fprintf(out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from)) < 0;
    rc |= out && fclose(out) != 0;
    free(text), free(path);
    return rc ? NULL : dir;
}

int t_family_sim(const fattn_family *f, const char *dir, const char *key, const fattn_shape *s,
                 const fattn_sim_inputs *in, const char *cache, fattn_sim_check *r)
{
    fattn_kernel_src ks;
    fattn_config c;
    t_family_config(f, key, &c);
    if (fattn_kernel_src_load(dir, f->kernel_file, &ks))
        return -1;
    int rc = fattn_sim_check_config(&ks, &c, s, in, cache, r);
    fattn_kernel_src_release(&ks);
    if (rc == 0 && getenv("FATTN_TEST_VERBOSE"))
        fprintf(stderr, "%s (%s): %s: %s\n", key, dir, r->verdict, r->detail);
    return rc;
}

const char *t_family_plant_caught(const fattn_family *f, const char *root, const char *cache, const char *name,
                                  const char *from, const char *to, const char *key, const fattn_shape *s,
                                  const fattn_sim_inputs *in, const char *verdict)
{
    static char why[1200];
    fattn_sim_check r;
    const char *dir = t_family_plant(f, root, name, from, to);
    if (!dir)
        return "the bug could not be planted";
    /* The unplanted kernel passes the case: run once a case (plants share them). */
    static struct {
        const fattn_family *f;
        char key[FATTN_KEY_MAX];
        fattn_shape s;
        fattn_sim_inputs in;
    } passed[32];
    static int npassed;
    int known = 0;
    for (int i = 0; i < npassed && !known; ++i) {
        const fattn_shape *p = &passed[i].s;
        const fattn_sim_inputs *q = &passed[i].in;
        known = passed[i].f == f && !strcmp(passed[i].key, key) && p->batch == s->batch && p->heads == s->heads
                && p->seqlen == s->seqlen && p->head_dim == s->head_dim && p->causal == s->causal && q->seed == in->seed
                && q->sets == in->sets && q->row_blocks == in->row_blocks && q->nrow_blocks == in->nrow_blocks
                && q->tol == in->tol;
    }
    if (!known) {
        if (t_family_sim(f, fattn_default_kernel_dir(), key, s, in, cache, &r) || strcmp(r.verdict, "ok")) {
            snprintf(why, sizeof why, "the unplanted kernel: %s", r.verdict);
            return why;
        }
        if (npassed < (int)(sizeof passed / sizeof *passed)) {
            snprintf(passed[npassed].key, sizeof passed[npassed].key, "%s", key);
            passed[npassed].f = f, passed[npassed].s = *s, passed[npassed].in = *in;
            ++npassed;
        }
    }
    if (t_family_sim(f, dir, key, s, in, cache, &r) || strcmp(r.verdict, verdict)) {
        snprintf(why, sizeof why, "planted %s: %s (want %s): %s", name, r.verdict, verdict, r.detail);
        return why;
    }
    if (strcmp(verdict, "numerics")) {
        const fattn_sim_finding *w = fattn_sim_report_worst(&r.rep);
        if (!w || w->line <= 0 || !strstr(w->file, f->kernel_file)) {
            snprintf(why, sizeof why, "planted %s: the worst finding is not at a line of %s", name, f->kernel_file);
            return why;
        }
    }
    if (getenv("FATTN_TEST_VERBOSE"))
        fprintf(stderr, "  %s -> %s: %s\n", name, r.verdict, r.detail);
    return "caught";
}
