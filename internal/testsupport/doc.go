// Package testsupport holds what the tests and benchmarks share, in
// packages below it: kepimmutable (the examples of KEP "Immutable fields"
// as test cases), corpus (the public corpus of real CRDs and custom
// resources), benchinput (benchmark inputs made from that corpus),
// reportcheck (the CI reports read back, checked as their formats require)
// and mtls (a client certificate and its CA, for the servers of schema
// sources that require one).
//
// They are for tests and benchmarks only (_test.go files, hack/bench and
// test/e2e): no package built into kubectl crd or the KRM function imports
// them, which internal/layering checks.
package testsupport
