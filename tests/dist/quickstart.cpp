// The C++ quick start, built against the release tarball (tests/dist/run.sh).
#include <flakery.h>

#include <cstdint>
#include <iostream>
#include <memory>

int main() {
    flakery_options options;
    flakery_options_init(&options);
    options.has_worker_id = true;
    options.worker_id = 7;
    flakery_generator *raw = nullptr;
    if (flakery_generator_new(&options, &raw) != FLAKERY_STATUS_OK) {
        std::cerr << "flakery: " << flakery_last_error() << "\n";
        return 1;
    }
    std::unique_ptr<flakery_generator, decltype(&flakery_generator_free)> generator(
        raw, flakery_generator_free);
    std::int64_t ids[100];
    if (flakery_next_ids(generator.get(), ids, 100) != FLAKERY_STATUS_OK) {
        std::cerr << "flakery: " << flakery_last_error() << "\n";
        return 1;
    }
    flakery_parts parts;
    if (flakery_decode("twitter", ids[99], &parts) != FLAKERY_STATUS_OK || parts.worker_id != 7 ||
        ids[99] <= ids[0]) {
        std::cerr << "bad IDs\n";
        return 1;
    }
    std::cout << "c++ quickstart " << flakery_version() << ": " << ids[99] << " worker "
              << parts.worker_id << "\n";
    return 0;
}
