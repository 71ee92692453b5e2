package podresources

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

const (
	gpuA = "GPU-4cf8db2d-06c0-7d70-1a51-e59b25b2c16c"
	gpuB = "GPU-b1028956-cfa2-0990-bf4a-5da9abb51763"
	migA = "MIG-662077db-fa3f-0d8f-9502-21ab0ef058a2"
)

func TestParseDeviceID(t *testing.T) {
	for _, tc := range []struct {
		id     string
		want   DeviceID
		wantOK bool
	}{
		{gpuA, DeviceID{UUID: gpuA, GI: -1, CI: -1, Replica: -1}, true},
		{migA, DeviceID{UUID: migA, GI: -1, CI: -1, Replica: -1}, true},
		{gpuA + "::3", DeviceID{UUID: gpuA, GI: -1, CI: -1, Replica: 3}, true},
		{migA + "::0", DeviceID{UUID: migA, GI: -1, CI: -1, Replica: 0}, true},
		// The R450/R460 MIG form, as the plugin's replicas_test.go spells it.
		{"MIG-" + gpuB + "/3/0", DeviceID{UUID: "MIG-" + gpuB + "/3/0", Parent: gpuB, GI: 3, CI: 0, Replica: -1}, true},
		{"MIG-" + gpuB + "/10/0::2", DeviceID{UUID: "MIG-" + gpuB + "/10/0", Parent: gpuB, GI: 10, CI: 0, Replica: 2}, true},
		{strings.ToUpper(gpuA[4:]), DeviceID{GI: -1, CI: -1, Replica: -1}, false},
		{"GPU-" + strings.ToUpper(gpuA[4:]), DeviceID{UUID: "GPU-" + strings.ToUpper(gpuA[4:]), GI: -1, CI: -1, Replica: -1}, true},
		// Not GPU UUIDs: GKE's index ids, other plugins, broken shapes.
		{"nvidia0", DeviceID{GI: -1, CI: -1, Replica: -1}, false},
		{"0", DeviceID{GI: -1, CI: -1, Replica: -1}, false},
		{"", DeviceID{GI: -1, CI: -1, Replica: -1}, false},
		{gpuA + "::", DeviceID{GI: -1, CI: -1, Replica: -1}, false},
		{gpuA + "::x", DeviceID{GI: -1, CI: -1, Replica: -1}, false},
		{gpuA + "x", DeviceID{GI: -1, CI: -1, Replica: -1}, false},
		{"MIG-" + gpuB + "/3", DeviceID{GI: -1, CI: -1, Replica: -1}, false},
		{"MIG-" + gpuB + "/3/", DeviceID{GI: -1, CI: -1, Replica: -1}, false},
		{"MIG-" + gpuB + "/a/0", DeviceID{GI: -1, CI: -1, Replica: -1}, false},
		{"MIG-GPU-", DeviceID{GI: -1, CI: -1, Replica: -1}, false},
	} {
		got, ok := ParseDeviceID(tc.id)
		assert.Equal(t, tc.wantOK, ok, tc.id)
		assert.Equal(t, tc.want, got, tc.id)
	}
}

// FuzzParseDeviceID: never panics; an accepted id's UUID is a prefix of it,
// a GPU or MIG UUID, and the replica suffix accounts for the rest.
func FuzzParseDeviceID(f *testing.F) {
	for _, s := range []string{gpuA, migA, gpuA + "::7", "MIG-" + gpuB + "/3/0", "MIG-" + gpuB + "/13/1::4", "nvidia0", "::", "MIG-GPU-/1/1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		d, ok := ParseDeviceID(id)
		if !ok {
			return
		}
		if !strings.HasPrefix(id, d.UUID) || !(strings.HasPrefix(d.UUID, "GPU-") || strings.HasPrefix(d.UUID, "MIG-")) {
			t.Fatalf("%q: UUID %q", id, d.UUID)
		}
		if rest := id[len(d.UUID):]; (rest == "") != (d.Replica < 0) {
			t.Fatalf("%q: suffix %q but replica %d", id, rest, d.Replica)
		}
		if (d.Parent != "") != (d.GI >= 0) || (d.GI >= 0) != (d.CI >= 0) {
			t.Fatalf("%q: parent %q gi %d ci %d", id, d.Parent, d.GI, d.CI)
		}
	})
}
