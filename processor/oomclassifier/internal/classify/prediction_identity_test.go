package classify

import "testing"

// TestAbsentSince: a process is gone from the first collection at or after since that does
// not list it within presenceSlack; without its series nothing is told.
func TestAbsentSince(t *testing.T) {
	const s = int64(1e9)
	pts := func(secs ...int64) []Point {
		out := make([]Point, len(secs))
		for i, x := range secs {
			out[i] = Point{T: x * s, V: 1}
		}
		return out
	}
	usage := pts(0, 1, 2, 3, 4, 5, 6, 7)
	for _, tt := range []struct {
		name   string
		series []Point
		since  int64
		at     int64
		gone   bool
	}{
		{"listed throughout", pts(0, 1, 2, 3, 4, 5, 6, 7), 2 * s, 0, false},
		{"a gap after since", pts(0, 1, 2, 5, 6, 7), 1 * s, 3 * s, true},
		{"a gap before since only", pts(0, 4, 5, 6, 7), 4 * s, 0, false},
		{"first seen after since", pts(5, 6, 7), 2 * s, 2 * s, true},
		{"points 400 ms off are the same collections", []Point{{T: 0}, {T: s + 4e8}, {T: 2*s - 4e8}, {T: 3 * s},
			{T: 4 * s}, {T: 5 * s}, {T: 6 * s}, {T: 7 * s}}, 0, 0, false},
		{"no series: cannot tell", nil, 0, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			at, gone := absentSince(tt.series, usage, tt.since)
			if gone != tt.gone || (gone && at != tt.at) {
				t.Fatalf("got %d, %v; want %d, %v", at, gone, tt.at, tt.gone)
			}
		})
	}
}
