package gpumemreceiver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.uber.org/zap"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
)

// failedScrapes is the receiver's own telemetry counter of scrapes in which NVML calls
// failed, by reason (the NVML error). The collector exports it with its other own metrics
// (service::telemetry::metrics), beside otelcol_scraper_errored_metric_points.
var failedScrapes = metadata.TelemetryFailedScrapes

// failureLog remembers the failures of the last scrape, so that a call failing on a GPU
// scrape after scrape is reported once (as a partial scrape error, which the scraper
// controller logs) and again only when it changes or clears. Only the scraper uses it.
type failureLog struct {
	logger  *zap.Logger
	counter metric.Int64Counter
	last    map[string]string // call → error message
}

func newFailureLog(logger *zap.Logger, mp metric.MeterProvider) *failureLog {
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	c, err := mp.Meter(metadata.ScopeName).Int64Counter(failedScrapes.Name,
		metric.WithDescription(failedScrapes.Description), metric.WithUnit(failedScrapes.Unit))
	if err != nil {
		logger.Warn("cannot create the failed-scrapes counter", zap.Error(err))
		c, _ = noop.NewMeterProvider().Meter(metadata.ScopeName).Int64Counter(failedScrapes.Name)
	}
	return &failureLog{logger: logger, counter: c, last: map[string]string{}}
}

// observe counts this scrape's failures (errs, and lostGPUs GPUs that are lost) and returns
// those that differ from the previous scrape's failure of the same call on the same GPU;
// a call that failed in the previous scrape and works now is logged as cleared.
func (f *failureLog) observe(errs []error, lostGPUs int) []error {
	if len(errs) == 0 && len(f.last) == 0 && lostGPUs == 0 {
		return nil // the usual scrape: nothing to count or clear
	}
	now := make(map[string]string, len(errs))
	var fresh []error
	reasons := map[string]bool{}
	for _, err := range errs {
		msg := err.Error()
		call := callOf(msg)
		if _, dup := now[call]; dup {
			continue
		}
		now[call] = msg
		reasons[failureReason(err)] = true
		if f.last[call] != msg {
			fresh = append(fresh, err)
		}
	}
	for call, msg := range f.last {
		if _, still := now[call]; !still {
			f.logger.Info("NVML call works again", zap.String("call", call), zap.String("was", msg))
		}
	}
	if lostGPUs > 0 {
		reasons[returnNames[nvml.ERROR_GPU_IS_LOST]] = true
	}
	for reason := range reasons {
		f.counter.Add(context.Background(), 1, metric.WithAttributes(attribute.String("reason", reason)))
	}
	f.last = now
	return fresh
}

// callOf is the part of an error message that names the call and the GPU ("read memory
// info of GPU GPU-…"): the message up to the NVML error that ends it.
func callOf(msg string) string {
	if i := strings.LastIndex(msg, ": "); i > 0 {
		return msg[:i]
	}
	return msg
}

// failureReason names the NVML error of err in snake case (gpu_is_lost, unknown_error, …),
// or "other" when err carries none.
func failureReason(err error) string {
	var r nvml.Return
	if !errors.As(err, &r) {
		return "other"
	}
	if name, ok := returnNames[r]; ok {
		return name
	}
	return fmt.Sprintf("nvml_error_%d", int32(r))
}

// returnNames are the nvmlReturn_t names (nvml.h) of the errors a scrape can meet, without
// the NVML_ERROR_ prefix; the library's own strings vary by driver.
var returnNames = func() map[nvml.Return]string {
	m := map[nvml.Return]string{}
	for name, r := range map[string]nvml.Return{
		"UNINITIALIZED": nvml.ERROR_UNINITIALIZED, "INVALID_ARGUMENT": nvml.ERROR_INVALID_ARGUMENT,
		"NOT_SUPPORTED": nvml.ERROR_NOT_SUPPORTED, "NO_PERMISSION": nvml.ERROR_NO_PERMISSION,
		"NOT_FOUND": nvml.ERROR_NOT_FOUND, "INSUFFICIENT_SIZE": nvml.ERROR_INSUFFICIENT_SIZE,
		"INSUFFICIENT_POWER": nvml.ERROR_INSUFFICIENT_POWER, "DRIVER_NOT_LOADED": nvml.ERROR_DRIVER_NOT_LOADED,
		"TIMEOUT": nvml.ERROR_TIMEOUT, "IRQ_ISSUE": nvml.ERROR_IRQ_ISSUE, "LIBRARY_NOT_FOUND": nvml.ERROR_LIBRARY_NOT_FOUND,
		"FUNCTION_NOT_FOUND": nvml.ERROR_FUNCTION_NOT_FOUND, "CORRUPTED_INFOROM": nvml.ERROR_CORRUPTED_INFOROM,
		"GPU_IS_LOST": nvml.ERROR_GPU_IS_LOST, "RESET_REQUIRED": nvml.ERROR_RESET_REQUIRED,
		"OPERATING_SYSTEM": nvml.ERROR_OPERATING_SYSTEM, "LIB_RM_VERSION_MISMATCH": nvml.ERROR_LIB_RM_VERSION_MISMATCH,
		"IN_USE": nvml.ERROR_IN_USE, "MEMORY": nvml.ERROR_MEMORY, "NO_DATA": nvml.ERROR_NO_DATA,
		"ARGUMENT_VERSION_MISMATCH": nvml.ERROR_ARGUMENT_VERSION_MISMATCH, "UNKNOWN": nvml.ERROR_UNKNOWN,
	} {
		m[r] = strings.ToLower(name)
	}
	return m
}()
