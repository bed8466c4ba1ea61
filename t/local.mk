# t/local.mk - the TAP test suite; included from the top Makefile.am.
#
# Each test is a C program printing TAP, run by Automake's tap-driver.sh.  They
# share t/libtest.a (the TAP helper, the oracle, data and checks).  Other
# fragments (tools/, mpi/) add to TESTS and check_PROGRAMS with +=, so this
# one, which sets them, must be included first.
#
# Environment of the tests (AM_TESTS_ENVIRONMENT):
#   CLTOPK_CACHE_DIR    the kernel binary cache, in the build tree (never $HOME)
#   CLTOPK_CACHE        0 unless set: the binary cache off (t/cache.t turns it
#                       on for itself).  Writing a binary makes POCL compile
#                       every kernel of a program for any work-group size
#                       besides the sizes launched: a cold make check took
#                       twice as long with it (t/band.t: 126 s of CPU against
#                       61); POCL's own cache (POCL_CACHE_DIR) still keeps
#                       what the processes built
#   CLTOPK_TEST_TMPDIR  temporary files of the tests, in the build tree
#   POCL_CACHE_DIR      POCL's own kernel cache, there too (unless already set)
#   CLTOPK_TEST_QUICK   1 unless set: the tests whose time is mostly POCL building
#                       their kernels (t/rows.t, t/sample_filter.t, t/sort.t,
#                       t/radix.t, the query tests, t/multi.t, t/knn.t, t/band.t,
#                       t/index.t: 441 s cold alone against 99, t/sbp_tree.t:
#                       119 against 41, t/records.t: 101 against 18, t/cli.sh)
#                       build them without optimisation where the
#                       default device is POCL's (test_quick_builds in
#                       t/testlib.h), in a third of the time (make check: 432
#                       s against 620-694), but for the bitonic reducers
#                       (reducer.cl, whose programs the optimised tests build
#                       too: CLTOPK_BUILD_FILES names the other files; make
#                       check 414 -> 397 s); the others (their time is running
#                       kernels, or their programs are t/topk.t's: t/topk.t,
#                       t/bitonic.t, t/select.t, t/chunk.t and t/stream.t took
#                       longer so in make check), make check-full and a named
#                       CLTOPK_TEST_DEVICE build as a user's call does
#   OMP_WAIT_POLICY     passive unless set: test programs run side by side on few
#                       cores (make -j), where spinning OpenMP threads of one
#                       program starve the others (minutes instead of seconds)
#   LSAN_OPTIONS        LeakSanitizer suppressions for leaks inside the OpenCL
#                       runtime (POCL/LLVM); used with --enable-sanitizers only
#   ASAN_OPTIONS        use_sigaltstack=0 added (--enable-sanitizers only): LLVM
#                       in POCL installs an alternate signal stack of its own in
#                       the thread that first uses OpenCL, which AddressSanitizer
#                       then fails to unmap when that thread ends (t/threads.t
#                       opens devices first from threads that end)
# Knobs a user may set: CLTOPK_TEST_DEVICE ("cpu" skips the OpenCL parts, or a
# device string for cltopk_open), CLTOPK_TEST_SEED (repeat a run),
# CLTOPK_TEST_TIMEOUT (seconds before a test bails out; default 600 to 900),
# CLTOPK_TEST_GPU (a device string for t/gpu.t instead of "gpu"), CLTOPK_TEST_FULL
# (1: the whole sweeps, as make check-full runs them).

# make check's quick builds (CLTOPK_TEST_QUICK above): the kernel files built
# without optimisation, all but the bitonic reducers (reducer.cl) and the
# device measures (calib.cl, bandwidth.cl, every test's); test_quick_builds
# and t/cli.sh take them from CLTOPK_TEST_QUICK_FILES (unset or empty: no quick
# builds)
TEST_QUICK_FILES = bitonic.cl,index.cl,knn.cl,query.cl,radix_select.cl,radix_sort.cl,rows.cl,rows_tile.cl,rows_warp.cl,rows_ws.cl,sample_filter.cl,sbp_radix.cl,sbp_tree.cl,unpack.cl,winners.cl

LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
AM_TESTS_ENVIRONMENT = \
	CLTOPK_TEST_TMPDIR='$(abs_top_builddir)/t/tmp'; export CLTOPK_TEST_TMPDIR; \
	CLTOPK_CACHE_DIR='$(abs_top_builddir)/t/tmp/cache'; export CLTOPK_CACHE_DIR; \
	CLTOPK_CACHE="$${CLTOPK_CACHE-0}"; export CLTOPK_CACHE; \
	POCL_CACHE_DIR="$${POCL_CACHE_DIR:-$(abs_top_builddir)/t/tmp/pocl}"; export POCL_CACHE_DIR; \
	CLTOPK_TEST_QUICK="$${CLTOPK_TEST_QUICK-1}"; export CLTOPK_TEST_QUICK; \
	CLTOPK_TEST_QUICK_FILES="$${CLTOPK_TEST_QUICK_FILES-$(TEST_QUICK_FILES)}"; \
	export CLTOPK_TEST_QUICK_FILES; \
	OMP_WAIT_POLICY="$${OMP_WAIT_POLICY:-passive}"; export OMP_WAIT_POLICY; \
	$(MKDIR_P) "$$CLTOPK_TEST_TMPDIR"; \
	LSAN_OPTIONS="suppressions=$(abs_top_srcdir)/t/lsan.supp$${LSAN_OPTIONS:+:$$LSAN_OPTIONS}"; \
	export LSAN_OPTIONS; \
	ASAN_OPTIONS="use_sigaltstack=0$${ASAN_OPTIONS:+:$$ASAN_OPTIONS}"; export ASAN_OPTIONS;

check_LIBRARIES = t/libtest.a
t_libtest_a_SOURCES = t/tap.c t/tap.h t/oracle.c t/oracle.h t/testlib.c t/testlib.h
t_libtest_a_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/t

T_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/t -I$(top_srcdir)/tools
T_LDADD = t/libtest.a libcltopk.la $(OPENCL_LIBS)

T_PROGS = t/args.t t/topk.t t/select.t t/chunk.t t/stream.t t/multi.t t/buffer.t t/gpu.t t/cache.t t/threads.t t/bitonic.t t/banks.t
check_PROGRAMS = $(T_PROGS)
# Every test of this file, once, the longest first (make -j starts them in
# this order, after the scripts of tools/ and mpi/, and one started late runs
# alone at the end).  Seconds from each test's log's creation to its last
# write, make -j2 check with a cold POCL kernel cache on a 2-core machine
# (2026-12-02, bench/RESULTS.md, with CLTOPK_TEST_QUICK=1; 397-406 s in all,
# the tests' sum 794-811 s, on a day the machine ran fast: the same suite has
# taken up to 1.5 times as long on a slow day): t/topk.t 117, t/sort.t 70,
# t/rows.t 65, t/index.t 62, t/cli.sh 55, t/sample_filter.t 53, t/chunk.t 44,
# t/radix.t 37, t/band.t 27, t/multi.t 22, t/stream.t 21, the others 19 or
# less (most of it POCL building kernels, each distinct program once for the
# whole suite: POCL's cache is shared, so a build a test no longer makes
# moves to the next test that needs the program; a test's types,
# configurations and sizes beyond make check's are in make check-full).  The
# fragments below add their programs to check_PROGRAMS only.
TESTS = t/topk.t t/sort.t t/rows.t t/index.t t/sample_filter.t t/chunk.t t/radix.t \
	t/band.t t/multi.t t/buffer.t t/stream.t t/sbp_tree.t t/bitonic.t t/query_sf.t \
	t/codec.t t/cache.t t/cpu_scalar.t t/query.t t/cpu_avx2.t t/cpu_avx512.t t/knn.t \
	t/select.t t/threads.t t/records.t t/knn_scalar.t t/knn_avx2.t t/fp_config.t t/args.t \
	t/gpu.t t/banks.t t/layers.sh t/cl_locals.sh t/query_numpy.sh

t_bitonic_t_SOURCES = t/bitonic.c
t_bitonic_t_CPPFLAGS = $(T_CPPFLAGS)
t_bitonic_t_LDADD = $(T_LDADD)

# the bank-conflict replay needs no library: the kernel's index arithmetic
# (cl/schedule.h) and the configurations the library picks (lib/bitonic_cfg.h)
t_banks_t_SOURCES = t/banks.c lib/tune.c
t_banks_t_CPPFLAGS = $(T_CPPFLAGS)
t_banks_t_LDADD = t/libtest.a

t_args_t_SOURCES = t/args.c
t_args_t_CPPFLAGS = $(T_CPPFLAGS)
t_args_t_LDADD = $(T_LDADD)

# topk also draws data from the distributions of tools/gen.c (`cltopk gen`)
t_topk_t_SOURCES = t/topk.c tools/gen.c tools/gen.h
t_topk_t_CPPFLAGS = $(T_CPPFLAGS)
t_topk_t_LDADD = $(T_LDADD)

t_select_t_SOURCES = t/select.c
t_select_t_CPPFLAGS = $(T_CPPFLAGS)
t_select_t_LDADD = $(T_LDADD)

t_chunk_t_SOURCES = t/chunk.c
t_chunk_t_CPPFLAGS = $(T_CPPFLAGS)
t_chunk_t_LDADD = $(T_LDADD)

t_stream_t_SOURCES = t/stream.c
t_stream_t_CPPFLAGS = $(T_CPPFLAGS)
t_stream_t_LDADD = $(T_LDADD)

t_multi_t_SOURCES = t/multi.c
t_multi_t_CPPFLAGS = $(T_CPPFLAGS)
t_multi_t_LDADD = $(T_LDADD)

t_buffer_t_SOURCES = t/buffer.c
t_buffer_t_CPPFLAGS = $(T_CPPFLAGS)
t_buffer_t_LDADD = $(T_LDADD)

t_gpu_t_SOURCES = t/gpu.c
t_gpu_t_CPPFLAGS = $(T_CPPFLAGS)
t_gpu_t_LDADD = $(T_LDADD)

t_threads_t_SOURCES = t/threads.c
t_threads_t_CPPFLAGS = $(T_CPPFLAGS)
t_threads_t_LDADD = $(T_LDADD)

t_cache_t_SOURCES = t/cache.c
t_cache_t_CPPFLAGS = $(T_CPPFLAGS)
t_cache_t_LDADD = $(T_LDADD)

# bit-packed columns: round trips, hand-built streams, corruptions, top-k

check_PROGRAMS += t/codec.t
t_codec_t_SOURCES = t/codec.c
t_codec_t_CPPFLAGS = $(T_CPPFLAGS)
t_codec_t_LDADD = $(T_LDADD)

# the libFuzzer target (./configure --enable-fuzzer CC=clang); `make fuzz`
# runs it for FUZZ_SECONDS (default 60)
if ENABLE_FUZZER
noinst_PROGRAMS += t/fuzz_codec
t_fuzz_codec_SOURCES = t/fuzz_codec.c tools/container.c tools/container.h
t_fuzz_codec_CPPFLAGS = $(T_CPPFLAGS)
t_fuzz_codec_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
t_fuzz_codec_LDADD = libcltopk.la $(OPENCL_LIBS)
fuzz: t/fuzz_codec$(EXEEXT) tools/cltopk$(EXEEXT)
	FUZZ=./t/fuzz_codec CLTOPK=./tools/cltopk $(SHELL) $(srcdir)/t/fuzz.sh $${FUZZ_SECONDS:-60}
endif
EXTRA_DIST += t/fuzz_codec.c t/fuzz.sh

EXTRA_DIST += t/lsan.supp

# the tests' temporary tree (kernel cache, scratch files)
clean-local: clean-local-t
clean-local-t:
	-rm -rf t/tmp
.PHONY: clean-local-t

# ---- radix select and SBP radix against the oracle
T_PROGS += t/radix.t
check_PROGRAMS += t/radix.t
t_radix_t_SOURCES = t/radix.c
t_radix_t_CPPFLAGS = $(T_CPPFLAGS)
t_radix_t_LDADD = $(T_LDADD) -lm
# ---- end
# ---- the CPU algorithms, once per instruction set of the CPU kernels (a set
# this processor or build lacks skips as a whole) ----
T_PROGS_CPU = t/cpu_scalar.t t/cpu_avx2.t t/cpu_avx512.t
check_PROGRAMS += $(T_PROGS_CPU)
t_cpu_scalar_t_SOURCES = t/cpu.c
t_cpu_scalar_t_CPPFLAGS = $(T_CPPFLAGS) -DTEST_ISA='"scalar"'
t_cpu_scalar_t_LDADD = $(T_LDADD)
t_cpu_avx2_t_SOURCES = t/cpu.c
t_cpu_avx2_t_CPPFLAGS = $(T_CPPFLAGS) -DTEST_ISA='"avx2"'
t_cpu_avx2_t_LDADD = $(T_LDADD)
t_cpu_avx512_t_SOURCES = t/cpu.c
t_cpu_avx512_t_CPPFLAGS = $(T_CPPFLAGS) -DTEST_ISA='"avx512"'
t_cpu_avx512_t_LDADD = $(T_LDADD)
# ---- end of the CPU block ----
# ---- sbp-tree (split-bucket partition with a sampled search tree)
check_PROGRAMS += t/sbp_tree.t
t_sbp_tree_t_SOURCES = t/sbp_tree.c tools/gen.c tools/gen.h
t_sbp_tree_t_CPPFLAGS = $(T_CPPFLAGS)
t_sbp_tree_t_LDADD = $(T_LDADD) -lm

# every record of the algorithm table through every entry point
check_PROGRAMS += t/records.t
t_records_t_SOURCES = t/records.c
t_records_t_CPPFLAGS = $(T_CPPFLAGS)
t_records_t_LDADD = $(T_LDADD)

# the rules of docs/DESIGN.md ("Layers"), checked on the built objects
EXTRA_DIST += t/layers.sh
# every kernel file compiles alone, and none declares a local that POCL 5 and 6
# abort on (skipped without a clang that compiles OpenCL C)
EXTRA_DIST += t/cl_locals.sh
# ---- sample-filter against the oracle, and its forced exceptional paths
check_PROGRAMS += t/sample_filter.t
t_sample_filter_t_SOURCES = t/sample_filter.c
t_sample_filter_t_CPPFLAGS = $(T_CPPFLAGS)
t_sample_filter_t_LDADD = $(T_LDADD)
# ---- selection at any rank: sample-filter's band and radix-select
check_PROGRAMS += t/band.t
t_band_t_SOURCES = t/band.c
t_band_t_CPPFLAGS = $(T_CPPFLAGS)
t_band_t_LDADD = $(T_LDADD)
# ---- the device sort: CLTOPK_ALGO_SORT and radix select's winner sort
check_PROGRAMS += t/sort.t
t_sort_t_SOURCES = t/sort.c
t_sort_t_CPPFLAGS = $(T_CPPFLAGS)
t_sort_t_LDADD = $(T_LDADD)
# ---- end
# ---- both SBP algorithms with each tuning variable at its bounds: a long sweep
# (a kernel build per configuration; minutes on 2 cores), run by check-full
check_PROGRAMS += t/sbp_tune.t
FULL_TESTS = t/sbp_tune.t
t_sbp_tune_t_SOURCES = t/sbp_tune.c
t_sbp_tune_t_CPPFLAGS = $(T_CPPFLAGS)
t_sbp_tune_t_LDADD = $(T_LDADD)

# make check-full: make check plus the long sweeps (FULL_TESTS), and the
# sweeps that make check runs a share of run whole (CLTOPK_TEST_FULL=1, see
# test_full in t/testlib.h)
check-full:
	CLTOPK_TEST_FULL=1 $(MAKE) $(AM_MAKEFLAGS) check TESTS="$(TESTS) $(FULL_TESTS)"
.PHONY: check-full
# ---- many rows at once: top-k of rows and segments, kNN (issue 13)
check_PROGRAMS += t/rows.t t/knn.t
t_rows_t_SOURCES = t/rows.c
t_rows_t_CPPFLAGS = $(T_CPPFLAGS)
t_rows_t_LDADD = $(T_LDADD)
t_knn_t_SOURCES = t/knn.c
t_knn_t_CPPFLAGS = $(T_CPPFLAGS)
t_knn_t_LDADD = $(T_LDADD) -lm
check_PROGRAMS += t/knn_scalar.t
t_knn_scalar_t_SOURCES = t/knn.c
t_knn_scalar_t_CPPFLAGS = $(T_CPPFLAGS) -DTEST_ISA='"scalar"'
t_knn_scalar_t_LDADD = $(T_LDADD) -lm
# the AVX2 + FMA distance kernel (t/knn.t runs the AVX-512 one where the
# processor has it); a processor without AVX2 runs the scalar one here
check_PROGRAMS += t/knn_avx2.t
t_knn_avx2_t_SOURCES = t/knn.c
t_knn_avx2_t_CPPFLAGS = $(T_CPPFLAGS) -DTEST_ISA='"avx2"'
t_knn_avx2_t_LDADD = $(T_LDADD) -lm
# ---- end
# ---- queries over columns: expressions against a tree-walking reference
check_PROGRAMS += t/query.t
t_query_t_SOURCES = t/query.c
t_query_t_CPPFLAGS = $(T_CPPFLAGS)
t_query_t_LDADD = $(T_LDADD) -lm
# ... the sample-filter query (CLTOPK_QUERY=path=sf) against the same reference
check_PROGRAMS += t/query_sf.t
t_query_sf_t_SOURCES = t/query.c
t_query_sf_t_CPPFLAGS = $(T_CPPFLAGS) -DQUERY_SF=1
t_query_sf_t_LDADD = $(T_LDADD) -lm
# ... and `cltopk query` against a numpy evaluation of the same rules
EXTRA_DIST += t/query_numpy.sh t/query_ref.py

# the early-stopping index (issue 15); its data come from tools/gen.c's
# skyline generator (`cltopk gen --tuples`)
T_PROGS += t/index.t
check_PROGRAMS += t/index.t
t_index_t_SOURCES = t/index.c tools/gen.c tools/gen.h
t_index_t_CPPFLAGS = $(T_CPPFLAGS)
t_index_t_LDADD = $(T_LDADD) -lm

# kNN, queries and the index where the device's floating-point arithmetic
# does not round as the CPU's (CLTOPK_FP_CONFIG=denorm=0): the CPU's bits
check_PROGRAMS += t/fp_config.t
t_fp_config_t_SOURCES = t/fp_config.c
t_fp_config_t_CPPFLAGS = $(T_CPPFLAGS)
t_fp_config_t_LDADD = $(T_LDADD)
