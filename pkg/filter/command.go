package filter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/command"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
)

// reportedError is the function's error, which the framework has printed on
// stderr already: exit 1 when results of error severity failed the run (as
// for the plugin's findings), else 2 (a bad config, an unreadable path, an
// item that is not an object).
type reportedError struct {
	err  error
	code int
}

func (e reportedError) Error() string { return e.err.Error() }
func (e reportedError) Unwrap() error { return e.err }

// ExitCode is the process's exit code.
func (e reportedError) ExitCode() int { return e.code }

// Reported: the framework has printed it.
func (e reportedError) Reported() bool { return true }

// NewCommand returns "kubectl crd krm": the KRM function, reading a
// ResourceList on stdin (kustomize, kpt), or standalone with a function
// config file and a resource file.
func NewCommand() *cobra.Command {
	// The framework prints the results of a failed run on stderr, where kustomize and kpt
	// show them to the user.
	cmd := command.Build(Processor{}, command.StandaloneEnabled, false)
	cmd.Use = "krm [CONFIG_FILE [RESOURCES_FILE|-]]"
	cmd.Short = "Run as a KRM function: prune and check the objects of a ResourceList (kustomize, kpt)"
	cmd.Long = `Run kubectl crd as a KRM function (kustomize exec functions, kpt fn eval --exec): read a
ResourceList on stdin, remove what the API server would drop from its items (comments and key order
kept), and report every finding as a result. Results listed in the config's failOn are errors and
fail the run.

The function config (apiVersion ` + APIVersion + `, kind ` + Kind + `):

  crdPaths: [crds/]       CRD files or directories, besides the CRDs among the items
  prune: true             remove what the server would drop (default true)
  defaults: false         also write the schemas' defaults
  previous: [applied/]    the objects as rendered or applied before: each item with a previous
                          version (same group, kind, namespace, name) is checked as an update of it,
                          as check-update does (CEL transition rules, x-kubernetes-mutability); a
                          CRD in it is the previous version of the item CRD of its name: the
                          upgrade is checked, the items' custom resources as the existing objects
  lowerMutability: false   rewrite the CRDs among the items with their x-kubernetes-mutability and
                          x-kubernetes-key-mutability markers lowered to CEL rules the API server
                          enforces, as kubectl crd lower-mutability does
  failOn: [NonStructural, Update, Invalid, Breaking, DataLoss]
                          findings that are errors: Prune, NonStructural, Update, MissingCRD,
                          Invalid (an object the server's validation refuses on create),
                          CRDWarning (what the server warns of a CRD, an apiVersion it does
                          not serve), and of a CRD upgrade Breaking, DataLoss, CRDChange (a
                          compatible change)
  loadRestrictor: LoadRestrictionsRootOnly
                          as kustomize's --load-restrictor: crdPaths and previous must stay
                          in the working directory (symbolic links resolved); LoadRestrictionsNone
                          reads any path

Paths are relative to the working directory: kustomize runs exec functions in the
kustomization's directory, kpt in the directory it is run from.

Exit codes: 0 no error results, 1 error results (standalone: nothing written on stdout),
2 a bad config, path or item (a ResourceList whose items are not a list of objects).`
	cmd.Example = `  # In a kustomization's transformers, with kustomize build --enable-alpha-plugins --enable-exec:
  #   annotations: {config.kubernetes.io/function: "exec: {path: kubectl-crd, args: [krm]}"}

  # Standalone, on files (- for stdin); nothing on stdout if the run fails
  kubectl crd krm examples/krm/check.yaml examples/krm/crd.yaml examples/krm/widget.yaml`
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		// Standalone, the output is what gets applied ("| kubectl apply -f -"): on an
		// error, nothing is written, not a half-checked stream. A ResourceList (kustomize,
		// kpt) always comes back, with its results.
		stdout, stdin := c.OutOrStdout(), c.InOrStdin()
		if len(args) > 2 {
			// kyaml concatenates resource files without a document separator, which merges
			// the last document of one file with the first of the next: join them here.
			joined, err := joinDocuments(args[1:], stdin)
			if err != nil {
				fmt.Fprintln(c.ErrOrStderr(), err)
				return reportedError{err, 2}
			}
			c.SetIn(joined)
			defer c.SetIn(stdin)
			args = []string{args[0], "-"}
		}
		var buf bytes.Buffer
		c.SetOut(&buf)
		var err error
		if len(args) == 0 {
			if err = resourceList(stdin, &buf); err != nil {
				fmt.Fprintf(c.ErrOrStderr(), "%v", err)
			}
		} else {
			err = run(c, args)
		}
		c.SetOut(stdout)
		if err != nil {
			fmt.Fprintln(c.ErrOrStderr()) // the framework's message lacks the end of its line
		}
		if err == nil || len(args) == 0 {
			if _, werr := stdout.Write(buf.Bytes()); werr != nil && err == nil {
				err = werr
			}
		}
		if err == nil {
			return nil
		}
		var results framework.Results
		if errors.As(err, &results) {
			return reportedError{err, 1}
		}
		return reportedError{err, 2}
	}
	return cmd
}

// resourceList runs the function on stdin: a ResourceList (kustomize, kpt),
// or plain YAML documents, written back without a wrapper.
func resourceList(in io.Reader, out io.Writer) error {
	// A ResourceList is one document: bounded as the plugin bounds one.
	data, err := io.ReadAll(io.LimitReader(in, document.MaxDocumentBytes+1))
	if err != nil {
		return fmt.Errorf("reading stdin: %w", err)
	}
	if len(data) > document.MaxDocumentBytes {
		return fmt.Errorf("stdin: more than %d MiB: kubectl crd krm refuses a ResourceList that large (the protocol holds it whole, and a KRM function in Go takes some 100 times its size in memory); render and check it in parts",
			document.MaxDocumentBytes>>20)
	}
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
	return execute(Processor{}, rw)
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

// joinDocuments reads the named files ("-": stdin) into one YAML stream,
// with a document separator between files.
func joinDocuments(names []string, stdin io.Reader) (io.Reader, error) {
	var out bytes.Buffer
	for i, name := range names {
		var b []byte
		var err error
		if name == "-" {
			b, err = io.ReadAll(stdin)
		} else {
			b, err = os.ReadFile(name)
		}
		if err != nil {
			return nil, fmt.Errorf("unable to read input file %s: %w", name, err)
		}
		if i > 0 {
			out.WriteString("\n---\n")
		}
		out.Write(b)
	}
	return &out, nil
}
