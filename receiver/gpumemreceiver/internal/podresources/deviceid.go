package podresources

import "strings"

// DeviceID is a device plugin device id as the kubelet lists it, split into
// the NVML device it names and the decorations the plugin adds.
//
// What NVIDIA's k8s-device-plugin advertises (github.com/NVIDIA/k8s-device-plugin,
// read at 1b826acc6, and v0.7.0 for the first MIG support):
//   - The id of every device, whole GPU or MIG, is the NVML UUID:
//     internal/rm/devices.go BuildDevice sets dev.ID from deviceInfo.GetUUID,
//     which nvml_devices.go answers with nvml.Device.GetUUID for both kinds
//     (v0.7.0 nvidia.go buildDevice: dev.ID = d.UUID). The deviceIDStrategy
//     "index" changes only what the container is told (NVIDIA_VISIBLE_DEVICES),
//     not the ids the kubelet sees (internal/plugin/server.go).
//   - Whole GPU: "GPU-<uuid>". MIG device: the MIG UUID NVML gives, which is
//     "MIG-<uuid>" on drivers from R470 and "MIG-GPU-<gpu uuid>/<gi>/<ci>" on
//     the R450/R460 drivers of the first MIG releases; api/config/v1/replicas.go
//     IsMigUUID accepts exactly these two forms.
//   - The MIG strategy changes the resource name, not the id: "single" lists
//     MIG devices as nvidia.com/gpu, "mixed" as nvidia.com/mig-<g>g.<gb>gb
//     (or mig-<c>c.<g>g.<gb>gb), v0.7.0 mig-strategy.go getResourceName.
//   - Time-slicing and MPS sharing advertise replicas "<id>::<n>"
//     (internal/rm/devices.go NewAnnotatedID), usually under nvidia.com/gpu or,
//     with renameByDefault, nvidia.com/gpu.shared.
type DeviceID struct {
	// UUID is the NVML UUID of the device the id refers to, replica suffix
	// stripped: "GPU-…", "MIG-…" or the legacy "MIG-GPU-…/gi/ci". It is a
	// substring of the listed id (no copy).
	UUID string
	// Parent is the parent GPU's UUID, known only from the legacy MIG form.
	Parent string
	// GI and CI are the legacy MIG form's GPU and compute instance ids; -1 otherwise.
	GI, CI int
	// Replica is the time-slicing/MPS replica number; -1 when the id has none.
	Replica int
}

// ParseDeviceID splits a device id the kubelet lists. ok is false when the id
// is no GPU or MIG UUID (another plugin's id, or an index-style id); the
// caller still keeps such an allocation under its listed id.
func ParseDeviceID(id string) (d DeviceID, ok bool) {
	d = DeviceID{GI: -1, CI: -1, Replica: -1}
	base := id
	if i := strings.Index(id, "::"); i >= 0 {
		n, ok := atoi(id[i+2:])
		if !ok {
			return d, false
		}
		base, d.Replica = id[:i], n
	}
	switch {
	case strings.HasPrefix(base, "GPU-") && isUUID(base[4:]):
	case strings.HasPrefix(base, "MIG-GPU-"):
		// Legacy MIG: MIG-GPU-<uuid>/<gi>/<ci>.
		rest := base[4:]
		if len(rest) < 41 || !isUUID(rest[4:40]) || rest[40] != '/' {
			return d, false
		}
		giStr, ciStr, found := strings.Cut(rest[41:], "/")
		gi, ok1 := atoi(giStr)
		ci, ok2 := atoi(ciStr)
		if !found || !ok1 || !ok2 {
			return d, false
		}
		d.Parent, d.GI, d.CI = rest[:40], gi, ci
	case strings.HasPrefix(base, "MIG-") && isUUID(base[4:]):
	default:
		return d, false
	}
	d.UUID = base
	return d, true
}

// LooksLikeGPU reports whether id names an NVIDIA GPU or MIG device; it lets
// a resource not named nvidia.com/… (a renamed or vendored plugin) still count.
func LooksLikeGPU(id string) bool {
	_, ok := ParseDeviceID(id)
	return ok
}

// isUUID accepts the 8-4-4-4-12 hex form NVML prints (any hex case).
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHexDigit(c) {
				return false
			}
		}
	}
	return true
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// atoi parses a small non-negative decimal without allocating; more than six
// digits is no replica or instance number any plugin writes.
func atoi(s string) (int, bool) {
	if s == "" || len(s) > 6 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}
