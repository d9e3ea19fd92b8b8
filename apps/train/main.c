/* main.c: apsmpi_train's entry point: MPI setup, options, data, model, training, summary. */
/*
 * An ordinary data-parallel MPI training program that knows nothing of apsmpi: preloading
 * libapsmpi.so changes how its gradient allreduce crosses the wire, nothing else.
 *
 * Build:  mpicc -O3 -march=x86-64-v2 -Wall -Wextra <the .c files of apps/train> -o apsmpi_train -lz -lm
 * Run:    mpirun -np 4 ./apsmpi_train --model mlp --epochs 5 --csv run.csv
 */
#include "backend.h"
#include "cli.h"
#include "data.h"
#include "gradsync.h"
#include "model.h"
#include "report.h"
#include "train.h"

#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

/* Every rank has taken the same decision; rank 0 says why it fails. */
static int fail(int rank, const char *msg)
{
    if (rank == 0)
        fprintf(stderr, "apsmpi_train: %s\n", msg);
    MPI_Finalize();
    return 1;
}

/* Cuts set to its first limit items (limit 0: all); -1 if it has fewer. */
static int apply_limit(struct dataset *set, long limit, const char *option, const char *what, char *err,
                       size_t errlen)
{
    if (limit > (long)set->n) {
        snprintf(err, errlen, "%s %ld is more than the %u %s images", option, limit, set->n, what);
        return -1;
    }
    if (limit)
        set->n = (uint32_t)limit;
    return 0;
}

int main(int argc, char **argv)
{
    struct options opt;
    struct dataset train, test;
    struct model model;
    struct run run;
    char err[1024];
    int rank, ranks, parsed, csv_ok = 1, epochs;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);

    parsed = cli_parse(argc, argv, &opt, rank == 0, err, sizeof err);
    if (parsed == 1) {
        MPI_Finalize();
        return 0;
    }
    if (parsed < 0)
        return fail(rank, err);
    if (data_load(opt.data_dir, &train, &test, MPI_COMM_WORLD, err, sizeof err) != 0)
        return fail(rank, err);
    if (apply_limit(&train, opt.train_limit, "--train-limit", "training", err, sizeof err) != 0 ||
        apply_limit(&test, opt.test_limit, "--test-limit", "test", err, sizeof err) != 0)
        return fail(rank, err);
    if ((long)train.n < (long)opt.batch * ranks) {
        snprintf(err, sizeof err, "%u training images are fewer than one global batch (%d ranks x %d)", train.n, ranks,
                 opt.batch);
        return fail(rank, err);
    }

    if (model_build(&model, &backend_cpu, opt.model, opt.batch, opt.seed) != 0) {
        snprintf(err, sizeof err, "--model %s: no such model", opt.model);
        return fail(rank, err);
    }
    run = (struct run){.opt = &opt, .model = &model, .train = &train, .test = &test, .comm = MPI_COMM_WORLD,
                       .rank = rank, .ranks = ranks};
    gradsync_plan(&run.sync, &model, opt.bucket_bytes);
    if (rank == 0 && opt.csv) {
        run.csv = report_csv_open(opt.csv);
        if (!run.csv) {
            snprintf(err, sizeof err, "--csv %s: cannot write (%s)", opt.csv, strerror(errno));
            csv_ok = 0;
        }
    }
    MPI_Bcast(&csv_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!csv_ok)
        return fail(rank, err);

    if (rank == 0) {
        printf("apsmpi_train: %s, %zu parameters in %d tensors, %s backend; %d ranks x batch %d = %d; "
               "lr %g, momentum %g, seed %llu; %u training images (%u steps per epoch), %u test images; "
               "%d allreduce calls per step (%s)\n",
               model.name, model.nparams, model.ntensors, model.be->name, ranks, opt.batch, opt.batch * ranks,
               (double)opt.lr, (double)opt.momentum, (unsigned long long)opt.seed, train.n,
               train.n / (opt.batch * ranks), test.n, run.sync.nbuckets,
               opt.bucket_bytes ? "fused buckets" : "one per tensor");
        fflush(stdout);
    }
    epochs = train_run(&run);
    if (rank == 0) {
        printf("apsmpi_train: done: %d epochs; per rank %ld gradient allreduce calls, %llu bytes of MPI_FLOAT\n",
               epochs, run.sync.calls, run.sync.bytes);
        if (run.csv)
            fclose(run.csv);
    }
    model_free(&model);
    data_free(&train);
    data_free(&test);
    MPI_Finalize();
    return 0;
}
