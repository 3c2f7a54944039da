// Package ordered runs the work on a stream of items on every core and
// hands the results on in the stream's order: what a command that checks
// documents one after another and prints them in their order needs to use
// both cores of a CI machine.
package ordered

import (
	"errors"
	"fmt"
	"iter"
	"runtime"
	"runtime/debug"
	"sync"
)

// Workers is how many goroutines Map runs work on by default: GOMAXPROCS.
func Workers() int { return runtime.GOMAXPROCS(0) }

// Map reads the items produce emits, runs work on each on up to workers
// goroutines, and calls done with each item and its result, in the order
// produce emitted them, on the calling goroutine. At most 2×workers items
// are between produce and done at any time, so memory is bounded by the
// largest items, not by the stream.
//
// produce runs on a goroutine of its own; emit returns an error once the
// run stops (done failed), and produce should return it. The error of Map
// is done's first, else produce's. A panic in produce or work is raised
// again on the calling goroutine, with the stack where it happened. With
// workers ≤ 1, everything runs on the calling goroutine, in turn.
func Map[T, R any](workers int, produce func(emit func(T) error) error, work func(T) R, done func(T, R) error) error {
	if workers <= 1 {
		return produce(func(t T) error { return done(t, work(t)) })
	}
	type slot struct {
		item   T
		result R
		panic  *panicked
		ready  chan struct{}
	}
	var (
		order    = make(chan *slot, 2*workers) // in produce's order, for done
		jobs     = make(chan *slot, workers)
		stop     = make(chan struct{})
		stopOnce sync.Once
		wg       sync.WaitGroup
	)
	halt := func() { stopOnce.Do(func() { close(stop) }) }
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range jobs {
				func() {
					defer func() {
						if r := recover(); r != nil {
							s.panic = &panicked{value: r, stack: debug.Stack()}
						}
						close(s.ready)
					}()
					s.result = work(s.item)
				}()
			}
		}()
	}
	var produceErr error
	var producePanic *panicked
	go func() {
		defer func() {
			if r := recover(); r != nil {
				producePanic = &panicked{value: r, stack: debug.Stack()}
			}
			close(jobs)
			close(order)
		}()
		produceErr = produce(func(t T) error {
			s := &slot{item: t, ready: make(chan struct{})}
			select {
			case order <- s:
			case <-stop:
				return errStopped
			}
			select {
			case jobs <- s:
			case <-stop:
				close(s.ready) // never worked on; done is not called for it
				return errStopped
			}
			return nil
		})
	}()
	var doneErr error
	var workPanic *panicked
	for s := range order {
		<-s.ready
		if doneErr != nil || workPanic != nil {
			continue // drain: produce is stopping
		}
		if s.panic != nil {
			workPanic = s.panic
			halt()
			continue
		}
		if err := done(s.item, s.result); err != nil {
			doneErr = err
			halt()
		}
	}
	wg.Wait()
	switch {
	case workPanic != nil:
		panic(workPanic)
	case producePanic != nil:
		panic(producePanic)
	case doneErr != nil:
		return doneErr
	case errors.Is(produceErr, errStopped):
		return nil
	}
	return produceErr
}

// Seq is Map as a sequence: the results of work on each item of items,
// computed on up to workers goroutines, yielded with their items in the
// items' order on the goroutine that ranges over it. Leaving the range
// stops the work; a panic of work or items is raised again there.
func Seq[T, R any](workers int, items iter.Seq[T], work func(T) R) iter.Seq2[T, R] {
	return func(yield func(T, R) bool) {
		_ = Map(workers, func(emit func(T) error) error {
			for t := range items {
				if err := emit(t); err != nil {
					return err
				}
			}
			return nil
		}, work, func(t T, r R) error {
			if !yield(t, r) {
				return errStopped
			}
			return nil
		})
	}
}

// errStopped is what emit returns once the run stops.
var errStopped = errors.New("ordered: stopped")

// panicked is a panic of another goroutine, raised again on Map's.
type panicked struct {
	value any
	stack []byte
}

func (p *panicked) Error() string { return fmt.Sprintf("%v\n\n%s", p.value, p.stack) }

// Unwrap is the panic's value when it is an error.
func (p *panicked) Unwrap() error {
	err, _ := p.value.(error)
	return err
}
