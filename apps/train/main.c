/* main.c: apsmpi_train's entry point: MPI setup, options, backend, then the image models' job (data, model, training, summary) or the transformer's (run_gpt.c). */
/*
 * An ordinary data-parallel MPI training program that knows nothing of apsmpi: preloading
 * libapsmpi.so changes how its gradient allreduce crosses the wire, nothing else.
 *
 * Build:  make apps/apsmpi_train (Makefile.am); by hand,
 *         mpicc -O3 -Wall -Wextra <the .c files of apps/train> -o apsmpi_train -lz -lm
 * Run:    mpirun -np 4 ./apsmpi_train --model mlp --epochs 5 --csv run.csv
 *         mpirun -np 4 ./apsmpi_train --model gpt --steps 600 --csv run.csv
 * With CUDA (apsmpi_train_cuda, see Makefile.am): the same .c files with -DTRAIN_HAVE_CUDA,
 * plus backend_cuda.cu through nvcc, linked with -lcublas -lcudart; --backend cuda.
 */
#include "backend.h"
#include "cli.h"
#include "data.h"
#include "gradsync.h"
#include "job.h"
#include "model.h"
#include "run_gpt.h"
#include "train.h"

#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

/* The backend of --backend, set up on every rank, with what it runs on in info. Returns -1
 * on all ranks if it fails on any; *who is the lowest failing rank, whose reason is in err. */
static int select_backend(const struct options *o, int rank, const struct backend **be, char *info, size_t infolen,
                          int *who, char *err, size_t errlen)
{
    *who = 0;
    if (strcmp(o->backend, "cpu") == 0) {
        *be = &backend_cpu;
        snprintf(info, infolen, "the host, one thread per rank");
        return 0;
    }
#ifdef TRAIN_HAVE_CUDA
    {
        MPI_Comm node;
        int local = 0, first;
        char msg[512];

        /* rank r of a node takes GPU r mod the node's GPUs */
        if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
            MPI_Comm_rank(node, &local);
            MPI_Comm_free(&node);
        }
        first = backend_cuda_init(local, msg, sizeof msg) == 0 ? INT_MAX : rank;
        MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (first == INT_MAX) {
            *be = &backend_cuda;
            snprintf(info, infolen, "%s", msg);
            return 0;
        }
        *who = first;
        if (first == 0)
            snprintf(err, errlen, "--backend cuda: %s", msg);
        else
            snprintf(err, errlen, "--backend cuda: rank %d: %s", rank, msg);
        return -1;
    }
#else
    (void)rank;
    (void)be;
    snprintf(err, errlen,
             "--backend cuda: this build has no CUDA backend (apsmpi_train_cuda is built when configure "
             "finds the CUDA toolkit)");
    return -1;
#endif
}

/* What MPI_Allreduce gets, for the header line. */
static const char *grad_sync_text(const struct gradsync *s, const struct backend *be)
{
    if (!be->device_memory)
        return "the host arena itself";
    return s->staging ? "page-locked host copies of the GPU buffers" : "the GPU buffers (a CUDA-aware MPI, or apsmpi)";
}

/* Cuts set to its first limit items (limit 0: all); -1 if it has fewer. */
static int apply_limit(struct dataset *set, long limit, const char *option, const char *what, char *err, size_t errlen)
{
    if (limit > (long)set->n) {
        snprintf(err, errlen, "%s %ld is more than the %u %s images", option, limit, set->n, what);
        return -1;
    }
    if (limit)
        set->n = (uint32_t)limit;
    return 0;
}

/* The Fashion-MNIST job of --model mlp or cnn; returns the exit status. */
static int run_images(const struct options *opt, const struct backend *be, const char *info, int rank, int ranks)
{
    struct dataset train, test;
    struct model model;
    struct run run;
    char err[1024], what[64];
    int epochs;

    if (data_load(opt->data_dir, &train, &test, MPI_COMM_WORLD, err, sizeof err) != 0)
        return job_fail(rank, err);
    if (apply_limit(&train, opt->train_limit, "--train-limit", "training", err, sizeof err) != 0 ||
        apply_limit(&test, opt->test_limit, "--test-limit", "test", err, sizeof err) != 0)
        return job_fail(rank, err);
    if ((long)train.n < (long)opt->global_batch) {
        snprintf(err, sizeof err, "%u training images are fewer than one global batch (%d ranks x %d)", train.n, ranks,
                 opt->batch);
        return job_fail(rank, err);
    }

    if (model_build(&model, be, opt->model, opt->batch, opt->seed) != 0) {
        snprintf(err, sizeof err, "--model %s: no such model", opt->model);
        return job_fail(rank, err);
    }
    run = (struct run){.opt = opt,
                       .model = &model,
                       .train = &train,
                       .test = &test,
                       .comm = MPI_COMM_WORLD,
                       .rank = rank,
                       .ranks = ranks};
    gradsync_plan(&run.sync, &model.arena, opt->bucket_bytes, strcmp(opt->grad_sync, "host") == 0);
    if (job_open_csv(opt, rank, MPI_COMM_WORLD, &run.csv, err, sizeof err) != 0)
        return job_fail(rank, err);

    if (rank == 0) {
        printf("apsmpi_train: %s, %zu parameters in %d tensors, %s backend (%s); %d ranks x batch %d = %d; "
               "lr %g, momentum %g, seed %llu; %u training images (%u steps per epoch), %u test images; "
               "%d allreduce calls per step (%s), grad-sync %s: MPI gets %s\n",
               model.name, model.arena.nparams, model.arena.ntensors, model.be->name, info, ranks, opt->batch,
               opt->global_batch, (double)opt->lr, (double)opt->momentum, (unsigned long long)opt->seed, train.n,
               train.n / opt->global_batch, test.n, run.sync.nbuckets,
               opt->bucket_bytes ? "fused buckets" : "one per tensor", opt->grad_sync,
               grad_sync_text(&run.sync, model.be));
        fflush(stdout);
    }
    epochs = train_run(&run);
    snprintf(what, sizeof what, "%d epochs", epochs);
    job_summary(&run.sync, what, run.csv, rank, MPI_COMM_WORLD);
    gradsync_free(&run.sync);
    model_free(&model);
    data_free(&train);
    data_free(&test);
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    struct options opt;
    const struct backend *be = NULL;
    char err[1024], info[512];
    int rank, ranks, parsed, who;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);

    parsed = cli_parse(argc, argv, ranks, &opt, rank == 0, err, sizeof err);
    if (parsed == 1) {
        MPI_Finalize();
        return 0;
    }
    if (parsed < 0)
        return job_fail(rank, err);
    if (select_backend(&opt, rank, &be, info, sizeof info, &who, err, sizeof err) != 0)
        return job_fail_at(rank, who, err);
    if (opt.probe) {
        if (rank == 0)
            printf("apsmpi_train: %s backend on %s; %d rank%s\n", be->name, info, ranks, ranks == 1 ? "" : "s");
        MPI_Finalize();
        return 0;
    }
    if (opt.is_gpt)
        return run_gpt(&opt, info, rank, ranks);
    return run_images(&opt, be, info, rank, ranks);
}
