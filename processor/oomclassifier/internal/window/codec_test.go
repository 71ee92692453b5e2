package window

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCodecRoundTrips: any int64 timestamps and values, steps of every bucket and the
// extremes that wrap, decode to what was encoded.
func TestCodecRoundTrips(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	vals := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, 1 << 46, 2 << 20, -(2 << 20), 81559 << 20}
	var s series
	tt := int64(math.MinInt64 + 10)
	var want []Point
	for i := 0; i < 5000; i++ {
		var dt int64
		switch r.IntN(8) {
		case 0:
			dt = 1
		case 1:
			dt = 1e9
		case 2:
			dt = 1e9 + r.Int64N(1<<19) - 1<<18
		case 3:
			dt = r.Int64N(1 << 30)
		case 4:
			dt = r.Int64N(1 << 40)
		case 5:
			dt = 1 + r.Int64N(math.MaxInt64/10000)
		default:
			dt = 1e9 + r.Int64N(2e6)
		}
		tt += dt
		if tt < want0(want) {
			break // wrapped past MaxInt64: the series is sorted, stop
		}
		v := vals[r.IntN(len(vals))] + r.Int64N(3)
		if r.IntN(3) == 0 && len(want) > 0 {
			v = want[len(want)-1].V
		}
		s.add(tt, v)
		want = append(want, Point{tt, v})
	}
	require.Equal(t, want, all(&s))
}

func want0(ps []Point) int64 {
	if len(ps) == 0 {
		return math.MinInt64
	}
	return ps[len(ps)-1].T
}

// TestSeriesMatchesModel drives a series and a plain sorted slice with the same random
// operations (in-order, late and duplicate points, trims, drops) and compares every read.
func TestSeriesMatchesModel(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 9))
		step := seed%4 == 3
		s := series{step: step}
		var m []Point
		next := int64(1e12)
		for op := 0; op < 3000; op++ {
			switch k := r.IntN(100); {
			case k < 80: // in order, a second apart with jitter
				next += 1e9 + r.Int64N(5e5)
				v := int64(r.IntN(4)) << 21
				s.add(next, v)
				m = modelAdd(m, Point{next, v}, step)
			case k < 92 && len(m) > 0: // late, or a duplicate
				tt := m[0].T + r.Int64N(next-m[0].T+1) - 5e9
				v := int64(r.IntN(4)) << 21
				s.add(tt, v)
				m = modelAdd(m, Point{tt, v}, false)
			case k < 97:
				cut := next - r.Int64N(600e9)
				s.trim(cut)
				m = modelTrim(m, cut)
			default:
				d := r.IntN(len(m) + 1)
				s.drop(d)
				if d >= len(m) {
					m = nil
				} else {
					m = m[d:]
				}
			}
			require.Equal(t, len(m), s.len(), "seed %d op %d", seed, op)
			if op%50 == 0 || len(m) < 3 {
				require.Equal(t, m, nilIfNone(all(&s)), "seed %d op %d", seed, op)
			}
			if len(m) == 0 {
				continue
			}
			require.Equal(t, m[0], s.first())
			require.Equal(t, m[len(m)-1].T, s.newest())
			q := m[0].T - 2e9 + r.Int64N(next-m[0].T+4e9)
			wp, wok := modelAt(m, q)
			gp, gok := s.at(q)
			require.Equal(t, wok, gok, "seed %d op %d at %d", seed, op, q)
			require.Equal(t, wp, gp, "seed %d op %d at %d", seed, op, q)
			from := q - r.Int64N(100e9)
			require.Equal(t, modelBetween(m, from, q), s.appendBetween(nil, from, q), "seed %d op %d", seed, op)
		}
	}
}

func nilIfNone(ps []Point) []Point {
	if len(ps) == 0 {
		return nil
	}
	return ps
}

func modelAdd(m []Point, p Point, step bool) []Point {
	n := len(m)
	if n > 0 && p.T > m[n-1].T && step && m[n-1].V == p.V {
		return m
	}
	i := sort.Search(n, func(i int) bool { return m[i].T >= p.T })
	if i < n && m[i].T == p.T {
		m[i].V = p.V
		return m
	}
	return slices.Insert(m, i, p)
}

func modelTrim(m []Point, cut int64) []Point {
	i := 0
	for i+1 < len(m) && m[i+1].T < cut {
		i++
	}
	return m[i:]
}

func modelAt(m []Point, t int64) (Point, bool) {
	i := sort.Search(len(m), func(i int) bool { return m[i].T > t })
	if i == 0 {
		return Point{}, false
	}
	return m[i-1], true
}

func modelBetween(m []Point, from, to int64) []Point {
	var out []Point
	for _, p := range m {
		if p.T >= from && p.T <= to {
			out = append(out, p)
		}
	}
	return out
}

// FuzzSeries drives a series and the plain model with operations read from the input (any
// timestamps and values a sender can put in OTLP, in any order) and compares every read.
func FuzzSeries(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	f.Add([]byte("\x00\xff\x10\x80\x7f\x01\x02\x03\xfe\xfd\x00\x00\x00\x01"))
	f.Fuzz(func(t *testing.T, ops []byte) {
		// A window holds about a thousand points; longer inputs only make the model slow.
		ops = ops[:min(len(ops), 3000)]
		var s series
		var m []Point
		tt := int64(1e12)
		for i := 0; i+2 < len(ops); i += 3 {
			op, a, b := ops[i], int64(int8(ops[i+1])), int64(ops[i+2])
			switch op % 8 {
			case 0, 1, 2, 3: // in order: a second plus jitter, or a gap
				tt += 1e9 + a*1e4 + int64(op/8)*1e9
				s.add(tt, b<<20)
				m = modelAdd(m, Point{tt, b << 20}, false)
			case 4: // extreme values
				v := []int64{math.MaxInt64, math.MinInt64, 0, -1}[b%4]
				tt += 1 + b
				s.add(tt, v)
				m = modelAdd(m, Point{tt, v}, false)
			case 5: // late or duplicate
				lt := tt - b*1e9 - a
				s.add(lt, a)
				m = modelAdd(m, Point{lt, a}, false)
			case 6:
				cut := tt - b*1e9
				s.trim(cut)
				m = modelTrim(m, cut)
			case 7:
				d := int(b) % (len(m) + 1)
				s.drop(d)
				if d >= len(m) {
					m = nil
				} else {
					m = m[d:]
				}
			}
			if s.len() != len(m) {
				t.Fatalf("op %d: len %d, want %d", i/3, s.len(), len(m))
			}
		}
		require.Equal(t, nilIfNone(m), nilIfNone(all(&s)))
		for _, p := range m {
			got, ok := s.at(p.T)
			require.True(t, ok)
			require.Equal(t, p, got)
		}
	})
}
