/* fault.c: fault injection for tests: which pass of which step fails on which rank (APSMPI_TEST_FAIL). */
#include "core/fault.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static const char *const site_names[] = {
#define APSMPI_FAULT_NAME(id, name, what) name,
    APSMPI_FAULT_SITES(APSMPI_FAULT_NAME)
#undef APSMPI_FAULT_NAME
};

static int armed_site = -1;
static long armed_call;
static _Atomic long passes[APSMPI_FAULT_NSITES];

int apsmpi_fault_parse(const char *spec, int *site, long *rank, long *call)
{
    const char *colon = strchr(spec, ':');
    char *end;

    if (colon == NULL)
        return -1;
    *site = -1;
    for (int i = 0; i < APSMPI_FAULT_NSITES; i++)
        if (strlen(site_names[i]) == (size_t)(colon - spec) &&
            strncmp(spec, site_names[i], (size_t)(colon - spec)) == 0)
            *site = i;
    if (*site < 0)
        return -1;
    if (colon[1] == '*') {
        *rank = -1;
        end = (char *)colon + 2;
    } else if (colon[1] >= '0' && colon[1] <= '9') {
        *rank = strtol(colon + 1, &end, 10);
    } else {
        return -1;
    }
    if (*end != ':' || end[1] < '1' || end[1] > '9')
        return -1;
    *call = strtol(end + 1, &end, 10);
    return *end == '\0' ? 0 : -1;
}

void apsmpi_fault_arm(const char *spec, int rank)
{
    int site;
    long on_rank, call;

    armed_site = -1;
    if (spec != NULL && apsmpi_fault_parse(spec, &site, &on_rank, &call) == 0 && (on_rank == rank || on_rank < 0)) {
        armed_site = site;
        armed_call = call;
    }
}

int apsmpi_fault(enum apsmpi_fault_site site)
{
    if ((int)site != armed_site)
        return 0;
    return atomic_fetch_add_explicit(&passes[site], 1, memory_order_relaxed) + 1 == armed_call;
}
