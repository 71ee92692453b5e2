package oomclassifier

import (
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
)

// plausibleTime returns at unless it lies more than max_clock_skew past the collector's clock.
// Such a time comes from a wrong clock (or a hostile sender): classifying there would match
// no metrics, and it would make the host look caught up. The record's observed time is used
// instead when it is plausible, else now; note says so for the evidence.
//
// A time in the past is kept: a late or replayed record is still placed where its metrics
// were, and the window answers "no metrics" if it no longer holds that moment.
func (in *instance) plausibleTime(rec plog.LogRecord, at time.Time) (time.Time, string) {
	now := in.clock.Now()
	latest := now.Add(in.cfg.MaxClockSkew)
	if !at.After(latest) {
		return at, ""
	}
	placed, how := now, "the collector's time of receipt"
	if obs := rec.ObservedTimestamp(); obs != 0 && !obs.AsTime().After(latest) {
		placed, how = obs.AsTime(), "its observed time"
	}
	return placed, fmt.Sprintf("The record's timestamp (%s) was %s ahead of the collector's clock; it was placed at %s (%s).",
		at.UTC().Format(time.RFC3339), at.Sub(now).Round(time.Second), how, placed.UTC().Format(time.RFC3339))
}
