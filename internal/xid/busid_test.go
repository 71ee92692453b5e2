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
