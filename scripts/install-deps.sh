#!/bin/sh
# Install the Debian packages holosim needs to build and test, when missing.
# Idempotent and quiet when everything is present: the Makefile calls it first.
set -eu

need=""
pkgconf_ok() { command -v pkg-config >/dev/null 2>&1 && pkg-config --exists "$1"; }

command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
pkgconf_ok gsl        || need="$need libgsl-dev"
pkgconf_ok yaml-0.1   || need="$need libyaml-dev"
pkgconf_ok check      || need="$need check"
command -v cc >/dev/null 2>&1 || need="$need gcc"
# the BLAS behind GSL (Makefile: BLAS_LIBS): single-threaded OpenBLAS
ls /usr/lib/*/openblas-serial/libopenblas.so >/dev/null 2>&1 || need="$need libopenblas-serial-dev"
# KLU (SuiteSparse): the sparse saddle-point solve of structured embeddings
[ -f /usr/include/suitesparse/klu.h ] || need="$need libsuitesparse-dev"
command -v make >/dev/null 2>&1 || need="$need make"
# cairo: the still figures of holosim animate (.svg, .pdf, .png); optional
# for the build (the Makefile leaves them out without it), installed here
pkgconf_ok cairo      || need="$need libcairo2-dev"
# the Python package (python/holosim: cffi in ABI mode over libholosim, NumPy)
[ -d /usr/lib/python3/dist-packages/cffi ]  || need="$need python3-cffi"
[ -d /usr/lib/python3/dist-packages/numpy ] || need="$need python3-numpy"
if [ "${HOLOSIM_FULL_DEPS:-0}" = 1 ]; then
    command -v gnuplot  >/dev/null 2>&1 || need="$need gnuplot-nox"
    command -v parallel >/dev/null 2>&1 || need="$need parallel"
    command -v groff    >/dev/null 2>&1 || need="$need groff"
    command -v rsync    >/dev/null 2>&1 || need="$need rsync"
    # The sweep's cluster tests (tests/sweep_cluster.sh) start a one-node
    # Slurm cluster and an sshd on loopback: the daemons and their clients.
    [ -x /usr/sbin/slurmctld ] || need="$need slurmctld"
    [ -x /usr/sbin/slurmd ]    || need="$need slurmd"
    command -v sbatch >/dev/null 2>&1 || need="$need slurm-client"
    [ -x /usr/sbin/munged ]    || need="$need munge"
    [ -x /usr/sbin/sshd ]      || need="$need openssh-server"
    command -v ssh    >/dev/null 2>&1 || need="$need openssh-client"
    # holosim animate's page is tested in a headless browser, driven by node
    # through the DevTools protocol (tests/cli_animate.sh, tests/anim_browser.js)
    command -v chromium >/dev/null 2>&1 || need="$need chromium"
    command -v node     >/dev/null 2>&1 || need="$need nodejs"
    # tests/cli_linearize.sh reads linearize's .mat back with SciPy's loadmat
    [ -d /usr/lib/python3/dist-packages/scipy ] || need="$need python3-scipy"
fi
# Fuzzing and memory checking (tests/fuzz/fuzz.mk): clang with its libFuzzer
# and sanitizer runtimes (libclang-rt-dev follows Debian's default clang),
# and valgrind.
if [ "${HOLOSIM_FUZZ_DEPS:-0}" = 1 ]; then
    command -v clang >/dev/null 2>&1 || need="$need clang"
    if ! command -v clang >/dev/null 2>&1 ||
       ! ls "$(clang -print-resource-dir)"/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1; then
        need="$need libclang-rt-dev"
    fi
    command -v valgrind >/dev/null 2>&1 || need="$need valgrind"
fi

[ -z "$need" ] && exit 0

echo "install-deps: installing$need" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "install-deps: need root or sudo to install:$need" >&2; exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $need >&2
