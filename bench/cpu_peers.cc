// cpu_peers.cc - the C++ standard library's top-k on the array `cltopk bench
// --cpu` times, for comparison (built only for benchmarking: make bench-peers).
//
//   cpu-peers TYPE K REPS FILE [smallest]
//
// FILE holds the raw elements (TYPE f32 f64 i32 u32 i64 u64).  For each method
// the median of REPS runs (after one warm-up) is printed as "NAME SECONDS", one
// line each:
//   partial_sort       std::partial_sort of the first k (keys only, one thread)
//   nth_element+sort   std::nth_element at k, then std::sort of the first k
// Every run works on a fresh copy of the array; the copy is not timed.  The
// results of both are checked against each other (same k keys).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

static double now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

template <typename T, typename Cmp>
static int run(const std::vector<char> &raw, size_t k, int reps, Cmp cmp)
{
    size_t n = raw.size() / sizeof(T);
    std::vector<T> src(n), a(n), r1, r2;
    std::memcpy(src.data(), raw.data(), n * sizeof(T));
    if (k > n)
        k = n;
    std::vector<double> t1, t2;
    for (int r = -1; r < reps; r++) {
        a = src;
        double t0 = now();
        std::partial_sort(a.begin(), a.begin() + (long)k, a.end(), cmp);
        double t = now() - t0;
        if (r >= 0)
            t1.push_back(t);
        r1.assign(a.begin(), a.begin() + (long)k);
    }
    for (int r = -1; r < reps; r++) {
        a = src;
        double t0 = now();
        if (k < n)
            std::nth_element(a.begin(), a.begin() + (long)k, a.end(), cmp);
        std::sort(a.begin(), a.begin() + (long)k, cmp);
        double t = now() - t0;
        if (r >= 0)
            t2.push_back(t);
        r2.assign(a.begin(), a.begin() + (long)k);
    }
    if (std::memcmp(r1.data(), r2.data(), k * sizeof(T)) != 0) {
        std::fprintf(stderr, "cpu-peers: partial_sort and nth_element disagree\n");
        return 1;
    }
    std::printf("partial_sort %.9g\nnth_element+sort %.9g\n", median(t1), median(t2));
    return 0;
}

template <typename T> static int typed(const std::vector<char> &raw, size_t k, int reps, bool sm)
{
    return sm ? run<T>(raw, k, reps, std::less<T>()) : run<T>(raw, k, reps, std::greater<T>());
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        std::fprintf(stderr, "usage: cpu-peers TYPE K REPS FILE [smallest]\n");
        return 2;
    }
    std::string type = argv[1];
    size_t k = std::strtoull(argv[2], nullptr, 10);
    int reps = std::atoi(argv[3]);
    bool sm = argc > 5 && std::string(argv[5]) == "smallest";
    FILE *f = std::fopen(argv[4], "rb");
    if (!f) {
        std::perror(argv[4]);
        return 1;
    }
    std::vector<char> raw;
    char buf[1 << 16];
    size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0)
        raw.insert(raw.end(), buf, buf + got);
    std::fclose(f);
    if (reps < 1)
        reps = 1;
    if (type == "f32") return typed<float>(raw, k, reps, sm);
    if (type == "f64") return typed<double>(raw, k, reps, sm);
    if (type == "i32") return typed<int32_t>(raw, k, reps, sm);
    if (type == "u32") return typed<uint32_t>(raw, k, reps, sm);
    if (type == "i64") return typed<int64_t>(raw, k, reps, sm);
    if (type == "u64") return typed<uint64_t>(raw, k, reps, sm);
    std::fprintf(stderr, "cpu-peers: unknown type %s\n", argv[1]);
    return 2;
}
