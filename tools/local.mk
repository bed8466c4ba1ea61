# tools/local.mk - the cltopk command, its manual page and its test; included
# from the top Makefile.am after t/local.mk (which sets TESTS and the TAP driver).

bin_PROGRAMS = tools/cltopk
tools_cltopk_SOURCES = \
	tools/cltopk.c tools/cli.c tools/cli.h \
	tools/cmd_devices.c tools/cmd_gen.c tools/cmd_topk.c tools/cmd_bench.c tools/cmd_demo.c \
	tools/cmd_bench_cpu.c tools/cmd_bench_stream.c tools/cmd_rows.c tools/cmd_query.c tools/cmd_index.c \
	tools/gen.c tools/gen.h
# bit-packed columns: pack, unpack, topk --packed, bench --unpack
tools_cltopk_SOURCES += tools/cmd_pack.c tools/container.c tools/container.h \
	tools/cmd_unpackbench.c
# The public headers only (no lib/): the command is built on the public API.
tools_cltopk_CPPFLAGS = -I$(top_srcdir)/include -I$(top_builddir)/include
tools_cltopk_CFLAGS = $(AM_CFLAGS)
# OpenCL itself for bench --stream's pinned input (a mapped buffer of the
# device's context, through cltopk_get_cl)
tools_cltopk_LDADD = libcltopk.la $(OPENCL_LIBS)

man1_MANS = tools/cltopk.1

# t/cli.sh is a TAP shell script: run by $(SHELL) through its own extension, so
# that a LOG_COMPILER meant for the test programs (check-valgrind) leaves it alone.
TESTS += t/cli.sh
# .t: the test programs, through suffix rules, so that `make check TESTS=...`
# (check-full) can name a program that TESTS does not list
TEST_EXTENSIONS = .sh .t
T_LOG_DRIVER = $(LOG_DRIVER)
SH_LOG_COMPILER = $(SHELL)
SH_LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
EXTRA_DIST += tools/cltopk.1 t/cli.sh t/cli_tap.sh
# cltopk(3) names every function of cltopk.h
TESTS += t/man3.sh
EXTRA_DIST += t/man3.sh
# bit-packed columns: pack / unpack / topk --packed / bench --unpack
TESTS += t/cli_codec.sh
EXTRA_DIST += t/cli_codec.sh

# ---- `cltopk bench --cpu` peers: the C++ standard library's top-k, built only
# for benchmarking (`make bench-peers`), never installed; and the numpy peer ----
bench/cpu-peers: $(srcdir)/bench/cpu_peers.cc
	$(AM_V_GEN)$(MKDIR_P) bench && $${CXX:-c++} -O3 -march=native -std=c++17 \
	  -o $@ $(srcdir)/bench/cpu_peers.cc
bench-peers: bench/cpu-peers
	@if test ! -f bench/cpu_peers_numpy.py; then cp $(srcdir)/bench/cpu_peers_numpy.py bench/; fi
.PHONY: bench-peers
CLEANFILES += bench/cpu-peers
EXTRA_DIST += bench/cpu_peers.cc bench/cpu_peers_numpy.py
# ---- end of the bench --cpu block ----
