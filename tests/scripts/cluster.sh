# Daemons for the sweep's cluster tests and benchmark (sourced by
# tests/cli_sweep_cluster.sh and bench/sweep_cluster.sh): an sshd on
# loopback and a one-node Slurm cluster (munged, slurmctld, slurmd), each in
# a folder of its own with its own keys and config on unprivileged ports,
# started in the background and stopped by process id (stop_daemons).
#   start_sshd DIR   hosts hostA (127.0.0.1), hostB (127.0.0.2) and hostC (a
#                    port where nothing listens) in DIR/config for ssh -F;
#                    remote jobs get TMPDIR=DIR/rtmp.  0, or 1 with WHY set
#   start_slurm DIR  exports SLURM_CONF; 0 when the node is idle, or 1 with WHY
pids=""
stop_daemons() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    for p in $pids; do
        i=0
        while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
        kill -KILL "$p" 2>/dev/null
    done
    pids=""
}
port_free() {   # nothing listens on TCP port $1 (from /proc/net/tcp*)
    _hex=$(printf '%04X' "$1")
    ! cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '{ print $2 }' | grep -qi ":$_hex\$"
}
free_port() {   # a free port in 20000-59999
    _p=$(( ($$ * 7919 + $(date +%N | sed 's/^0*//;s/^$/0/')) % 40000 + 20000 ))
    while ! port_free "$_p"; do _p=$((_p + 1)); done
    echo "$_p"
}
start_sshd() {
    S=$1
    sshd=/usr/sbin/sshd
    if ! [ -x "$sshd" ] || ! command -v ssh >/dev/null 2>&1 || ! command -v ssh-keygen >/dev/null 2>&1; then
        WHY="no sshd or ssh (HOLOSIM_FULL_DEPS=1 sh scripts/install-deps.sh installs them)"
        return 1
    fi
    mkdir -p "$S/rtmp" && chmod 700 "$S"
    [ "$(id -u)" != 0 ] || mkdir -p /run/sshd    # sshd's privilege separation directory
    ssh-keygen -q -t ed25519 -N '' -f "$S/host_key" && ssh-keygen -q -t ed25519 -N '' -f "$S/id" &&
        cp "$S/id.pub" "$S/authorized_keys" || { WHY="ssh-keygen failed"; return 1; }
    port=$(free_port)
    dead=$((port + 1))
    while ! port_free "$dead"; do dead=$((dead + 1)); done
    cat >"$S/sshd_config" <<EOC
Port $port
ListenAddress 127.0.0.1
ListenAddress 127.0.0.2
HostKey $S/host_key
PidFile $S/sshd.pid
AuthorizedKeysFile $S/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
AcceptEnv TMPDIR HOLOSIM_CACHE
MaxStartups 100
MaxSessions 100
LogLevel ERROR
EOC
    cat >"$S/config" <<EOC
Host hostA
    HostName 127.0.0.1
Host hostB
    HostName 127.0.0.2
Host hostC
    HostName 127.0.0.1
    Port $dead
Host *
    Port $port
    IdentityFile $S/id
    IdentitiesOnly yes
    StrictHostKeyChecking no
    UserKnownHostsFile $S/known_hosts
    LogLevel ERROR
    SetEnv TMPDIR=$S/rtmp HOLOSIM_CACHE=${HOLOSIM_CACHE:-$S/cache}
EOC
    "$sshd" -D -e -f "$S/sshd_config" 2>"$S/sshd.log" &
    pids="$pids $!"
    i=0
    until ssh -F "$S/config" -o BatchMode=yes hostA true 2>/dev/null || [ $i -ge 50 ]; do sleep 0.2; i=$((i + 1)); done
    if ! ssh -F "$S/config" -o BatchMode=yes hostB true 2>"$S/err"; then
        WHY="the sshd on 127.0.0.1:$port does not take a login: $(cat "$S/err" "$S/sshd.log" | head -n 3 | tr '\n' ' ')"
        return 1
    fi
}

start_slurm() {
    C=$1
    if ! [ -x /usr/sbin/slurmctld ] || ! [ -x /usr/sbin/slurmd ] || ! [ -x /usr/sbin/munged ] ||
       ! command -v sbatch >/dev/null 2>&1; then
        WHY="slurmctld, slurmd, munged or sbatch missing (HOLOSIM_FULL_DEPS=1 sh scripts/install-deps.sh installs them)"
        return 1
    fi
    if [ "$(id -u)" != 0 ]; then
        WHY="slurmd must run as root to start jobs, and this is uid $(id -u)"
        return 1
    fi
    mkdir -p "$C/munge" "$C/state" "$C/spool" "$C/log"
    chmod 700 "$C/munge"
    dd if=/dev/urandom of="$C/munge/key" bs=1024 count=1 2>/dev/null
    chmod 600 "$C/munge/key"
    /usr/sbin/munged -F -f --socket="$C/munge/sock" --key-file="$C/munge/key" \
        --log-file="$C/munge/log" --pid-file="$C/munge/pid" --seed-file="$C/munge/seed" \
        >"$C/munge/out" 2>&1 &
    pids="$pids $!"
    node=$(hostname -s)
    p1=$(free_port)
    p2=$((p1 + 1))
    while ! port_free "$p2"; do p2=$((p2 + 1)); done
    cat >"$C/slurm.conf" <<EOC
ClusterName=holotest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$p1
SlurmdPort=$p2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$C/munge/sock
StateSaveLocation=$C/state
SlurmdSpoolDir=$C/spool
SlurmctldPidFile=$C/slurmctld.pid
SlurmdPidFile=$C/slurmd.pid
SlurmctldLogFile=$C/log/ctld.log
SlurmdLogFile=$C/log/d.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOC
    SLURM_CONF=$C/slurm.conf
    export SLURM_CONF
    i=0
    until [ -S "$C/munge/sock" ] || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
    /usr/sbin/slurmctld -D -i -f "$SLURM_CONF" >"$C/log/ctld.out" 2>&1 &
    pids="$pids $!"
    /usr/sbin/slurmd -D -f "$SLURM_CONF" >"$C/log/d.out" 2>&1 &
    pids="$pids $!"
    i=0
    until sinfo -h -o %T 2>/dev/null | grep -qx idle || [ $i -ge 100 ]; do sleep 0.2; i=$((i + 1)); done
    if ! sinfo -h -o %T 2>/dev/null | grep -qx idle; then
        WHY="the one-node cluster did not come up: $(tail -n 3 "$C/log/ctld.log" "$C/log/d.log" 2>/dev/null | tr '\n' ' ' | cut -c1-400)"
        return 1
    fi
}

wait_job() {   # wait_job ID: until squeue no longer lists it (60 s)
    _i=0
    while [ -n "$(squeue -h -j "$1" -o %i 2>/dev/null)" ] && [ $_i -lt 600 ]; do sleep 0.1; _i=$((_i + 1)); done
}
