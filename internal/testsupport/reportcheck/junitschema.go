package reportcheck

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// The JUnit schema that CI servers validate reports against: junit-10.xsd
// as Jenkins' xunit plugin ships it (jenkinsci/xunit-plugin,
// src/main/resources/org/jenkinsci/plugins/xunit/types/model/xsd/junit-10.xsd),
// written out here as the facts it states, element by element. A report
// that holds anything it does not name (an element, an attribute, text
// where only elements go) is refused there.

// junitElement is what the schema allows of an element.
type junitElement struct {
	// attrs are the attributes allowed, true when required.
	attrs map[string]bool
	// children are the elements allowed inside, in any order and number.
	children []string
	// text: character data is allowed (else only white space between
	// the children).
	text bool
}

// junitSchema is the schema's elements by name.
var junitSchema = map[string]junitElement{
	"testsuites": {
		attrs:    map[string]bool{"name": false, "time": false, "tests": false, "failures": false, "errors": false},
		children: []string{"testsuite"},
	},
	"testsuite": {
		attrs: map[string]bool{"name": true, "tests": true, "failures": true, "errors": true,
			"group": false, "time": false, "skipped": false, "timestamp": false, "hostname": false,
			"id": false, "package": false, "file": false, "log": false, "url": false},
		children: []string{"testsuite", "properties", "testcase", "system-out", "system-err"},
	},
	"properties": {children: []string{"property"}},
	"property":   {attrs: map[string]bool{"name": true, "value": true}},
	"testcase": {
		attrs: map[string]bool{"name": true, "time": false, "classname": false, "group": false},
		children: []string{"skipped", "error", "failure", "rerunFailure", "rerunError", "flakyFailure", "flakyError",
			"system-out", "system-err"},
	},
	"failure":    {attrs: map[string]bool{"type": false, "message": false}, text: true},
	"error":      {attrs: map[string]bool{"type": false, "message": false}, text: true},
	"skipped":    {attrs: map[string]bool{"type": false, "message": false}, text: true},
	"system-out": {text: true},
	"system-err": {text: true},
	// The reruns of Surefire: their message and type, a stack trace and
	// output.
	"rerunFailure": {attrs: map[string]bool{"type": false, "message": false}, children: []string{"stackTrace", "system-out", "system-err"}, text: true},
	"rerunError":   {attrs: map[string]bool{"type": false, "message": false}, children: []string{"stackTrace", "system-out", "system-err"}, text: true},
	"flakyFailure": {attrs: map[string]bool{"type": false, "message": false}, children: []string{"stackTrace", "system-out", "system-err"}, text: true},
	"flakyError":   {attrs: map[string]bool{"type": false, "message": false}, children: []string{"stackTrace", "system-out", "system-err"}, text: true},
	"stackTrace":   {text: true},
}

// surefireTime is the schema's SUREFIRE_TIME, the type of time (an XSD
// pattern matches the whole value).
var surefireTime = regexp.MustCompile(`^(?:(?:[0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(?:\.[0-9]*)?$`)

// countAttrs are the counts, which we promise as integers.
var countAttrs = map[string]bool{"tests": true, "failures": true, "errors": true, "skipped": true}

// JUnitSchema checks doc against the JUnit schema (junit-10.xsd): a
// testsuites root, and in it only the elements and attributes the schema
// names where it names them, the required attributes present, time of the
// schema's pattern (and the counts non-negative integers, as ours are).
// It returns every violation, with its line.
func JUnitSchema(doc []byte) []error {
	var errs []error
	dec := xml.NewDecoder(bytes.NewReader(doc))
	dec.Strict = true
	line := func() int { l, _ := dec.InputPos(); return l }
	var stack []string
	root := true
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return append(errs, err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			name := tok.Name.Local
			if tok.Name.Space != "" {
				errs = append(errs, fmt.Errorf("line %d: <%s> in namespace %q", line(), name, tok.Name.Space))
			}
			switch {
			case root && name != "testsuites":
				errs = append(errs, fmt.Errorf("line %d: root <%s>, want <testsuites>", line(), name))
			case !root && !allowedChild(stack[len(stack)-1], name):
				errs = append(errs, fmt.Errorf("line %d: <%s> not allowed in <%s>", line(), name, stack[len(stack)-1]))
			}
			root = false
			errs = append(errs, checkAttrs(name, tok.Attr, line())...)
			stack = append(stack, name)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 && !junitSchema[stack[len(stack)-1]].text && len(bytes.TrimSpace(tok)) > 0 {
				errs = append(errs, fmt.Errorf("line %d: text %q in <%s>, which holds only elements", line(), bytes.TrimSpace(tok), stack[len(stack)-1]))
			}
		case xml.ProcInst, xml.Comment:
		case xml.Directive:
			errs = append(errs, fmt.Errorf("line %d: directive <!%s>", line(), tok))
		}
	}
	if root {
		errs = append(errs, fmt.Errorf("no root element"))
	}
	return errs
}

func allowedChild(parent, child string) bool {
	for _, c := range junitSchema[parent].children {
		if c == child {
			return true
		}
	}
	return false
}

// checkAttrs checks the attributes of an element of name.
func checkAttrs(name string, attrs []xml.Attr, line int) []error {
	el, known := junitSchema[name]
	if !known {
		return nil // refused as a child already
	}
	var errs []error
	seen := map[string]bool{}
	for _, a := range attrs {
		key := a.Name.Local
		if a.Name.Space != "" {
			key = a.Name.Space + ":" + key
		}
		seen[key] = true
		if _, ok := el.attrs[key]; !ok {
			errs = append(errs, fmt.Errorf("line %d: <%s> has attribute %s, which the schema does not allow", line, name, key))
			continue
		}
		switch {
		case key == "time" && !surefireTime.MatchString(a.Value):
			errs = append(errs, fmt.Errorf("line %d: <%s time=%q>: not of the pattern of SUREFIRE_TIME", line, name, a.Value))
		case countAttrs[key] && !isCount(a.Value):
			errs = append(errs, fmt.Errorf("line %d: <%s %s=%q>: not a count", line, name, key, a.Value))
		}
	}
	for key, required := range el.attrs {
		if required && !seen[key] {
			errs = append(errs, fmt.Errorf("line %d: <%s> without its required attribute %s", line, name, key))
		}
	}
	return errs
}

func isCount(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 0 && !strings.HasPrefix(s, "+")
}
