package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
)

// GitHub Actions workflow commands: a line per finding,
// "::error file=F,line=L,title=T::message", which the runner turns into
// an annotation on that line of the file. Levels: error, warning, notice.
// The first line is a notice of which Kubernetes minor answered.

var (
	// githubData escapes a command's message.
	githubData = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	// githubProperty escapes a property's value: also its separators.
	githubProperty = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

// EscapeData and EscapeProperty escape as GitHub's toolkit does.
func EscapeData(s string) string     { return githubData.Replace(s) }
func EscapeProperty(s string) string { return githubProperty.Replace(s) }

type githubWriter struct {
	spool Spool
}

func newGitHub(_ Tool, spool Spool) *githubWriter { return &githubWriter{spool: spool} }

// Add writes a command per finding of obj.
func (g *githubWriter) Add(obj Object) error {
	for _, it := range obj.Findings {
		if _, err := io.WriteString(g.spool, Command(obj, it)+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// Command is the workflow command of a finding of obj: its file and line
// (none for an object of the cluster), its rule and object as the title,
// its message.
func Command(obj Object, it Item) string {
	level := Level(it)
	if level == "note" {
		level = "notice"
	}
	var props []string
	if at := where(obj, it); at.File != "" {
		props = append(props, "file="+EscapeProperty(at.File), fmt.Sprintf("line=%d", at.Line))
		if at.Column > 0 {
			props = append(props, fmt.Sprintf("col=%d", at.Column))
		}
	}
	props = append(props, "title="+EscapeProperty(RuleID(it)+": "+name(obj)))
	return "::" + level + " " + strings.Join(props, ",") + "::" + EscapeData(it.Message)
}

// Finish writes a notice of which minor answered, then the commands.
func (g *githubWriter) Finish(out io.Writer) error {
	if _, err := io.WriteString(out, AnswerCommand(kubeversion.Current())+"\n"); err != nil {
		return err
	}
	return copySpool(out, g.spool)
}

// AnswerCommand is the notice of which minor gave the verdicts, the
// report's first line: "::notice title=Kubernetes 1.31::verdicts of
// kube-apiserver 1.31, emulated by ...", on no file (the run's summary).
func AnswerCommand(a kubeversion.Answer) string {
	return "::notice title=" + EscapeProperty("Kubernetes "+a.Minor.String()) + "::" + EscapeData(a.Verdicts())
}
