package kubeversion

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Embedded names the release of the server code linked:
// k8s.io/apiextensions-apiserver v0.X.Y is Kubernetes 1.X.Y, and Code says
// the patch.
func TestEmbedded(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "k8s.io/apiextensions-apiserver").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v0.")
	if want := "1." + v; Current().Code != want && Current().Code != Embedded.String() {
		t.Errorf("Code = %s, want %s", Current().Code, want)
	}
	if minor, _, _ := strings.Cut(v, "."); Embedded.String() != "1."+minor {
		t.Errorf("Embedded = %s, but apiextensions-apiserver is v0.%s", Embedded, v)
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]Minor{"1.31": 31, "v1.33": 33, "1.37.2": 37, "v1.34.1-eks-1234": 34, " 1.35 ": 35} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"1.30", "1.38", "2.1", "131", "latest", ""} {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), "1.31 to 1.37") {
			t.Errorf("Parse(%q): %v, want an error naming the range", in, err)
		}
	}
}

func TestNearest(t *testing.T) {
	for _, tc := range []struct {
		git, major, minor string
		want              Minor
		warns             bool
	}{
		{"v1.33.4", "1", "33", 33, false},
		{"v1.31.14-eks-abc", "1", "31+", 31, false},
		{"v1.29.0", "1", "29", 31, true},
		{"v1.40.0", "1", "40", 37, true},
		{"weird", "1", "32+", 32, false},
	} {
		got, warning, err := Nearest(tc.git, tc.major, tc.minor)
		if err != nil || got != tc.want || (warning != "") != tc.warns {
			t.Errorf("Nearest(%q) = %v, %q, %v; want %v (warning: %v)", tc.git, got, warning, err, tc.want, tc.warns)
		}
	}
	if _, _, err := Nearest("weird", "", ""); err == nil {
		t.Error("a version that says no minor: no error")
	}
}

func TestAnswerWords(t *testing.T) {
	a := Answer{Minor: 31, Code: "1.37.2"}
	if got, want := a.String(), "kube-apiserver 1.31, emulated by kube-apiserver 1.37.2 (compatibility version 1.30)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if got, want := (Answer{Minor: 37, Code: "1.37.2"}).String(), "kube-apiserver 1.37.2"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// The stamp of an emulated minor and of the embedded one's own code; its
// properties are its JSON's members, named alike, with the same values.
func TestStamp(t *testing.T) {
	for _, tc := range []struct {
		a        Answer
		json     string
		verdicts string
	}{
		{Answer{Minor: 32, Code: "1.37.2"},
			`{"version":"1.32","emulated":true,"by":"kube-apiserver 1.37.2","compatibilityVersion":"1.31"}`,
			"verdicts of kube-apiserver 1.32, emulated by kube-apiserver 1.37.2 (compatibility version 1.31)"},
		{Answer{Minor: 31, Code: "1.37.2"},
			`{"version":"1.31","emulated":true,"by":"kube-apiserver 1.37.2","compatibilityVersion":"1.30","differences":[` +
				strconv.Quote(differences[0].what) + `]}`,
			"verdicts of kube-apiserver 1.31, emulated by kube-apiserver 1.37.2 (compatibility version 1.30)"},
		{Answer{Minor: 37, Code: "1.37.2"},
			`{"version":"1.37","emulated":false,"by":"kube-apiserver 1.37.2"}`,
			"verdicts of kube-apiserver 1.37, by kube-apiserver 1.37.2's own code"},
	} {
		s := tc.a.Stamp()
		b, err := json.Marshal(s)
		if err != nil || string(b) != tc.json {
			t.Errorf("%v: %s, %v; want %s", tc.a, b, err, tc.json)
		}
		if got := tc.a.Verdicts(); got != tc.verdicts {
			t.Errorf("%v: %q, want %q", tc.a, got, tc.verdicts)
		}
		var members map[string]interface{}
		if err := json.Unmarshal(b, &members); err != nil {
			t.Fatal(err)
		}
		props := s.Properties()
		want := len(members) // differences: one property each
		if len(s.Differences) > 0 {
			want += len(s.Differences) - 1
		}
		if len(props) != want {
			t.Errorf("%v: properties %v, JSON %s", tc.a, props, b)
		}
		for _, p := range props {
			name, ok := strings.CutPrefix(p.Name, Key+".")
			v, in := members[name]
			if n, isDiff := strings.CutPrefix(name, "differences."); ok && isDiff {
				i, err := strconv.Atoi(n)
				v, in = nil, err == nil && i < len(s.Differences)
				if in {
					v = s.Differences[i]
				}
			}
			if !ok || !in || fmt.Sprint(v) != p.Value {
				t.Errorf("%v: property %s=%s, JSON %s", tc.a, p.Name, p.Value, b)
			}
		}
	}
}

// Each asks every minor in order and ends with the minor that answered
// before, also when f fails.
func TestEach(t *testing.T) {
	t.Cleanup(func() { Use(Embedded) })
	if _, err := Use(33); err != nil {
		t.Fatal(err)
	}
	var seen []Minor
	err := Each([]Minor{31, 35, 37}, func(m Minor) error {
		if Current().Minor != m {
			t.Errorf("f(%s) while %s answers", m, Current().Minor)
		}
		seen = append(seen, m)
		return nil
	})
	if err != nil || fmt.Sprint(seen) != "[1.31 1.35 1.37]" || Current().Minor != 33 {
		t.Errorf("Each: %v, saw %v, then %s answers; want [1.31 1.35 1.37], then 1.33", err, seen, Current().Minor)
	}
	stop := errors.New("stop")
	if err := Each([]Minor{32, 34}, func(Minor) error { return stop }); err != stop || Current().Minor != 33 {
		t.Errorf("Each with f failing: %v, then %s answers; want stop, then 1.33", err, Current().Minor)
	}
	if err := Each([]Minor{30}, func(Minor) error { return nil }); err == nil || Current().Minor != 33 {
		t.Errorf("Each([1.30]): %v, then %s answers; want an error, then 1.33", err, Current().Minor)
	}
}
