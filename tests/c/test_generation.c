/* Generation: options, generators (from 4 threads too), close and fork. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

#define THREADS 4
#define PER_THREAD 50000

struct worker_args {
    const flakery_generator *gen; /* NULL: the process-wide generator */
    int64_t *ids;
    int errors;
    int not_increasing;
};

static void *generate(void *p) {
    struct worker_args *a = p;
    for (int i = 0; i < PER_THREAD; i++) {
        flakery_status s = a->gen ? flakery_next_id(a->gen, &a->ids[i])
                                  : flakery_next_id_default(&a->ids[i]);
        if (s != FLAKERY_STATUS_OK) {
            a->errors++;
            a->ids[i] = -1 - i;
        } else if (i > 0 && a->ids[i] <= a->ids[i - 1]) {
            a->not_increasing++;
        }
    }
    return NULL;
}

static void test_threads(const flakery_generator *gen) {
    pthread_t threads[THREADS];
    struct worker_args args[THREADS];
    int64_t *all = malloc(sizeof(int64_t) * THREADS * PER_THREAD);
    CHECK(all != NULL);
    if (!all) return;
    for (int t = 0; t < THREADS; t++) {
        args[t] = (struct worker_args){gen, all + (size_t)t * PER_THREAD, 0, 0};
        CHECK(pthread_create(&threads[t], NULL, generate, &args[t]) == 0);
    }
    for (int t = 0; t < THREADS; t++) {
        CHECK(pthread_join(threads[t], NULL) == 0);
        CHECK(args[t].errors == 0);
        CHECK(args[t].not_increasing == 0);
    }
    qsort(all, (size_t)THREADS * PER_THREAD, sizeof(int64_t), compare_ids);
    int duplicates = 0;
    for (size_t i = 1; i < (size_t)THREADS * PER_THREAD; i++) duplicates += all[i] == all[i - 1];
    CHECK(duplicates == 0);
    CHECK(all[0] > 0);
    free(all);
}

void test_options_init(void) {
    flakery_options opts;
    memset(&opts, 0xab, sizeof opts);
    CHECK(flakery_options_init(&opts) == FLAKERY_STATUS_OK);
    CHECK(opts.struct_size == sizeof(flakery_options));
    CHECK(opts.layout == NULL);
    CHECK(!opts.has_datacenter_id && !opts.has_worker_id);
    CHECK(opts.sequence_policy == FLAKERY_SEQUENCE_POLICY_WAIT);
    CHECK(opts.max_borrow_ms == 1000 && opts.backwards_tolerance_ms == 1000);
    CHECK(!opts.random_sequence_start);
    CHECK(opts.field_names == NULL && opts.field_values == NULL && opts.field_count == 0);
    CHECK(opts.zookeeper == NULL && opts.namespace_ == NULL && opts.lease_dir == NULL);
    CHECK(opts.session_timeout_ms == FLAKERY_SESSION_TIMEOUT_MS_NOT_GIVEN);
    CHECK_FAILS(flakery_options_init(NULL), FLAKERY_STATUS_INVALID_ARGUMENT, "NULL");
}

void test_generator(void) {
    flakery_generator *gen = make_generator("twitter", 1, 3);
    uint64_t worker = 0, datacenter = 0;
    const char *source = NULL;
    char layout[64];
    size_t written = 0;
    CHECK(flakery_generator_worker_id(gen, &worker) == FLAKERY_STATUS_OK && worker == 3);
    CHECK(flakery_generator_datacenter_id(gen, &datacenter) == FLAKERY_STATUS_OK &&
          datacenter == 1);
    CHECK(flakery_generator_source(gen, &source) == FLAKERY_STATUS_OK && source &&
          strcmp(source, "explicit") == 0);
    CHECK(flakery_generator_layout(gen, layout, sizeof layout, &written) == FLAKERY_STATUS_OK);
    CHECK(strcmp(layout, "twitter") == 0 && written == 7);

    int64_t id = 0, next = 0;
    CHECK(flakery_next_id(gen, &id) == FLAKERY_STATUS_OK && id > 0);
    CHECK(flakery_next_id(gen, &next) == FLAKERY_STATUS_OK && next > id);
    flakery_parts parts;
    CHECK(flakery_generator_decode(gen, id, &parts) == FLAKERY_STATUS_OK);
    CHECK(parts.worker_id == 3 && parts.datacenter_id == 1);
    int64_t now = now_ms();
    CHECK(parts.timestamp_ms > now - 10000 && parts.timestamp_ms <= now + 1000);
    CHECK(flakery_decode("twitter", id, &parts) == FLAKERY_STATUS_OK && parts.worker_id == 3);

    int64_t batch[1000];
    CHECK(flakery_next_ids(gen, batch, 1000) == FLAKERY_STATUS_OK);
    int ordered = batch[0] > next;
    for (int i = 1; i < 1000; i++) ordered &= batch[i] > batch[i - 1];
    CHECK(ordered);
    CHECK(flakery_next_ids(gen, batch, 0) == FLAKERY_STATUS_OK);

    test_threads(gen);
    flakery_generator_free(gen);
}

void test_default_generator(void) {
    int64_t a = 0, b = 0, batch[100];
    CHECK(flakery_next_id_default(&a) == FLAKERY_STATUS_OK && a > 0);
    CHECK(flakery_next_id_default(&b) == FLAKERY_STATUS_OK && b > a);
    CHECK(flakery_next_ids_default(batch, 100) == FLAKERY_STATUS_OK && batch[0] > b);
    int ordered = 1;
    for (int i = 1; i < 100; i++) ordered &= batch[i] > batch[i - 1];
    CHECK(ordered);
    test_threads(NULL);
}

void test_options_pass_through(void) {
    flakery_options opts;
    flakery_generator *gen = NULL;
    const char *names[] = {"version", "method"};
    const uint64_t values[] = {0, 3};
    flakery_options_init(&opts);
    opts.layout = "vesta-min-granularity";
    opts.has_worker_id = true;
    opts.worker_id = 1023;
    opts.sequence_policy = FLAKERY_SEQUENCE_POLICY_BORROW;
    opts.max_borrow_ms = 50;
    opts.backwards_tolerance_ms = 5;
    opts.random_sequence_start = true;
    opts.field_names = names;
    opts.field_values = values;
    opts.field_count = 2;
    /* Lease options: an explicit worker ID wins over them, as docs/spec.md#node-identity orders. */
    opts.zookeeper = "127.0.0.1:1/flakery-c-test";
    opts.namespace_ = "c-test";
    opts.session_timeout_ms = 2000;
    opts.lease_dir = "/tmp/flakery-c-test-leases";
    CHECK(flakery_generator_new(&opts, &gen) == FLAKERY_STATUS_OK);
    if (!gen) return;
    int64_t id = 0;
    uint64_t v = 0;
    CHECK(flakery_next_id(gen, &id) == FLAKERY_STATUS_OK);
    CHECK(flakery_decode_field("vesta-min-granularity", id, "version", &v) == FLAKERY_STATUS_OK &&
          v == 0);
    CHECK(flakery_decode_field("vesta-min-granularity", id, "type", &v) == FLAKERY_STATUS_OK &&
          v == 1);
    CHECK(flakery_decode_field("vesta-min-granularity", id, "method", &v) == FLAKERY_STATUS_OK &&
          v == 3);
    CHECK(flakery_decode_field("vesta-min-granularity", id, "worker", &v) == FLAKERY_STATUS_OK &&
          v == 1023);
    flakery_generator_free(gen);

    /* Version 1 sets bit 63: every ID would be negative, so generation refuses. */
    const uint64_t version_1[] = {1, 3};
    opts.field_values = version_1;
    gen = NULL;
    CHECK(flakery_generator_new(&opts, &gen) == FLAKERY_STATUS_OK);
    id = 42;
    CHECK_FAILS(flakery_next_id(gen, &id), FLAKERY_STATUS_TIME_EXHAUSTED, "bit 63");
    CHECK(id == 42);
    flakery_generator_free(gen);
}

void test_close(void) {
    flakery_generator *gen = make_generator(NULL, 2, 2);
    int64_t id = 5;
    CHECK(flakery_next_id(gen, &id) == FLAKERY_STATUS_OK);
    CHECK(flakery_generator_close(gen) == FLAKERY_STATUS_OK);
    CHECK(flakery_generator_close(gen) == FLAKERY_STATUS_OK);
    id = 5;
    CHECK_FAILS(flakery_next_id(gen, &id), FLAKERY_STATUS_LEASE_LOST, "was closed");
    CHECK(id == 5);
    flakery_generator_free(gen);
}

void test_fork(void) {
    flakery_generator *gen = make_generator("twitter", 0, 4);
    int64_t id = 0;
    CHECK(flakery_next_id(gen, &id) == FLAKERY_STATUS_OK);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        /* The child must not repeat its parent's IDs: a fixed node ID refuses. */
        flakery_status s = flakery_next_id(gen, &id);
        _exit(s == FLAKERY_STATUS_FORKED && strstr(flakery_last_error(), "fork") ? 0 : 1);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(flakery_next_id(gen, &id) == FLAKERY_STATUS_OK); /* the parent goes on */
    flakery_generator_free(gen);
}
