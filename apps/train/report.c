/* report.c: prints the progress line of an epoch or evaluation and writes its CSV row (label,model,ranks,epoch,...). */
#include "report.h"

#include <math.h>

FILE *report_csv_open(const char *path)
{
    FILE *f = fopen(path, "w");
    if (f)
        fprintf(f, "label,model,ranks,epoch,train_loss,test_acc,epoch_s,allreduce_s,test_loss,step\n");
    return f;
}

void report_csv_row(FILE *f, const char *label, const char *model, int ranks, const struct epoch_row *r)
{
    fprintf(f, "%s,%s,%d,%d,%.6f,%.2f,%.3f,%.3f,%.6f,%ld\n", label, model, ranks, r->epoch, r->train_loss, r->test_acc,
            r->epoch_s, r->allreduce_s, r->test_loss, r->step);
    fflush(f);
}

void report_line(const struct epoch_row *r)
{
    printf("epoch %d/%d  train loss %.4f  test acc %.2f%%  epoch %.2f s  allreduce %.2f s\n", r->epoch, r->epochs,
           r->train_loss, r->test_acc, r->epoch_s, r->allreduce_s);
    fflush(stdout);
}

void report_eval_line(const struct epoch_row *r)
{
    printf("eval %d/%d  step %ld  train loss %.4f  val loss %.4f (%.3f bits/char)  val acc %.2f%%  %.2f s  "
           "allreduce %.2f s\n",
           r->epoch, r->epochs, r->step, r->train_loss, r->test_loss, r->test_loss / log(2.0), r->test_acc, r->epoch_s,
           r->allreduce_s);
    fflush(stdout);
}
