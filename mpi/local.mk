# mpi/local.mk - libcltopk_mpi (top-k over the ranks of an MPI communicator),
# the cltopk-mpi command and their test; included from the top Makefile.am after
# t/local.mk and tools/local.mk.  Built when configure found MPI (HAVE_MPI);
# Automake distributes the conditional sources and header either way.

EXTRA_DIST += cltopk_mpi.pc.in docs/SCALE.md t/mpi.sh
# t/mpi.sh runs t/mpi.t under $(MPIEXEC) with 1 to 4 ranks, or skips
TESTS += t/mpi.sh
AM_TESTS_ENVIRONMENT += MPIEXEC='$(MPIEXEC)'; export MPIEXEC;

if HAVE_MPI
# above the core library: it calls only its public API (and lib/order.h's
# inline order keys); t/layers.sh checks the first
lib_LTLIBRARIES += libcltopk_mpi.la
include_HEADERS += include/cltopk_mpi.h
pkgconfig_DATA += cltopk_mpi.pc
libcltopk_mpi_la_SOURCES = mpi/cltopk_mpi.c
libcltopk_mpi_la_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CFLAGS)
libcltopk_mpi_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -DCLTOPK_BUILDING
libcltopk_mpi_la_LDFLAGS = $(AM_LDFLAGS) -version-info $(LT_MPI_VERSION_INFO) -no-undefined
libcltopk_mpi_la_LIBADD = libcltopk.la $(MPI_LIBS) $(OPENMP_CFLAGS)

bin_PROGRAMS += tools/cltopk-mpi
tools_cltopk_mpi_SOURCES = tools/cltopk-mpi.c tools/cli.c tools/cli.h tools/gen.c tools/gen.h
tools_cltopk_mpi_CPPFLAGS = -I$(top_srcdir)/include -I$(top_builddir)/include $(MPI_CFLAGS)
tools_cltopk_mpi_CFLAGS = $(AM_CFLAGS)
tools_cltopk_mpi_LDADD = libcltopk_mpi.la libcltopk.la $(MPI_LIBS)

check_PROGRAMS += t/mpi.t
t_mpi_t_SOURCES = t/mpi.c
t_mpi_t_CPPFLAGS = $(T_CPPFLAGS) $(MPI_CFLAGS)
t_mpi_t_LDADD = t/libtest.a libcltopk_mpi.la libcltopk.la $(MPI_LIBS) $(OPENCL_LIBS)
endif
