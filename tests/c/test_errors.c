/* Errors: status messages, NULL and bad arguments, the last error, the environment's
 * integers and a host name that is not UTF-8. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

void test_version_and_status_messages(void) {
    CHECK(strlen(flakery_version()) > 0);
    const char *names[] = {"ok", "invalid_layout", "invalid_argument", "time_exhausted",
                           "clock_moved_backwards", "lease_lost", "coordinator_unavailable",
                           "worker_ids_exhausted", "forked"};
    for (int32_t i = 0; i <= 8; i++) CHECK(strcmp(flakery_status_message(i), names[i]) == 0);
    CHECK(FLAKERY_STATUS_OK == 0);
    CHECK(FLAKERY_STATUS_INVALID_LAYOUT == 1 && FLAKERY_STATUS_FORKED == 8);
    CHECK(strcmp(flakery_status_message(FLAKERY_STATUS_TIME_EXHAUSTED), "time_exhausted") == 0);
    CHECK(strcmp(flakery_status_message(FLAKERY_STATUS_PANIC), "panic") == 0);
    CHECK(strcmp(flakery_status_message(42), "unknown") == 0);
    CHECK(strcmp(flakery_status_message(-1), "unknown") == 0);
}

void test_null_pointers(void) {
    flakery_generator *gen = make_generator("twitter", 0, 1);
    flakery_parts p = {0};
    int64_t id = 0;
    uint64_t u = 0;
    const char *s = NULL;
    size_t n = 0;
    flakery_options opts;
    flakery_options_init(&opts);

    CHECK_FAILS(flakery_next_id_default(NULL), FLAKERY_STATUS_INVALID_ARGUMENT, "out is NULL");
    CHECK_FAILS(flakery_next_ids_default(NULL, 3), FLAKERY_STATUS_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(flakery_next_id(NULL, &id), FLAKERY_STATUS_INVALID_ARGUMENT, "generator is NULL");
    CHECK_FAILS(flakery_next_id(gen, NULL), FLAKERY_STATUS_INVALID_ARGUMENT, "out is NULL");
    CHECK_FAILS(flakery_next_ids(gen, NULL, 5), FLAKERY_STATUS_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(flakery_next_ids(gen, NULL, 0), FLAKERY_STATUS_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(flakery_next_ids(NULL, &id, 1), FLAKERY_STATUS_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(flakery_next_ids(gen, &id, SIZE_MAX), FLAKERY_STATUS_INVALID_ARGUMENT,
                "larger than any array");
    CHECK_FAILS(flakery_next_ids_default(&id, SIZE_MAX / 4), FLAKERY_STATUS_INVALID_ARGUMENT,
                "larger than any array");
    CHECK_FAILS(flakery_generator_new(NULL, NULL), FLAKERY_STATUS_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(flakery_generator_new(&opts, NULL), FLAKERY_STATUS_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(flakery_generator_worker_id(NULL, &u), FLAKERY_STATUS_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(flakery_generator_worker_id(gen, NULL), FLAKERY_STATUS_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(flakery_generator_datacenter_id(NULL, &u), FLAKERY_STATUS_INVALID_ARGUMENT,
                "NULL");
    CHECK_FAILS(flakery_generator_datacenter_id(gen, NULL), FLAKERY_STATUS_INVALID_ARGUMENT,
                "NULL");
    CHECK_FAILS(flakery_generator_source(NULL, &s), FLAKERY_STATUS_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(flakery_generator_source(gen, NULL), FLAKERY_STATUS_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(flakery_generator_layout(NULL, NULL, 0, &n), FLAKERY_STATUS_INVALID_ARGUMENT,
                "NULL");
    CHECK_FAILS(flakery_generator_layout(gen, NULL, 10, &n), FLAKERY_STATUS_INVALID_ARGUMENT,
                "NULL");
    CHECK_FAILS(flakery_generator_decode(NULL, 1, &p), FLAKERY_STATUS_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(flakery_generator_decode(gen, 1, NULL), FLAKERY_STATUS_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(flakery_generator_close(NULL), FLAKERY_STATUS_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(flakery_decode(NULL, 1, &p), FLAKERY_STATUS_INVALID_ARGUMENT, "layout is NULL");
    CHECK_FAILS(flakery_decode("twitter", 1, NULL), FLAKERY_STATUS_INVALID_ARGUMENT,
                "out is NULL");
    CHECK_FAILS(flakery_decode_field("twitter", 1, NULL, &u), FLAKERY_STATUS_INVALID_ARGUMENT,
                "field is NULL");
    CHECK_FAILS(flakery_decode_field("twitter", 1, "worker", NULL),
                FLAKERY_STATUS_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(flakery_compose(NULL, &p, &id), FLAKERY_STATUS_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(flakery_compose("twitter", NULL, &id), FLAKERY_STATUS_INVALID_ARGUMENT,
                "parts is NULL");
    p.timestamp_ms = 1700000000000;
    CHECK_FAILS(flakery_compose("twitter", &p, NULL), FLAKERY_STATUS_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(flakery_layout_capacity(NULL, NULL), FLAKERY_STATUS_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(flakery_layout_normalize(NULL, NULL, 0, &n), FLAKERY_STATUS_INVALID_ARGUMENT,
                "NULL");
    opts.field_count = 1;
    CHECK_FAILS(flakery_generator_new(&opts, &gen), FLAKERY_STATUS_INVALID_ARGUMENT,
                "field_names is NULL");
    flakery_generator_free(NULL); /* a no-op */
    CHECK(gen != NULL);
    flakery_generator_free(gen);
}

void test_bad_layouts_and_values(void) {
    flakery_parts p;
    flakery_options opts;
    flakery_generator *gen = NULL;

    CHECK_FAILS(flakery_decode("nonsense", 1, &p), FLAKERY_STATUS_INVALID_LAYOUT, "nonsense");
    CHECK_FAILS(flakery_decode("", 1, &p), FLAKERY_STATUS_INVALID_LAYOUT, "empty");
    CHECK_FAILS(flakery_decode("twitter;unit=weeks", 1, &p), FLAKERY_STATUS_INVALID_LAYOUT,
                "weeks");
    CHECK_FAILS(flakery_decode("\xff", 1, &p), FLAKERY_STATUS_INVALID_ARGUMENT, "UTF-8");
    CHECK_FAILS(flakery_decode("twitter", -1, &p), FLAKERY_STATUS_INVALID_ARGUMENT, "negative");
    CHECK_FAILS(flakery_decode("safe53", INT64_MAX, &p), FLAKERY_STATUS_INVALID_ARGUMENT,
                "bits set above");

    flakery_options_init(&opts);
    opts.layout = "time:41,worker:10;epoch=0";
    CHECK_FAILS(flakery_generator_new(&opts, &gen), FLAKERY_STATUS_INVALID_LAYOUT, "sequence");
    CHECK(gen == NULL);

    flakery_options_init(&opts);
    opts.layout = "twitter";
    opts.has_worker_id = true;
    opts.worker_id = 99;
    CHECK_FAILS(flakery_generator_new(&opts, &gen), FLAKERY_STATUS_INVALID_ARGUMENT, "99");
    CHECK(gen == NULL);

    flakery_options_init(&opts);
    opts.layout = "instagram";
    opts.has_datacenter_id = true;
    opts.datacenter_id = 1;
    CHECK_FAILS(flakery_generator_new(&opts, &gen), FLAKERY_STATUS_INVALID_ARGUMENT,
                "datacenter");

    flakery_options_init(&opts);
    opts.sequence_policy = 7;
    CHECK_FAILS(flakery_generator_new(&opts, &gen), FLAKERY_STATUS_INVALID_ARGUMENT,
                "sequence_policy is 7");

    flakery_options_init(&opts);
    opts.struct_size = 8;
    CHECK_FAILS(flakery_generator_new(&opts, &gen), FLAKERY_STATUS_INVALID_ARGUMENT,
                "struct_size");

    const char *names[] = {"colour"};
    const uint64_t values[] = {1};
    flakery_options_init(&opts);
    opts.layout = "vesta-max-peak";
    opts.field_names = names;
    opts.field_values = values;
    opts.field_count = 1;
    CHECK_FAILS(flakery_generator_new(&opts, &gen), FLAKERY_STATUS_INVALID_ARGUMENT, "colour");
    names[0] = "method";
    const uint64_t too_big[] = {4};
    opts.field_values = too_big;
    CHECK_FAILS(flakery_generator_new(&opts, &gen), FLAKERY_STATUS_INVALID_ARGUMENT, "method");
    CHECK(gen == NULL);

    /* Baidu's 28 time bits ran out on 2024-11-20. */
    gen = make_generator("baidu", 0, 1);
    int64_t id = 777, batch[4] = {1, 2, 3, 4};
    if (gen) {
        CHECK_FAILS(flakery_next_id(gen, &id), FLAKERY_STATUS_TIME_EXHAUSTED, "ran out of time");
        CHECK(id == 777);
        CHECK_FAILS(flakery_next_ids(gen, batch, 4), FLAKERY_STATUS_TIME_EXHAUSTED, "ran out of time");
        CHECK(batch[0] == 1 && batch[3] == 4);
        flakery_generator_free(gen);
    }
    /* Old baidu IDs still decode. */
    CHECK(flakery_decode("baidu", 1, &p) == FLAKERY_STATUS_OK && p.sequence == 1);
}

static void *fresh_thread_error(void *out) {
    *(int *)out = strcmp(flakery_last_error(), "") == 0;
    return NULL;
}

void test_last_error(void) {
    flakery_parts p;
    char buf[256], small[8];
    size_t n = 0;
    CHECK(flakery_decode("twitter", -5, &p) == FLAKERY_STATUS_INVALID_ARGUMENT);
    const char *msg = flakery_last_error();
    CHECK(strstr(msg, "-5") != NULL && strstr(msg, "negative") != NULL);
    size_t full = strlen(msg);

    /* Success leaves it. */
    CHECK(flakery_decode("twitter", 5, &p) == FLAKERY_STATUS_OK);
    CHECK(strlen(flakery_last_error()) == full);

    CHECK(flakery_last_error_message(buf, sizeof buf, &n) == FLAKERY_STATUS_OK);
    CHECK(n == full && strcmp(buf, flakery_last_error()) == 0);
    CHECK(flakery_last_error_message(small, sizeof small, &n) == FLAKERY_STATUS_OK);
    CHECK(n == full && strlen(small) == sizeof small - 1 &&
          strncmp(small, flakery_last_error(), sizeof small - 1) == 0);
    CHECK(flakery_last_error_message(NULL, 0, &n) == FLAKERY_STATUS_OK && n == full);
    CHECK(flakery_last_error_message(buf, sizeof buf, NULL) == FLAKERY_STATUS_OK);
    CHECK(flakery_last_error_message(NULL, 10, &n) == FLAKERY_STATUS_INVALID_ARGUMENT);
    CHECK(strlen(flakery_last_error()) == full); /* asking does not change it */

    /* Per thread: a new thread has no last error. */
    pthread_t t;
    int empty = 0;
    CHECK(pthread_create(&t, NULL, fresh_thread_error, &empty) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(empty);
}

/* core/src/decimal.rs's REFUSED_EXAMPLES: what every surface refuses as decimal text (the
 * empty one is "unset" in the environment, so it is left out here). */
static const char *const NOT_CANONICAL[] = {"+3",   "03",  " 5",          "5 ",
                                            "\xe2\x80\x83" "5", /* an em space */
                                            "-0",   "0x10", "1e3",        "\xef\xbc\x91", /* fullwidth 1 */
                                            "18446744073709551616",       "-"};

/* FLAKERY_WORKER_ID in canonical decimal only, read by the core, named in the message. In a
 * child, so that the variables never reach the other tests. */
void test_environment_integers(void) {
    for (size_t i = 0; i < sizeof NOT_CANONICAL / sizeof NOT_CANONICAL[0]; i++) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            flakery_options opts;
            flakery_generator *gen = NULL;
            setenv("FLAKERY_WORKER_ID", NOT_CANONICAL[i], 1);
            flakery_options_init(&opts);
            flakery_status s = flakery_generator_new(&opts, &gen);
            _exit(s == FLAKERY_STATUS_INVALID_ARGUMENT &&
                          strstr(flakery_last_error(), "FLAKERY_WORKER_ID=") != NULL
                      ? 0
                      : 1);
        }
        int status = 0;
        CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "  FLAKERY_WORKER_ID='%s' was not refused\n", NOT_CANONICAL[i]);
        }
    }
}

/* Declared here: the feature macros that expose them would change the rest of the file. */
extern int unshare(int flags);
extern int sethostname(const char *name, size_t len);

/* A host name that is not UTF-8 (set in a UTS namespace of a child's own) made the database
 * lease panic (FLAKERY_STATUS_PANIC, status 100, with a backtrace). Now the lease goes on and
 * reports that the database cannot be reached. */
void test_host_name_not_utf8(void) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        const int newuts = 0x04000000, newuser = 0x10000000;
        char name[64];
        memset(name, 0xff, sizeof name);
        if (unshare(newuts) != 0 && unshare(newuser | newuts) != 0) _exit(2);
        if (sethostname(name, sizeof name) != 0) _exit(3);
        flakery_options opts;
        flakery_generator *gen = NULL;
        flakery_options_init(&opts);
        opts.database_url = "postgres://u@127.0.0.1:1/ids?sslmode=disable";
        flakery_status s = flakery_generator_new(&opts, &gen);
        _exit(s == FLAKERY_STATUS_COORDINATOR_UNAVAILABLE ? 0 : 10 + (int)s);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        fprintf(stderr, "  the child exited %d\n", WEXITSTATUS(status));
    }
}
