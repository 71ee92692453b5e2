package classify

import "testing"

// TestCompare: which figures are compared and which contradict, on a 40 GiB GPU (margin 4 GiB).
func TestCompare(t *testing.T) {
	th := DefaultThresholds()
	msg := func(process, free, total int64) *OOM {
		o := blankOOM()
		o.ProcessBytes, o.FreeBytes, o.TotalBytes = process, free, total
		return &o
	}
	for _, tt := range []struct {
		name          string
		oom           *OOM
		total         int64
		r             Reading
		compared, bad Figures
	}{
		{"both agree", msg(30*gib, 2*gib, 39*gib), 40 * gib, Reading{28 * gib, 3 * gib}, FigureProcess | FigureFree, 0},
		{"process apart", msg(78*gib, gib, 79*gib), 80 * gib, Reading{38 * gib, gib}, FigureProcess | FigureFree, FigureProcess},
		{"free apart", msg(-1, gib, 39*gib), 40 * gib, Reading{-1, 20 * gib}, FigureFree, FigureFree},
		{"process not listed: not compared", msg(30*gib, -1, -1), 40 * gib, Reading{-1, -1}, 0, 0},
		{"another GPU's total: free not compared", msg(30*gib, 2*gib, 39*gib), 80 * gib, Reading{-1, 20 * gib}, 0, 0},
		{"no total: nothing compared", msg(30*gib, 2*gib, -1), -1, Reading{10 * gib, 20 * gib}, 0, 0},
		{"margin is inclusive", msg(30*gib, -1, -1), 40 * gib, Reading{26 * gib, -1}, FigureProcess, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, b := Compare(tt.oom, tt.total, tt.r, &th)
			if c != tt.compared || b != tt.bad {
				t.Fatalf("got compared %b, contradicted %b; want %b, %b", c, b, tt.compared, tt.bad)
			}
		})
	}
}
