package simnvml

import (
	"fmt"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"
)

// Series is a value over scenario time. YAML spells it one of three ways:
//
//	memory: 40GiB                                   # constant
//	memory: {ramp: {from: 10GiB, to: 70GiB, over: 50s, at: 5s}}
//	memory: {steps: [{at: 0s, value: 2GiB}, {at: 20s, value: 30GiB}]}
//
// A ramp holds From until At, moves linearly to To over Over, then holds To.
// Steps hold each value from its At until the next step; before the first
// step the value is 0. Times are scenario times, so with a looping scenario a
// ramp becomes a sawtooth. Values are quantities (see parseQuantity); true
// and false read as 1 and 0 for flags.
type Series struct {
	Const float64
	Ramp  *Ramp
	Steps []Step
}

// Ramp is a linear change between two values.
type Ramp struct {
	From, To float64
	At, Over time.Duration
}

// Step sets the series to Value from scenario time At on.
type Step struct {
	At    time.Duration
	Value float64
}

// Const returns a series that is always v.
func Const(v float64) Series { return Series{Const: v} }

// RampOf returns a series going from from to to over over, starting at at.
func RampOf(from, to float64, at, over time.Duration) Series {
	return Series{Ramp: &Ramp{From: from, To: to, At: at, Over: over}}
}

// StepsOf returns a step series; steps must be in increasing At order.
func StepsOf(steps ...Step) Series { return Series{Steps: steps} }

// At evaluates the series at scenario time t.
func (s Series) At(t time.Duration) float64 {
	switch {
	case s.Ramp != nil:
		r := s.Ramp
		switch {
		case t < r.At:
			return r.From
		case t >= r.At+r.Over:
			return r.To
		default:
			frac := float64(t-r.At) / float64(r.Over)
			return r.From + (r.To-r.From)*frac
		}
	case s.Steps != nil:
		v := 0.0
		for _, st := range s.Steps {
			if st.At > t {
				break
			}
			v = st.Value
		}
		return v
	default:
		return s.Const
	}
}

// Max is the largest value the series takes.
func (s Series) Max() float64 {
	switch {
	case s.Ramp != nil:
		return max(s.Ramp.From, s.Ramp.To)
	case s.Steps != nil:
		m := 0.0
		for _, st := range s.Steps {
			m = max(m, st.Value)
		}
		return m
	default:
		return s.Const
	}
}

// check reports the first thing wrong with a series whose values must lie in
// [0, hi]; path names it in the scenario ("gpus[3].utilization").
func (s Series) check(path string, hi float64) error {
	if s.Ramp != nil {
		if s.Ramp.At < 0 || s.Ramp.Over < 0 {
			return fmt.Errorf("%s: ramp 'at' and 'over' must not be negative", path)
		}
	}
	for i, st := range s.Steps {
		if st.At < 0 {
			return fmt.Errorf("%s: steps[%d].at must not be negative", path, i)
		}
		if i > 0 && st.At <= s.Steps[i-1].At {
			return fmt.Errorf("%s: steps[%d].at must be later than steps[%d].at", path, i, i-1)
		}
	}
	if m := s.Max(); m > hi {
		return fmt.Errorf("%s: value %s exceeds the maximum %s", path, formatQuantity(m), formatQuantity(hi))
	}
	return nil
}

// seriesYAML is the mapping form of a series as YAML spells it.
type seriesYAML struct {
	Ramp *struct {
		From quantity      `yaml:"from"`
		To   quantity      `yaml:"to"`
		At   time.Duration `yaml:"at"`
		Over time.Duration `yaml:"over"`
	} `yaml:"ramp"`
	Steps []struct {
		At    time.Duration `yaml:"at"`
		Value quantity      `yaml:"value"`
	} `yaml:"steps"`
}

// quantity is one series value in YAML.
type quantity float64

func (q *quantity) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a value such as 40GiB or 35, got a %s", n.Line, kindName(n.Kind))
	}
	switch n.Tag {
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		if b {
			*q = 1
		} else {
			*q = 0
		}
		return nil
	}
	v, err := parseQuantity(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*q = quantity(v)
	return nil
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (s *Series) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		var q quantity
		if err := q.UnmarshalYAML(n); err != nil {
			return err
		}
		*s = Const(float64(q))
		return nil
	case yaml.MappingNode:
	default:
		return fmt.Errorf("line %d: want a value, {ramp: …} or {steps: […]}, got a %s", n.Line, kindName(n.Kind))
	}
	if len(n.Content) != 2 {
		return fmt.Errorf("line %d: a series mapping has exactly one key, ramp or steps", n.Line)
	}
	var y seriesYAML
	body := n.Content[1]
	switch key := n.Content[0].Value; key {
	case "ramp":
		if err := checkKeys(body, []string{"from", "to", "over"}, "at"); err != nil {
			return fmt.Errorf("ramp: %w", err)
		}
		if err := n.Decode(&y); err != nil {
			return err
		}
		r := y.Ramp
		*s = RampOf(float64(r.From), float64(r.To), r.At, r.Over)
	case "steps":
		if body.Kind != yaml.SequenceNode || len(body.Content) == 0 {
			return fmt.Errorf("line %d: steps needs a list of at least one {at, value}", body.Line)
		}
		for _, st := range body.Content {
			if err := checkKeys(st, []string{"at", "value"}); err != nil {
				return fmt.Errorf("steps: %w", err)
			}
		}
		if err := n.Decode(&y); err != nil {
			return err
		}
		steps := make([]Step, len(y.Steps))
		for i, st := range y.Steps {
			steps[i] = Step{At: st.At, Value: float64(st.Value)}
		}
		*s = StepsOf(steps...)
	default:
		return fmt.Errorf("line %d: unknown series form %q: want ramp or steps", n.Line, key)
	}
	return nil
}

// MarshalYAML implements yaml.Marshaler, writing the form UnmarshalYAML reads.
func (s Series) MarshalYAML() (any, error) {
	switch {
	case s.Ramp != nil:
		r := map[string]any{"from": yamlQuantity(s.Ramp.From), "to": yamlQuantity(s.Ramp.To), "over": s.Ramp.Over.String()}
		if s.Ramp.At != 0 {
			r["at"] = s.Ramp.At.String()
		}
		return map[string]any{"ramp": r}, nil
	case s.Steps != nil:
		steps := make([]map[string]any, len(s.Steps))
		for i, st := range s.Steps {
			steps[i] = map[string]any{"at": st.At.String(), "value": yamlQuantity(st.Value)}
		}
		return map[string]any{"steps": steps}, nil
	default:
		return yamlQuantity(s.Const), nil
	}
}

// IsZero lets omitempty drop a series that is the constant 0.
func (s Series) IsZero() bool { return s.Ramp == nil && s.Steps == nil && s.Const == 0 }

// checkKeys reports a node that is not a mapping, lacks a required key, or
// has a key outside required and optional, naming the line.
func checkKeys(m *yaml.Node, required []string, optional ...string) error {
	if m.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: want a mapping with %v, got a %s", m.Line, required, kindName(m.Kind))
	}
	seen := make(map[string]bool, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if !slices.Contains(required, k.Value) && !slices.Contains(optional, k.Value) {
			return fmt.Errorf("line %d: unknown key %q", k.Line, k.Value)
		}
		seen[k.Value] = true
	}
	for _, k := range required {
		if !seen[k] {
			return fmt.Errorf("line %d: missing key %q", m.Line, k)
		}
	}
	return nil
}
