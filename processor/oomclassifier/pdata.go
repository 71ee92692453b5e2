package oomclassifier

import (
	"math"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Small readers and writers of pdata attributes shared by the ingest and record paths.

// str returns a string attribute, or "" when absent or not a string.
func str(m pcommon.Map, key string) string {
	if v, ok := m.Get(key); ok {
		return strValue(v)
	}
	return ""
}

// integer returns an int attribute (or a string holding one), or -1 when absent or invalid.
func integer(m pcommon.Map, key string) int {
	if v, ok := m.Get(key); ok {
		return intValue(v)
	}
	return -1
}

func strValue(v pcommon.Value) string {
	if v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}

func intValue(v pcommon.Value) int {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		if n := v.Int(); n >= 0 && n <= math.MaxInt32 {
			return int(n)
		}
	case pcommon.ValueTypeStr:
		if n, err := strconv.Atoi(v.Str()); err == nil && n >= 0 {
			return n
		}
	}
	return -1
}

// putStr and putInt add an attribute unless it is already set or the value is empty: the
// processor enriches, it never overwrites.
func putStr(m pcommon.Map, k, v string) {
	if _, set := m.Get(k); !set && v != "" {
		m.PutStr(k, v)
	}
}

func putInt(m pcommon.Map, k string, v int64) {
	if _, set := m.Get(k); !set {
		m.PutInt(k, v)
	}
}
