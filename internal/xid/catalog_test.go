package xid

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// catalogURL and nvsentinelSource are the sources catalog_table.go must cite.
const (
	catalogURL       = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"
	nvsentinelSource = "distros/kubernetes/nvsentinel/charts/gpu-health-monitor/xiderrorsmapping.csv"
	nvsentinelCommit = "6f8b0fcfa8e502bdda78fabf96facef729a9285b"
)

// lastCatalogCode is the highest code NVIDIA's catalog lists.
const lastCatalogCode = 172

func TestCatalogCitesItsSources(t *testing.T) {
	src, err := os.ReadFile("catalog_table.go")
	if err != nil {
		t.Fatalf("read catalog_table.go: %v", err)
	}
	for _, want := range []string{catalogURL, nvsentinelSource, nvsentinelCommit} {
		if !strings.Contains(string(src), want) {
			t.Errorf("catalog_table.go does not cite %s", want)
		}
	}
}

// Every code NVIDIA publishes is listed once, in order, and nothing else is.
func TestCatalogListsEveryPublishedCode(t *testing.T) {
	if len(catalog) != lastCatalogCode {
		t.Fatalf("catalog has %d entries, NVIDIA's catalog lists codes 1-%d", len(catalog), lastCatalogCode)
	}
	for i, e := range catalog {
		if e.Code != i+1 {
			t.Fatalf("entry %d is Xid %d, want %d (listed once, in order)", i, e.Code, i+1)
		}
		if !Known(e.Code) {
			t.Errorf("Xid %d not found by Known", e.Code)
		}
	}
	if Known(0) || Known(lastCatalogCode+1) {
		t.Error("codes outside 1-172 must not be known")
	}
}

var mnemonicPattern = regexp.MustCompile(`^[A-Z0-9_]+( / [A-Z0-9_]+)?$`)

var allowedActions = map[string]bool{
	ActionRestartApp: true, ActionResetGPU: true, ActionRestartBM: true, ActionRestartVM: true,
	ActionIgnore: true, ActionContactSupport: true, ActionCheckMechanicals: true, ActionCheckUVM: true,
	ActionUpdateSWFW: true, ActionWorkflowXid45: true, ActionWorkflowXid48: true,
	ActionWorkflowNVLinkErr: true, ActionWorkflowNVLink5Err: true, ActionXid154: true,
}

func TestCatalogConsistent(t *testing.T) {
	for _, e := range catalog {
		if !mnemonicPattern.MatchString(e.Mnemonic) {
			t.Errorf("Xid %d: mnemonic %q", e.Code, e.Mnemonic)
		}
		if e.Description == "" || strings.TrimSpace(e.Description) != e.Description {
			t.Errorf("Xid %d: description %q", e.Code, e.Description)
		}
		// The catalog publishes no immediate action for 162-172 alone.
		if e.Code >= 162 {
			if e.Action != ActionNone {
				t.Errorf("Xid %d: action %q, the catalog publishes none", e.Code, e.Action)
			}
		} else if !allowedActions[e.Action] {
			t.Errorf("Xid %d: action %q not one of NVIDIA's immediate actions", e.Code, e.Action)
		}
		// Unused rows say CONTACT_SUPPORT, except the two the catalog lists as reported (14, 108).
		if e.Description == unusedDescription && e.Code != 14 && e.Code != 108 && e.Action != ActionContactSupport {
			t.Errorf("Xid %d: Unused with action %q", e.Code, e.Action)
		}
		switch e.Origin {
		case OriginApplication, OriginDriver, OriginHardware:
		case OriginUnknown:
			if e.Fault {
				t.Errorf("Xid %d: a fault of unknown origin", e.Code)
			}
		default:
			t.Errorf("Xid %d: origin %q", e.Code, e.Origin)
		}
		switch e.Severity {
		case SeverityError, SeverityWarn:
		default:
			t.Errorf("Xid %d: severity %q", e.Code, e.Severity)
		}
		// The design's rule: faults are logged at ERROR.
		if e.Fault && e.Severity != SeverityError {
			t.Errorf("Xid %d: a fault with severity %s", e.Code, e.Severity)
		}
	}
}

// faultActions are the immediate actions that make a code new in this catalog a fault.
var faultActions = map[string]bool{
	ActionRestartApp: true, ActionResetGPU: true, ActionRestartBM: true, ActionRestartVM: true,
	ActionWorkflowXid48: true, ActionWorkflowNVLinkErr: true, ActionWorkflowNVLink5Err: true,
}

// TestCatalogFollowsItsRule checks Fault and Severity against the rule catalog.go states, so
// that a row typed by hand cannot drift from it; the exceptions are the ones it names.
func TestCatalogFollowsItsRule(t *testing.T) {
	exceptions := map[int]string{
		38: "fault although IGNORE", 43: "fault although IGNORE", 63: "fault although IGNORE",
		57: "fault on older GPUs", 58: "fault on older GPUs",
		45: "WARN: restates another Xid", 61: "WARN: firmware breakpoint",
	}
	engines := map[int]bool{60: true, 68: true, 82: true, 83: true, 84: true, 86: true, 88: true,
		89: true, 96: true, 97: true, 98: true, 99: true, 100: true, 101: true, 102: true,
		103: true, 104: true, 105: true, 139: true}
	for _, e := range catalog {
		if _, ok := exceptions[e.Code]; ok {
			continue
		}
		wantFault := faultActions[e.Action] && !engines[e.Code]
		if e.Fault != wantFault {
			t.Errorf("Xid %d (%s): fault %v, rule says %v", e.Code, e.Action, e.Fault, wantFault)
		}
		if e.Action == ActionNone {
			continue // severity by judgement, see catalog.go
		}
		wantSev := SeverityError
		if e.Action == ActionIgnore || e.Action == ActionXid154 {
			wantSev = SeverityWarn
		}
		if e.Severity != wantSev {
			t.Errorf("Xid %d (%s): severity %s, rule says %s", e.Code, e.Action, e.Severity, wantSev)
		}
	}
}

// TestCatalogMatchesSource spot-checks rows against the published catalog, as written there.
func TestCatalogMatchesSource(t *testing.T) {
	tests := []struct {
		code                          int
		mnemonic, description, action string
	}{
		{13, "ROBUST_CHANNEL_GR_EXCEPTION / ROBUST_CHANNEL_GR_ERROR_SW_NOTIFY", "Graphics Engine Exception", "RESTART_APP"},
		{31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", "GPU memory page fault", "RESTART_APP"},
		{43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", "GPU stopped processing", "IGNORE"},
		{48, "ROBUST_CHANNEL_GPU_ECC_DBE", "Double Bit ECC Error", "WORKFLOW_XID_48"},
		{63, "INFOROM_DRAM_RETIREMENT_EVENT", "GPU memory remapping event", "IGNORE"},
		{64, "INFOROM_DRAM_RETIREMENT_FAILURE", "GPU memory remapping failure", "RESET_GPU"},
		{74, "NVLINK_ERROR", "NVLINK Error", "WORKFLOW_NVLINK_ERR"},
		{79, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "GPU has fallen off the bus", "RESTART_BM"},
		{94, "ROBUST_CHANNEL_CONTAINED_ERROR", "Contained memory error", "RESTART_APP"},
		{95, "ROBUST_CHANNEL_UNCONTAINED_ERROR", "Uncontained memory error", "RESET_GPU"},
		{119, "GSP_RPC_TIMEOUT", "GSP RPC Timeout", "RESET_GPU"},
		{120, "GSP_ERROR", "GSP Error", "RESET_GPU"},
		// The rows whose earlier descriptions had never been checked.
		{121, "C2C_ERROR", "C2C Error", "IGNORE"},
		{143, "GPU_INIT_ERROR", "GPU Initialization Error", "RESET_GPU"},
		{144, "NVLINK_SAW_ERROR", "NVLINK: SAW Error", "WORKFLOW_NVLINK5_ERR"},
		{145, "NVLINK_RLW_ERROR", "NVLINK: RLW Error", "WORKFLOW_NVLINK5_ERR"},
		{146, "NVLINK_TLW_ERROR", "NVLINK: TLW Error", "WORKFLOW_NVLINK5_ERR"},
		{147, "NVLINK_TREX_ERROR", "NVLINK: TREX Error", "WORKFLOW_NVLINK5_ERR"},
		{148, "NVLINK_NVLPW_CTRL_ERROR", "NVLINK: NVLPW_CTRL Error", "WORKFLOW_NVLINK5_ERR"},
		{149, "NVLINK_NETIR_ERROR", "NVLINK: NETIR Error", "WORKFLOW_NVLINK5_ERR"},
		{150, "NVLINK_MSE_ERROR", "NVLINK: MSE Error", "WORKFLOW_NVLINK5_ERR"},
		{154, "GPU_RECOVERY_ACTION_CHANGED", "GPU Recovery Action Changed", "XID_154"},
		// Others worth pinning: an Unused row, a workflow, a VM restart, a row without action.
		{1, "ROBUST_CHANNEL_FIFO_ERROR_FIFO_METHOD", "Unused", "CONTACT_SUPPORT"},
		{45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", "Preemptive cleanup, due to previous errors – Most likely to see when running multiple cuda applications and hitting a DBE", "WORKFLOW_XID_45"},
		{151, "ROBUST_CHANNEL_KEY_ROTATION_ERROR", "Key rotation Error", "RESTART_VM"},
		{172, "UNCORRECTABLE_SRAM_ERROR", "Additional to Xid 48 providing more details on particulars of fault to differentiate DRAM/SRAM", ""},
	}
	for _, tt := range tests {
		e := Lookup(tt.code)
		if e.Mnemonic != tt.mnemonic || e.Description != tt.description || e.Action != tt.action {
			t.Errorf("Lookup(%d) = %q, %q, %q; the catalog says %q, %q, %q", tt.code,
				e.Mnemonic, e.Description, e.Action, tt.mnemonic, tt.description, tt.action)
		}
	}
}

func TestLookup(t *testing.T) {
	tests := []struct {
		code     int
		origin   string
		severity Severity
		fault    bool
	}{
		// The design names these as gpu_fault evidence.
		{13, OriginApplication, SeverityError, true},
		{31, OriginApplication, SeverityError, true},
		{43, OriginApplication, SeverityError, true},
		{48, OriginHardware, SeverityError, true},
		{63, OriginHardware, SeverityError, true},
		{64, OriginHardware, SeverityError, true},
		{74, OriginHardware, SeverityError, true},
		{79, OriginHardware, SeverityError, true},
		{94, OriginHardware, SeverityError, true},
		{95, OriginHardware, SeverityError, true},
		{119, OriginDriver, SeverityError, true},
		{120, OriginDriver, SeverityError, true},
		// Informational.
		{45, OriginDriver, SeverityWarn, false},
		{92, OriginHardware, SeverityWarn, false},
		{121, OriginHardware, SeverityWarn, false},
		{154, OriginDriver, SeverityWarn, false},
		// An engine that does not hold the failing allocation.
		{68, OriginHardware, SeverityError, false},
		// Not in the catalog.
		{9999, OriginUnknown, SeverityWarn, false},
		{0, OriginUnknown, SeverityWarn, false},
		{-1, OriginUnknown, SeverityWarn, false},
	}
	for _, tt := range tests {
		e := Lookup(tt.code)
		if e.Code != tt.code || e.Origin != tt.origin || e.Severity != tt.severity || e.Fault != tt.fault || e.Description == "" {
			t.Errorf("Lookup(%d) = %+v, want origin %s severity %s fault %v", tt.code, e, tt.origin, tt.severity, tt.fault)
		}
	}
	if Lookup(79).Description != "GPU has fallen off the bus" {
		t.Errorf("Lookup(79).Description = %q", Lookup(79).Description)
	}
	if u := Lookup(9999); u.Mnemonic != "" || u.Action != ActionNone || u.Description != unknownDescription {
		t.Errorf("Lookup(9999) = %+v, want no mnemonic, no action", u)
	}
}
