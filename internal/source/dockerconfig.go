package source

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kubectl-crd/kubectl-crd/internal/fileread"
)

// The credentials of a registry in the Docker config, as docker (and
// go-containerregistry's default keychain) find them: the file is
// $DOCKER_CONFIG/config.json, else ~/.docker/config.json, else Podman's
// auth.json ($REGISTRY_AUTH_FILE, $XDG_RUNTIME_DIR/containers/auth.json,
// $XDG_CONFIG_HOME or ~/.config's containers/auth.json); a registry's
// credential helper (credHelpers), else the store of all (credsStore),
// else its entry in auths.

// dockerConfig is what the plugin reads of a Docker config file.
type dockerConfig struct {
	Auths       map[string]dockerAuth `json:"auths"`
	CredHelpers map[string]string     `json:"credHelpers"`
	CredsStore  string                `json:"credsStore"`
}

type dockerAuth struct {
	Auth          string `json:"auth"`
	Username      string `json:"username"`
	Password      string `json:"password"`
	IdentityToken string `json:"identitytoken"`
	RegistryToken string `json:"registrytoken"`
}

// dockerHubKey is Docker Hub's key in a Docker config, as docker login
// writes it.
const dockerHubKey = "https://index.docker.io/v1/"

// dockerCredentials are the credentials of ref's repository, else of its
// registry, in the Docker config; none without a config.
func dockerCredentials(ctx context.Context, ref ociRef) (ociCred, error) {
	cf, err := loadDockerConfig()
	if err != nil || cf == nil {
		return ociCred{}, err
	}
	for _, key := range []string{ref.name(), ref.registry} {
		if key == dockerHub {
			key = dockerHubKey
		}
		cred, err := cf.credentials(ctx, key)
		if err != nil || !cred.anonymous() {
			return cred, err
		}
	}
	return ociCred{}, nil
}

// loadDockerConfig is the first Docker config file that exists, nil
// when none does.
func loadDockerConfig() (*dockerConfig, error) {
	var paths []string
	home, _ := os.UserHomeDir()
	if dir := os.Getenv("DOCKER_CONFIG"); dir != "" {
		paths = append(paths, filepath.Join(dir, "config.json"))
	} else if home != "" {
		paths = append(paths, filepath.Join(home, ".docker", "config.json"))
	}
	if f := os.Getenv("REGISTRY_AUTH_FILE"); f != "" {
		paths = append(paths, filepath.Clean(f))
	}
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		paths = append(paths, filepath.Join(dir, "containers", "auth.json"))
	}
	if dir := os.Getenv("XDG_CONFIG_HOME"); dir != "" {
		paths = append(paths, filepath.Join(dir, "containers", "auth.json"))
	} else if home != "" {
		paths = append(paths, filepath.Join(home, ".config", "containers", "auth.json"))
	}
	for _, p := range paths {
		data, err := fileread.Read(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		cf := &dockerConfig{}
		if err := json.Unmarshal(data, cf); err != nil {
			// json's messages quote no content but a bad character.
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		return cf, nil
	}
	return nil, nil
}

// credentials are those of key (a registry's host[:port], Docker Hub's
// URL, or registry/repository).
func (cf *dockerConfig) credentials(ctx context.Context, key string) (ociCred, error) {
	if helper := cf.CredHelpers[key]; helper != "" {
		return credentialHelper(ctx, helper, key)
	}
	if cf.CredsStore != "" {
		return credentialHelper(ctx, cf.CredsStore, key)
	}
	a, ok := cf.Auths[key]
	if !ok {
		// A key written with its scheme or a path (https://host/v1/)
		// is its host's, as docker reads it.
		for k, v := range cf.Auths {
			if dockerHostname(k) == key {
				a, ok = v, true
				break
			}
		}
	}
	if !ok {
		return ociCred{}, nil
	}
	cred := ociCred{user: a.Username, pass: a.Password, identityToken: a.IdentityToken, registryToken: a.RegistryToken}
	if a.Auth != "" {
		raw, err := base64.StdEncoding.DecodeString(a.Auth)
		if err != nil {
			return ociCred{}, fmt.Errorf("the auth of %s: not base64", key)
		}
		user, pass, ok := strings.Cut(string(raw), ":")
		if !ok {
			return ociCred{}, fmt.Errorf("the auth of %s: not user:password", key)
		}
		cred.user, cred.pass = user, strings.Trim(pass, "\x00")
	}
	return cred, nil
}

// dockerHostname is a Docker config key's host: its scheme and path
// removed (docker's ConvertToHostname).
func dockerHostname(key string) string {
	s := strings.TrimPrefix(strings.TrimPrefix(key, "http://"), "https://")
	host, _, _ := strings.Cut(s, "/")
	return host
}

// credentialHelper runs docker-credential-NAME get with the server's
// URL on its input: its answer's Username and Secret, an identity token
// when the Username is "<token>"; none when it has no credentials for
// the server. What the helper prints is never quoted: it may be a
// secret.
func credentialHelper(ctx context.Context, name, server string) (ociCred, error) {
	prog := "docker-credential-" + name
	cmd := exec.CommandContext(ctx, prog, "get")
	cmd.Stdin = strings.NewReader(server)
	var out bytes.Buffer
	cmd.Stdout = &limitedBuffer{b: &out, n: maxTokenBytes}
	err := cmd.Run()
	if err != nil {
		if strings.TrimSpace(out.String()) == "credentials not found in native keychain" {
			return ociCred{}, nil
		}
		return ociCred{}, fmt.Errorf("%s get for %s: %w", prog, server, unwrapExec(err))
	}
	var answer struct {
		Username, Secret string
	}
	if err := json.Unmarshal(out.Bytes(), &answer); err != nil {
		return ociCred{}, fmt.Errorf("%s get for %s: not the JSON of a credential helper", prog, server)
	}
	if answer.Username == "<token>" {
		return ociCred{identityToken: answer.Secret}, nil
	}
	return ociCred{user: answer.Username, pass: answer.Secret}, nil
}

// unwrapExec is err without the command line (which names no secret,
// but says nothing the message does not).
func unwrapExec(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	return err
}

// limitedBuffer keeps the first n bytes written to it, and drops the
// rest: a helper's answer is small.
type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		if len(p) > room {
			l.b.Write(p[:room])
		} else {
			l.b.Write(p)
		}
	}
	return len(p), nil
}
