package source

import (
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Helm's repository configuration is found where helm keeps it, and a
// repository's entry by its URL, a trailing slash or credentials aside.
func TestHelmRepositoryConfig(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HELM_REPOSITORY_CONFIG", "")
	t.Setenv("HELM_CONFIG_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", dir)
	if got, want := helmRepositoryConfig(), filepath.Join(dir, "helm", "repositories.yaml"); got != want {
		t.Errorf("XDG_CONFIG_HOME: %s, want %s", got, want)
	}
	t.Setenv("HELM_CONFIG_HOME", filepath.Join(dir, "home"))
	if got, want := helmRepositoryConfig(), filepath.Join(dir, "home", "repositories.yaml"); got != want {
		t.Errorf("HELM_CONFIG_HOME: %s, want %s", got, want)
	}
	config := filepath.Join(dir, "repos.yaml")
	t.Setenv("HELM_REPOSITORY_CONFIG", config)
	if got := helmRepositoryConfig(); got != config {
		t.Errorf("HELM_REPOSITORY_CONFIG: %s", got)
	}
	repo, _ := url.Parse("https://u:p@charts.example.com/stable/")
	if r, err := findHelmRepository(repo); r != nil || err != nil {
		t.Errorf("no configuration: %v %v", r, err)
	}
	if err := os.WriteFile(config, []byte("repositories:\n- name: a\n  url: https://charts.example.com\n- name: b\n  url: https://charts.example.com/stable\n  username: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r, err := findHelmRepository(repo); err != nil || r == nil || r.Name != "b" || r.Username != "x" {
		t.Errorf("the entry of the URL: %+v %v", r, err)
	}
	other, _ := url.Parse("https://charts.example.com/incubator")
	if r, err := findHelmRepository(other); r != nil || err != nil {
		t.Errorf("another URL: %+v %v", r, err)
	}
	if runtime.GOOS != "windows" {
		if err := os.Chmod(config, 0); err == nil && os.Getuid() != 0 {
			if _, err := findHelmRepository(repo); err == nil {
				t.Error("an unreadable configuration: no error")
			}
		}
	}
}
