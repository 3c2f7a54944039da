package safewrite

import (
	"os"
)

// Spool is a scratch file for what a run holds back until it knows it has
// succeeded (output that must not reach a pipeline if a later document is
// bad), or reads twice (standard input): on disk, so that memory stays
// bounded by one document. Its name is removed at once where the system
// allows an open file without a name (Unix), so that nothing is left behind
// whatever ends the process; elsewhere on Close and on SIGINT or SIGTERM.
type Spool struct {
	*os.File
	name string // until removed
}

// NewSpool creates a spool in the system's temporary directory.
func NewSpool() (*Spool, error) {
	f, err := createTemp(os.TempDir(), "spool-")
	if err != nil {
		return nil, err
	}
	s := &Spool{File: f}
	if err := removeTemp(f.Name()); err != nil {
		s.name = f.Name() // removed on Close, or on a signal
	}
	return s, nil
}

// Rewind moves back to the start, to read what was written.
func (s *Spool) Rewind() error {
	_, err := s.Seek(0, 0)
	return err
}

// Close closes the spool and removes it.
func (s *Spool) Close() error {
	err := s.File.Close()
	if s.name != "" {
		removeTemp(s.name)
		s.name = ""
	}
	return err
}
