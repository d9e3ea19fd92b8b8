/* node_map.c: reads the test-only node map of APSMPI_TEST_NODE_OF_RANK ("0,0,1,1,1"). */
#include "core/node_map.h"

#include <ctype.h>

/* Reads one node number at *p, moving past it; -1 if there is none or it is too large. */
static long read_node(const char **p)
{
    long v = 0;

    if (!isdigit((unsigned char)**p))
        return -1;
    while (isdigit((unsigned char)**p)) {
        v = v * 10 + (**p - '0');
        if (v > 65535)
            return -1;
        (*p)++;
    }
    return v;
}

/* Walks the map; stops at entry `want` (returning its node) or at the end (returning the
 * number of entries, when want < 0). -1 on a malformed map. */
static long walk(const char *map, long want)
{
    const char *p = map;
    long n = 0;

    for (;;) {
        long v = read_node(&p);
        if (v < 0)
            return -1;
        if (n == want)
            return v;
        n++;
        if (*p == '\0')
            return want < 0 ? n : -1;
        if (*p++ != ',')
            return -1;
    }
}

int apsmpi_node_map_length(const char *map) { return (int)walk(map, -1); }

int apsmpi_node_map_get(const char *map, int rank) { return rank < 0 ? -1 : (int)walk(map, rank); }
