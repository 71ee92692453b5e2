package xid

import "testing"

func TestCatalogCoversRequiredCodes(t *testing.T) {
	required := []int{8, 13, 31, 32, 38, 43, 45, 48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95,
		109, 119, 120, 121, 140, 143, 144, 145, 146, 147, 148, 149, 150, 154}
	for _, code := range required {
		if !Known(code) {
			t.Errorf("Xid %d missing from the catalog", code)
		}
	}
}

func TestCatalogConsistent(t *testing.T) {
	seen := map[int]bool{}
	for _, e := range catalog {
		if seen[e.Code] {
			t.Errorf("Xid %d listed twice", e.Code)
		}
		seen[e.Code] = true
		if e.Code <= 0 || e.Description == "" {
			t.Errorf("Xid %d: bad entry %+v", e.Code, e)
		}
		switch e.Origin {
		case OriginApplication, OriginDriver, OriginHardware:
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
		{154, OriginDriver, SeverityWarn, false},
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
}
