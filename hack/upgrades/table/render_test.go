package table

import "testing"

// Splice rewrites only the generated part, and Generated reads back what
// it wrote: the e2e test compares that with Render's output.
func TestSpliceGenerated(t *testing.T) {
	page := "# T\n\nprose\n\n" + Begin + "\n\nold table\n" + End + "\n\nafter\n"
	out, err := Splice(page, "| a |\n|---|\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "# T\n\nprose\n\n" + Begin + "\n\n| a |\n|---|\n\n" + End + "\n\nafter\n"
	if out != want {
		t.Errorf("Splice:\n%q\nwant\n%q", out, want)
	}
	if got, ok := Generated(out); !ok || got != "| a |\n|---|\n" {
		t.Errorf("Generated: %q, %v", got, ok)
	}
	if _, err := Splice("# T\n", "x"); err == nil {
		t.Error("Splice of a page without the markers: no error")
	}
}
