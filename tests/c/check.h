/* What the C test program's files share (tests/c/test.c and tests/c/test_*.c, one program):
 * the CHECK macros, their counters, the helpers and each file's tests. tests/c/versions.c, a
 * program of its own, uses the macros and defines the counters too. */
#ifndef FLAKERY_TEST_CHECK_H
#define FLAKERY_TEST_CHECK_H

#include "flakery.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern int passed;
extern int failed;

#define CHECK(cond)                                                                               \
    do {                                                                                          \
        if (cond) {                                                                               \
            passed++;                                                                             \
        } else {                                                                                  \
            failed++;                                                                             \
            fprintf(stderr, "FAIL %s:%d: %s (last error: %s)\n", __FILE__, __LINE__, #cond,       \
                    flakery_last_error());                                                        \
        }                                                                                         \
    } while (0)

/* A call that must fail with `status` and leave a last-error message containing `needle`. */
#define CHECK_FAILS(call, status, needle)                                                         \
    do {                                                                                          \
        flakery_status got_ = (call);                                                             \
        CHECK(got_ == (status));                                                                  \
        if (got_ != (status)) {                                                                   \
            fprintf(stderr, "  %s gave %s, wanted %s\n", #call, flakery_status_message(got_),     \
                    flakery_status_message(status));                                              \
        }                                                                                         \
        CHECK(strstr(flakery_last_error(), (needle)) != NULL);                                    \
    } while (0)

int64_t now_ms(void);
flakery_generator *make_generator(const char *layout, uint64_t datacenter, uint64_t worker);
int compare_ids(const void *a, const void *b);

/* test_generation.c */
void test_options_init(void);
void test_generator(void);
void test_default_generator(void);
void test_options_pass_through(void);
void test_close(void);
void test_fork(void);
/* test_codecs.c */
void test_decode_vectors(void);
void test_unsigned_ids_and_time_left(void);
void test_compose(void);
void test_layout_info(void);
void test_text_forms(void);
/* test_errors.c */
void test_version_and_status_messages(void);
void test_null_pointers(void);
void test_bad_layouts_and_values(void);
void test_last_error(void);
void test_environment_integers(void);
void test_host_name_not_utf8(void);
/* test_client_options.c */
/* Calls row(name, value) for each "name=value" item of the comma-separated environment
 * variable var (an options table that tests/c/run.sh reads from the docs); how many. */
int each_table_row(const char *var, void (*row)(char *name, char *value));
void test_client_options_table(void);
void test_generator_options_table(void);
/* test_memory.c */
void test_memory(void);
void test_doctor(void);
/* test_leases.c */
void test_leases(void);
void test_database(void);

#endif
