/* The C API of flakery, from C: one program of this file (main, the counters, the helpers) and
 * tests/c/test_*.c (the tests, by idea), built with -std=c11 -Wall -Wextra -Werror -pedantic and
 * run under AddressSanitizer and UndefinedBehaviorSanitizer by tests/c/run.sh. Ends with the
 * line "N passed, M failed". */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

int passed;
int failed;

int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

flakery_generator *make_generator(const char *layout, uint64_t datacenter, uint64_t worker) {
    flakery_options opts;
    flakery_generator *gen = NULL;
    CHECK(flakery_options_init(&opts) == FLAKERY_STATUS_OK);
    opts.layout = layout;
    opts.has_datacenter_id = true;
    opts.datacenter_id = datacenter;
    opts.has_worker_id = true;
    opts.worker_id = worker;
    CHECK(flakery_generator_new(&opts, &gen) == FLAKERY_STATUS_OK);
    CHECK(gen != NULL);
    return gen;
}

int compare_ids(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int each_table_row(const char *var, void (*row)(char *name, char *value)) {
    const char *table = getenv(var);
    CHECK(table != NULL && *table != '\0');
    if (table == NULL) {
        fprintf(stderr, "  %s is not set: tests/c/run.sh sets it\n", var);
        return 0;
    }
    char copy[512];
    snprintf(copy, sizeof copy, "%s", table);
    int rows = 0;
    for (char *save = NULL, *item = strtok_r(copy, ",", &save); item != NULL;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        CHECK(eq != NULL);
        if (eq == NULL) continue;
        *eq = '\0';
        row(item, eq + 1);
        rows++;
    }
    return rows;
}

int main(void) {
    test_version_and_status_messages();
    test_options_init();
    test_generator();
    test_default_generator();
    test_decode_vectors();
    test_compose();
    test_unsigned_ids_and_time_left();
    test_layout_info();
    test_text_forms();
    test_null_pointers();
    test_bad_layouts_and_values();
    test_options_pass_through();
    test_close();
    test_fork();
    test_last_error();
    test_leases();
    test_database();
    test_environment_integers();
    test_host_name_not_utf8();
    test_client_options_table();
    test_generator_options_table();
    test_memory();
    test_doctor();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
