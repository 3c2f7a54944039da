package document_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
)

// aliasBomb is a ConfigMap whose data.c is a string of size bytes, aliased
// times times in a list, itself aliased times times: about size*times*times
// bytes once expanded, from a file of about size bytes.
func aliasBomb(size, times int) string {
	aliases := func(a string) string { return "[" + strings.TrimSuffix(strings.Repeat("*"+a+",", times), ",") + "]" }
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  a: &a %q\n  b: &b %s\n  c: %s\n",
		strings.Repeat("x", size), aliases("a"), aliases("b"))
}

func readErr(t *testing.T, in string) (*document.InputError, uint64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := document.Read(strings.NewReader(in), "in.yaml")
	runtime.ReadMemStats(&after)
	var ie *document.InputError
	if err != nil && !errors.As(err, &ie) {
		t.Fatalf("not an input error: %v", err)
	}
	return ie, after.TotalAlloc - before.TotalAlloc
}

// Aliases that expand a 3 KB file to 4.8 MB are refused before they expand
// (issue 14: 100 KB aliased 99x99 took 4.6 GB and crashed), with the size
// of the JSON they would make.
func TestAliasExpansionIsRefusedBeforeExpanding(t *testing.T) {
	in := aliasBomb(3000, 40)
	js, err := sigsyaml.YAMLToJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	ie, alloc := readErr(t, in)
	if ie == nil {
		t.Fatal("read without an error")
	}
	want := fmt.Sprintf(`in.yaml:1: YAML aliases expand this document to more than 3 MiB (about %d KiB from 80 aliases): `+
		`the API server refuses request bodies over 3 MiB (413 "Request entity too large: limit is 3145728")`, (len(js)+1023)/1024)
	if ie.Error() != want {
		t.Errorf("got  %s\nwant %s", ie, want)
	}
	if alloc > document.MaxRequestBodyBytes {
		t.Errorf("reading a %d-byte file allocated %d bytes: it expanded", len(in), alloc)
	}
	// Under the bound, aliases expand.
	if ie, _ := readErr(t, aliasBomb(3000, 30)); ie != nil {
		t.Errorf("2.6 MiB of aliases refused: %v", ie)
	}
}

// configMap is a ConfigMap whose JSON is exactly n bytes.
func configMap(t *testing.T, n int) string {
	obj := map[string]interface{}{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]interface{}{"name": "big"},
		"data": map[string]interface{}{"a": ""}}
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  a: %s\n", strings.Repeat("x", n-len(b)))
}

// An object that makes a larger request body than the server reads is
// refused in its words; one of exactly the limit is read. The e2e test
// TestRequestBodyLimitParity draws the line with a real server.
func TestObjectOverTheRequestBodyLimit(t *testing.T) {
	if ie, _ := readErr(t, configMap(t, document.MaxRequestBodyBytes-1)); ie != nil {
		t.Errorf("a body of exactly the limit refused: %v", ie)
	}
	ie, _ := readErr(t, configMap(t, document.MaxRequestBodyBytes))
	server := apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", document.MaxRequestBodyBytes)).Error()
	want := `in.yaml:1: kubectl sends this object in a request body of 3145729 bytes, more than the API server reads (3 MiB by default): it answers 413 "` + server + `"`
	if ie == nil || ie.Error() != want {
		t.Errorf("got  %v\nwant %s", ie, want)
	}
}

// kubectl sends the items of a List one by one: the bound is per item.
func TestListItemsAreBoundedOneByOne(t *testing.T) {
	item := func(n int) string {
		return "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: big\n  data:\n    a: " + strings.Repeat("x", n) + "\n"
	}
	two := "apiVersion: v1\nkind: List\nitems:\n" + item(2<<20) + item(2<<20)
	if ie, _ := readErr(t, two); ie != nil {
		t.Errorf("a List of two 2 MiB items refused: %v", ie)
	}
	ie, _ := readErr(t, "apiVersion: v1\nkind: List\nitems:\n"+item(10)+item(4<<20))
	if ie == nil || !strings.HasPrefix(ie.Error(), "in.yaml:10: kubectl sends this object in a request body of 4194") {
		t.Errorf("got %v, want the second item refused at its line", ie)
	}
}

// The server's JSON decoder reads 10,000 levels of nesting, no more: a JSON
// document nested deeper is an input error in the decoder's words; in YAML,
// kubectl's parser stops at the same depth.
func TestNestingDepthIsTheServers(t *testing.T) {
	nested := func(depth int) string {
		return `{"apiVersion":"v1","kind":"Deep","metadata":{"name":"d"},"spec":` +
			strings.Repeat(`{"a":`, depth-1) + "1" + strings.Repeat("}", depth)
	}
	for _, depth := range []int{10000, 10001} {
		var v interface{}
		upstream := utiljson.Unmarshal([]byte(nested(depth)), &v)
		if (upstream != nil) != (depth > 10000) {
			t.Fatalf("depth %d: the server's decoder says %v", depth, upstream)
		}
		ie, _ := readErr(t, nested(depth))
		if upstream == nil && ie != nil || upstream != nil && (ie == nil || !strings.HasSuffix(ie.Msg, upstream.Error())) {
			t.Errorf("JSON, depth %d: got %v, want the server's decoder's %v", depth, ie, upstream)
		}
		ie, _ = readErr(t, "# YAML\n"+nested(depth))
		if (ie != nil) != (upstream != nil) {
			t.Errorf("YAML, depth %d: got %v, want the server's decoder's %v", depth, ie, upstream)
		}
	}
}

// The file: 100 KB aliased 99 times, that list 99 times (about 1 GB
// of JSON); it took 4.6 GB before it was refused before expanding.
func BenchmarkAliasBomb(b *testing.B) {
	in := aliasBomb(100_000, 99)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := document.Read(strings.NewReader(in), "in.yaml"); err == nil {
			b.Fatal("read")
		}
	}
}
