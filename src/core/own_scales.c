/* own_scales.c: per-block scales of an fp32 sum taken from its own values, for the one encoding of the result. */
#include "core/own_scales.h"

#include "core/aps.h"

size_t apsmpi_own_scale_count(size_t n, size_t offset, size_t block_len)
{
    return n == 0 ? 0 : (offset + n - 1) / block_len + 1;
}

void apsmpi_own_scales(const float *x, size_t n, size_t offset, size_t block_len, const apsmpi_format *f,
                       int16_t *scales)
{
    size_t count = apsmpi_own_scale_count(n, offset, block_len);

    for (size_t b = 0; b < count; b++) {
        size_t start = b == 0 ? 0 : b * block_len - offset;
        size_t end = (b + 1) * block_len - offset < n ? (b + 1) * block_len - offset : n;
        int16_t e;

        apsmpi_block_exponents(x + start, end - start, end - start, &e);
        scales[b] = e == APSMPI_EXP_ZERO || e == APSMPI_EXP_NONFINITE ? 0 : (int16_t)(f->emax - e);
    }
}
