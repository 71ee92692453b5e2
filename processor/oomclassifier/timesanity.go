package oomclassifier

import (
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
)

// plausibleSince is the earliest timestamp believed. Before it lie only clocks that were
// never set (1970: the epoch plus uptime on a node that booted without RTC or NTP), firmware
// and image default dates (2000, 2001) and numbers read in the wrong unit (2001-09-09 is 10^9
// seconds) — not history: no GPU this processor reads metrics of, and no OTLP log, is older
// (the A100, the first GPU with MIG, and OTLP logs are of 2020). A fixed floor, not one
// relative to the host's newest metrics: a replay of last week's logs must keep its own time
// and be told its metrics are gone, not be classified against today's GPU.
var plausibleSince = time.Date(2020, time.January, 1, 0, 0, 0, 0, time.UTC)

// plausibleTime returns at unless it lies more than max_clock_skew past the collector's clock
// or before plausibleSince. Such a time comes from a wrong clock (or a hostile sender):
// classifying there would match no metrics, and a future one would make the host look caught
// up. The record's observed time is used instead when it is plausible, else now; note says so
// for the evidence.
//
// Any other time in the past is kept: a late or replayed record is still placed where its
// metrics were, and the window answers "no metrics" if it no longer holds that moment.
func (in *instance) plausibleTime(rec plog.LogRecord, at time.Time) (time.Time, string) {
	now := in.clock.Now()
	latest := now.Add(in.cfg.MaxClockSkew)
	believable := func(t time.Time) bool { return !t.After(latest) && !t.Before(plausibleSince) }
	if believable(at) {
		return at, ""
	}
	placed, how := now, "the collector's time of receipt"
	if obs := rec.ObservedTimestamp(); obs != 0 && believable(obs.AsTime()) {
		placed, how = obs.AsTime(), "its observed time"
	}
	var why string
	if at.After(latest) {
		why = fmt.Sprintf("was %s ahead of the collector's clock", at.Sub(now).Round(time.Second))
	} else {
		why = "is implausibly old (before " + plausibleSince.Format(time.DateOnly) + ": a clock never set or a wrong unit)"
	}
	return placed, fmt.Sprintf("The record's timestamp (%s) %s; it was placed at %s (%s).",
		at.UTC().Format(time.RFC3339), why, how, placed.UTC().Format(time.RFC3339))
}
