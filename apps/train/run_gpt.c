/* run_gpt.c: the transformer's job: loads the fortunes, builds the model, says what it runs, trains it, and sums up (tokens per second included). */
#include "run_gpt.h"

#include "job.h"
#include "train_text.h"

#include <stdio.h>
#include <string.h>

static void header(const struct text_run *r, const char *info)
{
    const struct options *o = r->opt;
    const struct gpt *m = r->model;
    const struct gpt_config *c = &m->cfg;

    printf("apsmpi_train: gpt: %d layers, d_model %d, %d heads, context %d, vocabulary %d (output projection not "
           "tied), %zu parameters in %d tensors, %s backend (%s); %d ranks x batch %d = %d sequences (%d characters) "
           "per step; AdamW lr %g (warm-up %ld steps, cosine to lr/10), weight decay %g, clip %g, seed %llu; "
           "%ld steps, evaluated every %ld on %d validation windows; text: %d files, %ld fortunes, %zu training and "
           "%zu validation characters; %d allreduce calls per step (%s)\n",
           c->layers, c->d, c->heads, c->ctx, c->vocab, m->arena.nparams, m->arena.ntensors, m->be->name, info,
           r->ranks, o->batch, o->global_batch, o->global_batch * c->ctx, (double)o->lr, o->gpt.warmup,
           (double)o->gpt.weight_decay, (double)o->gpt.clip, (unsigned long long)o->seed, o->gpt.steps,
           o->gpt.eval_every, o->gpt.val_windows, r->text->files, r->text->fortunes, r->text->ntrain, r->text->nval,
           r->sync.nbuckets,
           r->sync.nbuckets == 1 ? "one fused bucket"
           : o->bucket_bytes     ? "fused buckets"
                                 : "one per tensor");
    fflush(stdout);
}

int run_gpt(const struct options *opt, const char *info, int rank, int ranks)
{
    struct text_corpus text;
    struct gpt model;
    struct text_run run;
    struct gpt_config cfg = {.vocab = TEXT_VOCAB,
                             .ctx = opt->gpt.context,
                             .layers = opt->gpt.layers,
                             .d = opt->gpt.d_model,
                             .heads = opt->gpt.heads};
    const char *why = gpt_config_error(&cfg);
    char err[1024], what[160];

    if (why) {
        snprintf(err, sizeof err, "--model gpt: %s", why);
        return job_fail(rank, err);
    }
    if (text_load(opt->data_dir, &text, MPI_COMM_WORLD, err, sizeof err) != 0)
        return job_fail(rank, err);
    if (text.nval <= (size_t)cfg.ctx + 1 || text.ntrain <= (size_t)cfg.ctx + 1) {
        snprintf(err, sizeof err, "--context %d: longer than the text (%zu training, %zu validation characters)",
                 cfg.ctx, text.ntrain, text.nval);
        text_free(&text);
        return job_fail(rank, err);
    }
    gpt_build(&model, &cfg, opt->batch, opt->seed);
    run = (struct text_run){
        .opt = opt, .model = &model, .text = &text, .comm = MPI_COMM_WORLD, .rank = rank, .ranks = ranks};
    gradsync_plan(&run.sync, &model.arena, opt->bucket_bytes, true);
    adamw_init(&run.adamw, &model.arena, opt->gpt.weight_decay);
    if (job_open_csv(opt, rank, MPI_COMM_WORLD, &run.csv, err, sizeof err) != 0)
        return job_fail(rank, err);
    if (rank == 0)
        header(&run, info);
    text_train_run(&run);
    snprintf(what, sizeof what, "%ld steps, %.1f s of training steps, %.0f tokens/s", run.steps_done, run.train_s,
             run.train_s > 0 ? (double)run.steps_done * opt->global_batch * cfg.ctx / run.train_s : 0.0);
    job_summary(&run.sync, what, run.csv, rank, MPI_COMM_WORLD);
    adamw_free(&run.adamw);
    gradsync_free(&run.sync);
    gpt_free(&model);
    text_free(&text);
    MPI_Finalize();
    return 0;
}
