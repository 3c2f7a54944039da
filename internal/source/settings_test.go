package source

import (
	"testing"

	"github.com/spf13/pflag"
)

// Validate refuses what cannot go together, in the words of the front end
// that names the settings: the plugin's flags, or the function's fields.
func TestSettingsValidate(t *testing.T) {
	fields := Names{Lock: "lock", Offline: "offline", ClientCert: "sourceClientCertificate", ClientKey: "sourceClientKey"}
	for _, tc := range []struct {
		name string
		args []string // the plugin's flags; nil: s as it is, named by fields
		s    Settings
		want string
	}{
		{name: "lock ''", args: []string{"--lock="}, want: "--lock '': give a file name"},
		{name: "update without lock", args: []string{"--update-lock"}, want: "--update-lock writes the file of --lock: name it (e.g. --lock kubectl-crd.lock)"},
		{name: "update offline", args: []string{"--update-lock", "--lock", "l"}, s: Settings{Offline: true}, want: "--update-lock fetches the sources: it cannot be used with --offline"},
		{name: "key alone", args: []string{"--source-client-key", "k"}, want: "--source-client-key is the key of --source-client-certificate: name the certificate too"},
		{name: "key and certificate", args: []string{"--source-client-key", "k", "--source-client-certificate", "c", "--lock", "l", "--update-lock"}},
		{name: "function: key alone", s: Settings{ClientKey: "k", Names: fields}, want: "sourceClientKey is the key of sourceClientCertificate: name the certificate too"},
		{name: "function: no lock", s: Settings{Offline: true, Names: fields}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			if tc.args != nil {
				offline := s.Offline
				fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
				s.AddFlags(fs)
				if err := fs.Parse(tc.args); err != nil {
					t.Fatal(err)
				}
				s.Offline = offline
			}
			err := s.Validate()
			if got := errString(err); got != tc.want {
				t.Errorf("Validate: %q, want %q", got, tc.want)
			}
		})
	}
}

// The flags bound keep their names and defaults, and the options a
// Fetcher gets are the settings.
func TestSettingsFlags(t *testing.T) {
	var s Settings
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	s.AddFlags(fs)
	args := []string{"--lock", "l", "--update-lock", "--source-certificate-authority", "ca", "--source-insecure-skip-tls-verify",
		"--source-plain-http", "--source-client-certificate", "c", "--source-client-key", "k", "--set", "a=1", "--set", "b=2", "--values", "v.yaml"}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	o := s.Options()
	if !o.Update || o.Offline || o.CAFile != "ca" || !o.Insecure || !o.PlainHTTP || o.ClientCertFile != "c" || o.ClientKeyFile != "k" ||
		len(o.ChartSet) != 2 || o.ChartSet[1] != "b=2" || len(o.ChartValues) != 1 || o.ChartValues[0] != "v.yaml" || o.Dir != DefaultDir() || s.Lock != "l" {
		t.Errorf("Options %+v of %q", o, args)
	}
	for _, name := range []string{"lock", "update-lock", "source-certificate-authority", "source-insecure-skip-tls-verify", "source-plain-http",
		"source-client-certificate", "source-client-key", "set", "values"} {
		f := fs.Lookup(name)
		if f == nil {
			t.Errorf("--%s not registered", name)
			continue
		}
		if want := map[string]string{"update-lock": "false", "source-insecure-skip-tls-verify": "false", "source-plain-http": "false", "set": "[]", "values": "[]"}[name]; f.DefValue != want {
			t.Errorf("--%s: default %q, want %q", name, f.DefValue, want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
