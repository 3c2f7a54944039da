#!/usr/bin/env bash
# Builds, starts and stops crd-test-apiserver (test/apiserver), the real API server of the
# end-to-end tests, on fixed loopback ports.
#
#   hack/test-apiserver.sh build    go build into _output/bin
#   hack/test-apiserver.sh start    build if needed, start, wait until ready, print the KUBECONFIG path
#   hack/test-apiserver.sh stop     SIGTERM, then SIGKILL after a grace period
#   hack/test-apiserver.sh status   exit 0 if running, 3 if not
#   hack/test-apiserver.sh clean    stop, then remove the server's state (etcd data, certificate, kubeconfig)
#
# start is idempotent: when the server is already running it only waits for it and prints the path,
# so `export KUBECONFIG=$(hack/test-apiserver.sh start)` works. The etcd data survives a stop/start.
#
# Environment: CRD_TEST_APISERVER_PORT (26443), CRD_TEST_ETCD_PORT (22379, and +1 for the etcd peer),
# CRD_TEST_APISERVER_TIMEOUT (seconds to wait for readiness, 120; a first build is not included).
set -o errexit -o nounset -o pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=$root/_output/bin/crd-test-apiserver
state=$root/_output/test-apiserver
pidfile=$state/pid
logfile=$state/apiserver.log
kubeconfig=$state/kubeconfig
port=${CRD_TEST_APISERVER_PORT:-26443}
etcd_port=${CRD_TEST_ETCD_PORT:-22379}
timeout=${CRD_TEST_APISERVER_TIMEOUT:-120}

log() { echo "test-apiserver: $*" >&2; }
die() { log "error: $*"; exit 1; }

build() {
  local go lib
  go=$(command -v go || echo /usr/local/go/bin/go)
  log "building $bin"
  cd "$root/test/apiserver"
  # /version must be a real Kubernetes version (the library's v0.37.x is Kubernetes v1.37.x):
  # the default v0.0.0-master breaks kubectl's version-dispatching wrapper.
  lib=$(GOTOOLCHAIN=local "$go" list -m -f '{{.Version}}' k8s.io/apiextensions-apiserver) ||
    die "cannot read the apiextensions-apiserver version from test/apiserver/go.mod"
  GOTOOLCHAIN=local "$go" build -ldflags "-X k8s.io/component-base/version.gitVersion=v1.${lib#v0.}" \
    -o "$bin" . || die "build failed"
  cd - >/dev/null
  touch "$bin"  # go build leaves an up-to-date binary alone; needs_build compares mtimes
}

# bin_pids: every process running our binary, whoever started it.
bin_pids() {
  local exe
  for exe in /proc/[0-9]*/exe; do
    [[ $(readlink "$exe" 2>/dev/null) == "$bin"* ]] && { exe=${exe#/proc/}; echo "${exe%/exe}"; }
  done
  return 0
}

# The binary is stale when any file of its module is newer (a bare "build if missing" would
# silently test old server code).
needs_build() {
  [[ ! -x $bin ]] || [[ -n $(find "$root/test/apiserver" -newer "$bin" -type f -print -quit) ]]
}

# alive PID: the process exists, is not a zombie (PID 1 in a container may never reap it), and is
# our binary (the pid may have been reused since the pid file was written).
alive() {
  local pid=$1 stat
  stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [[ ${stat%% *} != Z ]] || return 1
  [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$bin"* ]]  # "(deleted)" after a rebuild
}

running_pid() {
  local pid
  [[ -f $pidfile ]] || return 1
  pid=$(<"$pidfile")
  if [[ $pid =~ ^[0-9]+$ ]] && alive "$pid"; then
    echo "$pid"
  else
    rm -f "$pidfile"  # stale
    return 1
  fi
}

ready() {
  [[ $(curl -sk -o /dev/null -w '%{http_code}' --max-time 2 \
    "https://127.0.0.1:$port/readyz?exclude=informer-sync") == 200 ]]
}

start() {
  local pid deadline
  if pid=$(running_pid); then
    log "already running (pid $pid)"
  else
    if needs_build; then build; fi
    for p in "$port" "$etcd_port" "$((etcd_port + 1))"; do
      if ss -Htln "sport = :$p" | grep -q .; then
        die "port $p is already in use (set CRD_TEST_APISERVER_PORT / CRD_TEST_ETCD_PORT):"$'\n'"$(ss -Htlnp "sport = :$p")"
      fi
    done
    mkdir -p "$state"
    rm -f "$kubeconfig"
    # Not detached (no setsid): whoever kills this script's process group, say a CI timeout,
    # takes the server with it. The log redirection also keeps $(...) around start from waiting.
    "$bin" --port="$port" --etcd-port="$etcd_port" --data-dir="$state/data" \
      --kubeconfig-out="$kubeconfig" </dev/null >"$logfile" 2>&1 &
    pid=$!
    echo "$pid" >"$pidfile"
    log "started pid $pid, log $logfile"
  fi

  # informer-sync never turns ready: it waits for informers of the core API, which does not exist.
  deadline=$((SECONDS + timeout))
  until ready; do
    if ! alive "$pid"; then
      rm -f "$pidfile"
      die "the server exited; last lines of $logfile:"$'\n'"$(tail -n 20 "$logfile")"
    fi
    if ((SECONDS >= deadline)); then
      die "not ready after ${timeout}s (pid $pid still running; see $logfile, then: $0 stop)"
    fi
    sleep 0.1
  done
  [[ -f $kubeconfig ]] || die "ready, but $kubeconfig is missing"
  log "ready on https://127.0.0.1:$port"
  echo "$kubeconfig"
}

stop() {
  local pid deadline
  if ! pid=$(running_pid); then
    log "not running"
  else
    kill -TERM "$pid"
    deadline=$((SECONDS + 10))
    while alive "$pid" && ((SECONDS < deadline)); do sleep 0.1; done
    if alive "$pid"; then
      log "pid $pid still running 10s after SIGTERM, sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.5
      ! alive "$pid" || die "pid $pid survived SIGKILL"
    fi
    rm -f "$pidfile"
    log "stopped pid $pid"
  fi
  # Catches servers that lost their pid file (say, started by hand); they are not ours to kill.
  local others
  others=$(bin_pids | tr '\n' ' ')
  [[ -z $others ]] || die "still running from $bin, not started by this script: pids $others"
}

status() {
  local pid
  if pid=$(running_pid); then
    if ready; then
      echo "running, ready (pid $pid, https://127.0.0.1:$port, KUBECONFIG=$kubeconfig)"
    else
      echo "running, NOT ready (pid $pid, https://127.0.0.1:$port, log $logfile)"
    fi
  else
    echo "not running"
    return 3
  fi
}

clean() {
  stop
  rm -rf "$state"
  log "removed $state"
}

case ${1:-} in
  build) build ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  clean) clean ;;
  *) die "usage: $0 build|start|stop|status|clean" ;;
esac
