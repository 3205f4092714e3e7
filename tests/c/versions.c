/* struct_size across versions (docs/c.md#versions), from C against the real library: a program
 * compiled with an OLDER flakery.h (its flakery_options cut to the first layout's 17 members)
 * and one compiled with a NEWER flakery.h (members this library does not have) both work, and
 * flakery_options_init_sized never writes past the size it is given (guard bytes after each
 * struct stay as they were). Built and run by tests/c/run.sh; ends with "N passed, M failed". */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

int passed;
int failed;

#define GUARD_BYTE 0xab

/* The first layout of flakery_options, as a program compiled with that header has it. */
struct options_v1 {
    size_t struct_size;
    const char *layout;
    bool has_datacenter_id;
    uint64_t datacenter_id;
    bool has_worker_id;
    uint64_t worker_id;
    int32_t sequence_policy;
    uint64_t max_borrow_ms;
    uint64_t backwards_tolerance_ms;
    bool random_sequence_start;
    const char *const *field_names;
    const uint64_t *field_values;
    size_t field_count;
    const char *zookeeper;
    const char *namespace_;
    uint64_t session_timeout_ms;
    const char *lease_dir;
};

/* A later layout: today's members and two more that this library does not know. */
struct options_next {
    flakery_options current;
    uint64_t future_number;
    const char *future_string;
};

static int guard_intact(const unsigned char *guard, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (guard[i] != GUARD_BYTE) return 0;
    }
    return 1;
}

static uint64_t worker_of(const flakery_generator *gen) {
    uint64_t worker = 0;
    CHECK(flakery_generator_worker_id(gen, &worker) == FLAKERY_STATUS_OK);
    return worker;
}

static void test_older_program(void) {
    struct {
        struct options_v1 opts;
        unsigned char guard[64];
    } g;
    memset(&g, GUARD_BYTE, sizeof g);
    CHECK(flakery_options_init_sized((flakery_options *)&g.opts, sizeof g.opts) ==
          FLAKERY_STATUS_OK);
    CHECK(guard_intact(g.guard, sizeof g.guard));
    CHECK(g.opts.struct_size == sizeof g.opts);
    CHECK(g.opts.layout == NULL && !g.opts.has_datacenter_id && !g.opts.has_worker_id);
    CHECK(g.opts.sequence_policy == FLAKERY_SEQUENCE_POLICY_WAIT);
    CHECK(g.opts.max_borrow_ms == 1000 && g.opts.backwards_tolerance_ms == 1000);
    CHECK(g.opts.field_count == 0 && g.opts.lease_dir == NULL &&
          g.opts.session_timeout_ms == FLAKERY_SESSION_TIMEOUT_MS_NOT_GIVEN);

    /* Where today's library has database_url and database_mode, the older program has other
     * memory: strings that are no database URL or mode. Read as options, they would fail. */
    const char *not_url = "not a database url";
    const char *not_mode = "not a database mode";
    memcpy(g.guard, &not_url, sizeof not_url);
    memcpy(g.guard + sizeof not_url, &not_mode, sizeof not_mode);
    g.opts.layout = "twitter";
    g.opts.has_worker_id = true;
    g.opts.worker_id = 5;
    flakery_generator *gen = NULL;
    CHECK(flakery_generator_new((const flakery_options *)&g.opts, &gen) == FLAKERY_STATUS_OK);
    if (gen) {
        const char *source = NULL;
        CHECK(worker_of(gen) == 5);
        CHECK(flakery_generator_source(gen, &source) == FLAKERY_STATUS_OK &&
              strcmp(source, "explicit") == 0);
        int64_t id = 0;
        CHECK(flakery_next_id(gen, &id) == FLAKERY_STATUS_OK && id > 0);
        flakery_generator_free(gen);
    }
}

static void test_newer_program(void) {
    struct {
        struct options_next opts;
        unsigned char guard[64];
    } g;
    memset(&g, GUARD_BYTE, sizeof g);
    CHECK(flakery_options_init_sized((flakery_options *)&g.opts, sizeof g.opts) ==
          FLAKERY_STATUS_OK);
    CHECK(guard_intact(g.guard, sizeof g.guard));
    CHECK(g.opts.current.struct_size == sizeof g.opts);
    CHECK(g.opts.future_number == 0 && g.opts.future_string == NULL);
    CHECK(g.opts.current.max_borrow_ms == 1000 && g.opts.current.database_url == NULL);

    g.opts.current.layout = "twitter";
    g.opts.current.has_worker_id = true;
    g.opts.current.worker_id = 6;
    flakery_generator *gen = NULL;
    CHECK(flakery_generator_new((const flakery_options *)&g.opts, &gen) == FLAKERY_STATUS_OK);
    if (gen) {
        CHECK(worker_of(gen) == 6);
        flakery_generator_free(gen);
    }

    /* An option this library does not have is set: refused, never ignored. */
    gen = NULL;
    g.opts.future_string = "x";
    CHECK(flakery_generator_new((const flakery_options *)&g.opts, &gen) ==
          FLAKERY_STATUS_INVALID_ARGUMENT);
    CHECK(gen == NULL);
    if (gen) flakery_generator_free(gen), gen = NULL;
    CHECK(strstr(flakery_last_error(), "newer flakery.h") != NULL);
    CHECK(strstr(flakery_last_error(), "19 members") != NULL);
    g.opts.future_string = NULL;
    g.opts.future_number = 1;
    CHECK(flakery_generator_new((const flakery_options *)&g.opts, &gen) ==
          FLAKERY_STATUS_INVALID_ARGUMENT);
    CHECK(gen == NULL);
    if (gen) flakery_generator_free(gen);
}

static void test_this_header(void) {
    struct {
        flakery_options opts;
        unsigned char guard[64];
    } g;
    memset(&g, GUARD_BYTE, sizeof g);
    CHECK(flakery_options_init(&g.opts) == FLAKERY_STATUS_OK);
    CHECK(guard_intact(g.guard, sizeof g.guard));
    CHECK(g.opts.struct_size == sizeof(flakery_options));
    CHECK(g.opts.database_url == NULL && g.opts.database_mode == NULL);
}

static void test_bad_sizes(void) {
    struct {
        flakery_options opts;
        unsigned char guard[64];
    } g;
    /* No version of the struct has these sizes: refused, and nothing is written. */
    const size_t sizes[] = {0, 8, sizeof(struct options_v1) + 8, sizeof(flakery_options) - 8,
                            (size_t)1 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        memset(&g, GUARD_BYTE, sizeof g);
        CHECK(flakery_options_init_sized(&g.opts, sizes[i]) == FLAKERY_STATUS_INVALID_ARGUMENT);
        CHECK(strstr(flakery_last_error(), "sizeof no version of flakery_options") != NULL);
        CHECK(guard_intact((const unsigned char *)&g, sizeof g));
    }
    CHECK(flakery_options_init_sized(NULL, sizeof(flakery_options)) ==
          FLAKERY_STATUS_INVALID_ARGUMENT);

    /* A struct_size that is no version's (an uninitialised struct, a hand-set size): refused
     * before anything past the library's own struct is read. */
    flakery_generator *gen = NULL;
    CHECK(flakery_options_init(&g.opts) == FLAKERY_STATUS_OK);
    g.opts.struct_size = (size_t)1 << 40;
    CHECK(flakery_generator_new(&g.opts, &gen) == FLAKERY_STATUS_INVALID_ARGUMENT && !gen);
    CHECK(strstr(flakery_last_error(), "opts->struct_size is 1099511627776") != NULL);
    g.opts.struct_size = sizeof(struct options_v1) + 8;
    CHECK(flakery_generator_new(&g.opts, &gen) == FLAKERY_STATUS_INVALID_ARGUMENT && !gen);
    if (gen) flakery_generator_free(gen);
}

int main(void) {
    test_older_program();
    test_newer_program();
    test_this_header();
    test_bad_sizes();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
