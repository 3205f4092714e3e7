/* A call of flakery_next_id through the C ABI, measured as bench/rust measures the core:
 * the same generator (twitter, worker 1, borrow with max_borrow_ms 86,400,000), a plain loop
 * (best of ROUNDS) and bursts of 1,000 calls after a millisecond boundary (median).
 * usage: bench CALLS ROUNDS BURSTS; prints one JSON object. Built by bench/run.sh against
 * libflakery.a. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "flakery.h"

static int64_t now_ns(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void wait_for_ms(void) {
    int64_t start = now_ns(CLOCK_REALTIME) / 1000000;
    while (now_ns(CLOCK_REALTIME) / 1000000 == start) {
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    long calls = argc > 1 ? atol(argv[1]) : 10000000;
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    int bursts = argc > 3 ? atoi(argv[3]) : 400;
    if (calls < 1 || rounds < 1 || bursts < 1) {
        fprintf(stderr, "usage: bench CALLS ROUNDS BURSTS\n");
        return 2;
    }
    flakery_options opts;
    flakery_options_init(&opts);
    opts.has_worker_id = true;
    opts.worker_id = 1;
    opts.sequence_policy = FLAKERY_SEQUENCE_POLICY_BORROW;
    opts.max_borrow_ms = 86400000;
    flakery_generator *g = NULL;
    if (flakery_generator_new(&opts, &g) != FLAKERY_STATUS_OK) {
        fprintf(stderr, "flakery_generator_new failed\n");
        return 1;
    }
    volatile int64_t sink = 0;
    int64_t id = 0;
    double best = 1e30;
    for (int r = 0; r < rounds; r++) {
        int64_t t0 = now_ns(CLOCK_MONOTONIC);
        for (long i = 0; i < calls; i++) {
            if (flakery_next_id(g, &id) != FLAKERY_STATUS_OK) return 1;
            sink ^= id;
        }
        double ns = (double)(now_ns(CLOCK_MONOTONIC) - t0) / (double)calls;
        if (ns < best) best = ns;
    }
    double *per = malloc(sizeof(double) * (size_t)bursts);
    if (!per) return 1;
    for (int b = 0; b < bursts; b++) {
        wait_for_ms();
        int64_t t0 = now_ns(CLOCK_MONOTONIC);
        for (int i = 0; i < 1000; i++) {
            if (flakery_next_id(g, &id) != FLAKERY_STATUS_OK) return 1;
            sink ^= id;
        }
        per[b] = (double)(now_ns(CLOCK_MONOTONIC) - t0) / 1000.0;
    }
    qsort(per, (size_t)bursts, sizeof(double), cmp_double);
    double median = bursts % 2 ? per[bursts / 2] : (per[bursts / 2 - 1] + per[bursts / 2]) / 2;
    printf("{\"language\": \"c\", \"tight_borrow\": {\"ns\": %.4f, \"calls\": %ld, \"rounds\": %d, "
           "\"method\": \"flakery_next_id (borrow) in a plain loop, best of the rounds\"}, "
           "\"per_call\": {\"ns\": %.4f, \"burst\": 1000, \"bursts\": %d, \"method\": \"bursts of 1,000 "
           "calls after a 1 ms boundary, median\"}}\n",
           best, calls, rounds, median, bursts);
    flakery_generator_free(g);
    free(per);
    return sink == 42 ? 3 : 0;
}
