/* mx_format.c: the names of the MX formats (OCP's and apsmpi's mxfp5) and the element layout each one stands for. */
#include "core/mx_format.h"

#include <string.h>

/* Each MX format: its canonical name, an alias that names the element too, the element. */
static const struct {
    const char *name, *alias;
    int ebits, mbits, kind;
} mx_formats[] = {
    {"mxfp8", "mxfp8e4m3", 4, 3, APSMPI_KIND_FN},     {"mxfp8e5m2", NULL, 5, 2, APSMPI_KIND_IEEE},
    {"mxfp6", "mxfp6e3m2", 3, 2, APSMPI_KIND_FINITE}, {"mxfp6e2m3", NULL, 2, 3, APSMPI_KIND_FINITE},
    {"mxfp5", "mxfp5e3m1", 3, 1, APSMPI_KIND_FINITE}, {"mxfp4", "mxfp4e2m1", 2, 1, APSMPI_KIND_FINITE},
};

const char *const apsmpi_mx_format_names[] = {"mxfp8", "mxfp8e5m2", "mxfp6", "mxfp6e2m3", "mxfp5", "mxfp4", NULL};

int apsmpi_mx_format_lookup(const char *name, const char **canonical, int *ebits, int *mbits, int *kind)
{
    for (size_t i = 0; i < sizeof mx_formats / sizeof mx_formats[0]; i++) {
        if (strcmp(name, mx_formats[i].name) != 0 &&
            (mx_formats[i].alias == NULL || strcmp(name, mx_formats[i].alias) != 0))
            continue;
        *canonical = mx_formats[i].name;
        *ebits = mx_formats[i].ebits;
        *mbits = mx_formats[i].mbits;
        *kind = mx_formats[i].kind;
        return 0;
    }
    return -1;
}
