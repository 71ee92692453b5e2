package parse

import (
	"math"
	"testing"
)

// The cases below sit on the edges of the byte-size scanners: the overflow
// guards, the last power of ten, commas and dots at either end of a number,
// and numbers that start or end the string.

func TestDecimalBytesEdges(t *testing.T) {
	tests := []struct {
		name string
		num  string
		mult uint64
		want int64
		ok   bool
	}{
		// The largest mantissa the guard lets take one more digit: 19 digits
		// plus one decimal place, 1844674407370955160.9 rounds to …161.
		{"guard_edge_fits", "1844674407370955160.9", 1, 1844674407370955161, true},
		// One more in the mantissa would wrap uint64 (…616 > 2^64−1).
		{"mantissa_wraps", "1844674407370955161.6", 1, 0, false},
		{"max_int64_exact", "9223372036854775807", 1, math.MaxInt64, true},
		{"max_int64_plus_one", "9223372036854775808", 1, 0, false},
		// 19 places is the last power of ten in uint64; 20 is refused.
		{"nineteen_places", "0.5000000000000000000", 1, 1, true},
		{"twenty_places", "0.00000000000000000001", 1, 0, false},
		// 16 × 2^60 = 2^64: the high word equals the divisor 10^0.
		{"product_2_pow_64", "16", 1 << 60, 0, false},
		{"product_below_2_pow_63", "7", 1 << 60, 7 << 60, true},
		{"product_above_max_int64", "15", 1 << 60, 0, false},
		{"comma_after_dot", "1.0,5", 1, 0, false},
		{"only_comma", ",", 1, 0, false},
		{"only_dot", ".", 1, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := decimalBytes(tt.num, tt.mult)
			if ok != tt.ok || (ok && got != tt.want) {
				t.Errorf("decimalBytes(%q, %d) = %d, %v; want %d, %v", tt.num, tt.mult, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestNumberEnd(t *testing.T) {
	tests := []struct {
		s    string
		i    int
		want int
	}{
		{"1.5", 0, 3},          // fraction running to the end of the string
		{"1,024 KiB", 0, 5},    // commas inside the integer part
		{"5. MiB", 0, 1},       // a dot with no digit after is not part of it
		{"5.", 0, 1},           // nor at the very end
		{",5 MiB", 0, 0},       // a number never starts with a comma
		{"1,024, 2", 0, 5},     // a trailing comma is punctuation
		{"x 12.25 GiB", 2, 7},  // from an offset
		{"1.2.3", 0, 3},        // one fraction only
		{"abc", 0, 0},          // no number
		{"12,,3", 0, 5},        // commas are not checked for grouping here
		{"0.000001 B", 0, 8},   // long fraction
		{"7 GiB", 0, 1},        // single digit
		{"10,000.50 MB", 0, 9}, // grouped integer and a fraction
	}
	for _, tt := range tests {
		if got := numberEnd(tt.s, tt.i); got != tt.want {
			t.Errorf("numberEnd(%q, %d) = %d; want %d", tt.s, tt.i, got, tt.want)
		}
	}
}

func TestSizeAtEdges(t *testing.T) {
	tests := []struct {
		s    string
		want int64
		end  int
		ok   bool
	}{
		{"1,024 KiB", 1 << 20, 9, true},
		{"10,000.50 MB", 10486284288, 12, true}, // 10000.5 × 2^20
		{",5 MiB", 0, 0, false},
		{"5. MiB", 0, 0, false},
		{"12 MBz", 0, 0, false}, // the unit is the whole run of letters
		{"12 Zettabytes", 0, 0, false},
		{"3 GiB;", 3 << 30, 5, true},
		{"3  GiB", 0, 0, false}, // one space at most before the unit
	}
	for _, tt := range tests {
		got, end, ok := sizeAt(tt.s, 0)
		if ok != tt.ok || (ok && (got != tt.want || end != tt.end)) {
			t.Errorf("sizeAt(%q) = %d, %d, %v; want %d, %d, %v", tt.s, got, end, ok, tt.want, tt.end, tt.ok)
		}
	}
	for _, i := range []int{-1, 5, 6} {
		if _, _, ok := sizeAt("5 MiB", i); ok {
			t.Errorf("sizeAt(%q, %d) accepted", "5 MiB", i)
		}
	}
}

func TestSizeBeforeEdges(t *testing.T) {
	tests := []struct {
		s    string
		want int64
		ok   bool
	}{
		{"5 MiB", 5 << 20, true}, // the number starts the string
		{"5MiB", 5 << 20, true},
		{"MiB", 0, false}, // the unit starts the string
		{" MiB", 0, false},
		{"x 1,024 KiB", 1 << 20, true},
		{"x 1,048,576 B", 1 << 20, true},
		{"x.5 GiB", 5 << 30, true}, // a leading '.' is punctuation
		{"x,5 GiB", 5 << 30, true}, // and so is a leading ','
		{"x . GiB", 0, false},
		{"x ., GiB", 0, false},
		{"x 2.5 Zb", 0, false},
		{"x 2.50GiB", 2684354560, true},
	}
	for _, tt := range tests {
		got, ok := sizeBefore(tt.s, len(tt.s))
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("sizeBefore(%q) = %d, %v; want %d, %v", tt.s, got, ok, tt.want, tt.ok)
		}
	}
	for _, end := range []int{-1, 0, 6} {
		if _, ok := sizeBefore("5 MiB", end); ok {
			t.Errorf("sizeBefore(%q, %d) accepted", "5 MiB", end)
		}
	}
}

func TestIntAtEdges(t *testing.T) {
	tests := []struct {
		s    string
		want int64
		end  int
		ok   bool
	}{
		{"123456789012345678", 123456789012345678, 18, true}, // 18 digits fit
		{"1234567890123456789", 0, 0, false},                 // 19 are refused
		{"42)", 42, 2, true},
		{"x", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, tt := range tests {
		got, end, ok := intAt(tt.s, 0)
		if ok != tt.ok || end != tt.end || (ok && got != tt.want) {
			t.Errorf("intAt(%q) = %d, %d, %v; want %d, %d, %v", tt.s, got, end, ok, tt.want, tt.end, tt.ok)
		}
	}
}

func TestGroupedIntAtEdges(t *testing.T) {
	tests := []struct {
		s    string
		want int64
		end  int
		ok   bool
	}{
		{"1,073,741,824 bytes", 1073741824, 13, true}, // CuPy's "{:,}"
		{"1,", 1, 1, true},                            // a comma ending the string
		{"1,a", 1, 1, true},                           // a comma not followed by a digit
		{"1, 2", 1, 1, true},
		{",123", 0, 0, false}, // never starts with a comma
		{"512", 512, 3, true},
		{"x", 0, 0, false},
	}
	for _, tt := range tests {
		got, end, ok := groupedIntAt(tt.s, 0)
		if ok != tt.ok || end != tt.end || (ok && got != tt.want) {
			t.Errorf("groupedIntAt(%q) = %d, %d, %v; want %d, %d, %v", tt.s, got, end, ok, tt.want, tt.end, tt.ok)
		}
	}
}

func TestSkipSpaces(t *testing.T) {
	tests := []struct {
		s    string
		i    int
		want int
	}{
		{"  ", 0, 2}, // spaces to the end of the string
		{" \t x", 0, 3},
		{"x", 0, 0},
		{"", 0, 0},
		{"a  b", 1, 3},
	}
	for _, tt := range tests {
		if got := skipSpaces(tt.s, tt.i); got != tt.want {
			t.Errorf("skipSpaces(%q, %d) = %d; want %d", tt.s, tt.i, got, tt.want)
		}
	}
}
