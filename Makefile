# make dist: the release in dist/, an archive per platform, SHA256SUMS and the krew manifest crd.yaml
# (see docs/release.md). VERSION=v1.2.3 sets the version; by default it comes from git describe.
# PLATFORMS=linux/amd64 builds fewer platforms (then without the manifest, which names them all).
GO ?= go
VERSION ?=
PLATFORMS ?=

.PHONY: dist clean
dist:
	rm -rf dist
	GOTOOLCHAIN=local $(GO) run ./hack/dist -out dist $(if $(VERSION),-version $(VERSION)) $(if $(PLATFORMS),-platforms $(PLATFORMS))

clean:
	rm -rf dist
