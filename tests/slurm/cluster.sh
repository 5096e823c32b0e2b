#!/usr/bin/env bash
# A throw-away two-node SLURM cluster on 127.0.0.1 (Debian/Ubuntu, as root), used by
# tests/test_slurm.py and handy for trying workflow/profiles/slurm by hand:
#   tests/slurm/cluster.sh install     apt-get install slurm-wlm + munge, unless already there
#   tests/slurm/cluster.sh start DIR   write DIR/slurm.conf, link /etc/slurm/slurm.conf to it,
#                                      start munged, slurmctld and two slurmd (pidfiles, logs
#                                      in DIR)
#   tests/slurm/cluster.sh stop DIR    scancel every job, wait for an empty queue, stop the
#                                      daemons by their pidfiles, remove the link
# Node one is this host (the login node's slurmd). Node "remote" is a slurmd in pid, UTS and
# mount namespaces of its own (unshare): its jobs see another host name and none of this
# host's processes, as on a second machine; it listens on another port and keeps its spool,
# pid and log files apart by bind mounts. The default partition "main" is node "remote"
# alone, so every job submitted without a partition runs where the login node's processes
# are out of sight; partition "urgent" has both nodes.
# DIR must be reachable by the munge user (e.g. mktemp -d, then chmod 755). Facts behind the
# choices (default config path, MinJobAge, DefMemPerCPU, teardown order): ../shared/slurm.md.
set -euo pipefail

CONF=/etc/slurm/slurm.conf
REMOTE=remote  # node two's name, and its host name as its jobs see it
die() { echo "cluster.sh: $*" >&2; exit 1; }
# wait_for SECONDS WHAT COMMAND...: poll COMMAND until it succeeds, or fail after SECONDS.
wait_for() {
    local seconds=$1 what=$2; shift 2
    timeout "$seconds" bash -c "until $*; do sleep 0.2; done" \
        || die "timed out after ${seconds}s waiting for $what"
}

install() {
    local missing=0 tool
    for tool in munged slurmctld slurmd sbatch squeue scancel; do
        command -v "$tool" >/dev/null || missing=1
    done
    [ "$missing" = 1 ] || return 0
    [ "$(id -u)" = 0 ] || die "SLURM is not installed and installing it needs root"
    command -v apt-get >/dev/null || die "SLURM is not installed and there is no apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=300 -qq update
    apt-get -o DPkg::Lock::Timeout=300 -qq install -y --no-install-recommends slurm-wlm munge \
        >/dev/null
}

start() {
    local dir=$1 host node mem
    [ "$(id -u)" = 0 ] || die "starting the daemons needs root"
    if [ -L "$CONF" ] && [ -e "$CONF" ] && [ "$(readlink "$CONF")" != "$dir/slurm.conf" ]; then
        die "another test cluster is running ($CONF -> $(readlink "$CONF"))"
    elif [ -e "$CONF" ] && [ ! -L "$CONF" ]; then
        die "$CONF is a real SLURM configuration; not touching it"
    fi
    host=$(hostname -s)
    # slurmd -C: "NodeName=h CPUs=2 Boards=1 ... RealMemory=24105"; keep 90% of the memory.
    node=$(slurmd -C | head -n 1 | sed -E "s/^NodeName=[^ ]+ //")
    mem=$(sed -E 's/.*RealMemory=([0-9]+).*/\1/' <<<"$node")
    node=$(sed -E "s/RealMemory=[0-9]+/RealMemory=$((mem * 9 / 10))/" <<<"$node")

    mkdir -p "$dir"/{state,spool,log,munge} "$dir/remote/spool"
    chown munge: "$dir/munge" && chmod 755 "$dir/munge"
    cat >"$dir/slurm.conf" <<EOF
ClusterName=gpcbench-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=500
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
# squeue (the profile's status command without slurmdbd) must still see finished jobs.
MinJobAge=600
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 Port=6818 $node State=UNKNOWN
NodeName=$REMOTE NodeAddr=127.0.0.1 Port=6819 $node State=UNKNOWN
PartitionName=main Nodes=$REMOTE Default=YES MaxTime=INFINITE State=UP
# A second user's queue with a higher tier: its pending jobs start before main's (the
# crash test's retries do not wait behind the smoke run's queued fold groups).
PartitionName=urgent Nodes=ALL PriorityTier=2 MaxTime=INFINITE State=UP
EOF
    mkdir -p "$(dirname "$CONF")"
    ln -sfn "$dir/slurm.conf" "$CONF"

    runuser -u munge -- munged --socket="$dir/munge/munge.socket" \
        --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
        --seed-file="$dir/munge/munged.seed"
    wait_for 10 munged "munge -n -S '$dir/munge/munge.socket' >/dev/null 2>&1"
    slurmctld
    wait_for 20 slurmctld "scontrol ping >/dev/null 2>&1"
    slurmd
    start_remote "$dir"
    wait_for 30 "both nodes to be idle" "[ \"\$(sinfo -h -N -p urgent -o %T 2>/dev/null | grep -cx idle)\" = 2 ]"
}

# start_remote DIR: slurmd of node "remote" in namespaces of its own, its pid (as this host
# sees it) in DIR/slurmd-remote.pid. In its mount namespace, DIR/remote's spool, pid file and
# log stand in for node one's.
start_remote() {
    local dir=$1 launcher child
    # its pid as its namespace sees it (1): named so that no "*.pid" lookup takes it for a
    # pid of this host
    touch "$dir/remote/pid-in-namespace" "$dir/remote/slurmd.log" "$dir/slurmd.pid" "$dir/log/slurmd.log"
    setsid unshare --pid --uts --mount --fork --mount-proc --kill-child=TERM bash -c "
        hostname $REMOTE
        mount --bind '$dir/remote/spool' '$dir/spool'
        mount --bind '$dir/remote/pid-in-namespace' '$dir/slurmd.pid'
        mount --bind '$dir/remote/slurmd.log' '$dir/log/slurmd.log'
        exec slurmd -D -N $REMOTE" </dev/null >"$dir/remote/stdout.log" 2>&1 &
    launcher=$!
    wait_for 10 "the remote slurmd" "pgrep -P $launcher -x slurmd >/dev/null"
    child=$(pgrep -P "$launcher" -x slurmd)
    echo "$child" >"$dir/slurmd-remote.pid"
}

# alive PID: the process exists and is not a zombie (PID 1 may not reap daemons here).
alive() { local state; state=$(ps -o stat= -p "$1") && [[ $state != Z* ]]; }
export -f alive

# stop_pidfile FILE NAME: SIGTERM the daemon NAME whose pid is in FILE; SIGKILL after 10 s.
stop_pidfile() {
    local file=$1 name=$2 pid
    [ -f "$file" ] || return 0
    pid=$(cat "$file")
    if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ] && alive "$pid"; then
        kill -TERM "$pid"
        timeout 10 bash -c "while alive $pid; do sleep 0.2; done" || {
            echo "cluster.sh: $name ($pid) ignored SIGTERM; killing it" >&2
            kill -KILL "$pid" 2>/dev/null || true
        }
    fi
    rm -f "$file"
}

stop() {
    local dir=$1 status=0
    if [ -f "$dir/slurmctld.pid" ] && scontrol ping >/dev/null 2>&1; then
        squeue -h -o %i | xargs -r scancel || status=1
        timeout 60 bash -c 'while [ -n "$(squeue -h -o %i)" ]; do sleep 0.5; done' || {
            echo "cluster.sh: jobs still queued after 60 s:" >&2; squeue >&2; status=1
        }
    fi
    stop_pidfile "$dir/slurmd-remote.pid" slurmd
    stop_pidfile "$dir/slurmd.pid" slurmd
    stop_pidfile "$dir/slurmctld.pid" slurmctld
    stop_pidfile "$dir/munge/munged.pid" munged
    if [ "$(readlink "$CONF" 2>/dev/null)" = "$dir/slurm.conf" ]; then rm -f "$CONF"; fi
    return "$status"
}

case "${1:-}" in
    install) install ;;
    start) [ $# = 2 ] || die "usage: $0 start DIR"; start "$(realpath "$2")" ;;
    stop) [ $# = 2 ] || die "usage: $0 stop DIR"; stop "$(realpath "$2")" ;;
    *) die "usage: $0 install | start DIR | stop DIR" ;;
esac
