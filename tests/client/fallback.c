/* The C client's fallback on a server's node ID, and close(), against the real server that
 * tests/client/test_fallback_surfaces.py starts (datacenter 0, worker 11; its URL in the
 * environment): the client core's refusal and closed client reach C as
 * FLAKERY_STATUS_INVALID_ARGUMENT with the message. Built as tests/client/client.c is; ends
 * with "N passed, M failed". */
#define _POSIX_C_SOURCE 200809L

#include "../c/check.h"

int passed;
int failed;

#define NAMED "(datacenter_id 0, worker_id 11)"

static const char *env(const char *name) {
    const char *value = getenv(name);
    if (value == NULL) {
        fprintf(stderr, "%s is not set: tests/client/test_fallback_surfaces.py runs this\n", name);
        exit(2);
    }
    return value;
}

static void a_fallback_on_a_servers_node_is_refused(const char *server) {
    flakery_options fallback;
    flakery_client_options opts;
    flakery_client *client = NULL;
    CHECK(flakery_options_init(&fallback) == FLAKERY_STATUS_OK);
    fallback.has_datacenter_id = true;
    fallback.datacenter_id = 0;
    fallback.has_worker_id = true;
    fallback.worker_id = 11;
    CHECK(flakery_client_options_init(&opts) == FLAKERY_STATUS_OK);
    opts.servers = server;
    opts.fallback = &fallback;
    CHECK(flakery_client_new(&opts, &client) == FLAKERY_STATUS_OK);
    if (client == NULL) return;
    int64_t ids[3] = {0, 0, 0};
    CHECK_FAILS(flakery_client_next_id(client, &ids[0]), FLAKERY_STATUS_INVALID_ARGUMENT, NAMED);
    CHECK_FAILS(flakery_client_next_ids(client, ids, 3), FLAKERY_STATUS_INVALID_ARGUMENT, NAMED);
    CHECK_FAILS(flakery_client_next_id(client, &ids[0]), FLAKERY_STATUS_INVALID_ARGUMENT,
                "fallback");
    CHECK(ids[0] == 0 && ids[1] == 0 && ids[2] == 0);
    flakery_client_free(client);
}

/* Closed before its first call, and in a child forked after the close. */
static void closed_is_final(const char *server) {
    flakery_client_options opts;
    flakery_client *client = NULL;
    int64_t id = 0;
    CHECK(flakery_client_options_init(&opts) == FLAKERY_STATUS_OK);
    opts.servers = server;
    CHECK(flakery_client_new(&opts, &client) == FLAKERY_STATUS_OK);
    if (client == NULL) return;
    CHECK(flakery_client_close(client) == FLAKERY_STATUS_OK);
    CHECK_FAILS(flakery_client_next_id(client, &id), FLAKERY_STATUS_INVALID_ARGUMENT, "closed");
    pid_t pid = fork();
    if (pid == 0) {
        flakery_status status = flakery_client_next_id(client, &id);
        _exit(status == FLAKERY_STATUS_INVALID_ARGUMENT && strstr(flakery_last_error(), "closed")
                  ? 0
                  : 1);
    }
    int child = -1;
    CHECK(pid > 0 && waitpid(pid, &child, 0) == pid);
    CHECK(WIFEXITED(child) && WEXITSTATUS(child) == 0);
    flakery_client_free(client);
}

int main(void) {
    const char *server = env("FLAKERY_TEST_FALLBACK_SERVER");
    a_fallback_on_a_servers_node_is_refused(server);
    closed_is_final(server);
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
