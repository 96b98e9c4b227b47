#!/bin/sh
# Install the Debian packages of the peer comparisons, when missing:
# bench/peers.sh: SciPy (python3-scipy), Simbody (libsimbody-dev), MuJoCo
# (libmujoco-dev) and a C++ compiler; bench/contacts.sh: Siconos
# (python3-siconos, its Python interface, which pulls in the Siconos
# libraries).  Not needed to build or test holosim; the bench scripts leave
# out, and say so, any peer that is not installed.
set -eu

need=""
/usr/bin/python3 -c 'import scipy, numpy' 2>/dev/null || need="$need python3-scipy"
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
{ command -v pkg-config >/dev/null 2>&1 && pkg-config --exists simbody; } ||
    need="$need libsimbody-dev"
[ -f /usr/include/mujoco/mujoco.h ] || need="$need libmujoco-dev"
command -v c++ >/dev/null 2>&1 || need="$need g++"
/usr/bin/python3 -c 'import siconos.kernel' 2>/dev/null || need="$need python3-siconos"

[ -z "$need" ] && exit 0

echo "install-bench-deps: installing$need" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "install-bench-deps: need root or sudo to install:$need" >&2; exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $need >&2
