/* train_text.c: the language model's step loop: the seeded global batch and each rank's shard of it, allreduce, clipping, AdamW, validation loss and accuracy. */
#include "train_text.h"

#include "report.h"
#include "rng.h"

#include <math.h>
#include <stdlib.h>

#define RNG_STREAM_BATCH (1ULL << 32) /* + step */

/* The start of window w of count spread evenly over a text of n characters. */
static size_t window_start(long w, long count, size_t n, int ctx)
{
    size_t last = n - (size_t)ctx - 1;
    return count > 1 ? (size_t)((double)w * (double)last / (double)(count - 1)) : 0;
}

/* Mean loss and accuracy over the validation windows into row: each rank scores a
 * contiguous share, as many windows at a time as the model holds. */
static void evaluate(struct text_run *r, struct epoch_row *row)
{
    struct gpt *m = r->model;
    int ctx = m->cfg.ctx;
    long n = r->opt->gpt.val_windows, lo = n * r->rank / r->ranks, hi = n * (r->rank + 1) / r->ranks;
    double sums[2] = {0.0, 0.0}; /* loss, correct */

    for (long start = lo; start < hi; start += m->capacity) {
        int count = (int)(hi - start < m->capacity ? hi - start : m->capacity);
        for (int i = 0; i < count; i++)
            text_window(r->text->val, window_start(start + i, n, r->text->nval, ctx), ctx, m->tok + i * ctx,
                        m->tgt + i * ctx);
        sums[1] += (double)m->be->count_correct(gpt_forward(m, count), m->tgt, count * ctx, m->cfg.vocab);
        sums[0] += gpt_loss(m, count);
    }
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, r->comm);
    row->test_loss = sums[0] / ((double)n * ctx);
    row->test_acc = 100.0 * sums[1] / ((double)n * ctx);
}

/* This rank's windows of step's global batch into the model's input and targets. */
static void load_batch(struct text_run *r, long step, uint32_t *starts)
{
    struct gpt *m = r->model;
    int batch = r->opt->batch, ctx = m->cfg.ctx;
    struct rng rng;

    rng_init(&rng, r->opt->seed, RNG_STREAM_BATCH + (uint64_t)step);
    for (int i = 0; i < r->opt->global_batch; i++)
        starts[i] = rng_below(&rng, (uint32_t)(r->text->ntrain - (size_t)ctx));
    for (int i = 0; i < batch; i++)
        text_window(r->text->train, starts[r->rank * batch + i], ctx, m->tok + i * ctx, m->tgt + i * ctx);
}

/* One step: forward, backward, allreduce, clipping, AdamW; returns the summed loss. */
static double train_step(struct text_run *r, long step)
{
    const struct options *o = r->opt;
    struct gpt *m = r->model;
    double loss, norm;
    float scale = 1.0f / ((float)o->global_batch * (float)m->cfg.ctx);

    gpt_forward(m, o->batch);
    loss = gpt_loss(m, o->batch);
    gpt_backward(m, o->batch);
    gradsync_run(&r->sync, r->comm);
    norm = grad_norm(&m->arena, scale);
    adamw_step(&r->adamw, &m->arena, lr_at(step, o->gpt.steps, o->gpt.warmup, o->lr),
               clipped_scale(norm, scale, o->gpt.clip));
    return loss;
}

void text_train_run(struct text_run *r)
{
    const struct options *o = r->opt;
    struct gpt *m = r->model;
    long steps = o->gpt.steps, every = o->gpt.eval_every, since = 0;
    int evals = (int)((steps + every - 1) / every), done = 0;
    uint32_t *starts = malloc((size_t)o->global_batch * sizeof *starts);
    float *host_params = malloc(m->arena.nparams * sizeof(float));
    double loss = 0.0, t0;

    if (!starts || !host_params) {
        fprintf(stderr, "apsmpi_train: out of memory for the batch buffers\n");
        exit(1);
    }
    r->sync.seconds = 0.0;
    MPI_Barrier(r->comm);
    t0 = MPI_Wtime();
    for (long step = 0; step < steps; step++) {
        load_batch(r, step, starts);
        loss += train_step(r, step);
        since++;
        r->steps_done = step + 1;
        if ((step + 1) % every == 0 || step + 1 == steps) {
            struct epoch_row row = {.epoch = ++done, .epochs = evals, .step = step + 1};
            double sums[2] = {loss, r->sync.seconds};
            row.epoch_s = MPI_Wtime() - t0;
            r->train_s += row.epoch_s;
            MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, r->comm);
            row.train_loss = sums[0] / ((double)since * o->global_batch * m->cfg.ctx);
            row.allreduce_s = sums[1] / r->ranks;
            evaluate(r, &row);
            if (!arena_ranks_agree(&m->arena, r->comm, host_params) && r->rank == 0)
                fprintf(stderr, "apsmpi_train: warning: after step %ld the ranks hold different parameters\n",
                        step + 1);
            if (r->rank == 0) {
                report_eval_line(&row);
                if (r->csv)
                    report_csv_row(r->csv, o->label, o->model, r->ranks, &row);
            }
            if (!isfinite(row.train_loss)) {
                if (r->rank == 0)
                    fprintf(stderr,
                            "apsmpi_train: diverged: the training loss before step %ld is not finite; "
                            "stopping\n",
                            step + 1);
                break;
            }
            loss = 0.0;
            since = 0;
            r->sync.seconds = 0.0;
            MPI_Barrier(r->comm);
            t0 = MPI_Wtime();
        }
    }
    free(starts);
    free(host_params);
}
