package simnvml

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

func TestParseQuantity(t *testing.T) {
	good := map[string]float64{
		"0": 0, "35": 35, "1.5": 1.5, "512MiB": 512 << 20, "80GiB": 80 << 30, "1.5 GiB": 1.5 * (1 << 30),
		"2KiB": 2048, "1TiB": 1 << 40, "1KB": 1e3, "2MB": 2e6, "3GB": 3e9, "1TB": 1e12, "100B": 100,
		"85520809984": 85520809984, "1e3": 1000,
	}
	for in, want := range good {
		got, err := parseQuantity(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "GiB", "-1GiB", "10gib", "NaN", "Inf", "1e400", "0x10", "1_000", "ten", "5 %"} {
		_, err := parseQuantity(in)
		assert.Error(t, err, in)
	}
}

func TestFormatQuantityRoundTrips(t *testing.T) {
	for _, v := range []float64{0, 1, 35, 1.5, 512 << 20, 81559 << 20, 80 << 30, 3 << 40, (1 << 20) + 1} {
		got, err := parseQuantity(formatQuantity(v))
		require.NoError(t, err)
		assert.Equal(t, v, got, formatQuantity(v))
	}
	assert.Equal(t, "81559MiB", formatQuantity(81559<<20))
	assert.Equal(t, "80GiB", formatQuantity(80<<30))
	assert.Equal(t, "12", formatQuantity(12))
}

func TestSeriesAt(t *testing.T) {
	ramp := RampOf(10, 70, 10*time.Second, 60*time.Second)
	steps := StepsOf(Step{At: 5 * time.Second, Value: 2}, Step{At: 20 * time.Second, Value: 30})
	tests := []struct {
		name string
		s    Series
		at   time.Duration
		want float64
	}{
		{"const", Const(40), time.Hour, 40},
		{"ramp before", ramp, 0, 10},
		{"ramp start", ramp, 10 * time.Second, 10},
		{"ramp middle", ramp, 40 * time.Second, 40},
		{"ramp end", ramp, 70 * time.Second, 70},
		{"ramp after", ramp, time.Hour, 70},
		{"ramp down", RampOf(100, 0, 0, 10*time.Second), 5 * time.Second, 50},
		{"ramp zero length is a step", RampOf(1, 9, 3*time.Second, 0), 3 * time.Second, 9},
		{"steps before first", steps, 0, 0},
		{"steps first", steps, 5 * time.Second, 2},
		{"steps between", steps, 19 * time.Second, 2},
		{"steps last", steps, time.Minute, 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.InDelta(t, tt.want, tt.s.At(tt.at), 1e-9) })
	}
}

func decodeSeries(y string) (Series, error) {
	var v struct {
		S Series `yaml:"s"`
	}
	err := yaml.Unmarshal([]byte(y), &v)
	return v.S, err
}

func TestSeriesYAML(t *testing.T) {
	good := map[string]Series{
		"s: 40GiB": Const(40 << 30),
		"s: 35":    Const(35),
		"s: 0.5":   Const(0.5),
		"s: true":  Const(1),
		"s: false": Const(0),
		"s: {ramp: {from: 10GiB, to: 70GiB, over: 5m}}":            RampOf(10<<30, 70<<30, 0, 5*time.Minute),
		"s: {ramp: {from: 1, to: 2, over: 1s, at: 3s}}":            RampOf(1, 2, 3*time.Second, time.Second),
		"s: {steps: [{at: 0s, value: 2GiB}, {at: 20s, value: 1}]}": StepsOf(Step{0, 2 << 30}, Step{20 * time.Second, 1}),
		"s: {steps: [{at: 1s, value: true}]}":                      StepsOf(Step{time.Second, 1}),
	}
	for y, want := range good {
		got, err := decodeSeries(y)
		require.NoError(t, err, y)
		assert.Equal(t, want, got, y)

		// What MarshalYAML writes reads back the same.
		out, err := yaml.Marshal(map[string]Series{"s": got})
		require.NoError(t, err)
		back, err := decodeSeries(string(out))
		require.NoError(t, err, string(out))
		assert.Equal(t, got, back, string(out))
	}

	bad := map[string]string{
		"s: [1, 2]":                            "got a list",
		"s: -3":                                "not negative",
		"s: 3 apples":                          "not a quantity",
		"s: {ramp: {from: 1, to: 2}}":          `missing key "over"`,
		"s: {ramp: {from: 1, to: 2, over: 5}}": "time.Duration",
		"s: {ramp: {from: 1, to: 2, over: 1s, by: 3}}": `unknown key "by"`,
		"s: {ramp: 5}":                                     "want a mapping",
		"s: {steps: []}":                                   "at least one",
		"s: {steps: [{at: 1s}]}":                           `missing key "value"`,
		"s: {steps: [{at: 1s, value: 1, x: 2}]}":           `unknown key "x"`,
		"s: {sine: {}}":                                    `unknown series form "sine"`,
		"s: {ramp: {from: 1, to: 2, over: 1s}, steps: []}": "exactly one key",
		"s: {ramp: {from: x, to: 2, over: 1s}}":            "not a quantity",
	}
	for y, want := range bad {
		_, err := decodeSeries(y)
		require.Error(t, err, y)
		assert.Contains(t, err.Error(), want, y)
		assert.Contains(t, err.Error(), "line 1", y)
	}
}

func TestSeriesCheck(t *testing.T) {
	assert.NoError(t, StepsOf(Step{0, 1}, Step{time.Second, 2}).check("x", 10))
	assert.ErrorContains(t, StepsOf(Step{time.Second, 1}, Step{time.Second, 2}).check("x", 10), "x: steps[1].at must be later")
	assert.ErrorContains(t, StepsOf(Step{-time.Second, 1}).check("x", 10), "must not be negative")
	assert.ErrorContains(t, RampOf(0, 1, -time.Second, 0).check("x", 10), "must not be negative")
	assert.ErrorContains(t, RampOf(0, 11, 0, time.Second).check("gpus[0].utilization", 10), "gpus[0].utilization: value 11 exceeds the maximum 10")
}

// FuzzSeriesYAML feeds arbitrary text to the series parser: it must never
// panic, and whatever it accepts must evaluate to finite, non-negative values
// and survive a marshal round trip.
func FuzzSeriesYAML(f *testing.F) {
	for _, seed := range []string{
		"40GiB", "35", "true", "{ramp: {from: 10GiB, to: 70GiB, over: 5m}}",
		"{ramp: {from: 1, to: 2, over: 1s, at: 3s}}", "{steps: [{at: 0s, value: 2GiB}, {at: 20s, value: 30GiB}]}",
		"[1]", "{steps: []}", "1.5 TiB", "{ramp: {from: 1e308, to: 1e308, over: 1ns}}",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := decodeSeries("s: " + strings.ReplaceAll(in, "\n", " "))
		if err != nil {
			return
		}
		for _, at := range []time.Duration{0, time.Second, time.Hour} {
			v := s.At(at)
			if v < 0 || v != v {
				t.Fatalf("At(%s) = %v for %q", at, v, in)
			}
		}
		out, err := yaml.Marshal(map[string]Series{"s": s})
		if err != nil {
			t.Fatalf("marshal %q: %v", in, err)
		}
		if _, err := decodeSeries(string(out)); err != nil {
			t.Fatalf("round trip of %q via %q: %v", in, out, err)
		}
	})
}
