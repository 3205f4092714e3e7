/* flakery_doctor_json: the core's budgets report (docs/doctor.md) as a string the caller
   owns and frees with flakery_string_free. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

void test_doctor(void) {
    flakery_options opts;
    flakery_options_init(&opts);
    opts.layout = "baidu";
    opts.has_worker_id = true;
    opts.worker_id = 3;
    char *json = NULL;
    CHECK(flakery_doctor_json(&opts, &json) == FLAKERY_STATUS_OK && json != NULL);
    /* baidu's layout ran out in 2024: refused, exit code 2, with the date. */
    CHECK(json != NULL && strstr(json, "\"exit_code\":2") != NULL);
    CHECK(json != NULL && strstr(json, "\"time_runs_out\":\"2024-11-20T13:24:16.000Z\"") != NULL);
    CHECK(json != NULL && strstr(json, "\"worker_id\":3") != NULL);
    flakery_string_free(json);
    flakery_string_free(NULL);
    opts.layout = "time:99";
    json = NULL;
    CHECK_FAILS(flakery_doctor_json(&opts, &json), FLAKERY_STATUS_INVALID_LAYOUT, "time");
    CHECK(json == NULL);
    CHECK_FAILS(flakery_doctor_json(NULL, NULL), FLAKERY_STATUS_INVALID_ARGUMENT, "out");
}
