package fileread

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/kubectl-crd/kubectl-crd/pkg/engine/document"
)

func TestBoundIsTheDocuments(t *testing.T) {
	if MaxBytes != document.MaxDocumentBytes {
		t.Fatalf("MaxBytes %d, documents %d", MaxBytes, document.MaxDocumentBytes)
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("lockVersion: 1\n"), 0o644)
	data, err := ReadLimit(small, 15)
	if err != nil || string(data) != "lockVersion: 1\n" {
		t.Fatalf("ReadLimit: %q, %v", data, err)
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o644)
	if data, err := Read(empty); err != nil || len(data) != 0 {
		t.Fatalf("Read of an empty file: %q, %v", data, err)
	}
	var tl *TooLargeError
	if _, err := ReadLimit(small, 14); !errors.As(err, &tl) || tl.Path != small {
		t.Fatalf("a file over the bound: %v", err)
	}
	if _, err := Read(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
}

// TestDeviceBounded: /dev/zero never ends; it is refused after the bound.
func TestDeviceBounded(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no /dev/zero")
	}
	_, err := ReadLimit("/dev/zero", 1<<20)
	var tl *TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("/dev/zero: %v", err)
	}
	if got := err.Error(); got != "/dev/zero: larger than 1 MiB, the most kubectl crd reads of a file" {
		t.Fatalf("message %q", got)
	}
}
