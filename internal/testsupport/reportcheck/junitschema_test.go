package reportcheck

import (
	"strings"
	"testing"
)

// The schema's facts, each tried: a document it allows, then what it
// refuses (the first two are what our reports held before issue 38).
func TestJUnitSchema(t *testing.T) {
	const valid = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="r" time="1,234.5" tests="2" failures="1" errors="0">
  <testsuite name="a.yaml" tests="2" failures="1" errors="0" skipped="0" file="a.yaml" time="0.25" timestamp="t" hostname="h" id="1" package="p" group="g" log="l" url="u">
    <properties><property name="k" value="v"/></properties>
    <testcase name="x" classname="a.yaml" time="1" group="g">
      <failure message="m" type="Invalid">text</failure>
      <system-out>out</system-out>
    </testcase>
    <testcase name="y"><skipped message="s"/><error type="t">e</error><system-err>err</system-err></testcase>
    <testsuite name="nested" tests="0" failures="0" errors="0"/>
    <system-out/>
    <system-err>notes</system-err>
  </testsuite>
</testsuites>
`
	if errs := JUnitSchema([]byte(valid)); len(errs) > 0 {
		t.Errorf("a valid document refused: %v", errs)
	}
	for _, tc := range []struct{ name, from, to, want string }{
		{"skipped on testsuites", `errors="0">`, `errors="0" skipped="0">`, "<testsuites> has attribute skipped"},
		{"file on testcase", `classname="a.yaml"`, `classname="a.yaml" file="a.yaml"`, "<testcase> has attribute file"},
		{"a testsuite without a name", `<testsuite name="a.yaml" `, `<testsuite `, "<testsuite> without its required attribute name"},
		{"a testsuite without its counts", ` tests="2" failures="1" errors="0" skipped`, ` skipped`, "without its required attribute tests"},
		{"a testcase without a name", `<testcase name="y">`, `<testcase>`, "<testcase> without its required attribute name"},
		{"a property without a value", `<property name="k" value="v"/>`, `<property name="k"/>`, "<property> without its required attribute value"},
		{"properties in a testcase", `<system-out>out</system-out>`, `<properties/>`, "<properties> not allowed in <testcase>"},
		{"an unknown element", `<system-out/>`, `<summary/>`, "<summary> not allowed in <testsuite>"},
		{"an attribute on failure", `type="Invalid"`, `type="Invalid" line="3"`, "<failure> has attribute line"},
		{"text in a testcase", `<system-out>out</system-out>`, `loose text`, `text "loose text" in <testcase>`},
		{"a time of another pattern", `time="0.25"`, `time="0.25s"`, "not of the pattern of SUREFIRE_TIME"},
		{"a count that is none", `tests="2" failures="1" errors="0" skipped="0"`, `tests="two" failures="1" errors="0" skipped="0"`, "not a count"},
		{"a testsuite as the root", "<testsuites name=\"r\" time=\"1,234.5\" tests=\"2\" failures=\"1\" errors=\"0\">\n", "", "root <testsuite>"},
	} {
		doc := strings.Replace(valid, tc.from, tc.to, 1)
		if tc.name == "a testsuite as the root" {
			doc = strings.Replace(doc, "</testsuites>\n", "", 1)
		}
		if doc == valid {
			t.Fatalf("%s: %q is not in the document", tc.name, tc.from)
		}
		errs := JUnitSchema([]byte(doc))
		var all []string
		for _, err := range errs {
			all = append(all, err.Error())
		}
		if !strings.Contains(strings.Join(all, "\n"), tc.want) {
			t.Errorf("%s: errors %q, want one with %q", tc.name, all, tc.want)
		}
	}
}
