package plugin

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-crd/kubectl-crd/internal/printable"
	"github.com/kubectl-crd/kubectl-crd/internal/source"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
)

// sourceFlags are the flags of the remote schema sources of --crd-file
// and --old (https://, oci://: internal/source, docs/sources.md).
type sourceFlags struct {
	Lock       string
	UpdateLock bool
	CAFile     string
	Insecure   bool
	PlainHTTP  bool
	ClientCert string
	ClientKey  string

	// Chart are the values of Helm chart sources.
	Chart chartValues

	flags *pflag.FlagSet // the command's: was --lock given?
	cmd   *cobra.Command // for --request-timeout, a flag of the root
}

// AddFlags registers the flags of remote sources.
func (s *sourceFlags) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&s.Lock, "lock", "", "a lock file (kubectl-crd.lock) pinning the remote sources of --crd-file and --old by digest: a source that changed is an error")
	cmd.Flags().BoolVar(&s.UpdateLock, "update-lock", false, "fetch the remote sources anew and write their digests to the --lock file")
	cmd.Flags().StringVar(&s.CAFile, "source-certificate-authority", "", "a PEM file of certificates trusted for https sources, beside the system's")
	cmd.Flags().BoolVar(&s.Insecure, "source-insecure-skip-tls-verify", false, "do not verify the certificates of https sources (insecure)")
	cmd.Flags().BoolVar(&s.PlainHTTP, "source-plain-http", false, "reach oci:// registries without TLS (one on loopback always is), and follow plain http on loopback from https (a redirect, a chart's archive)")
	cmd.Flags().StringVar(&s.ClientCert, "source-client-certificate", "", "a PEM client certificate for https sources and oci:// registries that ask for one (mutual TLS)")
	cmd.Flags().StringVar(&s.ClientKey, "source-client-key", "", "the PEM key of --source-client-certificate (default: its own file, which then holds both)")
	completeFiles(cmd, "lock")
	completeFiles(cmd, "source-certificate-authority")
	completeFiles(cmd, "source-client-certificate")
	completeFiles(cmd, "source-client-key")
	s.Chart.AddFlags(cmd)
	s.flags = cmd.Flags()
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

// Validate checks the flags of remote sources with --offline.
func (s *sourceFlags) Validate(offline bool) error {
	switch {
	case s.Lock == "" && s.flags != nil && s.flags.Changed("lock"):
		// Else the run would go on without pins, as if --lock were not given.
		return usageErrorf("--lock '': give a file name")
	case s.UpdateLock && s.Lock == "":
		return usageErrorf("--update-lock writes the file of --lock: name it (e.g. --lock kubectl-crd.lock)")
	case s.ClientKey != "" && s.ClientCert == "":
		return usageErrorf("--source-client-key is the key of --source-client-certificate: name the certificate too")
	case s.UpdateLock && offline:
		return usageErrorf("--update-lock fetches the sources: it cannot be used with --offline")
	}
	return nil
}

// fetch fetches the remote sources among names (or reads them from the
// cache, by the lock), and writes the lock with --update-lock; warn is
// told of a cache not trusted.
func (s *sourceFlags) fetch(ctx context.Context, offline bool, warn func(string), names ...[]string) (*source.Set, error) {
	set, err := source.Fetch(ctx, source.Options{Dir: source.DefaultDir(), Update: s.UpdateLock, Offline: offline,
		CAFile: s.CAFile, Insecure: s.Insecure, PlainHTTP: s.PlainHTTP, ClientCertFile: s.ClientCert, ClientKeyFile: s.ClientKey,
		MaxBytes: document.MaxDocumentBytes, ChartSet: s.Chart.Set, ChartValues: s.Chart.Values, Warn: warn, Timeout: s.timeout()}, s.Lock, names...)
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
