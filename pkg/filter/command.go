package filter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	kerrors "sigs.k8s.io/kustomize/kyaml/errors"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/command"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-crd/kubectl-crd/internal/exitcode"
	"github.com/kubectl-crd/kubectl-crd/internal/ordered"
	"github.com/kubectl-crd/kubectl-crd/internal/printable"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/prune"
)

// krmLong is the help of "kubectl crd krm": the function config's fields
// as CRDCheck reads them, and their defaults (TestKRMHelpDescribesTheConfig
// holds it to CRDCheck's fields and finding.DefaultFailOn).
const krmLong = `Run kubectl crd as a KRM function (kustomize exec functions, kpt fn eval --exec): read a
ResourceList on stdin, remove what the API server would drop from its items (comments and key order
kept), and report every finding as a result. Results listed in the config's failOn are errors and
fail the run.

The function config (apiVersion ` + APIVersion + `, kind ` + Kind + `):

  crdPaths: [crds/]       CRD files or directories, besides the CRDs among the items; or https://
                          URLs and oci:// artifacts, fetched into the cache (docs/sources.md)
  prune: true             remove what the server would drop (default true)
  defaults: false         also write the schemas' defaults
  previous: [applied/]    the objects as rendered or applied before: each item with a previous
                          version (same group, kind, namespace, name) is checked as an update of it,
                          as check-update does (CEL transition rules, x-kubernetes-mutability); a
                          CRD in it is the previous version of the item CRD of its name: the
                          upgrade is checked, the items' custom resources as the existing objects
  lowerMutability: false  rewrite the CRDs among the items with their x-kubernetes-mutability and
                          x-kubernetes-key-mutability markers lowered to CEL rules the API server
                          enforces, as kubectl crd lower-mutability does
  failOn: [NonStructural, Update, MissingCRD, Invalid, Breaking, DataLoss]
                          findings that are errors, the others warnings (default as shown):
                          Prune, NonStructural, Update, MissingCRD (an object of a kind no CRD
                          defines: not checked), Invalid (an object the server's validation
                          refuses on create), CRDWarning (what the server warns of a CRD, an
                          apiVersion it does not serve), Deprecated (an object of a version its
                          CRD deprecates: the server's warning), and of a CRD upgrade Breaking,
                          DataLoss, CRDChange (a compatible change)
  ignoreMissingCRDs: false
                          with true, an object of a kind no CRD defines (MissingCRD) is a
                          warning, not an error, whatever failOn says: for repositories that
                          check only some of their kinds
  kubeVersion: "1.31"     answer as the API server of this Kubernetes minor (1.31 to 1.37; default
                          the newest, 1.37): which CRD fields it knows, which CEL libraries
                          compile, its cost estimator, formats and feature gates
  loadRestrictor: LoadRestrictionsRootOnly
                          as kustomize's --load-restrictor: crdPaths and previous must stay
                          in the working directory (symbolic links resolved); LoadRestrictionsNone
                          reads any path
  lock: kubectl-crd.lock  a lock file (kubectl crd prune --update-lock writes it) pinning the
                          remote sources of crdPaths and previous by digest: a changed source
                          fails the run
  offline: false          with true, remote sources come only from the cache (by the lock, else
                          by the last fetch): a source not there fails the run
  sourceCertificateAuthority: ca.pem
                          a PEM file of certificates trusted for https:// and oci:// sources,
                          beside the system's (and SSL_CERT_FILE's)
  sourceClientCertificate: client.crt
  sourceClientKey: client.key
                          a client certificate and its key (PEM) for a server or registry that
                          requires one (mutual TLS); without sourceClientKey, the key is read
                          from the certificate's file
  sourceInsecureSkipTLSVerify: false
                          with true, the certificates of remote sources are not verified (insecure)
  sourcePlainHTTP: false  with true, oci:// registries are reached without TLS (one on loopback
                          always is), and plain http on loopback is followed from https (a
                          redirect, a chart's archive)
  chartValues: {crds: {enabled: true}}
  chartValuesFiles: values.yaml
                          values every Helm chart of crdPaths and previous is rendered with,
                          as helm's --values (the files first); charts are rendered by crd-helm

Paths are relative to the working directory: kustomize runs exec functions in the
kustomization's directory, kpt in the directory it is run from.

Exit codes: 0 no error results, 1 error results (standalone: nothing written on stdout),
2 a bad config, path or item (a ResourceList whose items are not a list of objects).`

// krmExample is the example of "kubectl crd krm": in a kustomization, and
// standalone on files.
const krmExample = `  # In a kustomization's transformers, with kustomize build --enable-alpha-plugins --enable-exec:
  #   annotations: {config.kubernetes.io/function: "exec: {path: kubectl-crd, args: [krm]}"}

  # Standalone, on files (- for stdin); nothing on stdout if the run fails
  kubectl crd krm examples/krm/check.yaml examples/krm/crd.yaml examples/krm/widget.yaml`

// NewCommand returns "kubectl crd krm": the KRM function, reading a
// ResourceList on stdin (kustomize, kpt), or standalone with a function
// config file and a resource file.
func NewCommand() *cobra.Command {
	// The framework prints the results of a failed run on stderr, where kustomize and kpt
	// show them to the user.
	cmd := command.Build(Processor{}, command.StandaloneEnabled, false)
	cmd.Use = "krm [CONFIG_FILE [RESOURCES_FILE|-]]"
	cmd.Short = "Run as a KRM function: prune and check the objects of a ResourceList (kustomize, kpt)"
	cmd.Long = krmLong
	cmd.Example = krmExample
	cmd.RunE = runKRM
	return cmd
}

// runKRM runs the function, on a ResourceList on stdin or standalone on
// the files of args. Standalone, the output is what gets applied ("|
// kubectl apply -f -"): on an error, nothing is written, not a
// half-checked stream. A ResourceList (kustomize, kpt) always comes back,
// with its results.
func runKRM(c *cobra.Command, args []string) error {
	stdout, stderr := c.OutOrStdout(), c.ErrOrStderr()
	var buf spool
	var err error
	if len(args) == 0 {
		err = resourceList(c.InOrStdin(), &buf, Processor{Warnings: stderr, Context: c.Context()})
	} else {
		err = standalone(args[0], args[1:], c.InOrStdin(), &buf, Processor{Warnings: stderr, Context: c.Context()})
	}
	if err != nil && c.Context().Err() != nil {
		return err // stopped (a signal): nothing to print or write (plugin.Run)
	}
	if err != nil {
		printRunError(c, stderr, err)
	}
	if err == nil || len(args) == 0 {
		if _, werr := buf.WriteTo(stdout); werr != nil && err == nil {
			err = werr
		}
	}
	if err == nil {
		return nil
	}
	return runExitError(err)
}

// spool holds what a run writes until it is done, each write as it came:
// a buffer grown to the size of a ResourceList (tens of megabytes) would
// take about twice that while it grows, at the end of the run, when the
// most memory is in use.
type spool struct{ parts [][]byte }

func (s *spool) Write(p []byte) (int, error) {
	s.parts = append(s.parts, bytes.Clone(p))
	return len(p), nil
}

// WriteTo writes what was written to w, in order: one empty write when
// nothing was, as a buffer writes.
func (s *spool) WriteTo(w io.Writer) (int64, error) {
	if len(s.parts) == 0 {
		_, err := w.Write(nil)
		return 0, err
	}
	var n int64
	for _, p := range s.parts {
		m, err := w.Write(p)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// printRunError prints the error of a run on stderr, with its stack under
// --stack: the function's own report, which Run does not print again.
// Results are printed as kyaml prints them (a blank line between two),
// each on one line, escaped; an error's message is escaped as the
// plugin's are.
func printRunError(c *cobra.Command, stderr io.Writer, err error) {
	var results framework.Results
	if errors.As(err, &results) && results.Error() == err.Error() {
		lines := make([]string, len(results))
		for i, r := range results {
			lines[i] = printable.Line(r.String())
		}
		fmt.Fprintln(stderr, strings.Join(lines, "\n\n"))
	} else {
		fmt.Fprintln(stderr, printable.Error(err))
	}
	if stack, _ := c.Flags().GetBool("stack"); stack {
		if s := kerrors.GetStack(err); s != "" {
			fmt.Fprintln(stderr, s)
		}
	}
}

// runExitError is the exit of a failed run, printed already: Silent. Exit
// 1 when results of error severity failed the run (as for the plugin's
// findings), else 2 (a bad config, an unreadable path, an item that is not
// an object).
func runExitError(err error) error {
	var results framework.Results
	if errors.As(err, &results) {
		return &exitcode.Error{Code: exitcode.Findings, Err: err, Silent: true}
	}
	return &exitcode.Error{Code: exitcode.Input, Err: err, Silent: true}
}

// resourceList runs the function p on stdin: a ResourceList (kustomize,
// kpt), or plain YAML documents, written back without a wrapper.
func resourceList(in io.Reader, out io.Writer, p Processor) error {
	// A ResourceList is one document: bounded as the plugin bounds one.
	data, err := io.ReadAll(io.LimitReader(in, document.MaxDocumentBytes+1))
	if err != nil {
		return fmt.Errorf("reading stdin: %w", err)
	}
	if len(data) > document.MaxDocumentBytes {
		return fmt.Errorf("stdin: more than %d MiB: kubectl crd krm refuses a ResourceList that large (the protocol holds it whole, and a KRM function in Go takes some 100 times its size in memory); render and check it in parts",
			document.MaxDocumentBytes>>20)
	}
	// Read by its text where it can be (listByText): kyaml's node trees of
	// the whole list are some 7 times its size, and it would be parsed twice.
	if err := listByText(data, out, p); !errors.Is(err, errNotByText) {
		return err
	}
	return byKyaml(data, out, p)
}

// byKyaml runs the function p on data, read by kyaml's reader: a
// ResourceList, or plain YAML documents, written back without a wrapper.
func byKyaml(data []byte, out io.Writer, p Processor) error {
	if err := checkResourceList(data); err != nil {
		return err
	}
	// kyaml would annotate plain documents with their index (config.kubernetes.io/index and
	// internal.config.kubernetes.io/index) and, keeping an orchestrator's annotations, write
	// them out. A ResourceList's items are not annotated by the reader either way: they keep
	// the orchestrator's own, which it needs back.
	rw := &kio.ByteReadWriter{
		Reader:                bytes.NewReader(data),
		Writer:                out,
		OmitReaderAnnotations: true,
		KeepReaderAnnotations: true,
	}
	return execute(p, rw)
}

// checkResourceList refuses a ResourceList (or List) that kyaml would
// read as an empty one: items that are not a list, an item that is not an
// object. The condition is kyaml's for unwrapping: one document, of kind
// ResourceList or List, with items or a functionConfig.
func checkResourceList(data []byte) error {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true, DisableUnwrapping: true}).Read()
	if err != nil || len(nodes) != 1 || nodes[0].YNode().Kind != yaml.MappingNode {
		return nil // plain documents, or a stream the framework reports itself
	}
	kind := nodes[0].GetKind()
	if kind != kio.ResourceListKind && kind != "List" {
		return nil
	}
	items := nodes[0].Field("items")
	if items == nil || yaml.IsMissingOrNull(items.Value) {
		return nil
	}
	if items.Value.YNode().Kind != yaml.SequenceNode {
		return fmt.Errorf("stdin:%d: %s items: want a list of objects, got %s", items.Value.YNode().Line, kind, nodeKind(items.Value.YNode()))
	}
	for i, item := range items.Value.Content() {
		if item.Kind != yaml.MappingNode {
			return fmt.Errorf("stdin:%d: %s items[%d]: want an object, got %s", item.Line, kind, i, nodeKind(item))
		}
		if err := checkItemMetadata(item, document.Source{File: "stdin", Line: item.Line}); err != nil {
			return err
		}
	}
	return nil
}

// nodeKind names what a YAML node holds, for messages.
func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "an object"
	case yaml.AliasNode:
		return "an alias"
	}
	switch n.Tag {
	case yaml.NodeTagString:
		return "a string"
	case yaml.NodeTagInt, yaml.NodeTagFloat:
		return "a number"
	case yaml.NodeTagBool:
		return "a boolean"
	case yaml.NodeTagNull:
		return "null"
	}
	return "a scalar"
}

// standalone runs the function on files, as kyaml's command.Build does
// with arguments (the config, then resource files, "-" for stdin; the
// objects written plain, no results), but reads every file through the
// document reader and its limits: a document of more than 64 MiB (-f
// /dev/zero) is refused at its line, as every command refuses it, and so
// are resource files of more than 64 MiB in all, which the function holds
// whole, as it holds a ResourceList. p is the function.
func standalone(config string, files []string, stdin io.Reader, out io.Writer, p Processor) error {
	if config == "-" && slices.Contains(files, "-") {
		return errors.New("stdin (-) is read once: give it as the function config or as a resource file, not both")
	}
	fc, err := readFunctionConfig(config, stdin)
	if err != nil {
		return err
	}
	resources, err := readResources(files, stdin)
	if err != nil {
		return err
	}
	rw := &kio.ByteReadWriter{Reader: resources, Writer: out, NoWrap: true, FunctionConfig: fc}
	return execute(p, rw)
}

// openInput opens a file the function reads ("-": stdin), named as its
// messages name it; a directory is refused by name.
func openInput(name string, stdin io.Reader) (r io.Reader, label string, closeFn func(), err error) {
	if name == "-" {
		return stdin, "stdin", func() {}, nil
	}
	if fi, err := os.Stat(name); err == nil && fi.IsDir() {
		return nil, "", nil, fmt.Errorf("%s: a directory, want a file", name)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, "", nil, err
	}
	return f, name, func() { f.Close() }, nil
}

// readFunctionConfig reads the function config file: one document.
func readFunctionConfig(name string, stdin io.Reader) (*yaml.RNode, error) {
	const want = "want one document of apiVersion " + APIVersion + ", kind " + Kind
	r, label, closeFn, err := openInput(name, stdin)
	if err != nil {
		return nil, fmt.Errorf("function config: %w", err)
	}
	defer closeFn()
	rd := document.NewReader(r, label)
	d, err := rd.Next()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("function config: %s: empty, %s", label, want)
	}
	if err != nil {
		return nil, fmt.Errorf("function config: %w", err)
	}
	if second, err := rd.Next(); err == nil {
		return nil, fmt.Errorf("function config: %s: a second document, %s", second.Source, want)
	} else if !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("function config: %w", err)
	}
	fc, err := yaml.Parse(string(d.Raw()))
	if err != nil {
		return nil, fmt.Errorf("function config: %s: %w", d.Source, err)
	}
	return fc, nil
}

// readResources reads the documents of the resource files ("-": stdin), in
// order, into one YAML stream, a separator between documents (kyaml
// concatenates files without one, merging the last document of a file with
// the first of the next).
func readResources(names []string, stdin io.Reader) (io.Reader, error) {
	var out bytes.Buffer
	for _, name := range names {
		r, label, closeFn, err := openInput(name, stdin)
		if err != nil {
			return nil, fmt.Errorf("unable to read input file %s: %w", name, err)
		}
		err = document.NewReader(r, label).Each(ordered.Workers(), func(d *document.Document) error {
			// What kyaml would drop or fail on without a line (metadata: x,
			// annotations: x), the server refuses.
			for _, o := range d.Objects() {
				if err := prune.CheckMetadata(o); err != nil {
					return err
				}
			}
			raw := d.Raw()
			if out.Len() > 0 && !bytes.HasPrefix(raw, []byte("---")) {
				out.WriteString("---\n")
			}
			out.Write(raw)
			if !bytes.HasSuffix(raw, []byte("\n")) {
				out.WriteByte('\n')
			}
			if out.Len() > document.MaxDocumentBytes {
				return fmt.Errorf("%s: more than %d MiB of resources up to here: kubectl crd krm holds them whole, as it holds a ResourceList (a KRM function in Go takes some 100 times their size in memory); check them in parts",
					d.Source, document.MaxDocumentBytes>>20)
			}
			return nil
		})
		closeFn()
		if err != nil {
			return nil, err
		}
	}
	return &out, nil
}
