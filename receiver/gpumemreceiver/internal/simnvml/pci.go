package simnvml

import (
	"fmt"
	"strconv"
	"strings"
)

// pciAddr is a PCI address as NVML prints it: "00000000:3B:00.0".
type pciAddr struct {
	domain, bus, device, function uint32
}

// parseBusID reads "DDDDDDDD:BB:DD.F" (NVML) or "DDDD:BB:DD.F" (lspci).
func parseBusID(s string) (pciAddr, error) {
	bad := fmt.Errorf("%q is not a PCI bus id like 00000000:3B:00.0", s)
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return pciAddr{}, bad
	}
	devFn := strings.Split(parts[2], ".")
	if len(devFn) != 2 {
		return pciAddr{}, bad
	}
	var a pciAddr
	for _, f := range []struct {
		text      string
		maxDigits int
		max       uint64
		out       *uint32
	}{
		{parts[0], 8, 0xffffffff, &a.domain},
		{parts[1], 2, 0xff, &a.bus},
		{devFn[0], 2, 0x1f, &a.device},
		{devFn[1], 1, 7, &a.function},
	} {
		if f.text == "" || len(f.text) > f.maxDigits {
			return pciAddr{}, bad
		}
		v, err := strconv.ParseUint(f.text, 16, 32)
		if err != nil || v > f.max {
			return pciAddr{}, bad
		}
		*f.out = uint32(v)
	}
	return a, nil
}

// nvml is the form nvmlPciInfo_t.busId holds.
func (a pciAddr) nvml() string {
	return fmt.Sprintf("%08X:%02X:%02X.%X", a.domain, a.bus, a.device, a.function)
}

// legacy is the form nvmlPciInfo_t.busIdLegacy holds.
func (a pciAddr) legacy() string {
	return fmt.Sprintf("%04X:%02X:%02X.%X", a.domain, a.bus, a.device, a.function)
}

// kmsg is the form the driver prints in "NVRM: Xid (PCI:0000:3b:00): …".
func (a pciAddr) kmsg() string {
	return fmt.Sprintf("%04x:%02x:%02x", a.domain, a.bus, a.device)
}
