package strategy

import (
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/crdupgrade"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/schema"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/update"
)

// The interfaces through which the rest of the engine knows this package.
var (
	_ schema.CRDValidator           = Validators{}
	_ crdupgrade.CRDUpdateValidator = Validators{}
	_ prune.CreateValidator         = Validators{}
	_ update.UpdateValidator        = (*Validator)(nil)
	_ update.StatusValidator        = (*Validator)(nil)
)
