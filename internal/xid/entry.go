package xid

// Severity is the log severity an Xid record gets.
type Severity string

const (
	// SeverityError marks Xids that report a fault or need an operator.
	SeverityError Severity = "ERROR"
	// SeverityWarn marks informational Xids and codes not in the catalog.
	SeverityWarn Severity = "WARN"
)

// Origins: where the cause of an Xid usually lies (see catalog.go for how each is chosen).
const (
	OriginApplication = "application"
	OriginDriver      = "driver"
	OriginHardware    = "hardware"
	OriginUnknown     = "unknown"
)

// Immediate actions: NVIDIA's "Resolution Bucket (Immediate Action)" values, verbatim, as the
// catalog publishes them. Operators alert on these, so they are never reworded.
const (
	ActionRestartApp         = "RESTART_APP"
	ActionResetGPU           = "RESET_GPU"
	ActionRestartBM          = "RESTART_BM"
	ActionRestartVM          = "RESTART_VM"
	ActionIgnore             = "IGNORE"
	ActionContactSupport     = "CONTACT_SUPPORT"
	ActionCheckMechanicals   = "CHECK_MECHANICALS"
	ActionCheckUVM           = "CHECK_UVM"
	ActionUpdateSWFW         = "UPDATE_SWFW"
	ActionWorkflowXid45      = "WORKFLOW_XID_45"
	ActionWorkflowXid48      = "WORKFLOW_XID_48"
	ActionWorkflowNVLinkErr  = "WORKFLOW_NVLINK_ERR"
	ActionWorkflowNVLink5Err = "WORKFLOW_NVLINK5_ERR"
	ActionXid154             = "XID_154"
	// ActionNone is the empty action of codes for which the catalog publishes no immediate
	// action (162-172 at the time of writing); records then carry no action attribute.
	ActionNone = ""
)

// unknownDescription is the description of codes not in the catalog.
const unknownDescription = "Xid not in the catalog"

// Entry describes one Xid code.
type Entry struct {
	Code int
	// Mnemonic is NVIDIA's name of the Xid (ROBUST_CHANNEL_GPU_ECC_DBE), verbatim.
	Mnemonic string
	// Description is the catalog's description, verbatim.
	Description string
	// Action is NVIDIA's immediate action, one of the Action constants.
	Action string
	// Origin is one of the Origin constants.
	Origin   string
	Severity Severity
	// Fault is true when the Xid means the application's context or the GPU
	// itself was in a faulted state: an out-of-memory error near it is more
	// likely a consequence of the fault than a capacity problem.
	Fault bool
}

// Lookup returns the catalog entry for code. Codes not in the catalog get
// Origin "unknown", a generic description, no mnemonic or action, Severity
// WARN and Fault false.
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
