package podresources

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func ref(minor int) MinorRef { r := noRef; r.Minor = minor; return r }

func TestParseGKEDeviceID(t *testing.T) {
	gi := func(minor, gi, replica int) MinorRef {
		r := ref(minor)
		r.GI, r.Replica = gi, replica
		return r
	}
	for _, tc := range []struct {
		id   string
		want MinorRef
		ok   bool
	}{
		{"nvidia0", ref(0), true},
		{"nvidia13", ref(13), true},
		{"nvidia1/vgpu0", gi(1, -1, 0), true},
		{"nvidia1/vgpu47", gi(1, -1, 47), true},
		{"nvidia2/gi3", gi(2, 3, -1), true},
		{"nvidia2/gi3/vgpu1", gi(2, 3, 1), true},
		{"nvidia", noRef, false},
		{"nvidia0/", noRef, false},
		{"nvidia0/vgpu", noRef, false},
		{"nvidia0/gi", noRef, false},
		{"nvidia0/vgpu1/gi1", noRef, false},
		{"nvidia0x", noRef, false},
		{"nvidia-uvm", noRef, false},
		{"nvidiactl", noRef, false},
		{gpuA, noRef, false},
		{"gpu-0", noRef, false},
	} {
		got, ok := ParseGKEDeviceID(tc.id)
		assert.Equal(t, tc.ok, ok, tc.id)
		assert.Equal(t, tc.want, got, tc.id)
	}
}

func TestParseDRADeviceName(t *testing.T) {
	mig := func(minor int, profile string, pid, start int) MinorRef {
		r := ref(minor)
		r.Profile, r.ProfileID, r.PlacementStart = profile, pid, start
		return r
	}
	for _, tc := range []struct {
		name string
		want MinorRef
		ok   bool
	}{
		{"gpu-0", ref(0), true},
		{"gpu-7", ref(7), true},
		// As the driver's canonical names come out for A100/H100 profiles
		// (profile ids from nvml.h NVML_GPU_INSTANCE_PROFILE_*).
		{"gpu-0-mig-1g10gb-19-0", mig(0, "1g10gb", 19, 0), true},
		{"gpu-3-mig-3g40gb-9-4", mig(3, "3g40gb", 9, 4), true},
		{"gpu-1-mig-1g10gb-me-20-6", mig(1, "1g10gb-me", 20, 6), true},
		{"gpu-2-mig-1c3g20gb-9-0", mig(2, "1c3g20gb", 9, 0), true},
		{"gpu-vfio-0", noRef, false},
		{"gpu-", noRef, false},
		{"gpu-0-mig-", noRef, false},
		{"gpu-0-mig-19-0", noRef, false},
		{"gpu-0-mig-1g10gb-19", noRef, false},
		{"gpu-0-mig-1g10gb-x-0", noRef, false},
		{"gpu-0-extra", noRef, false},
		{"channel-0", noRef, false},
		{"nvidia0", noRef, false},
	} {
		got, ok := ParseDRADeviceName(tc.name)
		assert.Equal(t, tc.ok, ok, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
}

func TestDRAProfileName(t *testing.T) {
	for in, want := range map[string]string{
		"1g.10gb": "1g10gb", "3g.40gb": "3g40gb", "1c.3g.20gb": "1c3g20gb",
		"1g.10gb+me": "1g10gb-me", "7g.80gb": "7g80gb", "1g.24gb+gfx": "1g24gb-gfx",
	} {
		assert.Equal(t, want, DRAProfileName(in), in)
	}
}

// The DRA names the driver would make round-trip through the parser: minor,
// profile as spelt, profile id and placement start.
func TestDRANameRoundTrip(t *testing.T) {
	for _, profile := range []string{"1g.10gb", "1g.10gb+me", "1c.3g.20gb", "4g.40gb"} {
		for _, minor := range []int{0, 9, 15} {
			name := fmt.Sprintf("gpu-%d-mig-%s-%d-%d", minor, DRAProfileName(profile), 14, 2)
			got, ok := ParseDRADeviceName(name)
			assert.True(t, ok, name)
			assert.Equal(t, MinorRef{Minor: minor, GI: -1, ProfileID: 14, PlacementStart: 2, Profile: DRAProfileName(profile), Replica: -1}, got, name)
		}
	}
}

// FuzzMinorRefs: neither parser panics, and what they accept is consistent:
// a minor, and the fields of exactly one form.
func FuzzMinorRefs(f *testing.F) {
	for _, s := range []string{"nvidia0", "nvidia1/vgpu3", "nvidia2/gi3/vgpu1", "gpu-0", "gpu-0-mig-1g10gb-19-0", "gpu-1-mig-1g10gb-me-20-6", "gpu-vfio-1", gpuA} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if r, ok := ParseGKEDeviceID(id); ok {
			if r.Minor < 0 || r.ProfileID != -1 || r.PlacementStart != -1 || r.Profile != "" || !strings.HasPrefix(id, "nvidia") {
				t.Fatalf("GKE %q: %+v", id, r)
			}
		}
		if r, ok := ParseDRADeviceName(id); ok {
			if r.Minor < 0 || r.GI != -1 || r.Replica != -1 || (r.Profile == "") != (r.ProfileID < 0) || !strings.HasPrefix(id, "gpu-") {
				t.Fatalf("DRA %q: %+v", id, r)
			}
		}
	})
}
