package parse

import (
	"math"
	"math/bits"
)

// pow10 holds 10^0 … 10^19, every power of ten that fits in a uint64.
var pow10 = [...]uint64{
	1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
}

// unitMultiplier maps a size suffix to its multiplier. Every framework
// parsed here divides by 1024 whatever it prints (see the package doc), so
// "MB" and "G" are binary too.
func unitMultiplier(u string) (uint64, bool) {
	switch u {
	case "B", "b", "byte", "bytes", "Bytes":
		return 1, true
	case "K", "KB", "KiB", "k", "kB", "kiB":
		return 1 << 10, true
	case "M", "MB", "MiB":
		return 1 << 20, true
	case "G", "GB", "GiB":
		return 1 << 30, true
	case "T", "TB", "TiB":
		return 1 << 40, true
	case "P", "PB", "PiB":
		return 1 << 50, true
	case "E", "EB", "EiB":
		return 1 << 60, true
	}
	return 0, false
}

// decimalBytes converts a decimal as written ("14.56", "1,073,741,824") times
// mult to bytes, exactly: the digits form an integer numerator, 10^places the
// denominator, the product is taken in 128 bits and rounded half up. It fails
// on malformed digits or a result above math.MaxInt64.
func decimalBytes(num string, mult uint64) (int64, bool) {
	var mant uint64
	places, digits := 0, 0
	dot := false
	for i := 0; i < len(num); i++ {
		c := num[i]
		switch {
		case c >= '0' && c <= '9':
			if mant > (math.MaxUint64-9)/10 {
				return 0, false
			}
			mant = mant*10 + uint64(c-'0')
			digits++
			if dot {
				places++
			}
		case c == '.' && !dot:
			dot = true
		case c == ',' && !dot:
		default:
			return 0, false
		}
	}
	if digits == 0 || places >= len(pow10) {
		return 0, false
	}
	hi, lo := bits.Mul64(mant, mult)
	div := pow10[places]
	if hi >= div {
		return 0, false
	}
	q, r := bits.Div64(hi, lo, div)
	if r >= div-r { // 2r >= div without overflowing
		q++
	}
	if q > math.MaxInt64 {
		return 0, false
	}
	return int64(q), true
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// numberEnd returns the end of the decimal number starting at i
// ([0-9][0-9,]*(\.[0-9]+)?), or i when there is none. Commas are accepted only
// inside the integer part and a trailing one is not part of the number.
func numberEnd(s string, i int) int {
	j := i
	for j < len(s) && (isDigit(s[j]) || (s[j] == ',' && j > i)) {
		j++
	}
	for j > i && s[j-1] == ',' {
		j--
	}
	if j == i {
		return i
	}
	if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
		}
	}
	return j
}

// sizeAt parses "<number>[ ]<unit>" at s[i:] and returns the bytes and the
// index just past the unit.
func sizeAt(s string, i int) (int64, int, bool) {
	if i < 0 || i >= len(s) {
		return 0, i, false
	}
	ne := numberEnd(s, i)
	if ne == i {
		return 0, i, false
	}
	u := ne
	if u < len(s) && s[u] == ' ' {
		u++
	}
	ue := u
	for ue < len(s) && isLetter(s[ue]) {
		ue++
	}
	mult, ok := unitMultiplier(s[u:ue])
	if !ok {
		return 0, i, false
	}
	v, ok := decimalBytes(s[i:ne], mult)
	return v, ue, ok
}

// sizeBefore parses the "<number>[ ]<unit>" that ends exactly at s[end].
func sizeBefore(s string, end int) (int64, bool) {
	if end <= 0 || end > len(s) {
		return 0, false
	}
	us := end
	for us > 0 && isLetter(s[us-1]) {
		us--
	}
	mult, ok := unitMultiplier(s[us:end])
	if !ok {
		return 0, false
	}
	ne := us
	if ne > 0 && s[ne-1] == ' ' {
		ne--
	}
	ns := ne
	for ns > 0 && (isDigit(s[ns-1]) || s[ns-1] == '.' || s[ns-1] == ',') {
		ns--
	}
	for ns < ne && !isDigit(s[ns]) { // a leading '.' or ',' is punctuation
		ns++
	}
	if ns == ne {
		return 0, false
	}
	return decimalBytes(s[ns:ne], mult)
}

// intAt parses plain decimal digits at s[i:] (at most 18 of them, so the
// value always fits) and returns the value and the index past them.
func intAt(s string, i int) (int64, int, bool) {
	j := i
	var v int64
	for j < len(s) && isDigit(s[j]) && j-i < 18 {
		v = v*10 + int64(s[j]-'0')
		j++
	}
	if j == i || (j < len(s) && isDigit(s[j])) {
		return 0, i, false
	}
	return v, j, true
}

// groupedIntAt parses an integer that may use comma thousands separators
// (CuPy's "{:,}") at s[i:].
func groupedIntAt(s string, i int) (int64, int, bool) {
	j := i
	for j < len(s) && (isDigit(s[j]) || (s[j] == ',' && j > i && j+1 < len(s) && isDigit(s[j+1]))) {
		j++
	}
	if j == i {
		return 0, i, false
	}
	v, ok := decimalBytes(s[i:j], 1)
	return v, j, ok
}

// skipSpaces returns the index of the first non-space/tab at or after i.
func skipSpaces(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}
