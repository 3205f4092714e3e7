/* flakery_options against the generator's options table (docs/spec.md#generator-options,
 * rendered from core/src/option_table/generator.rs): tests/c/run.sh passes its numeric members
 * without a has_* flag as FLAKERY_TEST_GENERATOR_TABLE, "member=least:default,...".
 * flakery_options_init writes each default, or the member's "not given" value (never 0) where
 * the default comes from the environment; 0 is taken where the table allows it and refused
 * with every surface's message where it does not; the least value is taken. */
#define _POSIX_C_SOURCE 200809L

#include <stddef.h>

#include "check.h"

/* Where each member is, and its "not given" value where it has no default of its own. A row
 * of the table that this list lacks is a failure, so a row added there is added here. */
static const struct {
    const char *name;
    size_t offset;
    bool has_not_given;
    uint64_t not_given;
} members[] = {
    {"max_borrow_ms", offsetof(flakery_options, max_borrow_ms), false, 0},
    {"backwards_tolerance_ms", offsetof(flakery_options, backwards_tolerance_ms), false, 0},
    {"session_timeout_ms", offsetof(flakery_options, session_timeout_ms), true,
     FLAKERY_SESSION_TIMEOUT_MS_NOT_GIVEN},
};

static uint64_t *member(flakery_options *o, size_t m) {
    return (uint64_t *)(void *)((char *)o + members[m].offset);
}

/* flakery_generator_new with member m at v and a fixed node ID; its status. */
static flakery_status make_with(size_t m, uint64_t v) {
    flakery_options opts;
    flakery_generator *gen = NULL;
    CHECK(flakery_options_init(&opts) == FLAKERY_STATUS_OK);
    opts.layout = "twitter";
    opts.has_datacenter_id = opts.has_worker_id = true;
    opts.datacenter_id = opts.worker_id = 1;
    *member(&opts, m) = v;
    flakery_status status = flakery_generator_new(&opts, &gen);
    CHECK((status == FLAKERY_STATUS_OK) == (gen != NULL));
    flakery_generator_free(gen);
    return status;
}

static void row(const char *name, const char *least, const char *table_default) {
    size_t m = 0, count = sizeof members / sizeof members[0];
    while (m < count && strcmp(members[m].name, name) != 0) m++;
    CHECK(m < count);
    if (m == count) {
        fprintf(stderr, "  the table's member %s is not in test_generator_options.c\n", name);
        return;
    }
    flakery_options opts;
    CHECK(flakery_options_init(&opts) == FLAKERY_STATUS_OK);
    if (strcmp(table_default, "-") == 0) {
        /* No default of its own: "not given", by a value that is not 0. */
        CHECK(members[m].has_not_given);
        CHECK(*member(&opts, m) == members[m].not_given && members[m].not_given != 0);
        CHECK(make_with(m, members[m].not_given) == FLAKERY_STATUS_OK);
    } else {
        CHECK(*member(&opts, m) == strtoull(table_default, NULL, 10));
    }
    CHECK(strcmp(least, "0") == 0 || strcmp(least, "1") == 0);
    if (strcmp(least, "0") == 0) {
        CHECK(make_with(m, 0) == FLAKERY_STATUS_OK);
    } else {
        CHECK(make_with(m, 0) == FLAKERY_STATUS_INVALID_ARGUMENT);
        char message[128];
        snprintf(message, sizeof message, "%s must be at least 1, not 0", name);
        CHECK(strcmp(flakery_last_error(), message) == 0);
        CHECK(make_with(m, 1) == FLAKERY_STATUS_OK);
    }
}

/* value is "least:default". */
static void table_row(char *name, char *value) {
    char *colon = strchr(value, ':');
    CHECK(colon != NULL);
    if (colon == NULL) return;
    *colon = '\0';
    row(name, value, colon + 1);
}

void test_generator_options_table(void) {
    int rows = each_table_row("FLAKERY_TEST_GENERATOR_TABLE", table_row);
    CHECK(rows == (int)(sizeof members / sizeof members[0]));
}
