/* ns per flakery_next_id call through the C ABI, for comparison with the core's own loop
 * (bindings-c/examples/bench_core.rs). Run by tests/c/bench.sh. The layout has a 22-bit
 * sequence, so that the loop measures the call and not the wait for the next millisecond. */
#define _POSIX_C_SOURCE 200809L
#include "flakery.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LAYOUT "time:41,sequence:22;epoch=1288834974657"

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    long calls = argc > 1 ? atol(argv[1]) : 20000000L;
    flakery_options opts;
    flakery_generator *gen = NULL;
    flakery_options_init(&opts);
    opts.layout = LAYOUT;
    opts.has_worker_id = true;
    opts.worker_id = 0;
    if (flakery_generator_new(&opts, &gen) != FLAKERY_STATUS_OK) {
        fprintf(stderr, "flakery_generator_new: %s\n", flakery_last_error());
        return 1;
    }
    double best = 1e9;
    int64_t id = 0, sum = 0;
    for (int round = 0; round < 5; round++) {
        double start = seconds();
        for (long i = 0; i < calls; i++) {
            if (flakery_next_id(gen, &id) != FLAKERY_STATUS_OK) return 1;
            sum ^= id;
        }
        double ns = (seconds() - start) * 1e9 / (double)calls;
        if (ns < best) best = ns;
    }
    printf("c ABI flakery_next_id: %.2f ns/call (best of 5 x %ld) [%" PRId64 "]\n", best, calls,
           sum & 1);
    flakery_generator_free(gen);
    return 0;
}
