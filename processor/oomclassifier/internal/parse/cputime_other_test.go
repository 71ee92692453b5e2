//go:build !linux

package parse

import "time"

// threadCPU is not read outside Linux: cpu-ns/op then reads 0.
func threadCPU() time.Duration { return 0 }
