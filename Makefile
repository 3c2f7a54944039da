# make dist: the release in dist/, an archive per platform, the image of the KRM function (an OCI
# layout tarball of the linux builds), SHA256SUMS and the krew manifest crd.yaml (see
# docs/release.md). VERSION=v1.2.3 sets the version; by default it comes from git describe.
# PLATFORMS=linux/amd64 builds fewer platforms (then without the manifest, which names them all).
# make test-dist: the tests of hack/dist on all six platforms (go test ./hack/dist builds no release
# and runs the tests that read none): the program run twice, its archives, image, SHA256SUMS and manifest
# checked, the two runs byte-identical, the GitHub Action run against them. CI's release step.
# make test-versions: the version parity test (test/e2e TestVersionParity): the real test API server
# of each minor 1.31 to 1.37 (hack/test-apiserver-minor.sh) against the engine emulating that minor,
# on our cases and the corpus's CRDs and samples, the tables of agreement in _output/versions-parity*.md;
# VERSIONS=1.31,1.37 runs those minors only (CI's version parity step runs 1.31 and 1.37).
# make test-corpus: the unit tests' sweeps of the corpus over every file (the README's test command
# reads a sample: every set, a file in four). CI's corpus step.
# make test-matrix: the end-to-end sweeps against the real server (every CRD and sample of the corpus,
# and the rest of the tests the README's test command samples). CI's matrix step.
GO ?= go
VERSION ?=
PLATFORMS ?=

.PHONY: dist test-dist test-versions test-corpus test-matrix clean
dist:
	rm -rf dist
	GOTOOLCHAIN=local $(GO) run ./hack/dist -out dist $(if $(VERSION),-version $(VERSION)) $(if $(PLATFORMS),-platforms $(PLATFORMS))

test-dist:
	GOTOOLCHAIN=local $(GO) test -count=1 -timeout 60m ./hack/dist -all-platforms

VERSIONS ?= 1
test-versions:
	KUBECTL_CRD_E2E_VERSIONS=$(VERSIONS) GOTOOLCHAIN=local $(GO) test -count=1 -v -timeout 80m -run '^(TestVersionParity|TestVersionParityCorpus)$$' ./test/e2e

test-corpus:
	KUBECTL_CRD_CORPUS_ALL=1 GOTOOLCHAIN=local $(GO) test -count=1 -timeout 30m -run '^(TestCorpus|TestDecodedLikeConverted|TestRefusalIsFromObjects|TestEncodedLikeDecoded|TestCacheCorpus|TestParseCorpus)$$' ./pkg/engine/prune ./pkg/engine/schema ./pkg/engine/crdindex ./pkg/engine/document ./pkg/engine/holes

test-matrix:
	KUBECTL_CRD_E2E_MATRIX=1 GOTOOLCHAIN=local $(GO) test -count=1 -timeout 60m -run 'Corpus|ServerParity|Sweep' ./test/e2e

clean:
	rm -rf dist
