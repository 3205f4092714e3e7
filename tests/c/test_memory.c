/* Native memory: every function of the C API called LOOPS times, its successes and its
 * failures (which set the thread's last error), with the heap in use bounded: a call that
 * leaks a few bytes (a string not freed, an error not released) leaks megabytes here. The
 * heap is the allocator's own count, the sanitizer's under ASan and glibc's mallinfo2
 * otherwise, so that the check sees bytes, not pages. At exit, LeakSanitizer (the ASan builds
 * of tests/c/run.sh) reports what is left unreachable. */
#define _GNU_SOURCE

#include "check.h"

#ifdef __SANITIZE_ADDRESS__
/* The sanitizer's runtime has it; gcc ships no header for it (clang's
 * <sanitizer/allocator_interface.h> declares it so). */
size_t __sanitizer_get_current_allocated_bytes(void);
static size_t heap_in_use(void) { return __sanitizer_get_current_allocated_bytes(); }
#else
#include <malloc.h>
static size_t heap_in_use(void) {
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}
#endif

/* The bar: 100,000 calls of each. */
#define LOOPS 100000
/* A leak of 30 bytes a call (a short string) is 3 MB over LOOPS calls; what a call may leave
 * for good (a thread's last error, a cache that fills once) stays far below this. */
#define MOST_GROWTH ((size_t)1 << 20)

/* The fixture every loop shares: made once, freed at the end. */
static flakery_generator *gen;
static flakery_client *dead_client;
static int64_t an_id;

/* Runs `body` (one call, or a few that make and free one thing) a warm-up's worth, then LOOPS
 * times, and checks the heap grew by less than MOST_GROWTH. */
#define LOOP(name, body)                                                                          \
    do {                                                                                          \
        int wrong_before_ = wrong;                                                                \
        for (int i_ = 0; i_ < 1000; i_++) {                                                       \
            body;                                                                                 \
        }                                                                                         \
        size_t before_ = heap_in_use();                                                           \
        for (int i_ = 0; i_ < LOOPS; i_++) {                                                      \
            body;                                                                                 \
        }                                                                                         \
        size_t after_ = heap_in_use();                                                            \
        size_t grown_ = after_ > before_ ? after_ - before_ : 0;                                  \
        CHECK(grown_ < MOST_GROWTH);                                                              \
        if (grown_ >= MOST_GROWTH) {                                                              \
            fprintf(stderr, "  %s: the heap grew by %zu bytes over %d calls\n", (name), grown_,  \
                    LOOPS);                                                                       \
        }                                                                                         \
        if (wrong != wrong_before_) {                                                             \
            fprintf(stderr, "  %s: %d calls gave a wrong status (last error: %s)\n", (name),     \
                    wrong - wrong_before_, flakery_last_error());                                 \
        }                                                                                         \
    } while (0)

/* Wrong status: counted once per loop, not once per call. */
static int wrong;
#define EXPECT(call, status)                                                                      \
    do {                                                                                          \
        if ((call) != (status)) wrong++;                                                          \
    } while (0)
#define OK(call) EXPECT(call, FLAKERY_STATUS_OK)
#define INVALID(call) EXPECT(call, FLAKERY_STATUS_INVALID_ARGUMENT)

static const char *const field_names[] = {"version"};
static const uint64_t field_values[] = {0};

static void generators(void) {
    flakery_options opts;
    int64_t ids[16];
    uint64_t u = 0;
    const char *source = NULL;
    char buf[128];
    size_t n = 0;
    LOOP("flakery_options_init", OK(flakery_options_init(&opts)));
    LOOP("flakery_generator_new/close/free", {
        flakery_generator *g = NULL;
        OK(flakery_options_init(&opts));
        opts.layout = "time:41,datacenter:5,worker:5,sequence:12;epoch=1288834974657";
        opts.has_datacenter_id = opts.has_worker_id = true;
        opts.datacenter_id = 1;
        opts.worker_id = 2;
        OK(flakery_generator_new(&opts, &g));
        OK(flakery_generator_close(g));
        EXPECT(flakery_next_id(g, &ids[0]), FLAKERY_STATUS_LEASE_LOST);
        flakery_generator_free(g);
    });
    LOOP("flakery_generator_new with constant fields", {
        flakery_generator *g = NULL;
        OK(flakery_options_init(&opts));
        opts.layout = "vesta-max-peak";
        opts.has_worker_id = true;
        opts.worker_id = 3;
        opts.field_names = field_names;
        opts.field_values = field_values;
        opts.field_count = 1;
        OK(flakery_generator_new(&opts, &g));
        flakery_generator_free(g);
    });
    LOOP("flakery_generator_new refused", {
        flakery_generator *g = NULL;
        OK(flakery_options_init(&opts));
        opts.layout = "twitter";
        opts.has_worker_id = true;
        opts.worker_id = 99; /* does not fit in 5 bits */
        opts.database_url = "postgres://user:secret@127.0.0.1:1/db";
        INVALID(flakery_generator_new(&opts, &g));
        opts.worker_id = 1;
        opts.database_url = "oracle://user:secret@127.0.0.1:1/db"; /* not a scheme of ours */
        INVALID(flakery_generator_new(&opts, &g));
        if (g != NULL) flakery_generator_free(g); /* made after all: a wrong status, counted */
    });
    LOOP("flakery_next_id", OK(flakery_next_id(gen, &ids[0])));
    LOOP("flakery_next_ids", OK(flakery_next_ids(gen, ids, 16)));
    LOOP("flakery_next_id_default", OK(flakery_next_id_default(&ids[0])));
    LOOP("flakery_next_ids_default", OK(flakery_next_ids_default(ids, 16)));
    LOOP("flakery_generator_worker_id", OK(flakery_generator_worker_id(gen, &u)));
    LOOP("flakery_generator_datacenter_id", OK(flakery_generator_datacenter_id(gen, &u)));
    LOOP("flakery_generator_source", OK(flakery_generator_source(gen, &source)));
    LOOP("flakery_generator_layout", {
        OK(flakery_generator_layout(gen, NULL, 0, &n));
        OK(flakery_generator_layout(gen, buf, sizeof buf, &n));
    });
    LOOP("flakery_generator_decode", OK(flakery_generator_decode(gen, an_id, &(flakery_parts){0})));
    LOOP("a NULL generator", INVALID(flakery_next_id(NULL, &ids[0])));
}

static void codecs(void) {
    flakery_parts p = {0};
    flakery_capacity cap;
    int64_t id = 0;
    uint64_t u = 0;
    char buf[256];
    size_t n = 0;
    const char *field_list = "time:41,datacenter:5,worker:5,sequence:12;epoch=1288834974657";
    LOOP("flakery_decode", OK(flakery_decode(field_list, an_id, &p)));
    LOOP("flakery_decode refused", EXPECT(flakery_decode("time:99", an_id, &p),
                                          FLAKERY_STATUS_INVALID_LAYOUT));
    LOOP("flakery_decode_field", OK(flakery_decode_field(field_list, an_id, "worker", &u)));
    LOOP("flakery_decode_field refused",
         INVALID(flakery_decode_field(field_list, an_id, "no-such-field", &u)));
    LOOP("flakery_decode_u64", OK(flakery_decode_u64("discord", UINT64_MAX, &p)));
    flakery_parts vesta = {.timestamp_ms = 1500000000000,
                           .worker_id = 1,
                           .field_names = field_names,
                           .field_values = field_values,
                           .field_count = 1};
    LOOP("flakery_compose", OK(flakery_compose("vesta-max-peak", &vesta, &id)));
    flakery_parts too_big = {.timestamp_ms = 1500000000000, .worker_id = 1 << 20};
    LOOP("flakery_compose refused", INVALID(flakery_compose("twitter", &too_big, &id)));
    OK(flakery_decode_u64("discord", UINT64_MAX, &p));
    LOOP("flakery_compose_u64", OK(flakery_compose_u64("discord", &p, &u)));
    LOOP("flakery_layout_capacity", OK(flakery_layout_capacity(field_list, &cap)));
    LOOP("flakery_layout_time_left_ms", OK(flakery_layout_time_left_ms("twitter", &id)));
    LOOP("flakery_layout_normalize", {
        OK(flakery_layout_normalize(field_list, NULL, 0, &n));
        OK(flakery_layout_normalize(field_list, buf, sizeof buf, &n));
    });
    LOOP("flakery_to_base32", OK(flakery_to_base32(an_id, buf, sizeof buf, &n)));
    LOOP("flakery_to_base62", OK(flakery_to_base62(an_id, buf, sizeof buf, &n)));
    LOOP("flakery_from_base32", OK(flakery_from_base32("01ARZ3NDEKTSV", &id)));
    LOOP("flakery_from_base62", OK(flakery_from_base62("0000000000A", &id)));
    LOOP("flakery_from_base32 refused", INVALID(flakery_from_base32("U!", &id)));
    LOOP("flakery_from_base62 refused", INVALID(flakery_from_base62("", &id)));
}

static void errors(void) {
    char buf[64];
    size_t n = 0;
    LOOP("flakery_version", (void)flakery_version());
    LOOP("flakery_status_message", (void)flakery_status_message(FLAKERY_STATUS_LEASE_LOST));
    INVALID(flakery_decode_field("twitter", 1, "nope", &(uint64_t){0}));
    LOOP("flakery_last_error", (void)flakery_last_error());
    LOOP("flakery_last_error_message", OK(flakery_last_error_message(buf, sizeof buf, &n)));
}

/* The client's calls that need no server: its options, making and freeing one, and its
 * errors, from a client whose only server refuses every connection (after the first failure
 * each call fails at once while the server backs off) and from a closed one. A successful
 * next_id is tests/client's (against real servers) and the Go area's (an in-test server). */
static void clients(void) {
    flakery_client_options opts;
    flakery_options fallback;
    int64_t ids[4];
    flakery_parts p;
    char buf[256];
    size_t n = 0;
    LOOP("flakery_client_options_init", OK(flakery_client_options_init(&opts)));
    LOOP("flakery_client_new/close/free", {
        flakery_client *c = NULL;
        OK(flakery_client_options_init(&opts));
        opts.servers = "http://127.0.0.1:1,http://[::1]:1";
        opts.token = "a-secret-token";
        opts.layout = "discord";
        OK(flakery_client_new(&opts, &c));
        OK(flakery_client_close(c));
        INVALID(flakery_client_next_id(c, &ids[0]));
        flakery_client_free(c);
    });
    LOOP("flakery_client_new with a fallback", {
        flakery_client *c = NULL;
        OK(flakery_client_options_init(&opts));
        OK(flakery_options_init(&fallback));
        fallback.has_datacenter_id = fallback.has_worker_id = true;
        fallback.datacenter_id = 31;
        fallback.worker_id = 31;
        opts.servers = "http://127.0.0.1:1";
        opts.fallback = &fallback;
        OK(flakery_client_new(&opts, &c));
        flakery_client_free(c);
    });
    LOOP("flakery_client_new refused", {
        flakery_client *c = NULL;
        OK(flakery_client_options_init(&opts));
        opts.servers = "ftp://127.0.0.1:1";
        INVALID(flakery_client_new(&opts, &c));
        opts.servers = "http://127.0.0.1:1";
        opts.max_age_ms = 0;
        INVALID(flakery_client_new(&opts, &c));
    });
    LOOP("flakery_client_next_id, servers unavailable",
         EXPECT(flakery_client_next_id(dead_client, &ids[0]), FLAKERY_STATUS_SERVERS_UNAVAILABLE));
    LOOP("flakery_client_next_ids, servers unavailable",
         EXPECT(flakery_client_next_ids(dead_client, ids, 4), FLAKERY_STATUS_SERVERS_UNAVAILABLE));
    LOOP("flakery_client_decode", OK(flakery_client_decode(dead_client, an_id, &p)));
    LOOP("flakery_client_layout", {
        OK(flakery_client_layout(dead_client, NULL, 0, &n));
        OK(flakery_client_layout(dead_client, buf, sizeof buf, &n));
    });
}

void test_memory(void) {
    gen = make_generator("twitter", 1, 2);
    CHECK(flakery_next_id(gen, &an_id) == FLAKERY_STATUS_OK);
    flakery_client_options opts;
    CHECK(flakery_client_options_init(&opts) == FLAKERY_STATUS_OK);
    opts.servers = "http://127.0.0.1:1";
    opts.timeout_ms = 50;
    opts.request_timeout_ms = 50;
    CHECK(flakery_client_new(&opts, &dead_client) == FLAKERY_STATUS_OK);
    generators();
    codecs();
    errors();
    clients();
    CHECK(wrong == 0);
    if (wrong != 0) fprintf(stderr, "  %d calls of the memory loops gave a wrong status\n", wrong);
    flakery_client_free(dead_client);
    flakery_generator_free(gen);
}
