/* test_values.h: the input values of the MPI test programs that check requests: a hash of (rank, operation, element) in [-1, 1), times 1 to 5 by stretches of 7000 elements. */
#ifndef APSMPI_TEST_VALUES_H
#define APSMPI_TEST_VALUES_H

#include <stdint.h>

static inline float test_value(int rank, int op, long i)
{
    uint64_t h = ((uint64_t)(rank + 1) << 40) ^ ((uint64_t)op << 56) ^ (uint64_t)i;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return (float)((double)(h >> 11) / 9007199254740992.0 * 2.0 - 1.0) * (float)(1 + (i / 7000) % 5);
}

#endif
