package source

import (
	"fmt"

	"github.com/spf13/pflag"
)

// Settings are what a user says of the remote sources of a run: the lock,
// offline, TLS, and the values of Helm charts. One type for both front
// ends, as Helm's action configurations are: the plugin binds its flags to
// it (AddFlags), the KRM function maps its config's fields into it, in
// one place; both validate it here (Validate) and fetch with its Options.
type Settings struct {
	// Lock is the lock file (kubectl-crd.lock); UpdateLock writes it
	// (the plugin's --update-lock).
	Lock       string
	UpdateLock bool
	// Offline fetches nothing: the sources come from the cache.
	Offline bool
	// CAFile, Insecure, PlainHTTP, ClientCert and ClientKey are
	// Options.CAFile, Insecure, PlainHTTP, ClientCertFile and
	// ClientKeyFile.
	CAFile                string
	Insecure, PlainHTTP   bool
	ClientCert, ClientKey string
	// ChartSet and ChartValues are Options.ChartSet and ChartValues.
	ChartSet, ChartValues []string

	// Names name the settings in Validate's messages: FlagNames when
	// not set.
	Names Names
	// flags are the flags bound (AddFlags): was --lock given?
	flags *pflag.FlagSet
}

// Names are how a front end names the settings that Validate's messages
// name: the plugin's flags, the function's config fields.
type Names struct {
	Lock, UpdateLock, Offline, ClientCert, ClientKey string
}

// FlagNames are the plugin's flags.
var FlagNames = Names{Lock: "--lock", UpdateLock: "--update-lock", Offline: "--offline",
	ClientCert: "--source-client-certificate", ClientKey: "--source-client-key"}

// AddFlags binds the plugin's flags of remote sources to s, with their
// help and defaults (--offline is the command's own: it also keeps the
// cluster away).
func (s *Settings) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&s.Lock, "lock", "", "a lock file (kubectl-crd.lock) pinning the remote sources of --crd-file and --old (and the charts of check-update's -f) by digest: a source that changed is an error")
	fs.BoolVar(&s.UpdateLock, "update-lock", false, "fetch the remote sources anew and write their digests to the --lock file")
	fs.StringVar(&s.CAFile, "source-certificate-authority", "", "a PEM file of certificates trusted for https sources, beside the system's")
	fs.BoolVar(&s.Insecure, "source-insecure-skip-tls-verify", false, "do not verify the certificates of https sources (insecure)")
	fs.BoolVar(&s.PlainHTTP, "source-plain-http", false, "reach oci:// registries without TLS (one on loopback always is), and follow plain http on loopback from https (a redirect, a chart's archive)")
	fs.StringVar(&s.ClientCert, "source-client-certificate", "", "a PEM client certificate for https sources and oci:// registries that ask for one (mutual TLS)")
	fs.StringVar(&s.ClientKey, "source-client-key", "", "the PEM key of --source-client-certificate (default: its own file, which then holds both)")
	fs.StringArrayVar(&s.ChartSet, "set", nil, "a value of every Helm chart source of --crd-file and --old (and of check-update's -f), as helm's --set (key=value; repeatable), e.g. --set crds.enabled=true")
	fs.StringArrayVar(&s.ChartValues, "values", nil, "a values file of every Helm chart source of --crd-file and --old (and of check-update's -f), as helm's --values (repeatable; --set after them)")
	s.Names, s.flags = FlagNames, fs
}

// Validate refuses settings that cannot go together, naming them by
// s.Names: a lock named "" (the run would go on without pins, as if none
// were given), a lock to update without its file, or with Offline, and a
// client key without its certificate.
func (s *Settings) Validate() error {
	n := s.Names
	if n == (Names{}) {
		n = FlagNames
	}
	switch {
	case s.Lock == "" && s.flags != nil && s.flags.Changed("lock"):
		return fmt.Errorf("%s '': give a file name", n.Lock)
	case s.UpdateLock && s.Lock == "":
		return fmt.Errorf("%s writes the file of %s: name it (e.g. %[2]s kubectl-crd.lock)", n.UpdateLock, n.Lock)
	case s.ClientKey != "" && s.ClientCert == "":
		return fmt.Errorf("%s is the key of %s: name the certificate too", n.ClientKey, n.ClientCert)
	case s.UpdateLock && s.Offline:
		return fmt.Errorf("%s fetches the sources: it cannot be used with %s", n.UpdateLock, n.Offline)
	}
	return nil
}

// Options are the options of a Fetcher as s sets them: the cache is
// DefaultDir; the bounds, the warnings and the chart's root are the
// front end's to add.
func (s *Settings) Options() Options {
	return Options{Dir: DefaultDir(), Update: s.UpdateLock, Offline: s.Offline,
		CAFile: s.CAFile, Insecure: s.Insecure, PlainHTTP: s.PlainHTTP, ClientCertFile: s.ClientCert, ClientKeyFile: s.ClientKey,
		ChartSet: s.ChartSet, ChartValues: s.ChartValues}
}
