package printable

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	for in, want := range map[string]string{
		// Printed as they are: no control character, no leading "::".
		"":                                 "",
		"Widget default/w":                 "Widget default/w",
		`pruned unknown field "spec.x"`:    `pruned unknown field "spec.x"`,
		"crds/ünïcode — 日本.yaml:12":        "crds/ünïcode — 日本.yaml:12",
		`a\nb stays a\nb`:                  `a\nb stays a\nb`,
		"a::b":                             "a::b",
		"x: :y":                            "x: :y",
		":a":                               ":a",
		"\uFFFD is a character":            "\uFFFD is a character",
		"https://example.com/x.yaml#L10":   "https://example.com/x.yaml#L10",
		"x-kubernetes-list-map-keys=a,b,c": "x-kubernetes-list-map-keys=a,b,c",
		// Line breaks of every kind a runner or a terminal honours.
		"w\n::error::pwned":      `w\n::error::pwned`,
		"w\r::error::pwned":      `w\r::error::pwned`,
		"w\r\n::error::pwned":    `w\r\n::error::pwned`,
		"w\v\f::error::pwned":    `w\v\f::error::pwned`,
		"w\u0085::error::pwned":  `w\u0085::error::pwned`,
		"w\u2028::error::pwned":  `w\u2028::error::pwned`,
		"w\u2029::error::pwned":  `w\u2029::error::pwned`,
		"\n::error::pwned":       `\n::error::pwned`,
		"\x1b[2K\x1b[1Gspoofed":  `\x1b[2K\x1b[1Gspoofed`,
		"\u009b2Kspoofed":        `\u009b2Kspoofed`,
		"bell\a back\b nul\x00.": `bell\a back\b nul\x00.`,
		"tab\there, del\x7f":     `tab\there, del\x7f`,
		"evil\u202egnp.yaml":     `evil\u202egnp.yaml`,
		"latin-1 \xe9t\xe9":      `latin-1 \xe9t\xe9`,
		"\xff::error::x":         `\xff::error::x`,
		// A workflow command where the piece begins a line.
		"::error::pwned":             `\x3a:error::pwned`,
		"  ::warning file=x::y":      `  \x3a:warning file=x::y`,
		"\u3000\u00a0::add-mask::s":  "\u3000\u00a0" + `\x3a:add-mask::s`,
		"\u200b\ufeff::error::x":     "\u200b\ufeff" + `\x3a:error::x`,
		":":                          `\x3a`,
		" :":                         ` \x3a`,
		"::":                         `\x3a:`,
		"\t::error::x":               `\t::error::x`,
		"::stop-commands::tok\nmore": `\x3a:stop-commands::tok\nmore`,
	} {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLines(t *testing.T) {
	for in, want := range map[string]string{
		"unknown flag: --x\nSee 'kubectl crd prune --help'.": "unknown flag: --x\nSee 'kubectl crd prune --help'.",
		"Did you mean this?\n\tprune\n":                      "Did you mean this?\n\tprune\n",
		"self.a == 1 &&\n  self.b == 2":                      "self.a == 1 &&\n  self.b == 2",
		"rule\n::error::pwned\n  ::warning::x":               "rule\n" + `\x3a:error::pwned` + "\n" + `  \x3a:warning::x`,
		"a\r::error::x\u2028::error::y":                      `a\r::error::x\u2028::error::y`,
		"\t::error::x":                                       "\t" + `\x3a:error::x`,
	} {
		if got := Lines(in); got != want {
			t.Errorf("Lines(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSprintf(t *testing.T) {
	err := errors.New("open a\n::error::b: no such file")
	got := Sprintf("Warning: %s: %s (%s:%d)\n    %v %q %5.2f %t\n", "::error::kind", "msg\r\n", "f\u2028.yaml", 12, err, "q\nq", 1.5, true)
	want := `Warning: \x3a:error::kind: msg\r\n (f\u2028.yaml:12)` + "\n" + `    open a\n::error::b: no such file "q\nq"  1.50 true` + "\n"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// Without control characters, as fmt prints it.
	args := []any{"Widget ns/w", fmt.Errorf("x: %w", errors.New("y")), 3, []string{"a", "b"}, struct{ A string }{"z"}}
	if got, want := Sprintf("%s %v %d %v %+v", args...), fmt.Sprintf("%s %v %d %v %+v", args...); got != want {
		t.Errorf("got %q, want fmt's %q", got, want)
	}
	var b strings.Builder
	if _, err := Fprintf(&b, "%-6s|%x\n", "a\nb", "\n"); err != nil || b.String() != `a\nb   |0a`+"\n" {
		t.Errorf("Fprintf: %q, %v", b.String(), err)
	}
}

func TestError(t *testing.T) {
	type wrapper struct{ error }
	for _, c := range []struct {
		err  error
		want string
	}{
		{errors.New("plain"), "plain"},
		{errors.New("a\n::error::b"), `a\n::error::b`},
		{errors.Join(errors.New("unknown flag: --x"), errors.New("See 'kubectl crd prune --help'.")), "unknown flag: --x\nSee 'kubectl crd prune --help'."},
		{errors.Join(errors.New("previous: a\n::error::x"), errors.New("previous: b")), `previous: a\n::error::x` + "\nprevious: b"},
		{errors.Join(errors.New("::error::x"), nil, errors.New("y")), `\x3a:error::x` + "\ny"},
		// Looked through: a wrapper that adds no words.
		{&wrapperErr{errors.Join(errors.New("a"), errors.New("b"))}, "a\nb"},
		// Not a join: words around it, or several %w of fmt.Errorf.
		{fmt.Errorf("crdPaths: %w", errors.Join(errors.New("a"), errors.New("b"))), `crdPaths: a\nb`},
		{fmt.Errorf("%w, %w", errors.New("a\nb"), errors.New("c")), `a\nb, c`},
		{wrapper{errors.New("x\ny")}, `x\ny`},
	} {
		if got := Error(c.err); got != c.want {
			t.Errorf("Error(%q) = %q, want %q", c.err, got, c.want)
		}
	}
	if Error(nil) != "" {
		t.Error("Error(nil) is not empty")
	}
}

type wrapperErr struct{ err error }

func (w *wrapperErr) Error() string { return w.err.Error() }
func (w *wrapperErr) Unwrap() error { return w.err }

// checkLine fails when out, printed as a piece of a line, could break the
// line or begin a workflow command.
func checkLine(t *testing.T, in, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("Line(%q) = %q: not UTF-8", in, out)
	}
	for _, r := range out {
		if escaped(r) {
			t.Fatalf("Line(%q) = %q: %U is left", in, out, r)
		}
	}
	if startsCommand(out) {
		t.Fatalf("Line(%q) = %q: begins a workflow command", in, out)
	}
}

// checkOutput fails when a line of out (a text printed by Sprintf's
// format, whose own line breaks are '\n' only) begins, after what the
// runner trims, with "::", or when out breaks a line other than at '\n'.
func checkOutput(t *testing.T, out string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimLeftFunc(line, trimmed), "::") {
			t.Fatalf("%q: the line %q begins a workflow command", out, line)
		}
		for _, r := range line {
			if r != '\t' && escaped(r) {
				t.Fatalf("%q: %U is left in the line %q", out, r, line)
			}
		}
	}
}

// FuzzLine: no input yields a piece that breaks its line, holds a control
// character, begins a workflow command, or (in the formats the commands
// print) a line that begins with "::"; an input that needs no escaping is
// printed as it is.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"", "Widget default/w", "\n::error::pwned", "\r::error::x", "\u2028::x", "\u0085", "::", ":",
		" \u00a0::error::x", "\x1b]0;title\a", "\xff\xfe", "a\\nb", "\u202e", "\t::error::x", "::stop-commands::t"} {
		f.Add(s, ":")
	}
	f.Fuzz(func(t *testing.T, s, s2 string) {
		out := Line(s)
		checkLine(t, s, out)
		if utf8.ValidString(s) && !startsCommand(s) && !strings.ContainsFunc(s, escaped) && out != s {
			t.Fatalf("Line(%q) = %q: changed text that needs no escaping", s, out)
		}
		if Line(out) != out {
			t.Fatalf("Line(Line(%q)) = %q, not %q", s, Line(out), out)
		}
		// The formats of the commands: a piece at a line's start, after an
		// indent, after another piece, before a colon.
		for _, format := range []string{"%s", "%s%s", "    %s: %s\n", "%s:%s (%s)\n", "  %s\n%s", "Warning: %s: %s (%s)\n", "%s %s %s (%s)\n    %s\n"} {
			checkOutput(t, Sprintf(format, s, s2, s, s2, s))
		}
		checkOutput(t, Lines(s))
		checkOutput(t, Error(errors.Join(errors.New(s), errors.New(s2))))
		checkOutput(t, "error: "+Error(fmt.Errorf("%s: %w", s2, errors.New(s))))
	})
}

// TestTrimmed: the runner's TrimStart trims what .NET's char.IsWhiteSpace
// says, which Go's unicode.IsSpace says too, for every rune.
func TestTrimmed(t *testing.T) {
	// .NET's white space: categories Zs, Zl, Zp, and U+0009-U+000D, U+0085.
	for r := rune(0); r <= unicode.MaxRune; r++ {
		dotnet := unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp) || (r >= 0x09 && r <= 0x0d) || r == 0x85
		if dotnet && !trimmed(r) {
			t.Errorf("%U is .NET white space, not trimmed here", r)
		}
	}
}
