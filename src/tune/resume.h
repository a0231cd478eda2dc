/*
 * resume.h - what a study holds, for `search --resume`: its search
 * arguments, its search time, the next trial number, and its trials as the
 * search loop's priors.
 */
#ifndef FATTN_TUNE_RESUME_H
#define FATTN_TUNE_RESUME_H

#include "store/store.h"
#include "tune/tune.h"

typedef struct fattn_resume {
    long long study;
    char status[32];
    char **args; /* the search's arguments (argv after "search"), NULL-terminated */
    int nargs;
    char space_hash[80];
    char kernel_hash[80];
    char device[256];   /* the GPU it was measured on ("" when none was recorded) */
    char evaluator[16]; /* "gpu", "replay" */
    /* The study's families in order, each with its space and kernel hashes. */
    int nfam;
    struct {
        char family[32];
        char space_hash[80];
        char kernel_hash[80];
        char limits_json[1024];
    } fam[FATTN_MAX_FAMILIES];
    double search_ms;
    long long next_seq;
    fattn_tune_prior *prior; /* every trial, in seq order */
    size_t nprior;
    const char **keys; /* the trials' keys, sorted */
    char **running;    /* the trials it had running when it stopped (keys, oldest first) */
    size_t nrunning;
} fattn_resume;

/* Loads study `id`; a study that is not a resumable search is a usage error
 * naming it. */
int fattn_resume_load(fattn_store *s, long long id, fattn_resume *r);
void fattn_resume_release(fattn_resume *r);

/* The search's arguments (argv[1..argc) of "search ...") as its study
 * stores them (studies.args_json): a JSON array, without --db and --resume
 * (where the study lives and which it is are not part of it). The caller
 * frees it. */
char *fattn_search_args_json(int argc, char **argv);

/* With --resume the study's arguments apply: beside it only --budget,
 * --trials, --jobs, --device or --devices (other GPUs of the study's
 * model), --db and -q may be given (a usage error naming the first
 * other). */
int fattn_resume_args_check(int argc, char **argv);

/* argv[0], the study's arguments, then argv[1..argc) (the later wins when
 * parsed): *n pointers into r and argv, in an array the caller frees. */
char **fattn_resume_argv(const fattn_resume *r, int argc, char **argv, int *n);

/* 1 when the study already holds a trial of `key`. */
int fattn_resume_has(const fattn_resume *r, const char *key);

#endif
