#!/bin/bash
# A sweep cut into four shards and run as a Slurm job array, as docs/planning.md shows, then
# merged, gives exactly the table of the same sweep run whole. The test starts its own one-node
# Slurm cluster (munged, slurmctld and slurmd in the foreground, on loopback, in a temporary
# directory: Debian's slurmctld, slurmd, slurm-client and munge) and stops it.
#
# usage: sweep_slurm.sh RELAYSIM SCENARIO WORK_DIR
set -u
relaysim="$1"; scenario="$2"; work="$3"
SHARDS=4
TIMEOUT=${TIMEOUT:-300}          # seconds, for the node to come up and for the array

log() { echo "[sweep_slurm] $*" >&2; }

for tool in munged slurmctld slurmd sbatch sinfo; do
  command -v "$tool" >/dev/null || { echo "needs $tool (Debian: slurmctld slurmd slurm-client munge; ./relaysim build installs them)"; exit 1; }
done

# No outer Slurm environment leaks in.
for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done

rm -rf "$work" && mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd)
relaysim=$(cd "$(dirname "$relaysim")" && pwd)/$(basename "$relaysim")
scenario=$(cd "$(dirname "$scenario")" && pwd)/$(basename "$scenario")
TMP=$(mktemp -d /tmp/relaysim-slurm.XXXXXX) || exit 1
chmod 755 "$TMP"     # munged wants its socket's directory executable by all
mkdir -m 755 "$TMP/munge" "$TMP/state" "$TMP/spool"
chmod 755 "$work"

MUNGE_PID= CTLD_PID= SLURMD_PID= SBATCH_PID= FAILED=1
export SLURM_CONF=$TMP/slurm.conf

dump_logs() {
    local f
    for f in munged.out slurmctld.log slurmd.log sbatch.out; do
        case $f in slurm*.log) [ -s "$TMP/$f" ] || f=${f%.log}.out ;; esac
        [ -s "$TMP/$f" ] || continue
        echo "===== $f (last 60 lines) =====" >&2
        tail -n 60 "$TMP/$f" >&2
    done
    for f in "$work"/slurm-*.log; do
        [ -s "$f" ] || continue
        echo "===== $(basename "$f") =====" >&2
        tail -n 30 "$f" >&2
    done
}

stop_pid() {   # stop_pid PID: TERM, up to 5 s, then KILL
    local p=$1 i
    [ -n "$p" ] || return 0
    kill -TERM "$p" 2>/dev/null || return 0
    for i in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null
    wait "$p" 2>/dev/null
}

cleanup() {
    trap - EXIT INT TERM
    trap '' PIPE
    [ -z "$SBATCH_PID" ] || kill "$SBATCH_PID" 2>/dev/null
    if [ -n "$CTLD_PID" ] && kill -0 "$CTLD_PID" 2>/dev/null; then
        scancel --quiet -u "$(id -un)" 2>/dev/null
    fi
    # slurmstepd detaches from this script: those of this cluster carry its SLURM_CONF.
    for p in $(pgrep -x slurmstepd 2>/dev/null); do
        if tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -qx "SLURM_CONF=$SLURM_CONF"; then
            kill -KILL "$p" 2>/dev/null
        fi
    done
    stop_pid "$SLURMD_PID"
    stop_pid "$CTLD_PID"
    stop_pid "$MUNGE_PID"
    [ "$FAILED" = 0 ] || dump_logs
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { log "FAIL: $*"; exit 1; }

port_in_use() { ss -Htan 2>/dev/null | awk '{print $4}' | grep -q ":$1\$"; }
free_port() {  # free_port [another port to avoid]
    local p
    while :; do
        p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40000 ))
        [ "$p" != "${1:-}" ] && ! port_in_use "$p" && { echo "$p"; return; }
    done
}

# The sweep, whole, on this machine: what the shards must add up to.
sweep() { "$relaysim" sweep "$scenario" --vary webhook.platform.pods=1..3 --vary webhook.platform.concurrency_per_pod=4,16 \
  -r 3 --set duration=5m --jobs 1 -q "$@"; }
sweep --out "$work/whole" || fail "the whole sweep"

# ---- 1. munge --------------------------------------------------------------
MSOCK=$TMP/munge/munge.sock
mungekey --create --bits=1024 --keyfile="$TMP/munge/munge.key" 2>/dev/null ||
    dd if=/dev/urandom of="$TMP/munge/munge.key" bs=128 count=1 2>/dev/null
chmod 400 "$TMP/munge/munge.key"
munged --foreground --socket="$MSOCK" --key-file="$TMP/munge/munge.key" \
       --pid-file="$TMP/munge/munged.pid" --log-file="$TMP/munge/munged.log" \
       --seed-file="$TMP/munge/munged.seed" >"$TMP/munged.out" 2>&1 &
MUNGE_PID=$!
for i in $(seq 50); do
    [ -S "$MSOCK" ] || ! kill -0 "$MUNGE_PID" 2>/dev/null && break; sleep 0.1
done
munge -n -S "$MSOCK" | unmunge -S "$MSOCK" >/dev/null 2>&1 ||
    fail "munged not working"
log "munged up (pid $MUNGE_PID)"

# ---- 2. slurm.conf ---------------------------------------------------------
NODE=$(hostname -s)
CTLD_PORT=$(free_port)
SLURMD_PORT=$(free_port "$CTLD_PORT")
CPUS=$(nproc)
mkdir -m 755 "$TMP/spool/$NODE"
cat > "$SLURM_CONF" <<EOF
ClusterName=relaysim
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MSOCK
StateSaveLocation=$TMP/state
SlurmdSpoolDir=$TMP/spool/%n
SlurmctldPidFile=$TMP/slurmctld.pid
SlurmdPidFile=$TMP/slurmd.pid
SlurmctldLogFile=$TMP/slurmctld.log
SlurmdLogFile=$TMP/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
SlurmdParameters=config_overrides
# sbatch --wait polls every 2 s, growing to 8 s unless MinJobAge/2 <= 2
MinJobAge=4
# default batch_sched_delay=3 defers scheduling of newly submitted batch jobs
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
KillWait=2
InactiveLimit=0
NodeName=$NODE NodeAddr=127.0.0.1 NodeHostname=$NODE CPUs=$CPUS State=UNKNOWN
PartitionName=debug Default=YES Nodes=ALL State=UP MaxTime=INFINITE
EOF

# ---- 3. daemons ------------------------------------------------------------
slurmctld -D -i -f "$SLURM_CONF" >"$TMP/slurmctld.out" 2>&1 &
CTLD_PID=$!
slurmd -D -N "$NODE" -f "$SLURM_CONF" >"$TMP/slurmd.out" 2>&1 &
SLURMD_PID=$!

deadline=$(( $(date +%s) + TIMEOUT ))
state=
while :; do
    kill -0 "$CTLD_PID" 2>/dev/null || fail "slurmctld died"
    kill -0 "$SLURMD_PID" 2>/dev/null || fail "slurmd died"
    state=$(sinfo -h -N -n "$NODE" -o '%T' 2>/dev/null)
    case $state in idle*) break ;; esac
    [ "$(date +%s)" -lt "$deadline" ] || fail "node not idle (state '$state')"
    sleep 0.2
done
log "node $NODE idle (ctld port $CTLD_PORT, slurmd port $SLURMD_PORT)"

# ---- 4. the sweep's shards as a job array ---------------------------------
# --wait: sbatch returns when every task has ended, with the highest task's exit status. In the
# background, so that a TERM reaches the cleanup at once.
timeout "$TIMEOUT" sbatch --wait --parsable --array=1-"$SHARDS" \
    --job-name=relaysim-sweep --chdir="$work" --output="$work/slurm-%A_%a.log" \
    --ntasks=1 --cpus-per-task=1 \
    --wrap "\"$relaysim\" sweep \"$scenario\" --vary webhook.platform.pods=1..3 --vary webhook.platform.concurrency_per_pod=4,16 \
-r 3 --set duration=5m --jobs 1 -q --shard \$SLURM_ARRAY_TASK_ID/$SHARDS --out \"$work/part\$SLURM_ARRAY_TASK_ID\"" \
    >"$TMP/sbatch.out" 2>&1 &
SBATCH_PID=$!
wait "$SBATCH_PID"
rc=$?
SBATCH_PID=
[ "$rc" = 0 ] || fail "sbatch --wait exited $rc"
log "job array $(head -n1 "$TMP/sbatch.out") finished"

"$relaysim" merge "$work/merged" "$work/part1" "$work/part2" "$work/part3" "$work/part4" > "$work/merge.txt" || fail "merge"
for f in summary.csv tails.csv summary.json runs.csv latency.csv sweep.json; do
  cmp "$work/whole/$f" "$work/merged/$f" || fail "the merged $f differs from the whole sweep's"
done
echo "four shards run as a Slurm job array and merged give the whole sweep's table ($(wc -l < "$work/whole/runs.csv") lines of runs)"
FAILED=0
exit 0
