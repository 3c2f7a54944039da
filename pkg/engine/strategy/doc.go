// Package strategy runs the API server's registry strategies: the code
// k8s.io/apiextensions-apiserver runs on every write of a
// CustomResourceDefinition and of a custom resource (validation with
// ratcheting, CEL rules with transition rules, metadata, list types,
// scale).
//
// That code lives in the server's registry packages, which bring client-go
// and etcd with them (over 1,000 packages). This is the one engine package
// that imports them: the rest of the engine knows the server's validation
// through small interfaces (schema.CRDValidator, prune.CreateValidator,
// update.UpdateValidator), and the front ends pass Validators in.
package strategy
