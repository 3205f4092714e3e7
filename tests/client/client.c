/* flakery_client, the C API of the client of flakery serve, against real servers that
 * tests/client/test_bindings.py starts (their URLs in the environment). Built as C11 with
 * -Wall -Wextra -Werror -pedantic under ASan + UBSan; ends with "N passed, M failed". */
#define _POSIX_C_SOURCE 200809L

/* The CHECK macros of the C area's test program (they name flakery_last_error()). */
#include "../c/check.h"

int passed;
int failed;

static const char *env(const char *name) {
    const char *value = getenv(name);
    if (value == NULL) {
        fprintf(stderr, "%s is not set: tests/client/test_bindings.py runs this program\n", name);
        exit(2);
    }
    return value;
}

static flakery_client *make_client(const char *servers, const char *token, uint64_t timeout_ms) {
    flakery_client_options opts;
    flakery_client *client = NULL;
    CHECK(flakery_client_options_init(&opts) == FLAKERY_STATUS_OK);
    opts.servers = servers;
    opts.token = token;
    opts.timeout_ms = timeout_ms;
    opts.request_timeout_ms = timeout_ms;
    CHECK(flakery_client_new(&opts, &client) == FLAKERY_STATUS_OK);
    return client;
}

static int compare(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

#define THREADS 4
#define PER_THREAD 2000
static int64_t thread_ids[THREADS][PER_THREAD];

struct worker {
    flakery_client *client;
    int64_t *out;
    int errors;
};

static void *take(void *arg) {
    struct worker *w = arg;
    for (int i = 0; i < PER_THREAD / 2; i++) {
        if (flakery_client_next_id(w->client, &w->out[i]) != FLAKERY_STATUS_OK) {
            w->errors++;
        }
    }
    if (flakery_client_next_ids(w->client, w->out + PER_THREAD / 2, PER_THREAD / 2) !=
        FLAKERY_STATUS_OK) {
        w->errors++;
    }
    return NULL;
}

/* Threads share one client over two servers: every ID is positive and none repeats. */
static void ids_from_threads_are_unique(const char *servers) {
    flakery_client *client = make_client(servers, NULL, 5000);
    pthread_t threads[THREADS];
    struct worker workers[THREADS];
    for (int t = 0; t < THREADS; t++) {
        workers[t] = (struct worker){client, thread_ids[t], 0};
        CHECK(pthread_create(&threads[t], NULL, take, &workers[t]) == 0);
    }
    int errors = 0;
    for (int t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        errors += workers[t].errors;
    }
    CHECK(errors == 0);
    int64_t *all = &thread_ids[0][0];
    size_t n = THREADS * PER_THREAD;
    qsort(all, n, sizeof *all, compare);
    size_t duplicates = 0;
    for (size_t i = 1; i < n; i++) {
        duplicates += all[i] == all[i - 1];
    }
    CHECK(all[0] > 0);
    CHECK(duplicates == 0);
    if (duplicates != 0) {
        fprintf(stderr, "  %zu duplicates among %zu IDs\n", duplicates, n);
    }

    flakery_parts parts, expected;
    CHECK(flakery_client_decode(client, all[n - 1], &parts) == FLAKERY_STATUS_OK);
    CHECK(flakery_decode("twitter", all[n - 1], &expected) == FLAKERY_STATUS_OK);
    CHECK(parts.timestamp_ms == expected.timestamp_ms && parts.worker_id == expected.worker_id &&
          parts.sequence == expected.sequence && parts.timestamp_ms > 1700000000000);
    char layout[64];
    size_t written = 0;
    CHECK(flakery_client_layout(client, layout, sizeof layout, &written) == FLAKERY_STATUS_OK);
    CHECK(strcmp(layout, "twitter") == 0);
    flakery_client_free(client);
}

static void a_closed_client_fails(const char *servers) {
    flakery_client *client = make_client(servers, NULL, 5000);
    int64_t id = 0;
    CHECK(flakery_client_next_id(client, &id) == FLAKERY_STATUS_OK);
    CHECK(flakery_client_close(client) == FLAKERY_STATUS_OK);
    CHECK(flakery_client_close(client) == FLAKERY_STATUS_OK);
    CHECK_FAILS(flakery_client_next_id(client, &id), FLAKERY_STATUS_INVALID_ARGUMENT, "closed");
    flakery_client_free(client);
}

/* The token server refuses a wrong token with a code of the client's own; its message never
 * holds the token. The right token is served. */
static void tokens(const char *url, const char *token) {
    flakery_client *wrong = make_client(url, "wrong-token-c-7d1e", 5000);
    int64_t id = 0;
    CHECK_FAILS(flakery_client_next_id(wrong, &id), FLAKERY_STATUS_UNAUTHORIZED, url);
    CHECK(strstr(flakery_last_error(), "wrong-token-c-7d1e") == NULL);
    CHECK(strcmp(flakery_status_message(FLAKERY_STATUS_UNAUTHORIZED), "unauthorized") == 0);
    flakery_client_free(wrong);

    flakery_client *right = make_client(url, token, 5000);
    CHECK(flakery_client_next_id(right, &id) == FLAKERY_STATUS_OK && id > 0);
    flakery_client_free(right);
}

/* Nothing listens on the dead URL: the call fails within its deadline with
 * servers_unavailable and a message that names the server. */
static void no_server_is_a_clear_error(const char *dead) {
    flakery_client *client = make_client(dead, NULL, 300);
    int64_t id = 0;
    CHECK_FAILS(flakery_client_next_id(client, &id), FLAKERY_STATUS_SERVERS_UNAVAILABLE, dead);
    int64_t ids[3] = {7, 7, 7};
    CHECK(flakery_client_next_ids(client, ids, 3) == FLAKERY_STATUS_SERVERS_UNAVAILABLE);
    CHECK(ids[0] == 7 && ids[1] == 7 && ids[2] == 7); /* left as they were */
    CHECK(strcmp(flakery_status_message(FLAKERY_STATUS_SERVERS_UNAVAILABLE),
                 "servers_unavailable") == 0);
    flakery_client_free(client);
}

/* With every server down, the generator made from the options' fallback answers, and its IDs
 * are its own node's (datacenter 31, worker 29: no server leases that node). */
static void the_fallback_answers_when_every_server_is_down(const char *dead) {
    flakery_options fallback;
    flakery_client_options opts;
    flakery_client *client = NULL;
    CHECK(flakery_options_init(&fallback) == FLAKERY_STATUS_OK);
    fallback.has_datacenter_id = true;
    fallback.datacenter_id = 31;
    fallback.has_worker_id = true;
    fallback.worker_id = 29;
    CHECK(flakery_client_options_init(&opts) == FLAKERY_STATUS_OK);
    opts.servers = dead;
    opts.timeout_ms = 300;
    opts.request_timeout_ms = 300;
    opts.fallback = &fallback;
    CHECK(flakery_client_new(&opts, &client) == FLAKERY_STATUS_OK);
    if (client == NULL) return;
    int64_t ids[101];
    CHECK(flakery_client_next_ids(client, ids, 100) == FLAKERY_STATUS_OK);
    CHECK(flakery_client_next_id(client, &ids[100]) == FLAKERY_STATUS_OK);
    for (int i = 0; i < 101; i++) {
        flakery_parts parts = {0};
        CHECK(flakery_client_decode(client, ids[i], &parts) == FLAKERY_STATUS_OK);
        CHECK(parts.datacenter_id == 31 && parts.worker_id == 29);
        if (i > 0) CHECK(ids[i] > ids[i - 1]);
    }
    flakery_client_free(client);

    /* A fallback's bad option fails the making of the client, as the generator's would. */
    client = NULL;
    fallback.worker_id = 1 << 20;
    CHECK_FAILS(flakery_client_new(&opts, &client), FLAKERY_STATUS_INVALID_ARGUMENT, "worker_id");
    CHECK(client == NULL);
}

static void bad_arguments(const char *servers) {
    flakery_client_options opts;
    flakery_client *client = NULL;
    int64_t id = 0;
    CHECK_FAILS(flakery_client_new(NULL, NULL), FLAKERY_STATUS_INVALID_ARGUMENT, "out");
    CHECK(flakery_client_options_init(&opts) == FLAKERY_STATUS_OK);
    opts.servers = "ftp://127.0.0.1:1";
    CHECK_FAILS(flakery_client_new(&opts, &client), FLAKERY_STATUS_INVALID_ARGUMENT,
                "is not http://host:port");
    CHECK(client == NULL);
    opts.servers = servers;
    opts.layout = "not-a-layout";
    CHECK(flakery_client_new(&opts, &client) == FLAKERY_STATUS_INVALID_LAYOUT);
    opts.layout = NULL;
    opts.struct_size = 3;
    CHECK_FAILS(flakery_client_new(&opts, &client), FLAKERY_STATUS_INVALID_ARGUMENT,
                "flakery_client_options_init");
    CHECK(client == NULL);
    CHECK_FAILS(flakery_client_next_id(NULL, &id), FLAKERY_STATUS_INVALID_ARGUMENT, "client");
    client = make_client(servers, NULL, 5000);
    CHECK_FAILS(flakery_client_next_id(client, NULL), FLAKERY_STATUS_INVALID_ARGUMENT, "out");
    CHECK_FAILS(flakery_client_next_ids(client, NULL, 1), FLAKERY_STATUS_INVALID_ARGUMENT, "out");
    flakery_client_free(client);
    flakery_client_free(NULL);
}

int main(void) {
    const char *servers = env("FLAKERY_TEST_SERVERS");
    ids_from_threads_are_unique(servers);
    a_closed_client_fails(servers);
    tokens(env("FLAKERY_TEST_TOKEN_SERVER"), env("FLAKERY_TEST_TOKEN"));
    no_server_is_a_clear_error(env("FLAKERY_TEST_DEAD_SERVER"));
    the_fallback_answers_when_every_server_is_down(env("FLAKERY_TEST_DEAD_SERVER"));
    bad_arguments(servers);
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
