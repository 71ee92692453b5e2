package oomclassifier

import "time"

// clock is the processor's time source: when a held batch is due, and what "now" is for the
// sanity checks of timestamps. Tests inject a fake so that the hold path's tests do not sleep.
type clock interface {
	Now() time.Time
	NewTimer(d time.Duration) timer
}

// timer is the part of *time.Timer the worker uses.
type timer interface {
	C() <-chan time.Time
	Stop() bool
}

type realClock struct{}

func (realClock) Now() time.Time                 { return time.Now() }
func (realClock) NewTimer(d time.Duration) timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }
