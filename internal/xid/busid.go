package xid

import "strings"

// busIDLen is the length of NVML's bus id form "00000000:3B:00.0".
const busIDLen = 16

// NormalizeBusID rewrites a PCI address in any of the forms the kernel, the
// driver and NVML print into NVML's form, "00000000:3B:00.0" (8 hex digit
// domain, upper case, function included), so kernel lines can be matched to
// NVML devices by plain string equality.
//
// Accepted: an optional "PCI:" or "pci:" prefix, an optional domain of 1 to
// 8 hex digits, a 1-2 digit bus, a 1-2 digit device (at most 0x1f) and an
// optional ".function" (0-7; 0 when absent, as the driver's Xid lines omit
// it). Anything else yields "".
func NormalizeBusID(s string) string {
	if isCanonicalBusID(s) {
		return s // the common NVML case: no allocation
	}
	if len(s) >= 4 && (s[:4] == "PCI:" || s[:4] == "pci:") {
		s = s[4:]
	}
	first := strings.IndexByte(s, ':')
	if first < 0 {
		return ""
	}
	var domainText, busText, rest string
	if second := strings.IndexByte(s[first+1:], ':'); second >= 0 {
		domainText, busText, rest = s[:first], s[first+1:first+1+second], s[first+2+second:]
		if domainText == "" {
			return "" // ":3b:00.0": the domain's colon without a domain
		}
	} else {
		busText, rest = s[:first], s[first+1:]
	}
	devText, fnText := rest, ""
	if dot := strings.IndexByte(rest, '.'); dot >= 0 {
		devText, fnText = rest[:dot], rest[dot+1:]
		if fnText == "" {
			return ""
		}
	}
	domain, ok := parseHex(domainText, 8, domainText == "")
	if !ok {
		return ""
	}
	bus, ok := parseHex(busText, 2, false)
	if !ok {
		return ""
	}
	dev, ok := parseHex(devText, 2, false)
	if !ok || dev > 0x1f {
		return ""
	}
	fn, ok := parseHex(fnText, 1, fnText == "")
	if !ok || fn > 7 {
		return ""
	}
	var b [busIDLen]byte
	putHex(b[0:8], domain)
	b[8] = ':'
	putHex(b[9:11], bus)
	b[11] = ':'
	putHex(b[12:14], dev)
	b[14] = '.'
	putHex(b[15:16], fn)
	return string(b[:])
}

// isCanonicalBusID reports whether s is already in NVML's form.
func isCanonicalBusID(s string) bool {
	if len(s) != busIDLen || s[8] != ':' || s[11] != ':' || s[14] != '.' {
		return false
	}
	for i := 0; i < busIDLen; i++ {
		switch i {
		case 8, 11, 14:
			continue
		}
		c := s[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	// Device and function limits, as in the general path.
	return hexVal(s[12])<<4|hexVal(s[13]) <= 0x1f && hexVal(s[15]) <= 7
}

// parseHex parses 1..maxDigits hex digits; an empty s is accepted (as 0)
// only when emptyOK.
func parseHex(s string, maxDigits int, emptyOK bool) (uint32, bool) {
	if s == "" {
		return 0, emptyOK
	}
	if len(s) > maxDigits {
		return 0, false
	}
	var v uint32
	for i := 0; i < len(s); i++ {
		d := hexVal(s[i])
		if d > 15 {
			return 0, false
		}
		v = v<<4 | d
	}
	return v, true
}

// hexVal returns the value of a hex digit, or 16 for anything else.
func hexVal(c byte) uint32 {
	switch {
	case '0' <= c && c <= '9':
		return uint32(c - '0')
	case 'a' <= c && c <= 'f':
		return uint32(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return uint32(c-'A') + 10
	}
	return 16
}

// putHex writes v as len(dst) upper-case hex digits, zero padded.
func putHex(dst []byte, v uint32) {
	const digits = "0123456789ABCDEF"
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = digits[v&0xf]
		v >>= 4
	}
}
