package plugin

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
)

// TestReadAhead: the documents come in order, then the reader's error
// after the documents before it; Close stops early without reading on.
func TestReadAhead(t *testing.T) {
	var in strings.Builder
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&in, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\n", i)
	}
	in.WriteString("---\nkey: [unclosed\n")
	ra := newReadAhead(document.NewReader(strings.NewReader(in.String()), "in.yaml"))
	for i := 0; i < 50; i++ {
		d, err := ra.Next()
		if err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		if name := d.Object["metadata"].(map[string]interface{})["name"]; name != fmt.Sprintf("c%d", i) {
			t.Fatalf("document %d is %v", i, name)
		}
	}
	var ie *document.InputError
	if _, err := ra.Next(); !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), "in.yaml:202") {
		t.Errorf("after the documents: %v, want the input error of line 202", err)
	}
	if _, err := ra.Next(); err != io.EOF {
		t.Errorf("after the error: %v, want io.EOF", err)
	}
	ra.Close()

	ra = newReadAhead(document.NewReader(strings.NewReader(in.String()), "in.yaml"))
	if _, err := ra.Next(); err != nil {
		t.Fatal(err)
	}
	ra.Close() // returns once the reader stopped, with documents unread
}
