package report

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// obj and arr read a member of a decoded JSON object as an object or an
// array, failing the test when it is not one.
func obj(t *testing.T, v interface{}, where string) map[string]interface{} {
	t.Helper()
	m, ok := v.(map[string]interface{})
	if !ok {
		t.Fatalf("%s: not an object: %v", where, v)
	}
	return m
}

func arr(t *testing.T, v interface{}, where string) []interface{} {
	t.Helper()
	a, ok := v.([]interface{})
	if !ok {
		t.Fatalf("%s: not an array: %v", where, v)
	}
	return a
}

func str(t *testing.T, v interface{}, where string) string {
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
// cluster. It returns the results' count by level.
func CheckSARIF(t *testing.T, doc []byte) map[string]int {
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
	rules := checkSARIFRules(t, arr(t, driver["rules"], "tool.driver.rules"))
	levels := map[string]int{}
	for i, r := range arr(t, run["results"], "results") {
		checkSARIFResult(t, obj(t, r, "result"), i, rules, levels)
	}
	return levels
}

// checkSARIFRules checks the reportingDescriptors; the ids by index.
func checkSARIFRules(t *testing.T, rules []interface{}) []string {
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

func checkSARIFResult(t *testing.T, res map[string]interface{}, i int, rules []string, levels map[string]int) {
	t.Helper()
	id := str(t, res["ruleId"], "ruleId")
	idx, ok := res["ruleIndex"].(float64)
	if !ok || int(idx) < 0 || int(idx) >= len(rules) || rules[int(idx)] != id {
		t.Errorf("result %d: ruleId %s, ruleIndex %v: not that rule", i, id, res["ruleIndex"])
	}
	if !validLevel(res["level"]) {
		t.Errorf("result %d: level %v not of the enum", i, res["level"])
	}
	levels[res["level"].(string)]++
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
		return
	}
	phys := obj(t, loc["physicalLocation"], "physicalLocation")
	uri := str(t, obj(t, phys["artifactLocation"], "artifactLocation")["uri"], "artifactLocation.uri")
	if _, err := url.Parse(uri); err != nil {
		t.Errorf("result %d: uri %q: %v", i, uri, err)
	}
	region := obj(t, phys["region"], "region")
	if line, ok := region["startLine"].(float64); !ok || line < 1 || line != float64(int(line)) {
		t.Errorf("result %d: startLine %v", i, region["startLine"])
	}
	if col, ok := region["startColumn"]; ok {
		if c, _ := col.(float64); c < 1 {
			t.Errorf("result %d: startColumn %v", i, col)
		}
	}
}

func TestSARIF(t *testing.T) {
	doc := render(t, SARIF, sample())
	levels := CheckSARIF(t, []byte(doc))
	total := 0
	for _, n := range levels {
		total += n
	}
	if total != sampleFindings || levels["error"] != sampleFailing {
		t.Errorf("levels %v: want %d results, %d errors", levels, sampleFindings, sampleFailing)
	}
	if levels["note"] != 2 {
		t.Errorf("levels %v: want 2 notes (Reformatted, CRDChange info)", levels)
	}
	for _, want := range []string{
		`"uri": "dir%20with%20space/a,b:c.yaml"`, // no result: an object without findings
		`"uri": "file:///abs/thing.yaml"`,
		`"uri": "-"`,
		`"startLine": 9`,
	} {
		if want == `"uri": "dir%20with%20space/a,b:c.yaml"` {
			if strings.Contains(doc, "dir%20with") {
				t.Errorf("a result for an object without findings")
			}
			continue
		}
		if !strings.Contains(doc, want) {
			t.Errorf("no %s in\n%s", want, doc)
		}
	}
}

func TestSARIFEmpty(t *testing.T) {
	doc := render(t, SARIF, nil)
	if levels := CheckSARIF(t, []byte(doc)); len(levels) != 0 {
		t.Errorf("results in an empty run: %v", levels)
	}
	if !strings.Contains(doc, `"results": []`) {
		t.Errorf("no empty results:\n%s", doc)
	}
}
