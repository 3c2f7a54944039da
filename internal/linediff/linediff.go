// Package linediff writes the unified diff of two texts, as "diff -u" does,
// for "kubectl crd prune --diff". Lines are matched by Myers' O(ND)
// algorithm, which finds a shortest edit script.
package linediff

import (
	"bytes"
	"fmt"
)

// context is the number of unchanged lines around a change, diff -u's default.
const context = 3

// op is one line of an edit script.
type op struct {
	kind byte // ' ', '-' or '+'
	a, b int  // the line's index in a (for ' ' and '-') and in b (for ' ' and '+')
}

// Unified is the unified diff from a to b, headed "--- aName" and
// "+++ bName"; nil when they are equal. A last line without a line break
// is marked as diff marks it.
func Unified(aName, bName string, a, b []byte) []byte {
	if bytes.Equal(a, b) {
		return nil
	}
	al, bl := lines(a), lines(b)
	script := edits(al, bl)
	var out bytes.Buffer
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", aName, bName)
	for start := 0; start < len(script); {
		// Find the next change, then extend the hunk while the next change
		// is at most 2*context unchanged lines away.
		first := start
		for first < len(script) && script[first].kind == ' ' {
			first++
		}
		if first == len(script) {
			break
		}
		end := first // one past the last change of the hunk
		for i := first; i < len(script); {
			if script[i].kind != ' ' {
				i++
				end = i
				continue
			}
			j := i
			for j < len(script) && script[j].kind == ' ' {
				j++
			}
			if j == len(script) || j-i > 2*context {
				break
			}
			i = j
		}
		from := max(first-context, start)
		to := min(end+context, len(script))
		writeHunk(&out, script[from:to], al, bl)
		start = to
	}
	return out.Bytes()
}

func writeHunk(out *bytes.Buffer, ops []op, al, bl [][]byte) {
	// The hunk's first line in a and in b, and how many of each it holds.
	aStart, bStart, aCount, bCount := -1, -1, 0, 0
	for _, o := range ops {
		if o.kind != '+' {
			if aStart < 0 {
				aStart = o.a
			}
			aCount++
		}
		if o.kind != '-' {
			if bStart < 0 {
				bStart = o.b
			}
			bCount++
		}
	}
	// An empty side is named by the line before it.
	if aStart < 0 {
		aStart = ops[0].a
	}
	if bStart < 0 {
		bStart = ops[0].b
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(aStart, aCount), hunkRange(bStart, bCount))
	for _, o := range ops {
		var line []byte
		if o.kind == '+' {
			line = bl[o.b]
		} else {
			line = al[o.a]
		}
		out.WriteByte(o.kind)
		out.Write(line)
		if !bytes.HasSuffix(line, []byte("\n")) {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange is "line,count" with a 1-based line, or the line alone when
// the count is 1; for an empty range, the line before it.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprint(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

// lines splits text after each line break; a last line without one is kept.
func lines(text []byte) [][]byte {
	var out [][]byte
	for len(text) > 0 {
		i := bytes.IndexByte(text, '\n') + 1
		if i == 0 {
			i = len(text)
		}
		out = append(out, text[:i])
		text = text[i:]
	}
	return out
}

// edits is a shortest edit script from al to bl, in order, with a change's
// deletions before its insertions as diff writes them. For an unchanged
// line of a script, a is its index in al and b in bl; for a deletion, b is
// where it goes in bl, and for an insertion a where it comes from in al, so
// that an empty side of a hunk can be named.
func edits(al, bl [][]byte) []op {
	// Lines compared as numbers: equal lines get the same one.
	ids := map[string]int{}
	id := func(ls [][]byte) []int {
		out := make([]int, len(ls))
		for i, l := range ls {
			n, ok := ids[string(l)]
			if !ok {
				n = len(ids)
				ids[string(l)] = n
			}
			out[i] = n
		}
		return out
	}
	a, b := id(al), id(bl)

	// Common prefix and suffix first: prune's changes are small, and this
	// keeps the quadratic part of the search small.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var script []op
	for i := 0; i < pre; i++ {
		script = append(script, op{' ', i, i})
	}
	mid := myers(a[pre:len(a)-suf], b[pre:len(b)-suf])
	// Within each run of changes, deletions first.
	for i := 0; i < len(mid); {
		if mid[i].kind == ' ' {
			script = append(script, op{' ', mid[i].a + pre, mid[i].b + pre})
			i++
			continue
		}
		j := i
		for j < len(mid) && mid[j].kind != ' ' {
			j++
		}
		for _, kind := range []byte{'-', '+'} {
			for _, o := range mid[i:j] {
				if o.kind == kind {
					script = append(script, op{kind, o.a + pre, o.b + pre})
				}
			}
		}
		i = j
	}
	for i := 0; i < suf; i++ {
		script = append(script, op{' ', len(a) - suf + i, len(b) - suf + i})
	}
	return script
}

// myers is a shortest edit script from a to b (E. Myers, "An O(ND)
// Difference Algorithm and Its Variations", 1986): for each number of edits
// d, the furthest point reached on each diagonal k = x - y, kept per d to
// walk the path back.
func myers(a, b []int) []op {
	n, m := len(a), len(b)
	offset := n + m + 1
	v := make([]int, 2*offset+1)
	var trace [][]int
	for d := 0; d <= n+m; d++ {
		trace = append(trace, append([]int(nil), v...))
		done := false
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[offset+k-1] < v[offset+k+1]) {
				x = v[offset+k+1] // down: an insertion
			} else {
				x = v[offset+k-1] + 1 // right: a deletion
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[offset+k] = x
			if x >= n && y >= m {
				done = true
				break
			}
		}
		if done {
			trace = append(trace, v)
			break
		}
	}
	// Walk back from (n, m): trace[d] holds the points before step d.
	var rev []op
	x, y := n, m
	for d := len(trace) - 2; d >= 0; d-- {
		v := trace[d]
		k := x - y
		var prevK int
		if k == -d || (k != d && v[offset+k-1] < v[offset+k+1]) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := v[offset+prevK]
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x, y = x-1, y-1
			rev = append(rev, op{' ', x, y})
		}
		if d > 0 {
			if x == prevX {
				y--
				rev = append(rev, op{'+', x, y})
			} else {
				x--
				rev = append(rev, op{'-', x, y})
			}
		}
		x, y = prevX, prevY
	}
	script := make([]op, len(rev))
	for i, o := range rev {
		script[len(rev)-1-i] = o
	}
	return script
}
