package metadata

// TelemetryDef is one metric of the receiver's own telemetry (metadata.yaml `telemetry`).
type TelemetryDef struct {
	Name        string // the instrument's name, as mdatagen writes it: otelcol_ + the key
	Description string
	Unit        string
}

// TelemetryXidEventsDropped counts Xid events dropped because the merge queue was full.
var TelemetryXidEventsDropped = TelemetryDef{
	Name:        "otelcol_receiver_gpu_mem_xid_events_dropped",
	Description: "Xid events dropped because the receiver's Xid queue was full (NVML events and kernel lines arrived faster than they were merged and sent).",
	Unit:        "{event}",
}

// TelemetryFailedScrapes counts scrapes in which an NVML call failed, by reason.
var TelemetryFailedScrapes = TelemetryDef{
	Name:        "otelcol_receiver_gpu_mem_failed_scrapes",
	Description: "Scrapes of the gpu_mem receiver in which an NVML call failed, by reason (the NVML error in snake case: gpu_is_lost, unknown, no_permission, ...).",
	Unit:        "{scrape}",
}

// Telemetry lists the receiver's own telemetry; TestTelemetryInStep keeps it in step with
// metadata.yaml and documentation.md.
var Telemetry = []TelemetryDef{TelemetryXidEventsDropped, TelemetryFailedScrapes}
