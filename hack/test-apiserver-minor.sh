#!/usr/bin/env bash
# Builds crd-test-apiserver (test/apiserver) at the k8s.io modules of an older Kubernetes minor: the
# real API server of that minor, for the version parity test (test/e2e TestVersionParity, run by
# .ci/run's version parity target only). The server of the newest minor is hack/test-apiserver.sh's.
#
#   hack/test-apiserver-minor.sh 1.31 [1.32 ...]   go build into _output/bin/crd-test-apiserver-1.31 ...
#   hack/test-apiserver-minor.sh all               every minor of test/apiserver/minors
#
# The same source is built with test/apiserver/minors/go.1.N.mod as its go.mod (go build -modfile):
# that minor's newest patch of the k8s.io modules and the etcd its k8s.io/apiserver requires. The
# binary reports the Kubernetes version of the modules (/version: v1.31.14 for v0.31.14), as
# hack/test-apiserver.sh stamps its own. It is built with the tag k8s_1_N (k8s_1_31): the files of
# test/apiserver where the upstream API of older minors differs say which minors they are for. A binary newer than every file of test/apiserver is left
# alone, as hack/test-apiserver.sh leaves its own: each minor is a build of its own k8s.io modules,
# minutes of CPU cold, and go build would check them all again.
set -o errexit -o nounset -o pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mods=$root/test/apiserver/minors

log() { echo "test-apiserver-minor: $*" >&2; }
die() { log "error: $*"; exit 1; }

build() {
  local minor=$1 go modfile lib bin
  go=$(command -v go || echo /usr/local/go/bin/go)
  modfile=$mods/go.$minor.mod
  [[ -f $modfile ]] || die "no $modfile: the minors built are $(cd "$mods" && ls go.*.mod | sed 's/^go\.//; s/\.mod$//' | tr '\n' ' ')"
  bin=$root/_output/bin/crd-test-apiserver-$minor
  if [[ -x $bin ]] && [[ -z $(find "$root/test/apiserver" "${BASH_SOURCE[0]}" -newer "$bin" -type f -print -quit) ]]; then
    log "$bin is up to date"
    return
  fi
  cd "$root/test/apiserver"
  lib=$(GOTOOLCHAIN=local "$go" list -modfile="$modfile" -m -f '{{.Version}}' k8s.io/apiextensions-apiserver) ||
    die "cannot read the apiextensions-apiserver version from $modfile"
  [[ v1.${lib#v0.} == "v$minor."* ]] || die "$modfile has apiextensions-apiserver $lib, not Kubernetes $minor"
  log "building $bin (k8s.io modules $lib)"
  GOTOOLCHAIN=local "$go" build -modfile="$modfile" -tags "k8s_${minor/./_}" \
    -ldflags "-X k8s.io/component-base/version.gitVersion=v1.${lib#v0.}" -o "$bin" . || die "build of $minor failed"
  cd - >/dev/null
  touch "$bin"  # go build leaves an up-to-date binary alone
}

(($# > 0)) || die "usage: $0 1.N ... | all"
if [[ $1 == all ]]; then
  set -- $(cd "$mods" && ls go.*.mod | sed 's/^go\.//; s/\.mod$//')
fi
for m in "$@"; do build "$m"; done
