/* print_config_table.c: prints README's configuration table, one line per row of src/core/config_table.h. */
#include <stdio.h>

#include "core/config.h"

int main(void)
{
    static const char *scopes[] = {
        [APSMPI_SCOPE_RANK] = "no", [APSMPI_SCOPE_JOB] = "yes", [APSMPI_SCOPE_WIRE] = "yes, when compressing"};

    printf("| variable | default | equal on all ranks | meaning |\n| --- | --- | --- | --- |\n");
    for (size_t i = 0; i < apsmpi_config_nrows; i++) {
        const apsmpi_config_row *r = &apsmpi_config_rows[i];
        if (r->default_value)
            printf("| `%s` | `%s` | %s | %s |\n", r->name, r->default_value, scopes[r->scope], r->doc);
        else
            printf("| `%s` | (unset) | %s | %s |\n", r->name, scopes[r->scope], r->doc);
    }
    return 0;
}
