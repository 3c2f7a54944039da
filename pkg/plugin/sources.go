package plugin

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-crd/kubectl-crd/internal/printable"
	"github.com/kubectl-crd/kubectl-crd/internal/source"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
)

// sourceFlags are the flags of the remote schema sources of --crd-file
// and --old (https://, oci://: internal/source, docs/sources.md), bound to
// the settings both front ends share (source.Settings).
type sourceFlags struct {
	source.Settings

	cmd *cobra.Command // for --request-timeout, a flag of the root
}

// AddFlags registers the flags of remote sources, and of Helm chart
// sources (--set, --values).
func (s *sourceFlags) AddFlags(cmd *cobra.Command) {
	s.Settings.AddFlags(cmd.Flags())
	for _, name := range []string{"lock", "source-certificate-authority", "source-client-certificate", "source-client-key", "values"} {
		completeFiles(cmd, name)
	}
	s.cmd = cmd
}

// timeout bounds each fetch and each chart's rendering: --request-timeout
// when it is given, else 0 (source.DefaultTimeout). --request-timeout=0
// lifts the bound of the cluster's requests, not this one: a chart's
// templates are code that must end.
func (s *sourceFlags) timeout() time.Duration {
	if s.cmd == nil {
		return 0
	}
	f := s.cmd.Flag("request-timeout")
	if f == nil || !f.Changed {
		return 0
	}
	d, err := clientcmd.ParseTimeout(f.Value.String())
	if err != nil || d < 0 {
		return 0
	}
	return d
}

// Validate checks the flags of remote sources with the command's
// --offline (source.Settings.Validate): a usage error.
func (s *sourceFlags) Validate(offline bool) error {
	s.Offline = offline
	if err := s.Settings.Validate(); err != nil {
		return inputError(err)
	}
	return nil
}

// fetch fetches the remote sources among names (or reads them from the
// cache, by the lock), and writes the lock with --update-lock; warn is
// told of a cache not trusted.
func (s *sourceFlags) fetch(ctx context.Context, warn func(string), names ...[]string) (*source.Set, error) {
	opts := s.Options()
	opts.MaxBytes, opts.Warn, opts.Timeout = document.MaxDocumentBytes, warn, s.timeout()
	set, err := source.Fetch(ctx, opts, s.Lock, names...)
	if err != nil {
		return nil, sourceError(err)
	}
	return set, nil
}

// sourceError is a source's error with its exit code: 2 for the source's
// or the lock's fault, 3 for the network's.
func sourceError(err error) error {
	var se *source.Error
	if errors.As(err, &se) && !se.Input {
		return &ExitError{Code: ExitInternal, Err: err}
	}
	return inputError(err)
}

// warnOn is a warning's printer on w: a line, "Warning: " first, as
// kubectl prints the server's.
func warnOn(w io.Writer) func(string) {
	return func(msg string) { printable.Fprintf(w, "Warning: %s\n", msg) }
}
