/* log.h: apsmpi's messages on stderr, prefixed with the library name and the rank, filtered by level. */
#ifndef APSMPI_LOG_H
#define APSMPI_LOG_H

#include <stdarg.h>

/* APSMPI_LOG_FATAL: the line that ends a job (state/end_job.h), written whatever the level. */
enum apsmpi_log_level {
    APSMPI_LOG_FATAL = -1,
    APSMPI_LOG_ERROR = 0,
    APSMPI_LOG_WARN = 1,
    APSMPI_LOG_INFO = 2,
    APSMPI_LOG_DEBUG = 3
};

void apsmpi_log_set_level(int level);
void apsmpi_log_set_rank(int rank);
void apsmpi_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void apsmpi_vlog(int level, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#define APSMPI_ERROR(...) apsmpi_log(APSMPI_LOG_ERROR, __VA_ARGS__)
#define APSMPI_WARN(...) apsmpi_log(APSMPI_LOG_WARN, __VA_ARGS__)
#define APSMPI_INFO(...) apsmpi_log(APSMPI_LOG_INFO, __VA_ARGS__)
#define APSMPI_DEBUG(...) apsmpi_log(APSMPI_LOG_DEBUG, __VA_ARGS__)

#endif
