package xid

import "testing"

func TestNormalizeBusID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"PCI:0000:3b:00", "00000000:3B:00.0"},
		{"pci:0000:3b:00.0", "00000000:3B:00.0"},
		{"0000:3b:00.0", "00000000:3B:00.0"},
		{"0000:3b:00", "00000000:3B:00.0"},
		{"00000000:3B:00.0", "00000000:3B:00.0"},
		{"00000000:3b:00.0", "00000000:3B:00.0"},
		{"3b:00.1", "00000000:3B:00.1"},
		{"3b:0.0", "00000000:3B:00.0"},
		{"1:2:3.4", "00000001:02:03.4"},
		{"03f8cfdd:00:00.0", "03F8CFDD:00:00.0"},
		{"0000:10:1f.7", "00000000:10:1F.7"},
		{"", ""},
		{"PCI:", ""},
		{"3b", ""},
		{"0000:3b:20.0", ""},  // device > 0x1f
		{"0000:3b:00.8", ""},  // function > 7
		{"0000:3b:00.", ""},   // empty function
		{"0000:3b:00.00", ""}, // two-digit function
		{"000000000:3b:00.0", ""},
		{"0000:3bb:00.0", ""},
		{"0000::00.0", ""},
		{":3b:00.0", ""}, // empty domain: the domain is optional, its colon is not
		{"PCI::3b:00", ""},
		{":00.0", ""},
		{"0000:3b:.0", ""},
		{"0000:3g:00.0", ""},
		{"0000:3b:00:0", ""},
		{"00000000:3B:20.0", ""}, // canonical shape, invalid device
		{"00000000:3B:00.9", ""}, // canonical shape, invalid function
		{"00000000-3B:00.0", ""},
	}
	for _, tt := range tests {
		if got := NormalizeBusID(tt.in); got != tt.want {
			t.Errorf("NormalizeBusID(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if tt.want != "" {
			if again := NormalizeBusID(tt.want); again != tt.want {
				t.Errorf("NormalizeBusID(%q) not idempotent: %q", tt.want, again)
			}
		}
	}
}

func TestNormalizeBusIDCanonicalDoesNotAllocate(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { NormalizeBusID("00000000:3B:00.0") }); n != 0 {
		t.Errorf("allocs = %v, want 0", n)
	}
}

// NVML's own form, with every hex digit at the edges of its range and the
// device and function at their limits, is returned as is and without an
// allocation; so is each check of the fast path pinned.
func TestNormalizeBusIDCanonicalEdges(t *testing.T) {
	for _, id := range []string{"00000000:00:00.0", "FFFFFFFF:FF:1F.7", "09AF09AF:9A:0F.0", "AF90AF90:F0:10.1", "00000000:3B:1F.7"} {
		if got := NormalizeBusID(id); got != id {
			t.Errorf("NormalizeBusID(%q) = %q", id, got)
		}
		if n := testing.AllocsPerRun(10, func() { NormalizeBusID(id) }); n != 0 {
			t.Errorf("NormalizeBusID(%q) allocates %v times: not taken as canonical", id, n)
		}
	}
}

// Sixteen-byte strings shaped almost like NVML's form, and hex digits just
// outside their ranges, are rejected.
func TestNormalizeBusIDNearMisses(t *testing.T) {
	for _, in := range []string{
		"00000000:3B:00:0", "00000000.3B:00.0", "00000000:3B.00.0", "0000000:03B:00.0",
		"0000000G:3B:00.0", "00000000:3@:00.0", "00000000:3B:0/.0", "00000000:3B:00.:",
		"0000:3`:00.0", "0000:3G:00.0", "0000:3/:00.0", "0000:3@:00.0", "0000:3g:00.0",
		"PCI", "PCI:3b", "PCI:0000",
	} {
		if got := NormalizeBusID(in); got != "" {
			t.Errorf("NormalizeBusID(%q) = %q, want \"\"", in, got)
		}
	}
	// Lower and upper case hex at the edges of the ranges, in the general path.
	for in, want := range map[string]string{
		"pci:0000:af:09.0": "00000000:AF:09.0",
		"PCI:000a:F0:1a.0": "0000000A:F0:1A.0",
		"0:9f:0A.7":        "00000000:9F:0A.7",
		"00000000:fa:00.0": "00000000:FA:00.0",
	} {
		if got := NormalizeBusID(in); got != want {
			t.Errorf("NormalizeBusID(%q) = %q, want %q", in, got, want)
		}
	}
}
