package oomclassifier

import (
	"os"
	"reflect"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"
)

// docs/causes.md gives every threshold with its default; a default changed in code and not
// in the docs (or the reverse) fails here.
func TestCausesDocGivesEveryDefault(t *testing.T) {
	doc, err := os.ReadFile("../../docs/causes.md")
	require.NoError(t, err)
	rows := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9_]+)` \\| `([^`]+)`").FindAllStringSubmatch(string(doc), -1) {
		rows[m[1]] = m[2]
	}
	def := reflect.ValueOf(classify.DefaultThresholds())
	typ := def.Type()
	for i := 0; i < typ.NumField(); i++ {
		key := typ.Field(i).Tag.Get("mapstructure")
		if key == "" || key == "-" || key == "spec_totals" {
			continue // spec_totals is a table, described in words
		}
		got, ok := rows[key]
		if !assert.True(t, ok, "docs/causes.md has no default for %q", key) {
			continue
		}
		v := def.Field(i)
		switch {
		case v.Type() == reflect.TypeOf(time.Duration(0)):
			d, err := time.ParseDuration(got)
			require.NoError(t, err, key)
			assert.Equal(t, v.Interface(), d, key)
		case v.CanInt():
			n, err := strconv.ParseInt(got, 10, 64)
			require.NoError(t, err, key)
			assert.Equal(t, v.Int(), n, key)
		case v.CanFloat():
			f, err := strconv.ParseFloat(got, 64)
			require.NoError(t, err, key)
			assert.Equal(t, v.Float(), f, key)
		default:
			t.Errorf("%s: a %s threshold this test cannot compare", key, v.Type())
		}
	}
}
