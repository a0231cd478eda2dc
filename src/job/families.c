/*
 * families.c - the families a command takes (job.h): the spaces given, the
 * families named, or every attention family the arch runs, each made a
 * target of its own with its family's default space and the limits it
 * needs, and the filter applied where it fits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/job.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/paths.h"
#include "util/strbuf.h"

static int index_of(const fattn_family *const *fams, int n, const fattn_family *f)
{
    for (int i = 0; i < n; ++i)
        if (fams[i] == f)
            return i;
    return -1;
}

/* The families of a comma-separated list (`option` names it in messages). */
static int parse_families(const char *text, const char *option, const fattn_family **fams, int *n)
{
    char buf[256];
    int rc = FATTN_OK;
    *n = 0;
    if (snprintf(buf, sizeof buf, "%s", text) >= (int)sizeof buf)
        return fattn_error(FATTN_EUSAGE, "%s '%.40s...': too long; expected family names such as mma,wgmma", option,
                           text);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
        const fattn_family *f = fattn_family_find(tok);
        if (!f)
            rc = fattn_error(FATTN_EUSAGE, "%s '%s': unknown family '%s'; expected one or more of %s, comma-separated",
                             option, text, tok, fattn_family_names());
        else if (index_of(fams, *n, f) >= 0)
            rc = fattn_error(FATTN_EUSAGE, "%s '%s': the %s family is named twice; expected each family once", option,
                             text, f->name);
        else if (*n == FATTN_MAX_FAMILIES)
            rc = fattn_error(FATTN_EUSAGE, "%s '%s': more than %d families", option, text, FATTN_MAX_FAMILIES);
        else
            fams[(*n)++] = f;
    }
    if (!rc && !*n)
        rc = fattn_error(FATTN_EUSAGE, "%s '%s': no family; expected one or more of %s, comma-separated", option, text,
                         fattn_family_names());
    return rc;
}

static int cannot_run(const fattn_family *f, const fattn_target *t, const char *option, const char *text)
{
    char others[128] = "";
    size_t used = 0;
    for (int i = 0; fattn_families[i] && used < sizeof others; ++i)
        if (fattn_families[i]->default_space && fattn_family_runs_on(fattn_families[i], t->arch))
            used += (size_t)snprintf(others + used, sizeof others - used, "%s%s", used ? ", " : "",
                                     fattn_families[i]->name);
    return fattn_error(FATTN_EUSAGE,
                       "%s %s: the %s family runs on sm_90 only (built for sm_90a); %s cannot run it: pass --arch "
                       "sm_90, or a family it runs (%s)",
                       option, text, f->name, t->have_gpu ? "this GPU's arch" : t->arch->name, others);
}

/* Which families, and which space file each (NULL: its default). */
static int choose(fattn_target *base, const char *defaults, const char *defaults_from, const fattn_family **fams,
                  const char **paths, int *n, fattn_space *loaded)
{
    const fattn_family *named[FATTN_MAX_FAMILIES];
    int nnamed = 0, rc;
    *n = 0;
    if (base->family_text && (rc = parse_families(base->family_text, "--family", named, &nnamed)))
        return rc;
    /* The spaces given, each of a family of its own (and of one named). */
    for (int i = 0; i < base->nspace_paths; ++i) {
        if ((rc = fattn_space_load(base->space_paths[i], &loaded[i])))
            return rc;
        const fattn_family *f = loaded[i].fam;
        int twice = index_of(fams, *n, f);
        if (twice >= 0)
            return fattn_error(FATTN_EUSAGE,
                               "--space %s: a second space of the %s family (--space %s); expected one "
                               "space per family",
                               base->space_paths[i], f->name, paths[twice]);
        if (nnamed && index_of(named, nnamed, f) < 0)
            return fattn_error(FATTN_EUSAGE,
                               "--space %s: a space of the %s family, which --family %s does not name; expected a "
                               "space of a family named, or no --family",
                               base->space_paths[i], f->name, base->family_text);
        fams[*n] = f;
        paths[(*n)++] = base->space_paths[i];
    }
    if (nnamed) { /* a family named without a space: its default */
        for (int i = 0; i < nnamed; ++i) {
            if (index_of(fams, *n, named[i]) >= 0)
                continue;
            if (!named[i]->default_space)
                return fattn_error(FATTN_EUSAGE,
                                   "--family %s: the %s family has no default space (it is not attention); pass "
                                   "--space FILE of it",
                                   base->family_text, named[i]->name);
            if (base->arch && !fattn_family_runs_on(named[i], base->arch))
                return cannot_run(named[i], base, "--family", base->family_text);
            fams[*n] = named[i];
            paths[(*n)++] = NULL;
        }
    } else if (!*n && defaults) {
        const fattn_family *d[FATTN_MAX_FAMILIES];
        int nd;
        if ((rc = parse_families(defaults, "families", d, &nd)))
            return rc;
        for (int i = 0; i < nd; ++i) {
            if (!d[i]->default_space)
                return fattn_error(FATTN_EUSAGE,
                                   "%s: the %s family has no default space (it is not attention); pass --space FILE "
                                   "of it",
                                   defaults_from, d[i]->name);
            fams[*n] = d[i], paths[(*n)++] = NULL;
        }
    } else if (!*n) { /* every attention family the arch runs */
        for (int i = 0; fattn_families[i] && *n < FATTN_MAX_FAMILIES; ++i)
            if (fattn_families[i]->default_space
                && (!base->arch || fattn_family_runs_on(fattn_families[i], base->arch)))
                fams[*n] = fattn_families[i], paths[(*n)++] = NULL;
    }
    return FATTN_OK;
}

/* Why a filter does not fit a family: its message past "--filter 'TEXT': ",
 * up to what it expects. */
static void filter_reason(const char *msg, const char *text, char *out, size_t n)
{
    char head[300];
    snprintf(head, sizeof head, "--filter '%s': ", text);
    if (!strncmp(msg, head, strlen(head)))
        msg += strlen(head);
    const char *end = strstr(msg, "; expected");
    snprintf(out, n, "%.*s", end ? (int)(end - msg) : (int)strlen(msg), msg);
}

int fattn_targets_finish(fattn_target *base, int needs, const char *defaults, const char *defaults_from,
                         const char *cmd, fattn_targets *ts, fattn_notes *notes)
{
    const fattn_family *fams[FATTN_MAX_FAMILIES];
    const char *paths[FATTN_MAX_FAMILIES];
    fattn_space loaded[FATTN_MAX_FAMILIES] = {0};
    char why[FATTN_MAX_FAMILIES][400];
    int n = 0, rc;

    memset(ts, 0, sizeof *ts);
    if ((rc = fattn_target_finish(base, needs & ~FATTN_NEED_SPACE, cmd))
        || (rc = choose(base, defaults, defaults_from, fams, paths, &n, loaded)))
        goto out;
    if (!n) {
        rc = fattn_error(FATTN_EUSAGE, "%s: no attention family runs on %s; expected --arch one of %s", cmd,
                         base->arch ? base->arch->name : "this arch", fattn_arch_choices());
        goto out;
    }
    for (int k = 0; k < n; ++k) {
        fattn_target *t = &ts->t[ts->n];
        *t = *base;
        t->space_loaded = 0;
        if (k < base->nspace_paths) { /* loaded already: taken over */
            t->space = loaded[k];
            t->space_loaded = 1;
            memset(&loaded[k], 0, sizeof loaded[k]);
            t->space_path = paths[k];
        } else {
            char *def = fattn_search_file(fams[k]->default_space);
            rc = fattn_space_load(def, &t->space);
            free(def);
            if (rc)
                goto out;
            t->space_loaded = 1;
            t->space_path = NULL;
        }
        t->nspace_paths = 0;
        fattn_target_family_limits(t, fams[k]);
        /* A filter that does not fit a family of several leaves it out. */
        if (t->filter_text && n > 1) {
            int was = fattn_error_set_quiet_thread(1);
            int bad = fattn_filter_parse(t->filter_text, fams[k], &t->filter)
                      || fattn_filter_check(&t->filter, t->filter_text, &t->space);
            fattn_error_set_quiet_thread(was);
            if (bad) {
                filter_reason(fattn_last_error(), t->filter_text, why[k], sizeof why[k]);
                fattn_target_release(t);
                continue;
            }
        }
        ++ts->n;
        if ((rc = fattn_target_finish(t, FATTN_NEED_SPACE, cmd)))
            goto out;
    }
    if (!ts->n) {
        fattn_strbuf sb;
        fattn_sb_init(&sb);
        for (int k = 0; k < n; ++k)
            fattn_sb_addf(&sb, "%s%s: %s", k ? "; " : "", fams[k]->name, why[k]);
        char *all = fattn_sb_detach(&sb);
        rc = fattn_error(FATTN_EUSAGE,
                         "--filter '%s': fits none of the families (%s); expected a filter of one "
                         "family's parameters and values",
                         base->filter_text, all);
        free(all);
        goto out;
    }
    if (ts->n < n && notes)
        for (int k = 0, j = 0; k < n; ++k) {
            if (j < ts->n && ts->t[j].space.fam == fams[k]) {
                ++j;
                continue;
            }
            if (notes->n < FATTN_NOTES_MAX)
                snprintf(notes->line[notes->n++], sizeof notes->line[0],
                         "the %s family is left out: --filter '%.150s': %.380s", fams[k]->name, base->filter_text,
                         why[k]);
        }
out:
    for (int k = 0; k < FATTN_MAX_FAMILIES; ++k)
        if (loaded[k].json || loaded[k].label)
            fattn_space_release(&loaded[k]);
    if (rc)
        fattn_targets_release(ts);
    return rc;
}

void fattn_targets_release(fattn_targets *ts)
{
    for (int k = 0; k < ts->n; ++k)
        fattn_target_release(&ts->t[k]);
    ts->n = 0;
}

void fattn_targets_names(const fattn_targets *ts, char *out, size_t n)
{
    size_t used = 0;
    out[0] = '\0';
    for (int k = 0; k < ts->n && used < n; ++k)
        used += (size_t)snprintf(out + used, n - used, "%s%s", k ? ", " : "", ts->t[k].space.fam->name);
}
