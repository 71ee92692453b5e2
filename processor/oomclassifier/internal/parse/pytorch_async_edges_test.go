package parse

import "testing"

// Edges of cudaMallocAsync's message: the sentence at offset 0, the device
// label exactly as far back as it is read, and colonSize's separators.
func TestParsePyTorchMallocAsyncEdges(t *testing.T) {
	const s = " would exceed allowed memory. (out of memory)"
	for _, tt := range []struct {
		text   string
		device int
	}{
		{s[1:], -1}, // no room for the leading space: not the sentence
		{"x" + s, -1},
		{"Allocation on device 3" + s, 3},
		{"Allocation on device 3 abcdefghi" + s, 3},   // the label starts 32 bytes before
		{"Allocation on device 3 abcdefghij" + s, -1}, // 33
		{"(out of memory) Allocation on device 1" + s, 1},
	} {
		r, ok := parsePyTorchMallocAsync(tt.text)
		if want := tt.text != s[1:]; ok != want {
			t.Errorf("parsePyTorchMallocAsync(%q) ok = %v; want %v", tt.text, ok, want)
			continue
		}
		if ok && r.DeviceIndex != tt.device {
			t.Errorf("parsePyTorchMallocAsync(%q) device = %d; want %d", tt.text, r.DeviceIndex, tt.device)
		}
	}
}

func TestColonSizeEdges(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want int64
	}{
		{"Requested: 2 MiB", 2 << 20},
		{"Requested \t\r\n: 2 MiB", 2 << 20},
		{"Requested:2 MiB", 2 << 20},
		{"Requested", -1},
		{"Requested   ", -1},
		{"Requested = 2 MiB", -1},
		{"Requested: lots", -1},
		{"x", -1},
	} {
		if got := colonSize(tt.s, "Requested"); got != tt.want {
			t.Errorf("colonSize(%q) = %d; want %d", tt.s, got, tt.want)
		}
	}
}
