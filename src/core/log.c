/* log.c: writes apsmpi's messages to stderr as one line each, "apsmpi[rank] LEVEL: text". */
#include "core/log.h"

#include <stdio.h>

static int log_level = APSMPI_LOG_WARN;
static int log_rank = -1;

void apsmpi_log_set_level(int level) { log_level = level; }
void apsmpi_log_set_rank(int rank) { log_rank = rank; }

void apsmpi_vlog(int level, const char *fmt, va_list ap)
{
    static const char *names[] = {"FATAL", "ERROR", "WARN", "INFO", "DEBUG"};
    const char *name = names[level - APSMPI_LOG_FATAL];
    char line[1024];
    int len;

    if (level > log_level)
        return;
    if (log_rank >= 0)
        len = snprintf(line, sizeof line, "apsmpi[%d] %s: ", log_rank, name);
    else
        len = snprintf(line, sizeof line, "apsmpi %s: ", name);
    vsnprintf(line + len, sizeof line - (size_t)len, fmt, ap);
    /* one write per line, so lines of different ranks and threads do not interleave */
    fprintf(stderr, "%s\n", line);
}

void apsmpi_log(int level, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    apsmpi_vlog(level, fmt, ap);
    va_end(ap);
}
