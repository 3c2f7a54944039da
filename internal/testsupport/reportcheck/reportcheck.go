// Package reportcheck reads the CI reports of kubectl crd (-o sarif,
// junit, github) back, checking what each format requires, for the
// tests of the renderers and the end-to-end tests that compare them with
// the JSON reports.
package reportcheck

import (
	"encoding/json"
	"encoding/xml"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
)

// Finding is a finding as a report places it: its rule, level, file and
// line, and (SARIF only) its field path.
type Finding struct {
	Rule, Level string
	File        string
	Line        int
	Path        string
}

// obj and arr read a member of a decoded JSON object as an object or an
// array, failing the test when it is not one.
func obj(t testing.TB, v interface{}, where string) map[string]interface{} {
	t.Helper()
	m, ok := v.(map[string]interface{})
	if !ok {
		t.Fatalf("%s: not an object: %v", where, v)
	}
	return m
}

func arr(t testing.TB, v interface{}, where string) []interface{} {
	t.Helper()
	a, ok := v.([]interface{})
	if !ok {
		t.Fatalf("%s: not an array: %v", where, v)
	}
	return a
}

func str(t testing.TB, v interface{}, where string) string {
	t.Helper()
	s, ok := v.(string)
	if !ok || s == "" {
		t.Fatalf("%s: not a non-empty string: %v", where, v)
	}
	return s
}

// CheckSARIF checks what SARIF 2.1.0 requires of a log, field by field,
// and what we promise of ours: one run, every rule with its words and help
// link, every result of a known rule with a level of the enum, a message,
// and a physical location with a line >= 1 unless the object is of the
// cluster. It returns the results as findings.
func SARIF(t testing.TB, doc []byte) []Finding {
	t.Helper()
	var log map[string]interface{}
	if err := json.Unmarshal(doc, &log); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	if v := log["version"]; v != "2.1.0" {
		t.Errorf("version %v, want 2.1.0", v)
	}
	if s := str(t, log["$schema"], "$schema"); !strings.Contains(s, "sarif-schema-2.1.0") && !strings.Contains(s, "sarif-2.1.0") {
		t.Errorf("$schema %s is not SARIF 2.1.0's", s)
	}
	runs := arr(t, log["runs"], "runs")
	if len(runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs))
	}
	run := obj(t, runs[0], "runs[0]")
	driver := obj(t, obj(t, run["tool"], "tool")["driver"], "tool.driver")
	str(t, driver["name"], "tool.driver.name")
	str(t, driver["version"], "tool.driver.version")
	if u, err := url.Parse(str(t, driver["informationUri"], "informationUri")); err != nil || !u.IsAbs() {
		t.Errorf("informationUri %v is not an absolute URI", driver["informationUri"])
	}
	sarifKubernetes(t, run)
	rules := checkSARIFRules(t, arr(t, driver["rules"], "tool.driver.rules"))
	var out []Finding
	for i, r := range arr(t, run["results"], "results") {
		out = append(out, checkSARIFResult(t, obj(t, r, "result"), i, rules))
	}
	return out
}

// SARIFKubernetes is which minor answered, as the run's property
// kubernetes (docs/reports.md) says it.
func SARIFKubernetes(t testing.TB, doc []byte) kubeversion.Stamp {
	t.Helper()
	var log struct {
		Runs []map[string]interface{} `json:"runs"`
	}
	if err := json.Unmarshal(doc, &log); err != nil || len(log.Runs) != 1 {
		t.Fatalf("not a SARIF log of one run: %v\n%s", err, doc)
	}
	return sarifKubernetes(t, log.Runs[0])
}

// sarifKubernetes reads the run's property kubernetes, a kubeversion.Stamp
// of a minor, emulated or not, by some code.
func sarifKubernetes(t testing.TB, run map[string]interface{}) kubeversion.Stamp {
	t.Helper()
	props := obj(t, run["properties"], "runs[0].properties")
	b, err := json.Marshal(props[kubeversion.Key])
	if err != nil {
		t.Fatal(err)
	}
	return checkStamp(t, b, "runs[0].properties."+kubeversion.Key)
}

// checkStamp reads a kubeversion.Stamp strictly: every member known, the
// version a minor, by some code, a compatibility version exactly when
// emulated.
func checkStamp(t testing.TB, b []byte, where string) kubeversion.Stamp {
	t.Helper()
	var s kubeversion.Stamp
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("%s: %s: %v", where, b, err)
	}
	if _, err := kubeversion.Parse(s.Version); err != nil || !strings.HasPrefix(s.By, "kube-apiserver 1.") ||
		s.Emulated != (s.CompatibilityVersion != "") {
		t.Errorf("%s: %s: not which minor answered, and how", where, b)
	}
	return s
}

// checkSARIFRules checks the reportingDescriptors; the ids by index.
func checkSARIFRules(t testing.TB, rules []interface{}) []string {
	t.Helper()
	var ids []string
	for i, r := range rules {
		rule := obj(t, r, "rule")
		id := str(t, rule["id"], "rule.id")
		ids = append(ids, id)
		str(t, obj(t, rule["shortDescription"], id+".shortDescription")["text"], id+".shortDescription.text")
		str(t, obj(t, rule["help"], id+".help")["text"], id+".help.text")
		if u, err := url.Parse(str(t, rule["helpUri"], id+".helpUri")); err != nil || !u.IsAbs() || u.Fragment == "" {
			t.Errorf("rule %d (%s): helpUri %v is not an absolute URI with an anchor", i, id, rule["helpUri"])
		}
		level := obj(t, rule["defaultConfiguration"], id+".defaultConfiguration")["level"]
		if !validLevel(level) {
			t.Errorf("rule %s: default level %v", id, level)
		}
	}
	return ids
}

func validLevel(v interface{}) bool {
	switch v {
	case "none", "note", "warning", "error":
		return true
	}
	return false
}

func checkSARIFResult(t testing.TB, res map[string]interface{}, i int, rules []string) Finding {
	t.Helper()
	id := str(t, res["ruleId"], "ruleId")
	idx, ok := res["ruleIndex"].(float64)
	if !ok || int(idx) < 0 || int(idx) >= len(rules) || rules[int(idx)] != id {
		t.Errorf("result %d: ruleId %s, ruleIndex %v: not that rule", i, id, res["ruleIndex"])
	}
	if !validLevel(res["level"]) {
		t.Errorf("result %d: level %v not of the enum", i, res["level"])
	}
	f := Finding{Rule: id}
	f.Level, _ = res["level"].(string)
	if props, ok := res["properties"].(map[string]interface{}); ok {
		f.Path, _ = props["path"].(string)
	}
	str(t, obj(t, res["message"], "message")["text"], "message.text")
	locs := arr(t, res["locations"], "locations")
	if len(locs) != 1 {
		t.Fatalf("result %d: %d locations", i, len(locs))
	}
	loc := obj(t, locs[0], "location")
	if loc["physicalLocation"] == nil {
		// Only an object of the cluster has none: it has its name.
		logical := arr(t, loc["logicalLocations"], "logicalLocations")
		str(t, obj(t, logical[0], "logicalLocation")["fullyQualifiedName"], "fullyQualifiedName")
		return f
	}
	phys := obj(t, loc["physicalLocation"], "physicalLocation")
	uri := str(t, obj(t, phys["artifactLocation"], "artifactLocation")["uri"], "artifactLocation.uri")
	if u, err := url.Parse(uri); err != nil {
		t.Errorf("result %d: uri %q: %v", i, uri, err)
	} else {
		f.File = u.Path // of a relative reference, or of a file:/// URI
	}
	region := obj(t, phys["region"], "region")
	line, ok := region["startLine"].(float64)
	if !ok || line < 1 || line != float64(int(line)) {
		t.Errorf("result %d: startLine %v", i, region["startLine"])
	}
	f.Line = int(line)
	if col, ok := region["startColumn"]; ok {
		if c, _ := col.(float64); c < 1 {
			t.Errorf("result %d: startColumn %v", i, col)
		}
	}
	return f
}

// JUnitDoc is a JUnit document as read back: its suites, one per file.
type JUnitDoc struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is a testsuite: the objects of one file (File), or of none.
type JUnitSuite struct {
	Name     string `xml:"name,attr"`
	File     string `xml:"file,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr"`
	// Properties are which minor answered (kubeversion.Stamp's).
	Properties []struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	} `xml:"properties>property"`
	SystemErr string      `xml:"system-err"`
	Cases     []JUnitCase `xml:"testcase"`
}

// JUnitCase is a testcase.
type JUnitCase struct {
	Name      string `xml:"name,attr"`
	ClassName string `xml:"classname,attr"`
	Failures  []struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	} `xml:"failure"`
	Errors []struct {
		Message string `xml:"message,attr"`
	} `xml:"error"`
	Skipped *struct {
		Message string `xml:"message,attr"`
	} `xml:"skipped"`
	SystemOut string `xml:"system-out"`
}

// Cases are the testcases of every suite, in order.
func (d JUnitDoc) Cases() []JUnitCase {
	var out []JUnitCase
	for _, s := range d.Suites {
		out = append(out, s.Cases...)
	}
	return out
}

// SystemErr is the system-err of every suite, in order.
func (d JUnitDoc) SystemErr() string {
	var b strings.Builder
	for _, s := range d.Suites {
		b.WriteString(s.SystemErr)
	}
	return b.String()
}

// Kubernetes is which minor answered, as the properties of every suite
// say it (JUnit checks that they say the same).
func (d JUnitDoc) Kubernetes(t testing.TB) kubeversion.Stamp {
	t.Helper()
	if len(d.Suites) == 0 {
		t.Fatal("no testsuite")
	}
	return junitKubernetes(t, d.Suites[0])
}

// junitKubernetes reads the properties of s as a kubeversion.Stamp.
func junitKubernetes(t testing.TB, s JUnitSuite) kubeversion.Stamp {
	t.Helper()
	members := map[string]interface{}{}
	var differences []string
	for _, p := range s.Properties {
		name, ok := strings.CutPrefix(p.Name, kubeversion.Key+".")
		if n, isDiff := strings.CutPrefix(name, "differences."); ok && isDiff && n == strconv.Itoa(len(differences)) {
			differences = append(differences, p.Value)
			members["differences"] = differences
			continue
		}
		if !ok || members[name] != nil {
			t.Errorf("testsuite %s: property %s", s.Name, p.Name)
			continue
		}
		members[name] = p.Value
		if name == "emulated" {
			members[name] = p.Value == "true"
		}
	}
	b, _ := json.Marshal(members)
	return checkStamp(t, b, "testsuite "+s.Name+" properties")
}

// Skipped counts the skipped testcases of every suite.
func (d JUnitDoc) Skipped() int {
	n := 0
	for _, s := range d.Suites {
		n += s.Skipped
	}
	return n
}

// Totals are the testcases of every suite, and those failing: with a
// failure or an error.
func (d JUnitDoc) Totals() (tests, failing int) {
	for _, c := range d.Cases() {
		tests++
		failing += len(c.Failures) + len(c.Errors)
	}
	return tests, failing
}

// JUnit parses a JUnit document strictly, checks it against the JUnit
// schema CI servers validate with (JUnitSchema), and checks what we
// promise of ours: the counts are those of the elements (tests the
// testcases, failures the failure elements, skipped the skipped ones,
// errors none), per suite and in testsuites' sums; every testcase has a
// name and a classname; a suite of a file names it, and its testcases
// are of that class; no two suites are of one file.
func JUnit(t testing.TB, doc []byte) JUnitDoc {
	t.Helper()
	for _, err := range JUnitSchema(doc) {
		t.Errorf("not valid JUnit (junit-10.xsd): %v", err)
	}
	var d JUnitDoc
	dec := xml.NewDecoder(strings.NewReader(string(doc)))
	dec.Strict = true
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("not well-formed JUnit XML: %v\n%s", err, doc)
	}
	var tests, failures int
	files := map[string]bool{}
	for i, s := range d.Suites {
		if k := junitKubernetes(t, s); !reflect.DeepEqual(k, junitKubernetes(t, d.Suites[0])) {
			t.Errorf("testsuite %d says %+v answered, the first %+v", i, k, junitKubernetes(t, d.Suites[0]))
		}
		f, skipped := 0, 0
		for _, c := range s.Cases {
			if c.Name == "" || c.ClassName == "" {
				t.Errorf("testcase without name or classname: %+v", c)
			}
			if s.File != "" && c.ClassName != s.File {
				t.Errorf("suite of %s: a testcase of class %s", s.File, c.ClassName)
			}
			f += len(c.Failures)
			if c.Skipped != nil {
				skipped++
			}
		}
		if s.Tests != len(s.Cases) || s.Failures != f || s.Skipped != skipped || s.Errors != 0 {
			t.Errorf("testsuite %s counts tests=%d failures=%d skipped=%d errors=%d; its elements: %d, %d, %d",
				s.Name, s.Tests, s.Failures, s.Skipped, s.Errors, len(s.Cases), f, skipped)
		}
		if s.File != "" && s.Name != s.File || files[s.File] {
			t.Errorf("testsuite %q of file %q: not the one suite of its file", s.Name, s.File)
		}
		files[s.File] = true
		tests += s.Tests
		failures += s.Failures
	}
	if d.Tests != tests || d.Failures != failures || d.Errors != 0 {
		t.Errorf("testsuites counts %d/%d/%d, its suites' %d/%d/0", d.Tests, d.Failures, d.Errors, tests, failures)
	}
	return d
}

// GitHub reads workflow commands, a line each: "::LEVEL PROPS::MESSAGE"
// with LEVEL error, warning or notice and the properties file, line and
// title; the rule is the title's start, up to ": ". The first line is the
// notice of which minor answered (GitHubKubernetes), no finding.
func GitHub(t testing.TB, out string) []Finding {
	t.Helper()
	GitHubKubernetes(t, out)
	_, out, _ = strings.Cut(out, "\n")
	var found []Finding
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		head, _, ok := strings.Cut(strings.TrimPrefix(l, "::"), "::")
		level, props, _ := strings.Cut(head, " ")
		if !strings.HasPrefix(l, "::") || !ok || (level != "error" && level != "warning" && level != "notice") {
			t.Errorf("not a workflow command: %q", l)
			continue
		}
		f := Finding{Level: level}
		for _, p := range strings.Split(props, ",") {
			k, v, _ := strings.Cut(p, "=")
			v = unescapeProperty(v)
			switch k {
			case "file":
				f.File = v
			case "line":
				f.Line, _ = strconv.Atoi(v)
			case "title":
				f.Rule, _, _ = strings.Cut(v, ": ")
			}
		}
		found = append(found, f)
	}
	return found
}

// GitHubKubernetes is the words of the first line of out, the notice of
// which minor answered: "::notice title=Kubernetes 1.N::verdicts of
// kube-apiserver 1.N, ...", with no file; no other line is one.
func GitHubKubernetes(t testing.TB, out string) string {
	t.Helper()
	lines := strings.Split(out, "\n")
	head, words, ok := strings.Cut(lines[0], "::")
	if head != "" || !ok {
		t.Fatalf("the first line is no workflow command: %q", lines[0])
	}
	title, words, _ := strings.Cut(words, "::")
	version, ok := strings.CutPrefix(title, "notice title=Kubernetes ")
	if _, err := kubeversion.Parse(version); !ok || err != nil || !strings.HasPrefix(words, "verdicts of kube-apiserver "+version+", ") {
		t.Errorf("the first line is not the notice of which minor answered: %q", lines[0])
	}
	for _, l := range lines[1:] {
		if strings.Contains(l, "title=Kubernetes ") {
			t.Errorf("a second notice of which minor answered: %q", l)
		}
	}
	return words
}

func unescapeProperty(s string) string {
	return strings.NewReplacer("%3A", ":", "%2C", ",", "%0D", "\r", "%0A", "\n", "%25", "%").Replace(s)
}
