package metadata

import (
	"fmt"
	"sort"

	"go.opentelemetry.io/collector/confmap"
)

// MetricConfig is the switch of one metric: `metrics.<name>.enabled`.
type MetricConfig struct {
	Enabled bool `mapstructure:"enabled"`
}

// ResourceAttributeConfig is the switch of one resource attribute.
type ResourceAttributeConfig struct {
	Enabled bool `mapstructure:"enabled"`
}

// MetricsConfig holds every metric's switch, keyed by metric name.
type MetricsConfig map[string]MetricConfig

// ResourceAttributesConfig holds every resource attribute's switch, keyed by name.
type ResourceAttributesConfig map[string]ResourceAttributeConfig

// MetricsBuilderConfig is squashed into the receiver's config, as mdatagen's is.
type MetricsBuilderConfig struct {
	Metrics            MetricsConfig            `mapstructure:"metrics"`
	ResourceAttributes ResourceAttributesConfig `mapstructure:"resource_attributes"`
}

// DefaultMetricsBuilderConfig has every switch at its documented default.
func DefaultMetricsBuilderConfig() MetricsBuilderConfig {
	mc := make(MetricsConfig, len(Metrics))
	for _, m := range Metrics {
		mc[m.Name] = MetricConfig{Enabled: m.Enabled}
	}
	rc := make(ResourceAttributesConfig, len(ResourceAttributes))
	for _, a := range ResourceAttributes {
		rc[a.Name] = ResourceAttributeConfig{Enabled: a.Enabled}
	}
	return MetricsBuilderConfig{Metrics: mc, ResourceAttributes: rc}
}

// Unmarshal overlays the user's switches on the defaults, so `name: {}` keeps the default
// rather than turning the metric off, and rejects names the receiver does not have.
func (mc *MetricsConfig) Unmarshal(conf *confmap.Conf) error {
	if *mc == nil {
		*mc = DefaultMetricsBuilderConfig().Metrics
	}
	for _, name := range sortedKeys(conf) {
		cur, ok := (*mc)[name]
		if !ok {
			return fmt.Errorf("'metrics': unknown metric %q", name)
		}
		sub, err := conf.Sub(name)
		if err != nil {
			return fmt.Errorf("'metrics::%s': %w", name, err)
		}
		if err := sub.Unmarshal(&cur); err != nil {
			return fmt.Errorf("'metrics::%s': %w", name, err)
		}
		(*mc)[name] = cur
	}
	return nil
}

// Unmarshal overlays the user's switches on the defaults and rejects unknown names.
func (rc *ResourceAttributesConfig) Unmarshal(conf *confmap.Conf) error {
	if *rc == nil {
		*rc = DefaultMetricsBuilderConfig().ResourceAttributes
	}
	for _, name := range sortedKeys(conf) {
		cur, ok := (*rc)[name]
		if !ok {
			return fmt.Errorf("'resource_attributes': unknown resource attribute %q", name)
		}
		sub, err := conf.Sub(name)
		if err != nil {
			return fmt.Errorf("'resource_attributes::%s': %w", name, err)
		}
		if err := sub.Unmarshal(&cur); err != nil {
			return fmt.Errorf("'resource_attributes::%s': %w", name, err)
		}
		(*rc)[name] = cur
	}
	return nil
}

func sortedKeys(conf *confmap.Conf) []string {
	m := conf.ToStringMap()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
