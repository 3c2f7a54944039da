package plugin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"time"

	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/pkg/apis/clientauthentication"
	"k8s.io/client-go/pkg/apis/clientauthentication/install"
	clientauthenticationv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
	clientauthenticationv1beta1 "k8s.io/client-go/pkg/apis/clientauthentication/v1beta1"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"
)

// A credential plugin (a kubeconfig user's exec) runs here, not in
// client-go: client-go's exec authenticator (plugin/pkg/client/auth/exec,
// refreshCredsLocked, as of v0.37) runs it with exec.Command and Cmd.Run,
// which no deadline, no request context and no signal reaches (its
// command, stdin and stderr are unexported fields, and no option bounds
// it), so a plugin that never exits hangs every command whatever
// --request-timeout says, and it hands the plugin our stderr, where
// whatever it prints (tokens included) lands in CI logs. This runs it as
// client-go does (the same KUBERNETES_EXEC_INFO, arguments, environment and
// answer), once per run, but stopped after --request-timeout with its whole
// process group, its stdout bounded, and its stderr shown only from -v=1 on
// (at a terminal, where it may ask for a password, it has the terminal, as
// with kubectl). Its credentials then go in the rest.Config as a token or a
// client certificate. Not done: running it again when they expire or on a
// 401 (a run is short), and the plugin allowlist of kubectl's kuberc, which
// kubectl crd does not read. TestCredentialsAsClientGo runs both on the
// same config: the plugin sees the same arguments, environment and
// ExecCredential, the server gets the same token, and both fail alike.

// execInfoEnv is where a credential plugin finds its ExecCredential.
const execInfoEnv = "KUBERNETES_EXEC_INFO"

// maxCredentialOutput bounds what a credential plugin may write on stdout:
// an ExecCredential is a token or a certificate and its key, a few KiB.
const maxCredentialOutput = 4 << 20

// credentialCodecs read and write the ExecCredential versions, made on first
// use: most runs start no credential plugin.
var credentialCodecs = sync.OnceValue(func() serializer.CodecFactory {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	return serializer.NewCodecFactory(scheme)
})

// credentialVersions are the ExecCredential versions client-go accepts.
var credentialVersions = map[string]runtimeschema.GroupVersion{
	clientauthenticationv1beta1.SchemeGroupVersion.String(): clientauthenticationv1beta1.SchemeGroupVersion,
	clientauthenticationv1.SchemeGroupVersion.String():      clientauthenticationv1.SchemeGroupVersion,
}

// credentialError is a credential plugin's failure: every request of the run
// fails with it, and apiError says it as it is.
type credentialError struct{ err error }

func (e *credentialError) Error() string { return e.err.Error() }
func (e *credentialError) Unwrap() error { return e.err }

// credentials runs a config's credential plugin once and hands every config
// of the run its result.
type credentials struct {
	// context is the run's (nil, or nil from it: context.Background): a
	// signal stops the plugin, in its own process group, which the
	// terminal's ^C does not reach.
	context func() context.Context
	once    sync.Once
	token   string
	cert    []byte
	key     []byte
	err     error
}

// apply replaces c's credential plugin by its credentials, running it on
// the first call. When it fails, every request with c fails with the
// plugin's error. As in client-go, a token, a password or a client
// certificate of the kubeconfig wins, and the plugin does not run.
func (cr *credentials) apply(c *rest.Config) *rest.Config {
	if c.ExecProvider == nil {
		return c
	}
	exec := c.ExecProvider
	// The cluster as client-go gives it to the plugin (provideClusterInfo),
	// while c has its ExecProvider (ConfigToExecCluster reads its config).
	cluster, clusterErr := rest.ConfigToExecCluster(c)
	c.ExecProvider = nil
	if c.BearerToken != "" || c.BearerTokenFile != "" || c.Username != "" || c.Password != "" ||
		(len(c.CertData) > 0 || c.CertFile != "") && (len(c.KeyData) > 0 || c.KeyFile != "") {
		return c
	}
	cr.once.Do(func() {
		if cr.err = clusterErr; cr.err == nil {
			cr.err = cr.run(exec, cluster, c.Timeout)
		}
	})
	if cr.err != nil {
		err := &credentialError{cr.err}
		c.Wrap(func(http.RoundTripper) http.RoundTripper { return failingTransport{err} })
		return c
	}
	c.BearerToken = cr.token
	c.CertData, c.KeyData = cr.cert, cr.key
	return c
}

// failingTransport fails every request with err.
type failingTransport struct{ err error }

func (f failingTransport) RoundTrip(*http.Request) (*http.Response, error) { return nil, f.err }

// run runs the plugin, bounded by timeout (0: no limit), with the
// cluster's information when the kubeconfig asks for it.
func (cr *credentials) run(conf *clientcmdapi.ExecConfig, cluster *clientauthentication.Cluster, timeout time.Duration) error {
	name := conf.Command
	gv, ok := credentialVersions[conf.APIVersion]
	if !ok {
		return fmt.Errorf("the credential plugin %s: the kubeconfig's apiVersion %q is not one client-go knows (%s or %s)",
			name, conf.APIVersion, clientauthenticationv1.SchemeGroupVersion, clientauthenticationv1beta1.SchemeGroupVersion)
	}
	interactive, err := pluginInteractive(conf)
	if err != nil {
		return fmt.Errorf("the credential plugin %s: %w", name, err)
	}
	input := &clientauthentication.ExecCredential{Spec: clientauthentication.ExecCredentialSpec{Interactive: interactive}}
	if conf.ProvideClusterInfo {
		input.Spec.Cluster = cluster
	}
	info, err := runtime.Encode(credentialCodecs().LegacyCodec(gv), input)
	if err != nil {
		return fmt.Errorf("the credential plugin %s: %w", name, err)
	}

	ctx := context.Background()
	if cr.context != nil && cr.context() != nil {
		ctx = cr.context()
	}
	ctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	cmd := exec.CommandContext(ctx, name, conf.Args...)
	// The kubeconfig's variables, then ours: KUBERNETES_EXEC_INFO is
	// client-go's whatever they say (the last of a name wins).
	cmd.Env = os.Environ()
	for _, e := range conf.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	cmd.Env = append(cmd.Env, execInfoEnv+"="+string(info))
	stdout := &boundedBuffer{max: maxCredentialOutput, full: cancel}
	cmd.Stdout = stdout
	var stderr *lineLogger
	if interactive {
		// It may ask for a password: it has the terminal, as with kubectl.
		cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	} else {
		stderr = &lineLogger{prefix: "credential plugin " + name + ": "}
		cmd.Stderr = stderr
		ownProcessGroup(cmd) // stopped with whatever it started
	}
	// After the stop, the pipes are given up on, should a child the stop did
	// not reach hold them.
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if stderr != nil {
		stderr.Flush()
	}
	seeStderr := ""
	if !interactive && !klog.V(1).Enabled() {
		seeStderr = "; -v=1 shows what it wrote on stderr"
	}
	var exitErr *exec.ExitError
	switch {
	case stdout.over:
		return fmt.Errorf("the credential plugin %s wrote more than %d MiB on stdout, where an ExecCredential is a few KiB: it was stopped", name, maxCredentialOutput>>20)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("the credential plugin %s did not finish within --request-timeout (%v): it was stopped%s", name, timeout, seeStderr)
	case errors.As(err, &exitErr):
		return fmt.Errorf("the credential plugin %s failed (%v)%s", name, exitErr.ProcessState, seeStderr)
	case errors.Is(err, exec.ErrWaitDelay):
		// It exited, but something it started holds its output: what it wrote is complete.
	case err != nil:
		msg := fmt.Sprintf("the credential plugin %s: %v", name, err)
		if conf.InstallHint != "" && errors.Is(err, exec.ErrNotFound) {
			msg += "\n" + conf.InstallHint
		}
		return errors.New(msg)
	}
	return cr.decode(name, gv, stdout.buf)
}

// decode reads the plugin's answer as client-go reads it.
func (cr *credentials) decode(name string, gv runtimeschema.GroupVersion, out []byte) error {
	cred := &clientauthentication.ExecCredential{}
	_, gvk, err := credentialCodecs().UniversalDecoder(gv).Decode(out, nil, cred)
	switch {
	case err != nil:
		return fmt.Errorf("the credential plugin %s: its output is not an ExecCredential: %v", name, err)
	case gvk.GroupVersion() != gv:
		return fmt.Errorf("the credential plugin %s answered in %s, the kubeconfig wants %s", name, gvk.GroupVersion(), gv)
	case cred.Status == nil:
		return fmt.Errorf("the credential plugin %s answered without a status", name)
	case cred.Status.Token == "" && cred.Status.ClientCertificateData == "" && cred.Status.ClientKeyData == "":
		return fmt.Errorf("the credential plugin %s answered with neither a token nor a client certificate and key", name)
	case (cred.Status.ClientCertificateData == "") != (cred.Status.ClientKeyData == ""):
		return fmt.Errorf("the credential plugin %s answered with a client certificate or a key, not both", name)
	}
	cr.token = cred.Status.Token
	if cred.Status.ClientCertificateData != "" {
		cr.cert, cr.key = []byte(cred.Status.ClientCertificateData), []byte(cred.Status.ClientKeyData)
	}
	return nil
}

// pluginInteractive is whether the plugin gets the terminal, as client-go
// decides it.
func pluginInteractive(conf *clientcmdapi.ExecConfig) (bool, error) {
	stdinTerminal := term.IsTerminal(int(os.Stdin.Fd()))
	switch conf.InteractiveMode {
	case clientcmdapi.NeverExecInteractiveMode:
		return false, nil
	case clientcmdapi.IfAvailableExecInteractiveMode:
		return !conf.StdinUnavailable && stdinTerminal, nil
	case clientcmdapi.AlwaysExecInteractiveMode:
		if !stdinTerminal || conf.StdinUnavailable {
			return false, errors.New("interactiveMode is Always, and standard input is not a terminal")
		}
		return true, nil
	}
	return false, fmt.Errorf("unknown interactiveMode %q", conf.InteractiveMode)
}

// boundedBuffer keeps what is written up to max bytes; past it, the write
// fails and full is called (to stop the writer). Not a bytes.Buffer: its
// ReadFrom, which io.Copy prefers, would bypass the bound.
type boundedBuffer struct {
	buf  []byte
	max  int
	over bool
	full func()
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if len(b.buf)+len(p) > b.max {
		b.over = true
		b.full()
		return 0, errors.New("output too large")
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// lineLogger logs each line written to it at -v=1, with prefix; below, it
// drops them.
type lineLogger struct {
	prefix  string
	partial []byte
}

func (l *lineLogger) Write(p []byte) (int, error) {
	if !klog.V(1).Enabled() {
		return len(p), nil
	}
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		klog.V(1).Info(l.prefix + string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	if len(l.partial) > bufio.MaxScanTokenSize { // a line that never ends: in pieces
		l.Flush()
	}
	return len(p), nil
}

// Flush logs a last line without its newline.
func (l *lineLogger) Flush() {
	if len(l.partial) > 0 {
		klog.V(1).Info(l.prefix + string(l.partial))
		l.partial = nil
	}
}

var _ io.Writer = (*lineLogger)(nil)
