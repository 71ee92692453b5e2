package podresources

import "strings"

// MinorRef is a device named by the minor number of its GPU (/dev/nvidia<minor>)
// rather than by its UUID. Two allocators on real clusters do that, and the
// receiver maps the reference to an NVML device through
// nvmlDeviceGetMinorNumber and, for a MIG device, the instance's ids.
//
// GKE's device plugin (github.com/GoogleCloudPlatform/container-engine-accelerators,
// read at 992db812):
//   - whole GPU "nvidia<minor>" (pkg/gpu/nvidia/manager.go: nvidiaDeviceRE
//     `^nvidia[0-9]*$`, the path fmt.Sprintf("nvidia%d", minor));
//   - time-sharing replica "nvidia<minor>/vgpu<n>" (manager.go
//     fmt.Sprintf("%s/vgpu%d", device.ID, i); gpusharing/gpusharing.go
//     validRegex `nvidia([0-9]+)\/vgpu([0-9]+)$`);
//   - MIG partition "nvidia<minor>/gi<gpu instance id>" (mig/mig.go
//     DiscoverAndMountMIGDevices: "nvidia" + gpuID + "/" + giFile.Name(), the
//     gi<N> directories of /proc/driver/nvidia/capabilities/gpu<minor>/mig,
//     compute instance ci0), and its replicas "nvidia<minor>/gi<id>/vgpu<n>"
//     (gpusharing.go validMigRegex).
//
// NVIDIA's DRA driver gpu.nvidia.com (github.com/NVIDIA/k8s-dra-driver-gpu,
// read at 22407113):
//   - whole GPU "gpu-<minor>" (cmd/gpu-kubelet-plugin/deviceinfo.go
//     GpuInfo.CanonicalName);
//   - MIG device "gpu-<parent minor>-mig-<profile>-<GI profile id>-<placement start>"
//     (mig.go MigSpecTuple.ToCanonicalName; the profile with its dots removed
//     and made RFC 1123 compliant by toRFC1123Compliant; parsed back by
//     canonicalMigNameRegex `^gpu-(\d+)-mig-(.+)-(\d+)-(\d+)$`). The GI profile
//     id and placement start are nvmlGpuInstanceGetInfo's profileId and
//     placement.start of the instance's GPU instance (nvlib.go).
type MinorRef struct {
	// Minor is the GPU's minor number (a MIG device's parent's); -1 when the
	// id is no minor-number form.
	Minor int
	// GI is GKE's MIG form's GPU instance id; -1 otherwise.
	GI int
	// ProfileID and PlacementStart are the DRA MIG form's GPU instance
	// profile id and placement start; -1 otherwise.
	ProfileID, PlacementStart int
	// Profile is the DRA MIG form's profile as the name spells it ("1g10gb",
	// "1c3g20gb"), for where NVML does not give the instance's profile id.
	Profile string
	// Replica is GKE's time-sharing replica (vgpu<n>); -1 when none.
	Replica int
}

// noRef is the MinorRef of an id that is no minor-number form.
var noRef = MinorRef{Minor: -1, GI: -1, ProfileID: -1, PlacementStart: -1, Replica: -1}

// Valid says whether the reference names a device.
func (r MinorRef) Valid() bool { return r.Minor >= 0 }

// MIG says whether the reference names a MIG device.
func (r MinorRef) MIG() bool { return r.GI >= 0 || r.ProfileID >= 0 }

// ParseGKEDeviceID reads GKE's device plugin ids; ok is false for any other id.
func ParseGKEDeviceID(id string) (MinorRef, bool) {
	r := noRef
	rest, found := strings.CutPrefix(id, "nvidia")
	if !found {
		return noRef, false
	}
	num, rest := leadingDigits(rest)
	minor, ok := atoi(num)
	if !ok {
		return noRef, false
	}
	r.Minor = minor
	if after, found := strings.CutPrefix(rest, "/gi"); found {
		num, rest = leadingDigits(after)
		if r.GI, ok = atoi(num); !ok {
			return noRef, false
		}
	}
	if after, found := strings.CutPrefix(rest, "/vgpu"); found {
		num, rest = leadingDigits(after)
		if r.Replica, ok = atoi(num); !ok {
			return noRef, false
		}
	}
	if rest != "" {
		return noRef, false
	}
	return r, true
}

// DRADriverNVIDIA is NVIDIA's DRA driver for GPUs (cmd/gpu-kubelet-plugin/main.go
// DriverName). Devices of other DRA drivers are not GPUs the receiver can map.
const DRADriverNVIDIA = "gpu.nvidia.com"

// ParseDRADeviceName reads the device names NVIDIA's DRA driver publishes; ok
// is false for any other name (a VFIO device "gpu-vfio-<n>", a future form).
func ParseDRADeviceName(name string) (MinorRef, bool) {
	r := noRef
	rest, found := strings.CutPrefix(name, "gpu-")
	if !found {
		return noRef, false
	}
	num, rest := leadingDigits(rest)
	minor, ok := atoi(num)
	if !ok {
		return noRef, false
	}
	r.Minor = minor
	if rest == "" {
		return r, true
	}
	mig, found := strings.CutPrefix(rest, "-mig-")
	if !found {
		return noRef, false
	}
	// <profile>-<profile id>-<placement start>: the profile may itself hold
	// dashes, so the two numbers are taken from the end, as the driver's
	// greedy regex does.
	profile, start, ok1 := cutLastNumber(mig)
	profile, pid, ok2 := cutLastNumber(profile)
	if !ok1 || !ok2 || profile == "" {
		return noRef, false
	}
	r.Profile, r.ProfileID, r.PlacementStart = profile, pid, start
	return r, true
}

// DRAProfileName spells a MIG profile as NVIDIA's DRA driver does in device
// names ("1g.10gb" -> "1g10gb", "1g.10gb+me" -> "1g10gb-me"): dots removed,
// then toRFC1123Compliant (lower case, anything but [a-z0-9-.] a dash, dashes
// trimmed at both ends).
func DRAProfileName(profile string) string {
	b := []byte(strings.ToLower(strings.ReplaceAll(profile, ".", "")))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			b[i] = '-'
		}
	}
	return strings.Trim(string(b), "-")
}

// leadingDigits splits s after its leading decimal digits.
func leadingDigits(s string) (digits, rest string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}

// cutLastNumber splits "<head>-<n>" into head and n.
func cutLastNumber(s string) (head string, n int, ok bool) {
	i := strings.LastIndexByte(s, '-')
	if i < 0 {
		return "", 0, false
	}
	n, ok = atoi(s[i+1:])
	return s[:i], n, ok
}
