package xidsource

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMergeInto(t *testing.T) {
	at := time.Now()
	nv := Event{Code: 31, BusID: "00000000:19:00.0", NVML: true, Arrived: at}
	km := Event{Code: 31, BusID: "00000000:19:00.0", Kmsg: true, Arrived: at.Add(time.Second), PID: 7, HasPID: true}
	other := Event{Code: 31, BusID: "00000000:1A:00.0", Kmsg: true, Arrived: at}
	late := Event{Code: 31, BusID: "00000000:19:00.0", Kmsg: true, Arrived: at.Add(3 * MergeWindow)}

	p := MergeInto(nil, nv)
	p = MergeInto(p, other)
	p = MergeInto(p, km)
	require.Len(t, p, 2, "same GPU and code within the window merge; another GPU does not")
	assert.Equal(t, "both", p[0].Source())
	assert.Equal(t, 7, p[0].PID)
	p = MergeInto(p, late)
	assert.Len(t, p, 3, "beyond the window it is a new occurrence")
	dup := MergeInto([]Event{{Code: 31, BusID: "x", NVML: true, Kmsg: true, Arrived: at}}, Event{Code: 31, BusID: "x", NVML: true, Arrived: at})
	assert.Len(t, dup, 2, "two NVML events are two occurrences")
}
