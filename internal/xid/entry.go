package xid

// Severity is the log severity an Xid record gets.
type Severity string

const (
	// SeverityError marks Xids that report a fault.
	SeverityError Severity = "ERROR"
	// SeverityWarn marks informational Xids and codes not in the catalog.
	SeverityWarn Severity = "WARN"
)

// Origins: where NVIDIA's catalog places the most likely cause.
const (
	OriginApplication = "application"
	OriginDriver      = "driver"
	OriginHardware    = "hardware"
	OriginUnknown     = "unknown"
)

// unknownDescription is the description of codes not in the catalog.
const unknownDescription = "Xid not in the catalog"

// Entry describes one Xid code.
type Entry struct {
	Code        int
	Description string
	// Origin is one of the Origin constants.
	Origin   string
	Severity Severity
	// Fault is true when the Xid means the application's context or the GPU
	// itself was in a faulted state: an out-of-memory error near it is more
	// likely a consequence of the fault than a capacity problem.
	Fault bool
}

// Lookup returns the catalog entry for code. Codes not in the catalog get
// Origin "unknown", a generic description, Severity WARN and Fault false.
func Lookup(code int) Entry {
	if e, ok := catalogByCode[code]; ok {
		return e
	}
	return Entry{Code: code, Description: unknownDescription, Origin: OriginUnknown, Severity: SeverityWarn}
}

// Known reports whether code is in the catalog.
func Known(code int) bool {
	_, ok := catalogByCode[code]
	return ok
}

// catalogByCode indexes catalog; built once at package initialisation.
var catalogByCode = func() map[int]Entry {
	m := make(map[int]Entry, len(catalog))
	for _, e := range catalog {
		m[e.Code] = e
	}
	return m
}()
