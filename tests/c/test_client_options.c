/* flakery_client_options against the options table (docs/client.md#options, rendered from
 * core/src/option_table/client.rs): tests/c/run.sh passes its rows of numbers as
 * FLAKERY_TEST_CLIENT_TABLE, "member=default,..." in C's names. flakery_client_options_init
 * writes each default; a member set to 0 is refused with the table's message, named as C
 * names it; 1 is taken. */
#define _POSIX_C_SOURCE 200809L

#include <stddef.h>

#include "check.h"

/* Where each numeric member of the table is; one the table names and this list does not is a
 * failure, so a row added to the table is added here. */
static const struct {
    const char *name;
    size_t offset;
    size_t size;
} members[] = {
    {"max_age_ms", offsetof(flakery_client_options, max_age_ms), sizeof(uint64_t)},
    {"timeout_ms", offsetof(flakery_client_options, timeout_ms), sizeof(uint64_t)},
    {"request_timeout_ms", offsetof(flakery_client_options, request_timeout_ms),
     sizeof(uint64_t)},
    {"min_block", offsetof(flakery_client_options, min_block), sizeof(size_t)},
    {"max_block", offsetof(flakery_client_options, max_block), sizeof(size_t)},
};

static uint64_t get(const flakery_client_options *o, size_t m) {
    const char *at = (const char *)o + members[m].offset;
    return members[m].size == sizeof(uint64_t) ? *(const uint64_t *)(const void *)at
                                               : (uint64_t) * (const size_t *)(const void *)at;
}

static void set(flakery_client_options *o, size_t m, uint64_t v) {
    char *at = (char *)o + members[m].offset;
    if (members[m].size == sizeof(uint64_t)) {
        *(uint64_t *)(void *)at = v;
    } else {
        *(size_t *)(void *)at = (size_t)v;
    }
}

/* One row: its default from init, 0 refused (durations with the table's message; a block
 * size by the client's check of both limits, which names it), 1 taken. */
static void row(const char *name, uint64_t table_default) {
    size_t m = 0, count = sizeof members / sizeof members[0];
    while (m < count && strcmp(members[m].name, name) != 0) m++;
    CHECK(m < count);
    if (m == count) {
        fprintf(stderr, "  the table's member %s is not in test_client_options.c\n", name);
        return;
    }
    flakery_client_options opts;
    flakery_client *client = NULL;
    CHECK(flakery_client_options_init(&opts) == FLAKERY_STATUS_OK);
    CHECK(get(&opts, m) == table_default);
    opts.servers = "http://127.0.0.1:1";
    set(&opts, m, 0);
    CHECK(flakery_client_new(&opts, &client) == FLAKERY_STATUS_INVALID_ARGUMENT);
    CHECK(client == NULL);
    char message[128];
    if (strstr(name, "_ms") != NULL) {
        snprintf(message, sizeof message, "%s must be at least 1, not 0", name);
        CHECK(strcmp(flakery_last_error(), message) == 0);
    } else {
        snprintf(message, sizeof message, "%s 0", name);
        CHECK(strstr(flakery_last_error(), message) != NULL);
    }
    /* 1 is taken: a block size of 1 with the other limit at 1 too. */
    set(&opts, m, 1);
    if (strcmp(name, "max_block") == 0) opts.min_block = 1;
    CHECK(flakery_client_new(&opts, &client) == FLAKERY_STATUS_OK);
    flakery_client_free(client);
}

static void table_row(char *name, char *value) { row(name, strtoull(value, NULL, 10)); }

void test_client_options_table(void) {
    int rows = each_table_row("FLAKERY_TEST_CLIENT_TABLE", table_row);
    CHECK(rows == (int)(sizeof members / sizeof members[0]));

    /* The flags' defaults: prefetch on (no_prefetch false), prefer_first off; no strings. */
    flakery_client_options opts;
    CHECK(flakery_client_options_init(&opts) == FLAKERY_STATUS_OK);
    CHECK(!opts.no_prefetch && !opts.prefer_first);
    CHECK(opts.servers == NULL && opts.token == NULL && opts.layout == NULL &&
          opts.fallback == NULL);
    CHECK(opts.struct_size == sizeof opts);
}
