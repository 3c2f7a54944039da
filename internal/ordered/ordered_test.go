package ordered

import (
	"errors"
	"math/rand"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func produceN(n int, emitted *atomic.Int64) func(func(int) error) error {
	return func(emit func(int) error) error {
		for i := 0; i < n; i++ {
			if err := emit(i); err != nil {
				return err
			}
			if emitted != nil {
				emitted.Add(1)
			}
		}
		return nil
	}
}

func TestMapKeepsOrder(t *testing.T) {
	for _, workers := range []int{1, 2, 4, 8} {
		var got []int
		err := Map(workers, produceN(500, nil), func(i int) int {
			time.Sleep(time.Duration(rand.Intn(50)) * time.Microsecond)
			return i * i
		}, func(i, sq int) error {
			if sq != i*i {
				t.Fatalf("workers %d: item %d has result %d", workers, i, sq)
			}
			got = append(got, i)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 500 {
			t.Fatalf("workers %d: %d items done, want 500", workers, len(got))
		}
		for i, v := range got {
			if v != i {
				t.Fatalf("workers %d: item %d done at position %d", workers, v, i)
			}
		}
	}
}

func TestMapRunsConcurrently(t *testing.T) {
	var running, most atomic.Int64
	err := Map(4, produceN(64, nil), func(i int) int {
		n := running.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(2 * time.Millisecond)
		running.Add(-1)
		return i
	}, func(int, int) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if m := most.Load(); m < 2 || m > 4 {
		t.Fatalf("at most %d items worked on at once, want 2 to 4", m)
	}
}

func TestMapBoundsItemsInFlight(t *testing.T) {
	var emitted atomic.Int64
	doneCount := 0
	err := Map(2, produceN(1000, &emitted), func(i int) int { return i }, func(int, int) error {
		doneCount++
		// Emitted but not done: in the channels, with the workers, or one in emit.
		if ahead := emitted.Load() - int64(doneCount); ahead > 2*2+2+2 {
			t.Fatalf("%d items emitted ahead of done", ahead)
		}
		time.Sleep(10 * time.Microsecond)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestMapStopsAtDoneError(t *testing.T) {
	for _, workers := range []int{1, 3} {
		boom := errors.New("boom")
		var emitted atomic.Int64
		var last int
		err := Map(workers, produceN(100000, &emitted), func(i int) int { return i }, func(i, _ int) error {
			last = i
			if i == 10 {
				return boom
			}
			return nil
		})
		if !errors.Is(err, boom) {
			t.Fatalf("workers %d: error %v, want boom", workers, err)
		}
		if last != 10 {
			t.Fatalf("workers %d: done called after its error, up to item %d", workers, last)
		}
		if n := emitted.Load(); n > 100 {
			t.Fatalf("workers %d: produce went on to emit %d items after the run stopped", workers, n)
		}
	}
}

func TestMapReturnsProduceError(t *testing.T) {
	bad := errors.New("bad input")
	for _, workers := range []int{1, 2} {
		var done int
		err := Map(workers, func(emit func(int) error) error {
			for i := 0; i < 5; i++ {
				if err := emit(i); err != nil {
					return err
				}
			}
			return bad
		}, func(i int) int { return i }, func(int, int) error { done++; return nil })
		if !errors.Is(err, bad) || done != 5 {
			t.Fatalf("workers %d: error %v after %d items, want bad input after 5", workers, err, done)
		}
	}
}

func TestMapRaisesPanicsOnTheCaller(t *testing.T) {
	for name, work := range map[string]func(int) int{
		"work": func(i int) int {
			if i == 7 {
				panic("work panicked")
			}
			return i
		},
	} {
		func() {
			defer func() {
				r := recover()
				p, ok := r.(*panicked)
				if !ok || !strings.Contains(p.Error(), "work panicked") || !strings.Contains(p.Error(), "ordered_test.go") {
					t.Fatalf("%s: recovered %v, want the panic with its stack", name, r)
				}
			}()
			_ = Map(2, produceN(100, nil), work, func(int, int) error { return nil })
		}()
	}
	func() {
		defer func() {
			if p, ok := recover().(*panicked); !ok || !strings.Contains(p.Error(), "produce panicked") {
				t.Fatalf("recovered %v, want produce's panic", p)
			}
		}()
		_ = Map(2, func(emit func(int) error) error {
			_ = emit(1)
			panic("produce panicked")
		}, func(i int) int { return i }, func(int, int) error { return nil })
	}()
}

func TestSeqKeepsOrderAndStops(t *testing.T) {
	items := func(yield func(int) bool) {
		for i := 0; i < 100; i++ {
			if !yield(i) {
				return
			}
		}
	}
	for _, workers := range []int{1, 4} {
		var got []int
		for i, sq := range Seq(workers, items, func(i int) int {
			if i%7 == 0 {
				time.Sleep(time.Millisecond) // later results overtake it
			}
			return i * i
		}) {
			if sq != i*i {
				t.Fatalf("workers %d: item %d got %d", workers, i, sq)
			}
			got = append(got, i)
			if i == 41 {
				break
			}
		}
		if len(got) != 42 || got[41] != 41 {
			t.Fatalf("workers %d: got %v, want 0..41 in order", workers, got)
		}
	}
}
