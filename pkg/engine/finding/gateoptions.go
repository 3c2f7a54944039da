package finding

// GateOptions are what a run says of what fails it, in both front ends:
// the plugin's --fail-on, --fail-on-prune and --ignore-missing-crds, the
// KRM function's failOn and ignoreMissingCRDs. Each front end binds its
// flags or config to it, and the gate is made once, by Gate.
type GateOptions struct {
	// FailOn names the checks whose findings fail the run: nil for
	// DefaultFailOn, empty for none.
	FailOn []string
	// FailOnPrune adds Prune (the plugin's --fail-on-prune).
	FailOnPrune bool
	// IgnoreMissingCRDs leaves MissingCRD out, whatever FailOn says: for
	// repositories that check only some of their kinds.
	IgnoreMissingCRDs bool
}

// Gate is the gate of o. An unknown name in FailOn is an error that lists
// the known ones (Validate).
func (o GateOptions) Gate() (Gate, error) {
	g, err := NewGate(o.FailOn, o.IgnoreMissingCRDs)
	if err != nil {
		return Gate{}, err
	}
	if o.FailOnPrune {
		g = g.With(Prune)
	}
	return g, nil
}

// Validate refuses an unknown name in FailOn, before anything is read.
func (o GateOptions) Validate() error {
	_, err := o.Gate()
	return err
}
