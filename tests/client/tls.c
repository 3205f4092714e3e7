/* flakery_client over TLS (tests/client/test_tls.py runs it, the servers' URLs in the
 * environment): IDs from two https:// servers with the CA file as an option, the first killed
 * midway; a server of mutual TLS without a client certificate (FLAKERY_STATUS_TLS_FAILED);
 * a token over http:// to a host that is not loopback, refused when built. Writes the IDs to
 * $FLAKERY_TEST_TLS_OUT, one a line; ends with "N passed, M failed". */
#define _POSIX_C_SOURCE 200809L

#include "../c/check.h"

#include <signal.h>

int passed;
int failed;

static const char *env(const char *name) {
    const char *value = getenv(name);
    if (value == NULL) {
        fprintf(stderr, "%s is not set: tests/client/test_tls.py runs this program\n", name);
        exit(2);
    }
    return value;
}

#define HALF 500
static int64_t ids[2 * HALF];

int main(void) {
    flakery_client_options opts;
    flakery_client *client = NULL;
    CHECK(flakery_client_options_init(&opts) == FLAKERY_STATUS_OK);
    opts.servers = env("FLAKERY_TEST_TLS_SERVERS");
    opts.server_ca = env("FLAKERY_TEST_TLS_CA");
    /* Blocks of 100 asked for when needed, the first server first: the second half asks the
     * killed server, then the other. */
    opts.prefer_first = true;
    opts.no_prefetch = true;
    opts.min_block = opts.max_block = 100;
    CHECK(flakery_client_new(&opts, &client) == FLAKERY_STATUS_OK);
    CHECK(flakery_client_next_ids(client, ids, HALF) == FLAKERY_STATUS_OK);
    CHECK(kill((pid_t)atol(env("FLAKERY_TEST_TLS_KILL")), SIGKILL) == 0);
    CHECK(flakery_client_next_ids(client, ids + HALF, HALF) == FLAKERY_STATUS_OK);
    flakery_client_free(client);
    FILE *out = fopen(env("FLAKERY_TEST_TLS_OUT"), "w");
    CHECK(out != NULL);
    for (int i = 0; out != NULL && i < 2 * HALF; i++) {
        fprintf(out, "%" PRId64 "\n", ids[i]);
    }
    if (out != NULL) {
        fclose(out);
    }

    /* Mutual TLS without a client certificate: refused by the server, named by its code. */
    opts.servers = env("FLAKERY_TEST_TLS_MTLS_SERVER");
    client = NULL;
    CHECK(flakery_client_new(&opts, &client) == FLAKERY_STATUS_OK);
    int64_t id;
    CHECK_FAILS(flakery_client_next_id(client, &id), FLAKERY_STATUS_TLS_FAILED,
                "no client certificate");
    flakery_client_free(client);

    /* A token in clear to a host that is not loopback: refused before any connection. */
    opts.servers = "http://10.0.0.1:9";
    opts.token = "s3cret-c";
    client = NULL;
    CHECK_FAILS(flakery_client_new(&opts, &client), FLAKERY_STATUS_INVALID_ARGUMENT,
                "send_token_in_clear");
    CHECK(client == NULL);
    CHECK(strstr(flakery_last_error(), "s3cret-c") == NULL);

    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
