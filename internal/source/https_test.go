package source

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A redirect's query (a release asset's signed URL) is not where the lock
// says the content came from: the URL without it is.
func TestResolvedWithoutRedirectQuery(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/download/v1/crds.yaml" {
			http.Redirect(w, r, "/assets/123?X-Signature=secret&expires=1", http.StatusFound)
			return
		}
		w.Write([]byte("kind: CustomResourceDefinition\n"))
	}))
	defer srv.Close()
	f, err := New(Options{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for path, want := range map[string]string{
		"/download/v1/crds.yaml": srv.URL + "/assets/123",
		"/crds.yaml?ref=v1":      "",
	} {
		pin, _, err := httpsKind{}.fetch(context.Background(), f, srv.URL+path, srv.URL+path)
		if err != nil || pin.Resolved != want {
			t.Errorf("%s: resolved %q (%v), want %q", path, pin.Resolved, err, want)
		}
	}
}
