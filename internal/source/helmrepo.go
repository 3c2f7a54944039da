package source

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/fileread"
)

// helmRepository is an entry of Helm's repository configuration
// (repositories.yaml, as `helm repo add` writes it): what a chart
// repository's source takes from it is the entry of its URL.
type helmRepository struct {
	Name                  string `json:"name"`
	URL                   string `json:"url"`
	Username              string `json:"username"`
	Password              string `json:"password"`
	CertFile              string `json:"certFile"`
	KeyFile               string `json:"keyFile"`
	CAFile                string `json:"caFile"`
	InsecureSkipTLSVerify bool   `json:"insecure_skip_tls_verify"`
	PassCredentialsAll    bool   `json:"pass_credentials_all"`
}

// helmRepositoryConfig is the file Helm keeps its repositories in:
// $HELM_REPOSITORY_CONFIG, else repositories.yaml in Helm's configuration
// directory ($HELM_CONFIG_HOME, else $XDG_CONFIG_HOME/helm, else the
// platform's: ~/.config/helm, ~/Library/Preferences/helm on macOS,
// %APPDATA%\helm on Windows). "" when there is no such directory.
func helmRepositoryConfig() string {
	if f := os.Getenv("HELM_REPOSITORY_CONFIG"); f != "" {
		return f
	}
	dir := os.Getenv("HELM_CONFIG_HOME")
	if dir == "" {
		if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
			dir = filepath.Join(x, "helm")
		} else if home, err := os.UserHomeDir(); err == nil && runtime.GOOS == "darwin" {
			dir = filepath.Join(home, "Library", "Preferences", "helm")
		} else if config, err := os.UserConfigDir(); err == nil {
			dir = filepath.Join(config, "helm")
		}
	}
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "repositories.yaml")
}

// findHelmRepository is the entry of Helm's repository configuration for
// the repository at repo (its URL without credentials), nil when there is
// none or no configuration; an error for a configuration that cannot be
// read, naming it.
func findHelmRepository(repo *url.URL) (*helmRepository, error) {
	file := helmRepositoryConfig()
	if file == "" {
		return nil, nil
	}
	data, err := fileread.Read(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("Helm's repository configuration: %w", err)
	}
	var config struct {
		Repositories []helmRepository `json:"repositories"`
	}
	if err := yaml.Unmarshal(data, &config); err != nil {
		return nil, fmt.Errorf("Helm's repository configuration %s: %w", file, err)
	}
	bare := *repo
	bare.User = nil
	want := strings.TrimSuffix(bare.String(), "/")
	for i, r := range config.Repositories {
		if strings.TrimSuffix(r.URL, "/") == want {
			return &config.Repositories[i], nil
		}
	}
	return nil, nil
}

// repoClient is the client for a chart repository and the credentials of
// its requests: those of the source's URL (urlUser), else of Helm's
// repository configuration, whose entry also brings the repository's
// certificate authority, client certificate and insecure_skip_tls_verify
// (beside the flags'), and whether the credentials go to archives of
// other https origins (pass_credentials_all). Credentials and the client
// certificate go to the repository's origin alone (origin.go).
func (f *Fetcher) repoClient(repo *url.URL, urlUser *url.Userinfo) (c *client, user *url.Userinfo, passAll bool, err error) {
	r, err := findHelmRepository(repo)
	if err != nil || r == nil {
		return f.client, urlUser, false, err
	}
	user = urlUser
	if user == nil && r.Username != "" {
		user = url.UserPassword(r.Username, r.Password)
	}
	if r.CAFile == "" && r.CertFile == "" && !r.InsecureSkipTLSVerify {
		return f.client, user, r.PassCredentialsAll, nil
	}
	opts := f.opts
	opts.Insecure = opts.Insecure || r.InsecureSkipTLSVerify
	if r.CAFile != "" {
		opts.CAFile = r.CAFile
	}
	if r.CertFile != "" {
		opts.ClientCertFile, opts.ClientKeyFile = r.CertFile, r.KeyFile
	}
	c, err = newClient(opts)
	if err != nil {
		return nil, nil, false, fmt.Errorf("Helm's repository configuration of %s: %w", r.Name, err)
	}
	return c, user, r.PassCredentialsAll, nil
}
