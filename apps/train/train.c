/* train.c: the epoch loop: seeded shuffle, per-rank shard of each global batch, gradient allreduce, SGD, test accuracy. */
#include "train.h"

#include "report.h"
#include "rng.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RNG_STREAM_SHUFFLE 1000 /* + epoch */

/* The percent of the test set classified correctly and the mean test loss into row: each
 * rank scores a contiguous share. */
static void evaluate(struct run *r, float *host_x, int *host_y, uint32_t *idx, struct epoch_row *row)
{
    struct model *m = r->model;
    const struct backend *be = m->be;
    long n = r->test->n, lo = n * r->rank / r->ranks, hi = n * (r->rank + 1) / r->ranks;
    double sums[2] = {0.0, 0.0}; /* correct, loss */

    for (long start = lo; start < hi; start += m->capacity) {
        int count = (int)(hi - start < m->capacity ? hi - start : m->capacity);
        for (int i = 0; i < count; i++)
            idx[i] = (uint32_t)(start + i);
        data_batch(r->test, idx, count, host_x, host_y);
        be->to_device(m->x, host_x, (size_t)count * DATA_PIXELS * sizeof(float));
        be->to_device(m->labels, host_y, (size_t)count * sizeof(int));
        const float *logits = model_forward(m, count);
        sums[0] += (double)be->count_correct(logits, m->labels, count, DATA_CLASSES);
        sums[1] += be->softmax_xent(m->dlogits, logits, m->labels, count, DATA_CLASSES);
    }
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, r->comm);
    row->test_acc = 100.0 * sums[0] / (double)n;
    row->test_loss = sums[1] / (double)n;
}

int train_run(struct run *r)
{
    struct model *m = r->model;
    const struct backend *be = m->be;
    const struct options *o = r->opt;
    int batch = o->batch, global = batch * r->ranks, done = 0;
    long steps = r->train->n / global;
    uint32_t *perm = malloc(r->train->n * sizeof *perm), *idx = malloc((size_t)batch * sizeof *idx);
    float *host_x = malloc((size_t)batch * DATA_PIXELS * sizeof(float));
    float *host_params = malloc(m->arena.nparams * sizeof(float));
    int *host_y = malloc((size_t)batch * sizeof(int));

    if (!perm || !idx || !host_x || !host_params || !host_y) {
        fprintf(stderr, "apsmpi_train: out of memory for the batch buffers\n");
        exit(1);
    }
    for (int epoch = 1; epoch <= o->epochs; epoch++) {
        struct epoch_row row = {.epoch = epoch, .epochs = o->epochs};
        double loss = 0.0, t0, times[2];
        struct rng rng;

        for (uint32_t i = 0; i < r->train->n; i++)
            perm[i] = i;
        rng_init(&rng, o->seed, RNG_STREAM_SHUFFLE + (uint64_t)epoch);
        rng_shuffle(&rng, perm, r->train->n);
        r->sync.seconds = 0.0;
        MPI_Barrier(r->comm);
        t0 = MPI_Wtime();
        for (long s = 0; s < steps; s++) {
            data_batch(r->train, perm + s * global + (long)r->rank * batch, batch, host_x, host_y);
            be->to_device(m->x, host_x, (size_t)batch * DATA_PIXELS * sizeof(float));
            be->to_device(m->labels, host_y, (size_t)batch * sizeof(int));
            loss += be->softmax_xent(m->dlogits, model_forward(m, batch), m->labels, batch, DATA_CLASSES);
            model_backward(m, batch);
            gradsync_run(&r->sync, r->comm);
            be->sgd_momentum(m->arena.params, m->velocity, m->arena.grads, m->arena.nparams, o->lr, o->momentum,
                             (float)global);
        }
        be->synchronize(); /* the last step's update is done */
        row.epoch_s = MPI_Wtime() - t0;
        times[0] = loss;
        times[1] = r->sync.seconds;
        MPI_Allreduce(MPI_IN_PLACE, times, 2, MPI_DOUBLE, MPI_SUM, r->comm);
        row.train_loss = times[0] / (double)(steps * global);
        row.allreduce_s = times[1] / r->ranks;
        row.step = epoch * steps;
        evaluate(r, host_x, host_y, idx, &row);
        if (!arena_ranks_agree(&m->arena, r->comm, host_params) && r->rank == 0)
            fprintf(stderr, "apsmpi_train: warning: after epoch %d the ranks hold different parameters\n", epoch);
        if (r->rank == 0) {
            report_line(&row);
            if (r->csv)
                report_csv_row(r->csv, o->label, m->name, r->ranks, &row);
        }
        done = epoch;
        if (!isfinite(row.train_loss)) {
            if (r->rank == 0)
                fprintf(stderr, "apsmpi_train: diverged: the training loss of epoch %d is not finite; stopping\n",
                        epoch);
            break;
        }
    }
    free(perm);
    free(idx);
    free(host_x);
    free(host_params);
    free(host_y);
    return done;
}
