/* The C quick start, built against the release tarball (tests/dist/run.sh). */
#include <flakery.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    int64_t a, b;
    if (flakery_next_id_default(&a) != FLAKERY_STATUS_OK ||
        flakery_next_id_default(&b) != FLAKERY_STATUS_OK) {
        fprintf(stderr, "flakery: %s\n", flakery_last_error());
        return 1;
    }
    struct flakery_parts parts;
    if (b <= a || flakery_decode("twitter", b, &parts) != FLAKERY_STATUS_OK) {
        fprintf(stderr, "ids %lld, %lld: %s\n", (long long)a, (long long)b, flakery_last_error());
        return 1;
    }
    if (flakery_decode("twitter", -1, &parts) != FLAKERY_STATUS_INVALID_ARGUMENT ||
        strcmp(flakery_status_message(FLAKERY_STATUS_INVALID_ARGUMENT), "invalid_argument") != 0) {
        fprintf(stderr, "a negative ID was not refused\n");
        return 1;
    }
    printf("c quickstart %s: %lld worker %llu\n", flakery_version(), (long long)b,
           (unsigned long long)parts.worker_id);
    return 0;
}
