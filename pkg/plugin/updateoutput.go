package plugin

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/kubectl-crd/kubectl-crd/internal/safewrite"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/finding"
	"github.com/kubectl-crd/kubectl-crd/pkg/engine/kubeversion"
)

// updateOutput is where check-update writes its report, an item at a time:
// to a spool, so that nothing reaches stdout, nor stderr for the text
// report's warnings, before the last object is checked.
type updateOutput struct {
	spool *safewrite.Spool
	// -o json: the report, written as marshalJSON writes it whole.
	doc   *jsonObjectWriter
	items *jsonArray
	// text: each write to stdout or stderr, as a record of the spool.
	out, errOut io.Writer
	err         error
	// upgrades, of -o json, follow the items.
	upgrades  []upgradeReport
	isUpgrade bool
	// gate says which findings are errors.
	gate finding.Gate
	// findings is the report of -o sarif, junit or github, instead.
	findings *reportOutput
}

func newUpdateOutput(format string, gate finding.Gate, findings *reportOutput) (*updateOutput, error) {
	if findings != nil {
		return &updateOutput{gate: gate, findings: findings}, nil
	}
	spool, err := safewrite.NewSpool()
	if err != nil {
		return nil, &ExitError{Code: ExitInternal, Err: fmt.Errorf("a spool for the output: %w", err)}
	}
	u := &updateOutput{spool: spool, gate: gate}
	if format == "json" {
		u.doc = &jsonObjectWriter{w: spool}
		u.doc.Key("items")
		u.items = u.doc.Array()
	} else {
		u.out, u.errOut = spoolRecords{u, 'o'}, spoolRecords{u, 'e'}
	}
	return u, nil
}

// addUpgrades adds the report of CRD upgrades: in text, before the items.
func (u *updateOutput) addUpgrades(up *upgradeCheck, strict bool) error {
	if u.findings != nil {
		for _, obj := range up.reportObjects(strict, u.gate) {
			if err := u.findings.Add(obj); err != nil {
				return err
			}
		}
		return nil
	}
	if u.items != nil {
		u.upgrades, u.isUpgrade = up.reports(), true
		return nil
	}
	return up.print(u.out)
}

// Add writes the next item of the report.
func (u *updateOutput) Add(it updateItem) error {
	if u.findings != nil {
		return u.findings.Add(reportObject(it.Object, it.Source, it.missing(), it.findings))
	}
	if u.items != nil {
		u.items.Add(it)
		return nil
	}
	printUpdateItem(u.out, u.errOut, it)
	return nil
}

// Finish writes the report on out, and on errOut the text report's
// warnings, each where it was written among the lines of out: on one
// terminal a warning stays next to its object's line.
func (u *updateOutput) Finish(out, errOut io.Writer, warnings []inputWarning) error {
	if u.findings != nil {
		// The warnings about the inputs, as prune's report has them: a
		// CRD's finding that fails the run is a failing result.
		for _, w := range warningObjects(warnings) {
			if err := u.findings.Add(w); err != nil {
				return err
			}
		}
		return u.findings.Finish(out)
	}
	if u.items != nil {
		if err := u.items.Close(); err != nil {
			return spoolError(err)
		}
		u.doc.Key(kubeversion.Key)
		u.doc.Value(kubeversion.Current().Stamp())
		if u.isUpgrade {
			u.doc.Key("upgrades")
			arr := u.doc.Array()
			for _, r := range u.upgrades {
				arr.addFunc(r.writeJSON)
			}
			if err := arr.Close(); err != nil {
				return spoolError(err)
			}
		}
		if err := u.doc.Close(); err != nil {
			return spoolError(err)
		}
		if err := u.spool.Rewind(); err != nil {
			return spoolError(err)
		}
		_, err := io.Copy(out, u.spool)
		return err
	}
	if u.err != nil {
		return spoolError(u.err)
	}
	if err := u.spool.Rewind(); err != nil {
		return spoolError(err)
	}
	r := bufio.NewReader(u.spool)
	var buf []byte
	for {
		stream, err := r.ReadByte()
		if err == io.EOF {
			return nil
		}
		var n uint64
		if err == nil {
			n, err = binary.ReadUvarint(r)
		}
		if err == nil {
			buf = slices.Grow(buf[:0], int(n))[:n]
			_, err = io.ReadFull(r, buf)
		}
		if err != nil {
			return spoolError(err)
		}
		w := out
		if stream == 'e' {
			w = errOut
		}
		// A failed write is not returned, as when printed at once: Run
		// checks every write to both streams.
		_, _ = w.Write(buf)
	}
}

// Close removes the spool (the report's is its owner's).
func (u *updateOutput) Close() {
	if u.spool != nil {
		u.spool.Close()
	}
}

// spoolRecords is a stream of the text report: each write is a record of
// the spool, the stream's byte, the length and the bytes.
type spoolRecords struct {
	u      *updateOutput
	stream byte
}

func (s spoolRecords) Write(p []byte) (int, error) {
	if s.u.err != nil {
		return 0, s.u.err
	}
	rec := binary.AppendUvarint([]byte{s.stream}, uint64(len(p)))
	if _, s.u.err = s.u.spool.Write(append(rec, p...)); s.u.err != nil {
		return 0, s.u.err
	}
	return len(p), nil
}
