#!/usr/bin/env bash
# A real Slurm cluster on one machine, made of network namespaces: for the
# multi-node tests only (no authentication: auth/none, cred/none).
#
#   scripts/local-cluster.sh up NAME N [--dir DIR]   bring up N nodes; wait until all are idle
#   scripts/local-cluster.sh down NAME               remove everything `up` made
#   scripts/local-cluster.sh status [NAME]           what exists of NAME (no NAME: every cluster)
#   scripts/local-cluster.sh env NAME                `export` lines for a client on this machine
#   scripts/local-cluster.sh check                   why a cluster cannot be made here (exit 1), or nothing
#
# The shape (10.A.B.0/24 chosen from NAME; docs/multinode.md draws it):
#
#   this machine ── veth amc<tag> 10.A.B.1 ──┐
#   netns aftermath-NAME-ctl   hostname ctl   bridge br0 10.A.B.2   slurmctld
#   netns aftermath-NAME-nodeI hostname nodeI eth0 10.A.B.(10+I)    slurmd -N nodeI
#
# The bridge lives in the controller's namespace, not on this machine: frames
# between nodes then never cross this machine's netfilter (br_netfilter and a
# FORWARD policy of DROP, as Docker sets, would drop them). Nothing routes,
# nothing is NATed, no namespace has a default route, ip_forward is untouched:
# the nodes reach each other and this machine, and nothing else.
#
# Each daemon runs in its namespace's own UTS namespace (its hostname) and
# mount namespace (the cluster's hosts file over /etc/hosts); the job steps
# slurmd starts inherit all three. Clients (srun, salloc, sbatch, sinfo) run on
# this machine with only SLURM_CONF set: slurmctld and slurmd call back the
# address the request came from, 10.A.B.1.
#
# Every name is derived from NAME (netns, interfaces, subnet, state dir), so
# clusters with different names live side by side; the subnet skips any that
# overlaps an address or route already here. All state (configs, hosts file,
# spool and state dirs, logs, daemon pids) sits in one folder:
# /run/aftermath-cluster/NAME, or DIR/NAME with a link to it from there.
set -Eeuo pipefail

readonly ROOT=/run/aftermath-cluster
readonly UP_DEADLINE_S=30     # until every node is idle
readonly STOP_DEADLINE_S=15   # SIGTERM to gone, before SIGKILL
readonly KILLED_DEADLINE_S=10 # SIGKILL to gone
readonly MAX_NODES=64

me=local-cluster
die() { echo "$me: $*" >&2; exit 1; }
usage() {
  sed -n '5,9s/^#  */  /p' "$0" >&2
  exit 2
}
help() {
  sed -n '5,9s/^#  */  /p' "$0"
  exit 0
}

# --- names, all from NAME ---------------------------------------------------

valid_name() { [[ $1 =~ ^[a-z0-9][a-z0-9-]{0,39}$ ]]; }
tag_of() { printf %s "$1" | sha256sum | cut -c1-7; }
ns_ctl() { echo "aftermath-$1-ctl"; }
ns_node() { echo "aftermath-$1-node$2"; }
host_if() { echo "amc$(tag_of "$1")"; }  # 10 chars: within IFNAMSIZ

# The cluster's own namespaces, found by their exact names (no other cluster's
# name can produce one of these: see valid_name).
cluster_netns() {
  local n=$1
  ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^aftermath-${n}-(ctl|node[0-9]+)\$" || true
}

state_dir_of() {
  local link="$ROOT/$1"
  if [ -L "$link" ]; then readlink "$link"; else echo "$link"; fi
}

# --- processes, by recorded pid and start time -------------------------------

start_time() {  # field 22 of /proc/PID/stat; empty when gone
  local s
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  s=${s##*) }
  set -- $s
  echo "${20}"
}
# Alive: the same process as recorded (start time matches), not a zombie.
alive() {
  local pid=$1 st=$2 s
  s=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
  s=${s##*) }
  set -- $s
  [ "$1" != Z ] && [ "$1" != X ] && [ "${20}" = "$st" ]
}
# wait_until SECONDS CMD...: polls CMD every 0.1 s; false past the deadline.
wait_until() {
  local end=$((SECONDS + $1)); shift
  until "$@"; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.1
  done
}
none_alive() {
  local pid st
  for f in "$@"; do
    read -r pid st <"$f" 2>/dev/null || continue
    alive "$pid" "$st" && return 1
  done
  return 0
}
signal_recorded() {
  local sig=$1 pid st; shift
  for f in "$@"; do
    read -r pid st <"$f" 2>/dev/null || continue
    alive "$pid" "$st" && kill "-$sig" "$pid" 2>/dev/null || true
  done
}

# --- subnet --------------------------------------------------------------------

ip2int() { local IFS=.; set -- $1; echo $(((($1 << 24) | ($2 << 16) | ($3 << 8) | $4))); }
# Every IPv4 prefix in use here (addresses' networks and routes, any table),
# as "ADDR/LEN", the default route left out.
prefixes_in_use() {
  { ip -4 -o addr show | awk '{print $4}'
    ip -4 route show table all |
      awk '$1 ~ /^(local|broadcast|unicast|anycast|multicast|unreachable|blackhole|prohibit|throw)$/ {print $2; next}
           {print $1}'
  } | grep -v '^default$' | sed '/\//!s/$/\/32/' | sort -u
}
overlaps() {  # overlaps NET24_INT PREFIX...
  local c=$1 p a len m; shift
  for p in "$@"; do
    a=$(ip2int "${p%/*}"); len=${p#*/}
    [ "$len" -gt 0 ] || continue
    [ "$len" -lt 24 ] || len=24
    m=$(( (0xffffffff << (32 - len)) & 0xffffffff ))
    [ $((a & m)) -eq $((c & m)) ] && return 0
  done
  return 1
}
# 10.A.B from NAME's hash; the next one while it overlaps something in use.
choose_subnet() {
  local h i a b used
  h=$((16#$(printf %s "$1" | sha256sum | cut -c9-12)))
  mapfile -t used < <(prefixes_in_use)
  for ((i = 0; i < 65536; i++)); do
    a=$(( ((h + i) >> 8) & 255 )); b=$(( (h + i) & 255 ))
    [ "$a" -ne 0 ] || continue
    overlaps $(( (10 << 24) | (a << 16) | (b << 8) )) "${used[@]}" || { echo "10.$a.$b"; return 0; }
  done
  return 1
}

# --- check -----------------------------------------------------------------------

# Prints why a cluster cannot be made here; nothing when it can.
why_not() {
  [ "$(id -u)" -eq 0 ] || { echo "not root (network namespaces and slurmd need root)"; return; }
  local b
  for b in slurmctld slurmd srun sinfo scontrol ip unshare setsid flock sha256sum; do
    command -v "$b" >/dev/null || { echo "no $b on PATH (scripts/deps.sh --test installs it)"; return; }
  done
  local probe="aftermath-probe-$$"
  ip netns add "$probe" 2>/dev/null || { echo "'ip netns add' is not permitted here"; return; }
  ip netns del "$probe" 2>/dev/null || true
  unshare --uts --mount true 2>/dev/null || { echo "'unshare --uts --mount' is not permitted here"; return; }
}

# --- up --------------------------------------------------------------------------

cgroup_conf() {
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    printf 'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\n'
  else
    printf 'CgroupPlugin=cgroup/v1\n'
  fi
}

write_configs() {
  local d=$1 name=$2 n=$3 net=$4 cpus i
  cpus=$(nproc)
  {
    echo "127.0.0.1 localhost"
    echo "$net.1 host"
    echo "$net.2 ctl"
    for ((i = 0; i < n; i++)); do echo "$net.$((10 + i)) node$i"; done
  } >"$d/hosts"
  cgroup_conf >"$d/cgroup.conf"
  cat >"$d/slurm.conf" <<EOF
# Written by scripts/local-cluster.sh for cluster $name: tests only.
ClusterName=$name
SlurmctldHost=ctl($net.2)
SlurmctldPort=6817
SlurmdPort=6818
SlurmUser=root
SlurmdUser=root
# No authentication: this cluster is reachable from this machine only.
AuthType=auth/none
CredType=cred/none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
InactiveLimit=0
StateSaveLocation=$d/ctld
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/run/slurmctld.pid
SlurmdPidFile=$d/run/slurmd-%n.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
EOF
  for ((i = 0; i < n; i++)); do
    echo "NodeName=node$i NodeHostname=node$i NodeAddr=$net.$((10 + i)) CPUs=$cpus State=UNKNOWN"
  done >>"$d/slurm.conf"
  echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >>"$d/slurm.conf"
}

# A namespace with loopback up and IPv6 off (gloo would otherwise find a
# link-local address on the interface first).
make_netns() {
  ip netns add "$1"
  ip -n "$1" link set lo up
  ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 2>/dev/null || true
}

# Whether PID runs EXE now, or has ended (a zombie counts as ended).
reached_or_ended() {
  [ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$2" ] && return 0
  local s
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  s=${s##*) }
  [ "${s%% *}" = Z ]
}

# start_daemon ROLE NETNS HOSTNAME CMD...: CMD in NETNS, under its own hostname
# and the cluster's hosts file, in a session of its own; records "pid start".
# setsid, ip netns exec, unshare (no --fork) and sh all exec the next, so $!
# is the daemon itself.
start_daemon() {
  local role=$1 ns=$2 host=$3; shift 3
  setsid ip netns exec "$ns" unshare --uts --mount -- \
    sh -c 'hostname "$1" && mount --bind "$2" /etc/hosts && shift 2 && exec "$@"' \
    aftermath-cluster "$host" "$dir/hosts" "$@" \
    </dev/null >>"$dir/log/$role.out" 2>&1 &
  local pid=$! want
  want=$(readlink -f "$(command -v "$1")")
  wait_until 5 reached_or_ended "$pid" "$want" || true
  [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$want" ] ||
    fail "$role did not start: $(tail -n 3 "$dir/log/$role.out" | tr '\n' ' ')"
  echo "$pid $(start_time "$pid")" >"$dir/pids/$role"
}

# The error and fatal lines the daemons logged, the last few, on one line.
log_excerpt() {
  local lines
  # (their stderr, *.out, has all the log has and what came before it; left
  # out: a fresh slurmctld's complaints about state files it has yet to write,
  # and about the PMIx library Debian's mpi/pmix plugins cannot load)
  lines=$(grep -hiE 'error|fatal' "$dir"/log/*.out 2>/dev/null |
    grep -viE 'state (save )?file|pmix' | tail -n 4 | tr '\n' ' ')
  [ -z "$lines" ] || echo "; the daemons logged: $lines"
}

# Tears down what up made and exits 1 with one message (the logs go with the
# state dir, so the message carries their last errors).
fail() {
  echo "$me: up $name: $*$(log_excerpt)" >&2
  trap - EXIT
  teardown "$name" >/dev/null || echo "$me: and tearing it down failed: see 'status $name'" >&2
  exit 1
}

daemons_alive() {
  local f pid st
  for f in "$dir"/pids/*; do
    read -r pid st <"$f"
    alive "$pid" "$st" || { echo "${f##*/}"; return 1; }
  done
}

all_idle() {
  local states
  states=$(SLURM_CONF="$dir/slurm.conf" sinfo -h -N -o '%N %t' 2>/dev/null) || return 1
  [ "$(grep -c ' idle$' <<<"$states")" -eq "$n" ] && return 0
  daemons_alive >/dev/null || return 0  # stop waiting: the caller sees who died
  return 1
}

cmd_up() {
  name=$1 n=$2 base=$3
  valid_name "$name" || die "bad NAME '$name': lower-case letters, digits and '-', 1-40 characters, starting with a letter or digit"
  [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le $MAX_NODES ] || die "bad N '$n': a node count from 1 to $MAX_NODES"
  local reason
  reason=$(why_not)
  [ -z "$reason" ] || die "cannot make a cluster here: $reason"
  mkdir -p "$ROOT"
  if [ -n "$base" ]; then
    mkdir -p "$base" || die "--dir $base: cannot create it"
    dir=$(cd "$base" && pwd)/$name
  else
    dir=$ROOT/$name
  fi

  # Claim NAME and a subnet under a lock: clusters come up side by side.
  local lock hif i
  hif=$(host_if "$name")
  exec {lock}<"$ROOT"
  flock -w 30 "$lock" || die "up $name: the lock on $ROOT still held after 30 s"
  if [ -e "$ROOT/$name" ] || [ -e "$dir" ] || [ -n "$(cluster_netns "$name")" ]; then
    die "cluster $name is already up (or half down): 'status $name', then 'down $name'"
  fi
  ip link show "$hif" >/dev/null 2>&1 &&
    die "interface $hif (derived from $name) exists already: another cluster's name hashes alike; choose another NAME"
  net=$(choose_subnet "$name") || die "up $name: no free 10.x.y.0/24"

  # From here on, any failure or signal tears down what was made.
  trap 'failed_at=$LINENO' ERR
  trap 'fail "failed at line ${failed_at:-?} of $0"' EXIT
  trap 'fail "interrupted"' INT TERM HUP
  mkdir -p "$dir"/{ctld,spool,run,log,pids}
  [ "$dir" = "$ROOT/$name" ] || ln -s "$dir" "$ROOT/$name"
  cat >"$dir/cluster.env" <<EOF
name=$name
nodes=$n
net=$net
host_if=$hif
EOF
  write_configs "$dir" "$name" "$n" "$net"
  # slurmd makes no SlurmdSpoolDir of its own, and needs it at once (its step
  # sockets, its hardware topology cache).
  for ((i = 0; i < n; i++)); do mkdir "$dir/spool/node$i"; done

  local ctl ns
  ctl=$(ns_ctl "$name")
  { make_netns "$ctl" &&
    ip -n "$ctl" link add br0 type bridge &&
    ip -n "$ctl" addr add "$net.2/24" dev br0 &&
    ip -n "$ctl" link set br0 up &&
    ip link add "$hif" type veth peer name host netns "$ctl" &&
    ip link set "$hif" alias "aftermath cluster $name" &&
    { sysctl -qw "net.ipv6.conf.$hif.disable_ipv6=1" 2>/dev/null || true; } &&
    ip addr add "$net.1/24" dev "$hif" &&
    ip link set "$hif" up &&
    ip -n "$ctl" link set host master br0 up; } 2>"$dir/log/net.err" ||
    fail "network of the controller: $(tr '\n' ' ' <"$dir/log/net.err")"
  for ((i = 0; i < n; i++)); do
    ns=$(ns_node "$name" "$i")
    { make_netns "$ns" &&
      ip link add eth0 netns "$ns" type veth peer name "node$i" netns "$ctl" &&
      ip -n "$ns" addr add "$net.$((10 + i))/24" dev eth0 &&
      ip -n "$ns" link set eth0 up &&
      ip -n "$ctl" link set "node$i" master br0 up; } 2>"$dir/log/net.err" ||
      fail "network of node$i: $(tr '\n' ' ' <"$dir/log/net.err")"
  done
  rm -f "$dir/log/net.err"
  flock -u "$lock"
  exec {lock}>&-  # not into the daemons

  export SLURM_CONF=$dir/slurm.conf
  start_daemon slurmctld "$ctl" ctl slurmctld -D -f "$SLURM_CONF"
  wait_until 10 sh -c 'scontrol ping 2>/dev/null | grep -q "is UP"' ||
    fail "slurmctld does not answer after 10 s"
  for ((i = 0; i < n; i++)); do
    start_daemon "slurmd-node$i" "$(ns_node "$name" "$i")" "node$i" slurmd -D -N "node$i" -f "$SLURM_CONF"
  done
  if ! wait_until "$UP_DEADLINE_S" all_idle; then
    fail "not every node idle after $UP_DEADLINE_S s: $(sinfo -h -N -o '%N=%t' 2>&1 | tr '\n' ' ')"
  fi
  local dead
  dead=$(daemons_alive) || fail "$dead exited"
  trap - EXIT
  echo "$me: cluster $name up: $n node(s) on $net.0/24 (state: $dir)"
}

# --- down ----------------------------------------------------------------------

# Removes whatever of NAME exists, from what the state dir recorded and from
# the names NAME implies. Fails, saying what is left, if something stays.
teardown() {
  local name=$1 d pidfiles=() ns left=()
  d=$(state_dir_of "$name")
  [ -d "$d/pids" ] && pidfiles=("$d"/pids/*)
  [ -e "${pidfiles[0]:-}" ] || pidfiles=()

  # The daemons, by recorded pid: SIGTERM, then SIGKILL past the deadline.
  if [ ${#pidfiles[@]} -gt 0 ]; then
    signal_recorded TERM "${pidfiles[@]}"
    if ! wait_until "$STOP_DEADLINE_S" none_alive "${pidfiles[@]}"; then
      signal_recorded KILL "${pidfiles[@]}"
      wait_until "$KILLED_DEADLINE_S" none_alive "${pidfiles[@]}" || left+=("daemons still alive after SIGKILL")
    fi
  fi
  # Whatever else still runs in the cluster's namespaces (job steps, their
  # tasks) belongs to it: SIGKILL, then wait for it to be gone.
  local nss
  mapfile -t nss < <(cluster_netns "$name")
  for ns in "${nss[@]}"; do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
  done
  local emptied=()
  for ns in "${nss[@]}"; do
    if wait_until "$KILLED_DEADLINE_S" sh -c '[ -z "$(ip netns pids "$1" 2>/dev/null)" ]' _ "$ns"; then
      emptied+=("$ns")
    else
      left+=("processes in $ns")  # the netns stays: a later down finds them there
    fi
  done
  # This machine's end of the link first: once the controller's namespace is
  # gone the kernel removes the pair by itself, at a moment of its choosing.
  local hif
  hif=$(host_if "$name")
  if [ -f "$d/cluster.env" ] && grep -qx "host_if=$hif" "$d/cluster.env"; then
    ip link del "$hif" 2>/dev/null || ! ip link show "$hif" >/dev/null 2>&1 || left+=("interface $hif")
  fi
  for ns in "${emptied[@]}"; do ip netns del "$ns" 2>/dev/null || left+=("netns $ns"); done
  if [ ${#left[@]} -gt 0 ]; then
    echo "$me: down $name: left behind: ${left[*]} (state kept in $d)" >&2
    return 1
  fi
  rm -rf "$d"
  rm -f "$ROOT/$name"
  [ ! -e "$d" ] || { echo "$me: down $name: cannot remove $d" >&2; return 1; }
}

cmd_down() {
  local name=$1
  valid_name "$name" || die "bad NAME '$name'"
  local d
  d=$(state_dir_of "$name")
  if [ ! -e "$d" ] && [ ! -L "$ROOT/$name" ] && [ -z "$(cluster_netns "$name")" ]; then
    die "no cluster $name here"
  fi
  teardown "$name" || exit 1
  echo "$me: cluster $name down"
}

# --- status, env -------------------------------------------------------------------

load_state() {
  local name=$1
  d=$(state_dir_of "$name")
  [ -f "$d/cluster.env" ] || die "no cluster $name here ('status' lists them)"
  nodes= net= host_if=
  # shellcheck disable=SC1091
  . "$d/cluster.env"
}

cmd_status() {
  local name=$1
  if [ -z "$name" ]; then
    local e found=0
    for e in "$ROOT"/*; do
      [ -e "$e" ] || continue
      found=1; echo "${e##*/} ($(state_dir_of "${e##*/}"))"
    done
    [ $found -eq 1 ] || echo "no clusters"
    return 0
  fi
  valid_name "$name" || die "bad NAME '$name'"
  local d nss f pid st up=1
  d=$(state_dir_of "$name")
  mapfile -t nss < <(cluster_netns "$name")
  if [ ! -e "$d" ] && [ ${#nss[@]} -eq 0 ]; then
    echo "cluster $name: down (nothing of it exists)"
    return 0
  fi
  echo "state dir: $d$([ -e "$d" ] || echo ' (missing)')"
  [ -f "$d/cluster.env" ] && { . "$d/cluster.env"; echo "subnet: $net.0/24, $nodes nodes"; }
  echo "netns: ${nss[*]:-(none)}"
  local hif
  hif=$(host_if "$name")
  if ip link show "$hif" >/dev/null 2>&1; then echo "interface: $hif"; else echo "interface: $hif (missing)"; up=0; fi
  for f in "$d"/pids/*; do
    [ -e "$f" ] || continue
    read -r pid st <"$f"
    if alive "$pid" "$st"; then echo "${f##*/}: pid $pid"; else echo "${f##*/}: pid $pid (gone)"; up=0; fi
  done
  if [ $up -eq 1 ] && [ -f "$d/slurm.conf" ]; then
    SLURM_CONF="$d/slurm.conf" sinfo -N -o '%N %t %o' 2>&1 || up=0
  fi
  if [ $up -eq 1 ]; then echo "cluster $name: up"; else echo "cluster $name: partly there ('down $name' removes it)"; fi
}

cmd_env() {
  local name=$1 i names=() addrs=()
  valid_name "$name" || die "bad NAME '$name'"
  load_state "$name"
  for ((i = 0; i < nodes; i++)); do names+=("node$i"); addrs+=("$net.$((10 + i))"); done
  cat <<EOF
export SLURM_CONF=$d/slurm.conf
export AFTERMATH_CLUSTER_NAME=$name
export AFTERMATH_CLUSTER_DIR=$d
export AFTERMATH_CLUSTER_HOST_ADDR=$net.1
export AFTERMATH_CLUSTER_HOST_IFNAME=$host_if
export AFTERMATH_CLUSTER_CTL_ADDR=$net.2
export AFTERMATH_CLUSTER_NODES="${names[*]}"
export AFTERMATH_CLUSTER_NODE_ADDRS="${addrs[*]}"
export AFTERMATH_CLUSTER_NODE_IFNAME=eth0
EOF
}

# --- main --------------------------------------------------------------------------

[ $# -ge 1 ] || usage
cmd=$1; shift
case $cmd in
  up)
    [ $# -ge 2 ] || usage
    name=$1 n=$2 base=; shift 2
    while [ $# -gt 0 ]; do
      case $1 in
        --dir) [ $# -ge 2 ] || die "--dir needs a folder"; base=$2; shift 2 ;;
        *) die "up: unknown option '$1'" ;;
      esac
    done
    cmd_up "$name" "$n" "$base" ;;
  down) [ $# -eq 1 ] || usage; cmd_down "$1" ;;
  status) [ $# -le 1 ] || usage; cmd_status "${1:-}" ;;
  env) [ $# -eq 1 ] || usage; cmd_env "$1" ;;
  check) r=$(why_not); [ -z "$r" ] || { echo "$r"; exit 1; } ;;
  -h|--help|help) help ;;
  *) echo "$me: unknown command '$cmd'" >&2; usage ;;
esac
