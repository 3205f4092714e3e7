// The C API of flakery from C++: include/flakery.h must compile as C++17 with
// -Wall -Wextra -Werror, and its types must be usable the C++ way (RAII, std::thread,
// switch on the status enum). Ends with the line "N passed, M failed".
#include "flakery.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

int passed = 0;
int failed = 0;

void check(bool ok, const char *what, int line) {
    if (ok) {
        ++passed;
    } else {
        ++failed;
        std::fprintf(stderr, "FAIL test.cpp:%d: %s (last error: %s)\n", line, what,
                     flakery_last_error());
    }
}
#define CHECK(cond) check((cond), #cond, __LINE__)

// What a C++ wrapper would do: a status that is not OK becomes an exception with the code
// string and the detailed message.
struct flakery_error : std::runtime_error {
    flakery_status status;
    explicit flakery_error(flakery_status s)
        : std::runtime_error(std::string(flakery_status_message(s)) + ": " + flakery_last_error()),
          status(s) {}
};

void ok(flakery_status s) {
    if (s != FLAKERY_STATUS_OK) throw flakery_error(s);
}

struct generator_deleter {
    void operator()(flakery_generator *g) const { flakery_generator_free(g); }
};
using generator_ptr = std::unique_ptr<flakery_generator, generator_deleter>;

generator_ptr make_generator(const char *layout, uint64_t worker) {
    flakery_options opts;
    ok(flakery_options_init(&opts));
    opts.layout = layout;
    opts.has_worker_id = true;
    opts.worker_id = worker;
    opts.sequence_policy = FLAKERY_SEQUENCE_POLICY_WAIT;
    flakery_generator *raw = nullptr;
    ok(flakery_generator_new(&opts, &raw));
    return generator_ptr(raw);
}

const char *describe(flakery_status s) {
    switch (s) {
    case FLAKERY_STATUS_OK: return "ok";
    case FLAKERY_STATUS_INVALID_LAYOUT: return "bad layout";
    case FLAKERY_STATUS_INVALID_ARGUMENT: return "bad argument";
    default: return "other";
    }
}

}  // namespace

int main() {
    auto gen = make_generator("twitter", 7);

    // 4 std::threads on one generator: all distinct, increasing on each thread.
    constexpr int threads = 4, per_thread = 20000;
    std::vector<std::vector<int64_t>> ids(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            ids[t].resize(per_thread);
            for (auto &id : ids[t]) ok(flakery_next_id(gen.get(), &id));
        });
    }
    for (auto &th : pool) th.join();
    std::set<int64_t> all;
    for (const auto &v : ids) {
        CHECK(std::is_sorted(v.begin(), v.end()));
        all.insert(v.begin(), v.end());
    }
    CHECK(all.size() == static_cast<size_t>(threads * per_thread));

    std::vector<int64_t> batch(500);
    ok(flakery_next_ids(gen.get(), batch.data(), batch.size()));
    CHECK(batch.front() > *all.rbegin());

    // The text forms into std::string buffers; sorting the strings sorts the IDs.
    std::vector<std::string> texts;
    for (int64_t id : batch) {
        std::string text(FLAKERY_BASE62_LEN + 1, '\0');
        size_t n = 0;
        ok(flakery_to_base62(id, text.data(), text.size(), &n));
        text.resize(n);
        int64_t back = 0;
        ok(flakery_from_base62(text.c_str(), &back));
        CHECK(back == id);
        texts.push_back(text);
    }
    CHECK(std::is_sorted(texts.begin(), texts.end()));

    flakery_parts parts{};
    ok(flakery_decode("discord", 175928847299117063, &parts));
    CHECK(parts.timestamp_ms == 1462015105796 && parts.datacenter_id == 1 &&
          parts.worker_id == 0 && parts.sequence == 7);
    ok(flakery_generator_decode(gen.get(), batch.back(), &parts));
    CHECK(parts.worker_id == 7);

    int64_t id = 0;
    ok(flakery_next_id_default(&id));
    CHECK(id > 0);

    try {
        make_generator("twitter", 99);
        CHECK(false);
    } catch (const flakery_error &e) {
        CHECK(e.status == FLAKERY_STATUS_INVALID_ARGUMENT);
        CHECK(std::strstr(e.what(), "invalid_argument: ") == e.what());
        CHECK(std::strstr(e.what(), "99") != nullptr);
    }
    flakery_status s = flakery_decode("no-such-preset", 1, &parts);
    CHECK(std::strcmp(describe(s), "bad layout") == 0);
    CHECK(std::strcmp(flakery_status_message(s), "invalid_layout") == 0);
    CHECK(flakery_decode(nullptr, 1, &parts) == FLAKERY_STATUS_INVALID_ARGUMENT);

    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
