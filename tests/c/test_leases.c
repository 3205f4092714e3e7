/* Leases: the host lease, ZooKeeper down at start, and a real PostgreSQL. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

/* Leases: a host lease in a 2-bit layout runs out at the fifth holder; ZooKeeper down at start
 * is coordinator_unavailable naming the address. */
void test_leases(void) {
    char dir[] = "/tmp/flakery-c-leases-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    flakery_options opts;
    flakery_options_init(&opts);
    opts.layout = "time:41,worker:2,sequence:12;epoch=1288834974657";
    opts.lease_dir = dir;
    flakery_generator *held[4] = {NULL, NULL, NULL, NULL};
    uint64_t seen = 0;
    for (int i = 0; i < 4; i++) {
        CHECK(flakery_generator_new(&opts, &held[i]) == FLAKERY_STATUS_OK);
        uint64_t worker = 99;
        const char *source = NULL;
        if (!held[i]) continue;
        CHECK(flakery_generator_worker_id(held[i], &worker) == FLAKERY_STATUS_OK);
        CHECK(flakery_generator_source(held[i], &source) == FLAKERY_STATUS_OK);
        CHECK(source != NULL && strcmp(source, "host_lease") == 0);
        CHECK(worker < 4 && !(seen & (1u << worker)));
        seen |= 1u << worker;
    }
    flakery_generator *fifth = NULL;
    CHECK_FAILS(flakery_generator_new(&opts, &fifth), FLAKERY_STATUS_WORKER_IDS_EXHAUSTED,
                "4 node IDs");
    CHECK(fifth == NULL);
    for (int i = 0; i < 4; i++) flakery_generator_free(held[i]);

    flakery_options_init(&opts);
    opts.zookeeper = "127.0.0.1:1";
    opts.session_timeout_ms = 1000;
    flakery_generator *gen = NULL;
    CHECK_FAILS(flakery_generator_new(&opts, &gen), FLAKERY_STATUS_COORDINATOR_UNAVAILABLE,
                "127.0.0.1:1");
    CHECK(gen == NULL);
}

/* Database leases: a URL of another scheme or an unknown mode is invalid_argument, its password
 * never in the message; with C_TEST_DATABASE_URL (a PostgreSQL that tests/c/run.sh starts) two
 * generators lease distinct node IDs, and a wrong password never shows. */
void test_database(void) {
    const char *secret = "s3cr3t-bindings2-pw";
    flakery_options opts;
    flakery_generator *gen = NULL;
    flakery_options_init(&opts);
    CHECK(opts.database_url == NULL && opts.database_mode == NULL);
    opts.database_url = "redis://flakery:s3cr3t-bindings2-pw@127.0.0.1:6379/0";
    CHECK_FAILS(flakery_generator_new(&opts, &gen), FLAKERY_STATUS_INVALID_ARGUMENT,
                "database URL");
    CHECK(strstr(flakery_last_error(), secret) == NULL && gen == NULL);
    opts.database_url = "postgres://flakery:s3cr3t-bindings2-pw@127.0.0.1:1/flakery";
    opts.database_mode = "leaf";
    CHECK_FAILS(flakery_generator_new(&opts, &gen), FLAKERY_STATUS_INVALID_ARGUMENT, "'leaf'");
    CHECK(strstr(flakery_last_error(), secret) == NULL && gen == NULL);

    const char *url = getenv("C_TEST_DATABASE_URL");
    const char *password = getenv("C_TEST_DATABASE_PASSWORD");
    if (!url || !password) {
        const char *ci = getenv("CI");
        CHECK(!(ci && strcmp(ci, "true") == 0)); /* CI never skips */
        fprintf(stderr, "!!! C_TEST_DATABASE_URL unset: the database lease test SKIPPED !!!\n");
        return;
    }
    flakery_options_init(&opts);
    opts.database_url = url;
    opts.layout = "time:41,worker:10,sequence:12;epoch=0";
    flakery_generator *first = NULL, *second = NULL;
    CHECK(flakery_generator_new(&opts, &first) == FLAKERY_STATUS_OK);
    CHECK(flakery_generator_new(&opts, &second) == FLAKERY_STATUS_OK);
    if (first && second) {
        const char *source = NULL;
        uint64_t a = 0, b = 0;
        int64_t x = 0, y = 0;
        CHECK(flakery_generator_source(first, &source) == FLAKERY_STATUS_OK && source &&
              strcmp(source, "database") == 0);
        CHECK(flakery_generator_worker_id(first, &a) == FLAKERY_STATUS_OK);
        CHECK(flakery_generator_worker_id(second, &b) == FLAKERY_STATUS_OK);
        CHECK(a != b);
        CHECK(flakery_next_id(first, &x) == FLAKERY_STATUS_OK);
        CHECK(flakery_next_id(second, &y) == FLAKERY_STATUS_OK);
        CHECK(x != y);
    }
    flakery_generator_free(first);
    flakery_generator_free(second);

    /* The same URL with a wrong password: refused by the server, the password never shown. */
    char wrong[512];
    const char *at = strstr(url, password);
    CHECK(at != NULL && strlen(url) - strlen(password) + strlen(secret) < sizeof wrong);
    if (!at || strlen(url) - strlen(password) + strlen(secret) >= sizeof wrong) return;
    snprintf(wrong, sizeof wrong, "%.*s%s%s", (int)(at - url), url, secret, at + strlen(password));
    opts.database_url = wrong;
    CHECK_FAILS(flakery_generator_new(&opts, &gen), FLAKERY_STATUS_COORDINATOR_UNAVAILABLE,
                "127.0.0.1");
    CHECK(strstr(flakery_last_error(), secret) == NULL && gen == NULL);
}
