package simnvml

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// units are the suffixes a quantity may carry. Binary units are what NVML
// and nvidia-smi mean by "MiB"; decimal ones are accepted for completeness.
var units = []struct {
	suffix string
	factor float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"B", 1},
}

// parseQuantity parses "<number>[ ][unit]": "40GiB", "1.5 GiB", "512MiB",
// "85520809984", "35". The result is finite and not negative.
func parseQuantity(s string) (float64, error) {
	s = strings.TrimSpace(s)
	num, factor := s, 1.0
	for _, u := range units {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			num, factor = strings.TrimSpace(rest), u.factor
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" || strings.ContainsAny(num, "xXpP_") {
		return 0, fmt.Errorf("%q is not a quantity: want a number with an optional unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", s)
	}
	v *= factor
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("%q is not a quantity: must be finite and not negative", s)
	}
	return v, nil
}

// formatQuantity writes v back in the form parseQuantity reads, using the
// largest binary unit that divides it exactly when it is at least 1 MiB, so
// byte sizes read naturally and small counts stay plain numbers.
func formatQuantity(v float64) string {
	if v >= 1<<20 && v == math.Trunc(v) && v < 1<<62 {
		n := uint64(v)
		for _, u := range []struct {
			suffix string
			shift  uint
		}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}} {
			if n%(1<<u.shift) == 0 {
				return strconv.FormatUint(n>>u.shift, 10) + u.suffix
			}
		}
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// yamlQuantity is v as MarshalYAML should write it: a string with a unit for
// byte sizes, a plain YAML number otherwise.
func yamlQuantity(v float64) any {
	f := formatQuantity(v)
	if strings.HasSuffix(f, "B") {
		return f
	}
	if v == math.Trunc(v) && v < 1<<53 {
		return int64(v)
	}
	return v
}

// Bytes is a byte count that YAML may spell "81559MiB" or 85520809984.
type Bytes uint64

// UnmarshalYAML implements yaml.Unmarshaler.
func (b *Bytes) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a byte size such as 80GiB, got a %s", n.Line, kindName(n.Kind))
	}
	v, err := parseQuantity(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	if v != math.Trunc(v) || v >= 1<<63 {
		return fmt.Errorf("line %d: %q is not a whole number of bytes", n.Line, n.Value)
	}
	*b = Bytes(v)
	return nil
}

// MarshalYAML implements yaml.Marshaler.
func (b Bytes) MarshalYAML() (any, error) { return yamlQuantity(float64(b)), nil }

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	default:
		return "scalar"
	}
}
