/*
 * job.h - what a procedure (search, confirm, bench, check, compile) runs on,
 * as plain structs below the CLI: the target (space, shape, arch, gate
 * limits), how candidates are measured, and the GPU; the passes that
 * re-gate and re-compile one configuration; and a stored study taken up
 * again (its shape, arch, limits and kernel), with the notes saying what
 * was decided.
 */
#ifndef FATTN_JOB_JOB_H
#define FATTN_JOB_JOB_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "compile/batch.h"
#include "gates/gates.h"
#include "gpu/device.h"
#include "run/evaluator.h"
#include "space/hardware.h"
#include "space/space.h"
#include "store/read.h"
#include "target/arch.h"
#include "target/shape.h"

/* The gate limits given by the caller (fattn_target.given), which a
 * stored study's limits do not override. */
enum {
    FATTN_GIVEN_SMEM_LIMIT = 1u << 0,
    FATTN_GIVEN_MAX_BANK_WAYS = 1u << 1,
    FATTN_GIVEN_MIN_COALESCING = 1u << 2,
    FATTN_GIVEN_MEM_BUDGET = 1u << 3,
    FATTN_GIVEN_MAX_SPILL_BYTES = 1u << 4,
    FATTN_GIVEN_MIN_OCCUPANCY = 1u << 5,
    FATTN_GIVEN_STRICT_OCCUPANCY = 1u << 6,
    FATTN_GIVEN_SKIP = 1u << 8, /* --unsafe-skip-gate */
};

/* What a procedure decided on its own, said once nothing else can refuse
 * the command (so that a refusal is one line alone). */
#define FATTN_NOTES_MAX 12
typedef struct fattn_notes {
    int n;
    char line[FATTN_NOTES_MAX][600];
} fattn_notes;

/* Prints the notes, one line each ("fattn-tune: note: ..."). */
void fattn_notes_print(const fattn_notes *notes, FILE *f);

typedef struct fattn_target {
    const char *space_path;                      /* NULL: the default space; the first --space of several */
    const char *space_paths[FATTN_MAX_FAMILIES]; /* --space, repeatable: one per family */
    int nspace_paths;
    const char *family_text; /* --family NAME[,NAME] */
    fattn_space space;
    int space_loaded;
    const char *shape_text; /* as given, parsed by fattn_target_finish */
    fattn_shape shape;
    int causal;
    const char *arch_name; /* NULL: the GPU's */
    const fattn_arch *arch;
    int device;
    fattn_gpu_info gpu; /* probed for the arch when none is named */
    int have_gpu;
    const char *smem_limit_text; /* bytes, 100K or max: resolved once the arch is known */
    const char *filter_text;
    fattn_filter filter;
    fattn_gate_limits lim;
    unsigned given; /* FATTN_GIVEN_* */
    /* The family's kernel source and its hardware record, once
     * fattn_target_hardware has read them (the reports then show them). */
    int hw_known;
    char kernel_file[256], kernel_hash[65];
    fattn_hw_status hw;
} fattn_target;

void fattn_target_init(fattn_target *t);
void fattn_target_release(fattn_target *t);

/* Sets one of the target's settings by its option's name (no "--"):
 * space (repeatable), family, shape, causal, arch, device, filter, and the gate limits
 * smem-limit, max-bank-ways, min-coalescing, mem-budget, max-spill-bytes,
 * min-occupancy and strict-occupancy (each marked given); value is unused
 * for a flag. Returns 1 when set, 0 when `name` is none of these, or a
 * usage error naming --NAME and what it expects (settings.c). */
int fattn_target_set(fattn_target *t, const char *name, const char *value);

enum { FATTN_NEED_SHAPE = 1, FATTN_NEED_ARCH = 2, FATTN_NEED_SPACE = 4 };

/* Validates and completes the target: parses the shape (refusing one over
 * the device-memory budget), resolves the arch (from the GPU when none is
 * named) and the shared-memory limit, loads the space and reads the filter
 * against it. `cmd` names the command in the messages. */
int fattn_target_finish(fattn_target *t, int needs, const char *cmd);

/* The families a command takes, each a target of its own: its space and
 * filter, the shape, arch and limits of the target it was made from, and
 * the limits its family needs that the user did not give (the wgmma
 * family's opt-in shared memory). */
typedef struct fattn_targets {
    int n;
    fattn_target t[FATTN_MAX_FAMILIES];
} fattn_targets;

/* Completes `base` (as fattn_target_finish, `needs` without
 * FATTN_NEED_SPACE) and makes one target per family into *ts: the spaces
 * given (--space, one per family), else the families named (--family, each
 * its default space), else `defaults` (family names, comma-separated: a
 * replayed study's landscapes, which `defaults_from` names), else every attention family the arch runs
 * (every attention family where no arch is needed). --family with --space:
 * each space of a family named, a family named without one its default
 * space. --filter applies to the families it fits (it names their
 * parameters and matches some configuration), the others left out with a
 * note; where several families are in play. Usage errors: an unknown
 * family, one named twice, one the arch cannot run, a space of a family not
 * named, two spaces of one family, a family without a default space and
 * none given, a filter that fits no family. *ts is released on failure. */
int fattn_targets_finish(fattn_target *base, int needs, const char *defaults, const char *defaults_from,
                         const char *cmd, fattn_targets *ts, fattn_notes *notes);
void fattn_targets_release(fattn_targets *ts);

/* "mma, wgmma": the targets' family names, into out. */
void fattn_targets_names(const fattn_targets *ts, char *out, size_t n);

/* 1 when family f runs on arch a (a family built for sm_90a, on sm_90 only). */
int fattn_family_runs_on(const fattn_family *f, const fattn_arch *a);

/* The limits family f needs that the user did not give (t->given): the
 * arch's opt-in shared memory for a family built for it (smem_optin). The
 * arch must be resolved. */
void fattn_target_family_limits(fattn_target *t, const fattn_family *f);

/* Reads the space's family kernel source (in kernel_dir, NULL: the
 * default) for its hash, and the family's hardware record
 * (space/hardware.h), into t->kernel_* and t->hw (t->hw_known). Returns 0,
 * or FATTN_EFAIL, not reported, when the kernel cannot be read: the
 * reports then leave the record out. */
int fattn_target_hardware(fattn_target *t, const char *kernel_dir);

/* A usage error naming --shape and the device memory it needs (the count
 * never wrapped) when that is over the budget for t->lim.input_sets input
 * sets; FATTN_OK otherwise. `gpu_capped`: the budget is the GPU's memory
 * (fattn_measure_plan), which no option raises: a failure (FATTN_EFAIL). */
int fattn_target_check_memory(const fattn_target *t, int gpu_capped);

/* Reorders surv[0..count) so that its first n entries are a seeded sample
 * of the survivors, in their stable order; returns how many that is
 * (compile --sample, check --sample). */
int fattn_sample_survivors(size_t *surv, size_t count, long n, long seed);

/* How candidates are measured (search, bench, confirm). */
typedef struct fattn_measure {
    long reps, warmup, samples, timing_sets, seed;
    double timeout_ms, setup_ms;
    fattn_tolerance tol;
    int flush_l2;
    uint64_t timing_salt; /* mixed into the timing inputs' seed: confirm's are not the search's */
} fattn_measure;

void fattn_measure_init(fattn_measure *m);

/* Sets one of the measurement's settings by its option's name, as
 * fattn_target_set: reps, warmup, samples, timing-sets, seed, flush-l2,
 * atol, rtol, max-rel-l2, kernel-timeout, setup-timeout. */
int fattn_measure_set(fattn_measure *m, const char *name, const char *value);

typedef struct fattn_gpu {
    int present;
    fattn_gpu_info info;
} fattn_gpu;

/* Probes the GPU and takes the arch from it (a different t->arch_name is a
 * usage error). Without a GPU: "<cmd> needs a GPU: <why><without>",
 * FATTN_EFAIL. With $FATTN_WORKER_HOOK (the tests' fake engine) no GPU is
 * probed. */
int fattn_gpu_arch(fattn_target *t, fattn_gpu *g, const char *cmd, const char *without);

/* Fills in the default timing sets for the shape and the L2, and the
 * device-memory budget. */
void fattn_measure_plan(fattn_measure *m, fattn_target *t, const fattn_gpu *g);

/* Compiles the reference kernel (in kernel_dir, NULL: the default) and
 * starts the GPU evaluator. */
int fattn_open_gpu_evaluator(const fattn_target *t, const fattn_measure *m, const char *kernel_dir, const char *include,
                             fattn_evaluator **ev);

/* The same on each of n GPUs (devices[], the first t's), the reference
 * compiled once: ev[k] GPU devices[k]'s. GPUs of different models are a
 * usage error naming two (a study is measured on one model); on failure
 * none is left open. */
int fattn_open_gpu_evaluators(const fattn_target *t, const fattn_measure *m, const char *kernel_dir,
                              const char *include, const int *devices, int n, fattn_evaluator **ev);

/* For procedures that run one given configuration (bench, confirm): the
 * static gates, and NVRTC with the post-compile gates (into *item, whose cfg
 * is set). Either failing is an error "WHO is rejected by the G gate:
 * DETAIL; fix: FIX" (WHO: the key, or "candidate KEY"). */
int fattn_gates_pass(const fattn_config *cfg, const fattn_target *t, const char *who);
int fattn_compile_pass(const fattn_compile_ctx *cc, const char *who, fattn_compile_item *item);

/* The kernel source checked for a break that fails every configuration
 * (compile/probe.h) on the first of surv[0..n), the last and the middle one,
 * before a study is written: FATTN_EFAIL naming the file and NVRTC's first
 * error. */
int fattn_probe_survivors(const fattn_target *t, const fattn_kernel_src *src, const char *include, const size_t *surv,
                          size_t n);

/* One trial in its own transaction (rolled back when it fails): a crash
 * loses at most the trial in flight. */
int fattn_record_trial(fattn_store *s, const fattn_trial_rec *r);

/* The static gates' rejections of sv, each a trial of `study` numbered from
 * *seq in its own transaction; a key `recorded` says the study holds
 * already (a study taken up) left out; stops when *interrupted is set. */
int fattn_record_rejections(fattn_store *s, const fattn_target *t, const fattn_space_verdicts *sv, long long study,
                            long long *seq, int (*recorded)(void *arg, const char *key), void *arg,
                            volatile sig_atomic_t *interrupted);

/* For the procedures that re-gate or re-compile a stored study's
 * configuration (confirm, bench --trial, export --kernel): the study's shape
 * and arch into *t, and the gate limits it was searched under (limits_json),
 * each limit in t->given overriding the study's; then the arch and the
 * shared-memory limit resolved. Notes: the study's limits (or, for a study
 * that stored none, the defaults), each override, a limit clamped to the
 * arch. `device_arch` is the GPU's (NULL: none known, the study's is
 * taken); when it differs from the study's, the procedure stops
 * (FATTN_EFAIL, naming both) unless `allow_arch`, which re-gates and
 * re-compiles for the device's, with a note. */
int fattn_study_target(fattn_target *t, const fattn_study_info *st, const char *device_arch, int allow_arch,
                       const char *cmd, fattn_notes *notes);

/* The kernel source against the study's: the same hash, or FATTN_EFAIL
 * naming both unless `allow` (--allow-kernel-change), with a note. */
int fattn_study_kernel(const fattn_kernel_src *src, const fattn_study_info *st, int allow, const char *cmd,
                       fattn_notes *notes);

#endif
