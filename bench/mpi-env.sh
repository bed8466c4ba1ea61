# mpi-env.sh - Open MPI from Ubuntu 24.04's .debs, unpacked with dpkg -x into a
# prefix (nothing installed), for bench/gpu-run.sh's mpi step and
# bench/multi-gpu.sh; sourced (bash), with a log function defined by the caller.
#
#   mpi_env DEBS DIR   unpack DEBS/*.deb (openmpi-bin, libopenmpi3t64,
#                      libopenmpi-dev, openmpi-common and the runtime
#                      libraries they load) into DIR/root, make DIR/bin's
#                      mpirun, mpiexec and mpicc (what the packages' scripts
#                      would have made), and export PATH, LD_LIBRARY_PATH and
#                      the variables that point Open MPI and PMIx there
#                      (OPAL_PREFIX, OPAL_SYSCONFDIR, PMIX_PREFIX).  Sets mpr
#                      (DIR/root/usr) and mlib (its library directory), which
#                      a build --with-mpi takes: MPI_CFLAGS="-I$mlib/openmpi/include"
#                      MPI_LIBS="-L$mlib/openmpi/lib -lmpi -Wl,-rpath-link,$mlib".
#                      Returns 1 (and logs why) when DEBS lacks the packages.
mpi_env() {
    local mdebs=$1 mp=$2 d
    if ! ls "$mdebs"/libopenmpi3t64_*.deb "$mdebs"/openmpi-bin_*.deb "$mdebs"/libopenmpi-dev_*.deb >/dev/null 2>&1; then
        log "mpi: no Open MPI .debs in $mdebs (libopenmpi3t64, openmpi-bin, libopenmpi-dev ...)"
        return 1
    fi
    for d in "$mdebs"/*.deb; do dpkg -x "$d" "$mp/root" || log "mpi: dpkg -x $(basename "$d") failed"; done
    mpr=$mp/root/usr
    mlib=$mpr/lib/x86_64-linux-gnu
    # what the packages' scripts would have made: the alternatives' names
    mkdir -p "$mp/bin"
    ln -s "$mpr/bin/orterun" "$mp/bin/mpirun"
    ln -s "$mpr/bin/orterun" "$mp/bin/mpiexec"
    ln -s "$mpr/bin/opal_wrapper" "$mp/bin/mpicc"
    [ -e "$mlib/libpsm_infinipath.so.1" ] ||
        ln -s "$(ls "$mp"/root/usr/lib/libpsm1/libpsm_infinipath.so.1.* | head -n1)" "$mlib/libpsm_infinipath.so.1"
    export PATH=$mp/bin:$PATH
    export LD_LIBRARY_PATH=$mlib:$mlib/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export OPAL_PREFIX=$mpr OPAL_SYSCONFDIR=$mp/root/etc/openmpi PMIX_PREFIX=$mlib/pmix2
    # shared-memory segments in /tmp (a container's /dev/shm may be small)
    export OMPI_MCA_btl_vader_backing_directory=/tmp
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    return 0
}
