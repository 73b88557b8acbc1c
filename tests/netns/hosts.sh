# hosts.sh: "hosts" made of network namespaces, for Shoal jobs spanning
# hosts. Source it from bash:
#
#   . tests/netns/hosts.sh
#   hosts_require            # exits 77 with one line when it cannot work
#   hosts_up 2               # hosts 0 and 1; tears down on exit or failure
#   hosts_run 1 prog args    # runs prog inside host 1 (see below)
#   hosts_down               # optional: the EXIT trap does it too
#
# Layout: one namespace per host (shoal-<pid>-<rand>-hN) and one for the
# switch (shoal-<pid>-<rand>-sw) holding a bridge "br0". Host N is joined to
# the bridge by a veth pair: "shoal0" inside the host, "hN" on the bridge.
# Host N has address 10.X.Y.(N+1)/24 on shoal0 (X, Y from the pid), lo up,
# and no default route: nothing leaves the namespaces. Every link is
# created directly inside its namespace (ip -n), so no name ever appears in
# the caller's namespace and nothing touches the host's own interfaces.
#
# hosts_run N CMD...   runs CMD inside host N, with its own hostname
#   (shoal-hN, in a private UTS namespace) and with FI_TCP_IFACE=shoal0 and
#   FI_PROVIDER='tcp;ofi_rxm' (an FI_PROVIDER already set is kept). The
#   process that runs CMD is the one started (ip, unshare, env and sh
#   exec), so the caller's wait gets CMD's exit status.
# hosts_spawn N CMD... the same in the background; HOSTS_PID is CMD's pid
#   (signals sent to it reach CMD itself).
# hosts_ns N           the namespace name of host N
# hosts_addr N         host N's address (no prefix length)
# hosts_iface          the interface inside each host: shoal0
# hosts_pids N         pids of every process inside host N
# hosts_on_exit CMD    runs CMD (a string, eval'd) at exit, after the
#                      namespaces are gone; for the caller's own cleanup
#                      (hosts.sh owns the EXIT trap: do not set another)
# hosts_down           kills every process left in the namespaces (SIGKILL),
#                      deletes them; safe to call twice
#
# Needs bash, root (or CAP_NET_ADMIN with CAP_SYS_ADMIN), iproute2 with
# "ip netns", and veth + bridge support in the kernel.

HOSTS_IFACE=shoal0
HOSTS_N=0
HOSTS_PREFIX=
HOSTS_SUBNET=
HOSTS_CLEANUP=
HOSTS_UP=0

hosts_skip() { echo "SKIP: $*"; exit 77; }

hosts_require() {
    [ -n "${BASH_VERSION:-}" ] || { echo "SKIP: hosts.sh needs bash"; exit 77; }
    command -v ip >/dev/null 2>&1 || hosts_skip "no ip command (iproute2 is not installed)"
    command -v unshare >/dev/null 2>&1 || hosts_skip "no unshare command (util-linux)"
    if [ "$(id -u)" != 0 ]; then
        # Not root: CAP_NET_ADMIN and CAP_SYS_ADMIN (mount for ip netns) both needed.
        local eff
        eff=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status 2>/dev/null)
        if [ -z "$eff" ] || [ $(( (0x$eff >> 12) & 1 )) = 0 ] || [ $(( (0x$eff >> 21) & 1 )) = 0 ]; then
            hosts_skip "network namespaces need root (or CAP_NET_ADMIN and CAP_SYS_ADMIN); running as uid $(id -u)"
        fi
    fi
    ip netns list >/dev/null 2>&1 || hosts_skip "ip netns does not work here: $(ip netns list 2>&1 | head -n1)"
}

hosts_ns() { echo "$HOSTS_PREFIX-h$1"; }
hosts_addr() { echo "$HOSTS_SUBNET.$(($1 + 1))"; }
hosts_iface() { echo "$HOSTS_IFACE"; }
hosts_on_exit() {
    HOSTS_CLEANUP="$HOSTS_CLEANUP
$1"
    trap hosts_exit_trap EXIT
    trap 'exit 1' INT TERM HUP
}
# The EXIT trap: the namespaces first (their processes killed), then the
# caller's cleanup.
hosts_exit_trap() {
    hosts_down
    if [ -n "$HOSTS_CLEANUP" ]; then eval "$HOSTS_CLEANUP"; fi
    HOSTS_CLEANUP=
}

hosts_pids() { ip netns pids "$(hosts_ns "$1")" 2>/dev/null; }

hosts_run() {
    local n=$1
    shift
    ip netns exec "$(hosts_ns "$n")" unshare --uts \
        env FI_TCP_IFACE="$HOSTS_IFACE" FI_PROVIDER="${FI_PROVIDER:-tcp;ofi_rxm}" \
        SHOAL_NETNS_HOST="$n" SHOAL_NETNS_HOSTNAME="shoal-h$n" \
        sh -c 'hostname "$SHOAL_NETNS_HOSTNAME" && exec "$@"' sh "$@"
}

# hosts_spawn N CMD...: hosts_run in the background; HOSTS_PID is CMD's
# pid (the subshell execs ip, which execs unshare, env, sh and CMD).
hosts_spawn() {
    local n=$1
    shift
    (
        exec ip netns exec "$(hosts_ns "$n")" unshare --uts \
            env FI_TCP_IFACE="$HOSTS_IFACE" FI_PROVIDER="${FI_PROVIDER:-tcp;ofi_rxm}" \
            SHOAL_NETNS_HOST="$n" SHOAL_NETNS_HOSTNAME="shoal-h$n" \
            sh -c 'hostname "$SHOAL_NETNS_HOSTNAME" && exec "$@"' sh "$@"
    ) &
    HOSTS_PID=$!
}

# hosts_up H: creates H hosts (1..32) on one bridge. On failure: tears down
# what exists and exits 77 when the kernel or tools refuse (not a Shoal
# failure), with one line saying which step failed.
hosts_up() {
    local h=$1 i ns sw err
    case $h in [1-9] | [12][0-9] | 3[0-2]) ;; *) echo "hosts_up: 1 to 32 hosts, not '$h'" >&2; exit 1 ;; esac
    HOSTS_PREFIX="shoal-$$-$RANDOM"
    HOSTS_SUBNET="10.$((100 + $$ % 100)).$(($$ / 100 % 250))"
    HOSTS_N=$h
    HOSTS_UP=1
    trap hosts_exit_trap EXIT
    trap 'exit 1' INT TERM HUP
    sw="$HOSTS_PREFIX-sw"
    err=$(ip netns add "$sw" 2>&1) || { hosts_down; hosts_skip "cannot create a network namespace: $err"; }
    err=$( { ip -n "$sw" link set lo up &&
             ip -n "$sw" link add br0 type bridge &&
             ip -n "$sw" link set br0 up; } 2>&1) ||
        { hosts_down; hosts_skip "cannot create a bridge in a namespace: $err"; }
    for ((i = 0; i < h; i++)); do
        ns=$(hosts_ns "$i")
        err=$( { ip netns add "$ns" &&
                 ip -n "$sw" link add "h$i" type veth peer name "$HOSTS_IFACE" netns "$ns" &&
                 ip -n "$sw" link set "h$i" master br0 &&
                 ip -n "$sw" link set "h$i" up &&
                 ip -n "$ns" link set lo up &&
                 ip -n "$ns" addr add "$(hosts_addr "$i")/24" dev "$HOSTS_IFACE" &&
                 ip -n "$ns" link set "$HOSTS_IFACE" up; } 2>&1) ||
            { hosts_down; hosts_skip "cannot set up host $i (veth, address): $err"; }
    done
    # Wait until every link is up and every bridge port forwards (no STP:
    # at once, but the carrier takes a moment).
    local tries=0 ok
    while :; do
        ok=1
        for ((i = 0; i < h; i++)); do
            ip -n "$(hosts_ns "$i")" -o link show "$HOSTS_IFACE" 2>/dev/null | grep -q 'state UP' || ok=0
            bridge -n "$sw" link show dev "h$i" 2>/dev/null | grep -q 'state forwarding' || ok=0
        done
        [ $ok = 1 ] && break
        tries=$((tries + 1))
        if [ $tries -ge 50 ]; then
            echo "hosts_up: links not up after 5 s: $(ip -n "$sw" -br link 2>&1 | tr '\n' ';')" >&2
            hosts_down
            exit 1
        fi
        sleep 0.1
    done
}

hosts_down() {
    [ "$HOSTS_UP" = 1 ] || return 0
    HOSTS_UP=0
    local i ns p left tries
    for ((i = 0; i < HOSTS_N; i++)); do
        for p in $(hosts_pids "$i"); do kill -KILL "$p" 2>/dev/null; done
    done
    # A namespace with a process still inside outlives "ip netns del"; wait
    # for the killed ones to go (at most 5 s) so that nothing is left.
    for ((tries = 0; tries < 50; tries++)); do
        left=
        for ((i = 0; i < HOSTS_N; i++)); do left="$left$(hosts_pids "$i")"; done
        [ -z "$left" ] && break
        sleep 0.1
    done
    [ -n "$left" ] && echo "hosts_down: processes still inside the namespaces: $left" >&2
    for ((i = 0; i < HOSTS_N; i++)); do
        ns=$(hosts_ns "$i")
        ip netns del "$ns" 2>/dev/null
    done
    ip netns del "$HOSTS_PREFIX-sw" 2>/dev/null
    if ip netns list 2>/dev/null | grep -q "^$HOSTS_PREFIX-"; then
        echo "hosts_down: namespaces left: $(ip netns list | grep "^$HOSTS_PREFIX-" | tr '\n' ' ')" >&2
    fi
    return 0
}
