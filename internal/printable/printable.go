// Package printable makes untrusted text (object names, file paths, messages,
// a server's or a source's error text) safe to print in a line of text
// output: a terminal, or the log of a CI runner, which reads commands from
// lines of both streams (GitHub Actions' "::error::", "::add-mask::",
// "::stop-commands::"). A control character or a line break in such text
// is printed escaped, so that it never starts a new line nor moves the
// cursor, and no text can make a line begin with "::".
//
// Text without a control character, valid UTF-8 that does not begin with
// "::", is printed byte for byte as it is: the escaping changes nothing
// that could be read as it was meant.
package printable

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line is s as one piece of a line of text output: every control character
// (C0, DEL, C1), line or paragraph separator (U+2028, U+2029), bidirectional
// control (U+202E...) and byte that is not UTF-8 escaped as Go writes it in
// a string literal (\n, \r, \t, \x1b, \u0085, \u2028, \xff), and a first
// colon of s made \x3a when s, after white space, begins with "::" or is
// ":" (the runner trims a line's leading white space before it looks for
// "::"). A backslash is kept as it is: \n in s and an escaped line break
// print alike, and neither breaks the line.
func Line(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	escape(&b, s, false)
	return command(b.String())
}

// Lines is s as text of several lines whose line breaks ('\n') are meant
// (a multi-line CEL rule, cobra's usage errors, a stack), each line made
// as Line makes a piece of one, tabs kept (they lay out a line and never
// end one); a line break of another kind (\r, \v, U+2028) is escaped.
// Where the pieces of a text can be told apart, print each with Line:
// a line break in a piece of Lines' text starts a new line, which
// cannot begin with "::".
func Lines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if clean(l) {
			continue
		}
		var b strings.Builder
		escape(&b, l, true)
		lines[i] = command(b.String())
	}
	return strings.Join(lines, "\n")
}

// Sprintf is fmt.Sprintf with every argument made printable: each is
// formatted by its verb, then escaped as Line escapes a piece of a line.
// The format is the caller's own text, printed as it is: its line breaks
// are meant. No line of the result begins with "::": where arguments
// side by side would make one (an empty one, then ":" of the format, then
// one beginning with ":"), its first colon is made \x3a.
func Sprintf(format string, args ...any) string {
	s := fmt.Sprintf(format, wrap(args)...)
	if !strings.Contains(s, "::") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = lineCommand(l)
	}
	return strings.Join(lines, "\n")
}

// Fprintf is Sprintf written to w.
func Fprintf(w io.Writer, format string, args ...any) (int, error) {
	return io.WriteString(w, Sprintf(format, args...))
}

// Error is the message of err as a text output prints it: one line, as
// Line makes it, but for an error that joins others (errors.Join, whose
// message is a line per joined error) a line per joined error, each made
// by Error. A wrapper that adds no words (the message of the error it
// wraps is its own) is looked through.
func Error(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	for {
		inner := errors.Unwrap(err)
		if inner == nil || inner.Error() != msg {
			break
		}
		err = inner
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var texts, lines []string
		for _, e := range j.Unwrap() {
			if e != nil {
				texts = append(texts, e.Error())
				lines = append(lines, Error(e))
			}
		}
		if len(texts) > 1 && strings.Join(texts, "\n") == msg {
			return strings.Join(lines, "\n")
		}
	}
	return Line(msg)
}

// clean reports whether s prints as it is: UTF-8 without a character
// that escape changes, not beginning with what command changes.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return cleanUnicode(s[i:]) && !startsCommand(s)
		}
	}
	return !startsCommand(s)
}

func cleanUnicode(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return false
			}
		}
		if escaped(r) {
			return false
		}
	}
	return true
}

// escaped reports whether r is written escaped.
func escaped(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true // C0, DEL, C1 (U+0085 NEL, U+009B CSI)
	case r == '\u2028', r == '\u2029':
		return true // line and paragraph separators
	}
	return r > 0x9f && unicode.Is(unicode.Bidi_Control, r)
}

// escape writes s to b with every character that escaped reports and
// every byte that is not UTF-8 escaped; tabs kept as they are when
// keepTab.
func escape(b *strings.Builder, s string, keepTab bool) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(b, `\x%02x`, s[i])
		case r == '\t' && keepTab:
			b.WriteByte('\t')
		case escaped(r):
			b.WriteString(escapeRune(r))
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
}

func escapeRune(r rune) string {
	switch r {
	case '\a':
		return `\a`
	case '\b':
		return `\b`
	case '\t':
		return `\t`
	case '\n':
		return `\n`
	case '\v':
		return `\v`
	case '\f':
		return `\f`
	case '\r':
		return `\r`
	}
	if r < 0x80 {
		return fmt.Sprintf(`\x%02x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// startsCommand reports whether s, after white space and invisible
// formatting characters (what a runner may trim from a line), begins with
// "::" or is ":", which the text after it could make "::".
func startsCommand(s string) bool {
	rest := strings.TrimLeftFunc(s, trimmed)
	return strings.HasPrefix(rest, "::") || rest == ":"
}

// trimmed is what a runner may take for white space at a line's start:
// Unicode's White_Space, as .NET's TrimStart trims it, and the invisible
// format characters (U+200B, U+FEFF) older runtimes trimmed too.
func trimmed(r rune) bool { return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) }

// command makes the first colon of s, an escaped text, \x3a when s would
// begin a workflow command.
func command(s string) string {
	if !startsCommand(s) {
		return s
	}
	i := strings.IndexByte(s, ':')
	return s[:i] + `\x3a` + s[i+1:]
}

// lineCommand makes the first colon of a line \x3a when the line begins
// with "::", after what a runner trims.
func lineCommand(l string) string {
	if !strings.HasPrefix(strings.TrimLeftFunc(l, trimmed), "::") {
		return l
	}
	i := strings.IndexByte(l, ':')
	return l[:i] + `\x3a` + l[i+1:]
}

// arg is an argument of Sprintf: formatted by its verb, then escaped.
type arg struct{ v any }

func (a arg) Format(f fmt.State, verb rune) {
	io.WriteString(f, Line(fmt.Sprintf(fmt.FormatString(f, verb), a.v)))
}

func wrap(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch a.(type) {
		case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64, bool:
			out[i] = a // nothing to escape
		default:
			out[i] = arg{a}
		}
	}
	return out
}
