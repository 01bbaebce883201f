#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, from Debian's packages (munge, slurmctld, slurmd on localhost), for
# `make test-cluster`. Needs root.
#
#   scripts/slurm_local.sh start        install the packages if missing, write /etc/slurm/slurm.conf, start munged,
#                                       slurmctld and slurmd, wait until the node is idle (does nothing when up)
#   scripts/slurm_local.sh stop         stop the daemons this script started and remove the network namespace
#   scripts/slurm_local.sh status       sinfo + squeue
#   scripts/slurm_local.sh exec CMD...  run CMD where the cluster is reachable (sbatch, squeue, a build, pytest)
#
# slurmctld and slurmd listen on every interface, and only loopback may be used here: the daemons run in the network
# namespace $SLURM_NETNS (default wikiref-slurm), which holds nothing but `lo`. Clients (sbatch, squeue, the builds,
# the cluster tests) reach them only from inside it, hence `exec`. Jobs run in it too (slurmd starts them); the
# file system is the machine's, so the jobs see the work folders and the same Python environment.
set -euo pipefail

NETNS=${SLURM_NETNS:-wikiref-slurm}
CONF=/etc/slurm/slurm.conf
STATE=/var/lib/slurm
LOGS=/var/log/slurm
RUN=/run/slurm
PARTITION=debug

in_ns() { nsenter --net="/run/netns/$NETNS" "$@"; }  # not `ip netns exec`: it remounts /sys, hiding the cgroups

running() {  # running PIDFILE: the daemon whose pid the file holds is alive
    [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null
}

install_packages() {
    if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge
    fi
}

write_config() {
    local cpus memory
    cpus=$(nproc)
    memory=$(( $(free -m | awk '/^Mem:/ {print $2}') - 1024 ))  # leave 1 GiB to the system
    mkdir -p /etc/slurm "$STATE/slurmctld" "$STATE/slurmd" "$LOGS" "$RUN"
    cat >"$CONF.new" <<EOF
# written by scripts/slurm_local.sh: one node, localhost only
ClusterName=local
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
ReturnToService=2
# a job whose afterok dependency failed is cancelled instead of pending for ever
DependencyParameters=kill_invalid_depend
StateSaveLocation=$STATE/slurmctld
SlurmdSpoolDir=$STATE/slurmd
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.pid
SlurmctldLogFile=$LOGS/slurmctld.log
SlurmdLogFile=$LOGS/slurmd.log
MailProg=/bin/true
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=$PARTITION Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
    if cmp -s "$CONF.new" "$CONF"; then rm "$CONF.new"; return 1; fi
    mv "$CONF.new" "$CONF"
}

wait_for_node() {
    local state deadline=$((SECONDS + 60))
    while (( SECONDS < deadline )); do
        state=$(in_ns timeout 5 sinfo -h -n localhost -o %T 2>/dev/null || true)
        case $state in
            idle|mixed|allocated) echo "slurm: node localhost $state, partition $PARTITION (namespace $NETNS)"; return 0 ;;
            down*|drain*) in_ns scontrol update NodeName=localhost State=RESUME 2>/dev/null || true ;;
        esac
        sleep 1
    done
    echo "slurm: the node did not come up (state '${state:-unknown}'); see $LOGS/slurmctld.log and $LOGS/slurmd.log" >&2
    return 1
}

start() {
    [[ $(id -u) == 0 ]] || { echo "slurm_local.sh start: needs root" >&2; exit 1; }
    install_packages
    if ! ip netns list | grep -qw "$NETNS"; then
        ip netns add "$NETNS"
    fi
    in_ns ip link set lo up
    # glibc's getaddrinfo(AI_ADDRCONFIG), which Slurm calls even for 127.0.0.1, finds no IPv4 address when 127.0.0.1 is
    # the only one; a second loopback address satisfies it (still nothing outside the namespace)
    in_ns ip -br addr show dev lo | grep -qw 127.0.0.2/8 || in_ns ip addr add 127.0.0.2/8 dev lo
    local restart=0
    write_config && restart=1  # a changed configuration restarts the Slurm daemons
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge
    [[ -s /etc/munge/munge.key ]] || { mungekey --create --keyfile /etc/munge/munge.key
                                       chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key; }
    running /run/munge/munged.pid || in_ns runuser -u munge -- /usr/sbin/munged
    if (( restart )); then stop_daemon slurmd; stop_daemon slurmctld; fi
    running "$RUN/slurmctld.pid" || in_ns /usr/sbin/slurmctld
    running "$RUN/slurmd.pid" || in_ns /usr/sbin/slurmd -N localhost
    wait_for_node
}

stop_daemon() {  # stop_daemon NAME: the process in its pid file, by that pid
    local pidfile=$RUN/$1.pid pid
    [[ $1 == munged ]] && pidfile=/run/munge/munged.pid
    running "$pidfile" || return 0
    pid=$(cat "$pidfile")
    kill "$pid"
    for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.5; done
    echo "slurm_local.sh: $1 (pid $pid) did not stop" >&2
    return 1
}

stop() {
    stop_daemon slurmd
    stop_daemon slurmctld
    stop_daemon munged
    if ip netns list | grep -qw "$NETNS"; then ip netns delete "$NETNS"; fi
    echo "slurm: stopped"
}

case ${1:-} in
    start) start ;;
    stop) stop ;;
    status) in_ns sinfo && in_ns squeue ;;
    exec) shift; in_ns "$@" ;;
    *) echo "usage: $0 start|stop|status|exec CMD..." >&2; exit 2 ;;
esac
